"""A running engine's Prometheus endpoint (``iolab run/sweep --metrics HOST:PORT``).

:class:`MetricsServer` serves ``/metrics`` from a background thread; the
run pipeline hands it every progress snapshot through
:meth:`MetricsServer.sink` (a :class:`~iolab.run.progress.ProgressSink`
wrapped around the terminal's), so no second run loop polls the engine.
Each snapshot carries every job's totals since the run started (``totals``:
I/Os, bytes and the total-latency histogram per direction, over the
measured intervals — ramp left out, as in the result), so a scrape sees
exactly the intervals the engine has finished.

What it writes (:func:`engine_metrics_text`; a fleet's rank 0 writes the
same families for every host):

- ``iolab_engine_ios_total`` and ``iolab_engine_bytes_total``: counters;
- ``iolab_engine_latency_seconds``: the total latency (submission to
  completion) as a classic histogram in the core's bucket layout
  (``_native.prom_latency``: 8 buckets per octave, each ~9.05 % wide,
  32 ns .. 137 s), so ``sum by (le)`` over jobs, hosts and processes is
  the histogram of their union;
- with ``--metrics-summaries``, ``iolab_engine_latency_summary_seconds``:
  quantiles of the same histograms (not mergeable).

A scraper whose ``Accept`` header asks for Prometheus' protobuf exposition
(Prometheus with ``--enable-feature=native-histograms``) gets the same
families in it, the latency as a native histogram of schema 3 (the same
9.05 % width) beside the classic buckets (:func:`engine_metrics_protobuf`);
with ``--metrics-summaries`` the text format is served to everyone.

Labels: ``job``, ``direction`` (read, write) and ``host``. Every run of a
sweep starts its counters at 0 again (Prometheus reads that as a counter
reset). Binding is on loopback unless another host is named.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

from iolab import _native
from iolab.errors import JobError
from iolab.run.progress import Progress, ProgressSink

DIRS = ("read", "write")


def _directions(totals: dict[str, Any]) -> tuple[str, ...]:
    """read and write always; trim (the totals' third slot) once the job trimmed."""
    ios = totals.get("ios", ())
    return (*DIRS, "trim") if len(ios) > 2 and ios[2] > 0 else DIRS


#: (family, what it counts, help); units in the names.
_COUNTERS = (
    ("iolab_engine_ios_total", "ios", "I/Os completed in measured intervals."),
    ("iolab_engine_bytes_total", "bytes", "Bytes moved in measured intervals."),
)
LATENCY = "iolab_engine_latency_seconds"
_LATENCY_HELP = "Total latency, submission to completion, of I/Os in measured intervals."


def label_value(v: str) -> str:
    """A label value escaped for the text format."""
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


Rows = Sequence[tuple[str, str, dict[str, Any]]]


def _families(rows: Rows, prefix: str) -> list[tuple[str, str, str, list[tuple[list[tuple[str, str]], Any]]]]:
    """The engine's families as ``(name, help, kind, [(labels, value)])``."""
    out: list[tuple[str, str, str, list[tuple[list[tuple[str, str]], Any]]]] = []
    for family, key, help_text in _COUNTERS:
        metrics = [
            ([("job", job), ("direction", direction), ("host", host)], float(t[key][d]))
            for host, job, t in rows
            for d, direction in enumerate(_directions(t))
        ]
        out.append((family.replace("iolab_engine", prefix, 1), help_text, "counter", metrics))
    hists = [
        ([("job", job), ("direction", direction), ("host", host)], t["lat_ns"][d])
        for host, job, t in rows
        for d, direction in enumerate(_directions(t))
    ]
    out.append((LATENCY.replace("iolab_engine", prefix, 1), _LATENCY_HELP, "histogram", hists))
    return out


def engine_metrics_text(rows: Rows, *, summaries: bool = False, prefix: str = "iolab_engine") -> str:
    """Prometheus text for ``(host, job name, totals)`` rows, ``totals`` as
    ``Run.poll`` gives them (``ios``, ``bytes`` and ``lat_ns`` per direction)."""
    out: list[str] = []
    text = ""
    for name, help_text, kind, metrics in _families(rows, prefix):
        if kind == "histogram":
            text = _native.prom_latency(name, help_text, metrics, summaries)
            continue
        out += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        for labels, v in metrics:
            pairs = ",".join(f'{k}="{label_value(x)}"' for k, x in labels)
            out.append(f"{name}{{{pairs}}} {int(v)}")
    return "\n".join(out) + "\n" + text


def engine_metrics_protobuf(rows: Rows, *, prefix: str = "iolab_engine") -> bytes:
    """The same families in Prometheus' protobuf exposition: the latency as
    a native histogram (schema 3, 9.05 % buckets) beside the classic buckets."""
    return _native.prom_protobuf(_families(rows, prefix))


def wants_protobuf(accept: str) -> bool:
    """Whether a scraper's ``Accept`` header asks for the protobuf exposition
    (Prometheus with ``--enable-feature=native-histograms`` does)."""
    return "application/vnd.google.protobuf" in accept and "proto=io.prometheus.client.MetricFamily" in accept


def parse_metrics_address(text: str, option: str = "--metrics") -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` → (host, port); loopback when no
    host is named. Anything else: a :class:`JobError` saying what to give."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    if not port.isdigit() or int(port) > 65535:
        raise JobError(f"{option} {text!r}: expected HOST:PORT or PORT (e.g. 127.0.0.1:9464)")
    return (host.strip("[]") or "127.0.0.1", int(port))


class MetricsServer:
    """``/metrics`` of the engine on this host; start, observe runs, close."""

    def __init__(self, address: str, *, summaries: bool = False, host: Optional[str] = None) -> None:
        bind = parse_metrics_address(address)
        self.host = host or socket.gethostname()
        self.summaries = summaries
        self._rows: list[tuple[str, str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?", 1)[0] != "/metrics":
                    self._send(404, "text/plain", b"not found: try /metrics\n")
                    return
                if wants_protobuf(self.headers.get("Accept", "")) and not server.summaries:
                    self._send(200, _native.PROM_PROTOBUF_CONTENT_TYPE, server.protobuf())
                else:
                    self._send(200, "text/plain; version=0.0.4", server.text().encode())

            def _send(self, status: int, ctype: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # scrapes are not worth a line on the run's stderr

        try:
            self.httpd = ThreadingHTTPServer(bind, Handler)
        except OSError as e:
            raise JobError(f"--metrics {address}: cannot listen there: {e.strerror or e}") from e
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="iolab-metrics", daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"{host!s}:{port}"

    def text(self) -> str:
        with self._lock:
            rows = list(self._rows)
        return engine_metrics_text(rows, summaries=self.summaries)

    def protobuf(self) -> bytes:
        with self._lock:
            rows = list(self._rows)
        return engine_metrics_protobuf(rows)

    def update(self, job_names: Sequence[str], progress: Progress) -> None:
        """Take a snapshot's totals (every job's, since the run started)."""
        totals = progress.get("totals")
        if not totals:
            return
        rows = [(self.host, job_names[t["job"]], t) for t in totals]
        with self._lock:
            self._rows = rows

    def sink(self, job_names: Sequence[str], inner: Optional[ProgressSink]) -> ProgressSink:
        """A progress sink that feeds this endpoint, then ``inner``."""
        return _MetricsSink(self, list(job_names), inner)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _MetricsSink:
    def __init__(self, server: MetricsServer, names: list[str], inner: Optional[ProgressSink]) -> None:
        self.server, self.names, self.inner = server, names, inner

    def note(self, line: str) -> None:
        if self.inner is not None:
            self.inner.note(line)

    def update(self, progress: Progress) -> None:
        self.server.update(self.names, progress)
        if self.inner is not None:
            self.inner.update(progress)

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()


__all__ = [
    "LATENCY",
    "MetricsServer",
    "engine_metrics_protobuf",
    "engine_metrics_text",
    "label_value",
    "parse_metrics_address",
    "wants_protobuf",
]
