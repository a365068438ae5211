"""Rank 0's live endpoint: the page, its data and Prometheus metrics.

``--fleet-live-http HOST:PORT`` (loopback unless the user names another
address) serves, from a background thread:

- ``/``: the live page (:func:`iolab.fleet.live.page_html`), redrawing
  every interval from ``/view.json``;
- ``/view.json``: the latest :class:`~iolab.fleet.live.ClusterInterval`;
- ``/metrics``: the same rates as Prometheus text, a ``host`` label each,
  and every host's counters and latency histograms since the start
  (:func:`iolab.fleet.live.prometheus_text`); the quantile gauges only
  with ``summaries`` (``--metrics-summaries``).

The view is replaced whole under a lock; a request never waits on MPI.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional

from iolab.fleet.live import ClusterInterval, page_html, prometheus_text, view_json


class LiveServer:
    def __init__(self, address: str, title: str, interval_ms: int, summaries: bool = False) -> None:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"--fleet-live-http {address!r}: expected HOST:PORT (e.g. 127.0.0.1:8090)")
        self._view: Optional[ClusterInterval] = None
        self._lock = threading.Lock()
        page = page_html(title, interval_ms).encode()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                view = server.view()
                if path in ("/", "/index.html"):
                    self._send(200, "text/html; charset=utf-8", page)
                elif path == "/view.json":
                    body = json.dumps(None if view is None else view_json(view)).encode()
                    self._send(200, "application/json", body)
                elif path == "/metrics":
                    text = "" if view is None else prometheus_text(view, summaries)
                    self._send(200, "text/plain; version=0.0.4", text.encode())
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

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


__all__ = ["LiveServer"]
