"""Rank 0's live endpoint: the page, its data and Prometheus metrics.

``--fleet-live-http HOST:PORT`` (loopback unless the user names another
address) serves, from a background thread:

- ``/``: the live page (:func:`iolab.fleet.live.page_html`), redrawing
  every interval from ``/view.json``;
- ``/view.json``: the latest :class:`~iolab.fleet.live.ClusterInterval`
  (``?page=K``: the K-th page of host rows, above
  :data:`~iolab.fleet.live.ROWS_MAX` hosts);
- ``/metrics``: the same rates as Prometheus text, a ``host`` label each,
  and every host's counters and latency histograms since the start
  (:func:`iolab.fleet.live.prometheus_text`); the quantile gauges only
  with ``summaries`` (``--metrics-summaries``).

The view is replaced whole under a lock; a request never waits on MPI.
Each body is rendered once per interval (the first request makes it, the
others that interval get the same bytes): at a thousand hosts /metrics is
tens of MB and a fraction of a second to write, which several scrapers or
open pages must not multiply.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional
from urllib.parse import parse_qs

from iolab.fleet.live import ClusterInterval, page_html, prometheus_text, view_json


class LiveServer:
    def __init__(self, address: str, title: str, interval_ms: int, summaries: bool = False) -> None:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"--fleet-live-http {address!r}: expected HOST:PORT (e.g. 127.0.0.1:8090)")
        self._view: Optional[ClusterInterval] = None
        self._lock = threading.Lock()
        # Bodies rendered for the view they were made from (one interval).
        self._render_lock = threading.Lock()
        self._bodies: dict[tuple[object, ...], bytes] = {}
        self._bodies_of: Optional[ClusterInterval] = None
        page = page_html(title, interval_ms).encode()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                view = server.view()
                if path in ("/", "/index.html"):
                    self._send(200, "text/html; charset=utf-8", page)
                elif path == "/view.json":
                    try:
                        page_no = int(parse_qs(query).get("page", ["0"])[0])
                    except ValueError:
                        self._send(400, "text/plain", b"page: expected a whole number (view.json?page=0)\n")
                        return
                    body = server.rendered(view, ("json", page_no), lambda v: json.dumps(view_json(v, page_no)))
                    self._send(200, "application/json", body)
                elif path == "/metrics":
                    body = server.rendered(view, ("metrics",), lambda v: prometheus_text(v, summaries))
                    self._send(200, "text/plain; version=0.0.4", body)
                else:
                    self._send(404, "text/plain", b"not found: try /, /view.json or /metrics\n")

            def _send(self, status: int, ctype: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # requests are not worth a line on the run's stderr

        self.httpd = ThreadingHTTPServer((host.strip("[]"), int(port)), Handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="iolab-fleet-live", daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/"

    def start(self) -> None:
        self._thread.start()

    def show(self, view: ClusterInterval) -> None:
        with self._lock:
            self._view = view

    def view(self) -> Optional[ClusterInterval]:
        with self._lock:
            return self._view

    def rendered(
        self, view: Optional[ClusterInterval], key: tuple[object, ...], render: Callable[[ClusterInterval], str]
    ) -> bytes:
        """``render(view)`` as bytes, made once per view and key (``json``
        for no view yet, an empty body for /metrics)."""
        if view is None:
            return b"null" if key[0] == "json" else b""
        with self._render_lock:
            if self._bodies_of is not view:
                self._bodies_of, self._bodies = view, {}
            body = self._bodies.get(key)
            if body is None:
                body = self._bodies[key] = render(view).encode()
            return body

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


__all__ = ["LiveServer"]
