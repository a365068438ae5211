"""Typed stub of iolab's native module (crates/iolab-py).

Checked against the built module by tests/run/test_native_stub.py
(``mypy.stubtest``). Exceptions come from ``iolab.errors``; OS errors on a
named file arrive as the matching ``OSError`` subclass.
"""

import os
from typing import Any, Optional

Options = list[tuple[str, Optional[str]]]

RESULT_SCHEMA: str
SUMMARY_SCHEMA: str
NBD_REQUEST_BYTES: int
NBD_SIMPLE_REPLY_BYTES: int
#: Engines that open no files (null, nbd, cpuio): from the engine table.
ENGINES_WITHOUT_FILES: list[str]

def prepare_job(name: str, options: Options) -> str:
    """Validate one job; return the prepared job as JSON. Raises JobError."""

def worker_files(prepared_json: str, worker: int) -> list[str]:
    """The files worker ``worker`` (0-based) of a prepared job uses, as the engine opens them."""

def option_table() -> list[dict[str, Any]]:
    """The job option table, one dict per option."""

def options_markdown() -> str:
    """The job option table as Markdown."""

def summarize(result_json: str) -> str:
    """A run result (JSON) → its summary (JSON)."""

def summarize_with_log_to(
    result_json: str, path: str | os.PathLike[str], series_csv: str | os.PathLike[str]
) -> tuple[str, list[int], list[int]]:
    """``summarize_with_log`` writing the series to the CSV file ``series_csv`` instead
    of into the summary: (summary JSON with empty series, rows per job, rows per group)."""

def summarize_with_log(result_json: str, path: str | os.PathLike[str]) -> str:
    """``summarize`` of a run whose intervals were streamed to the interval log at ``path``."""

def stream_result(result_json: str, path: str | os.PathLike[str], per_worker: bool = False) -> str:
    """A result with embedded intervals → the same result with its intervals in the interval log
    ``path`` (written as a run streams them), as JSON."""

def hlog_window(path: str | os.PathLike[str], start_ns: int = 0, end_ns: int = ...) -> dict[str, Any]:
    """One pass over an interval log: per job and direction, its merged intervals wholly within
    ``[start_ns, end_ns]`` merged exactly (``rows``), each job's state (``jobs``) and ``truncated``."""

class IntervalLog:
    """An interval log's records, one at a time (dicts; see the Rust docs)."""

    def __new__(cls, path: str | os.PathLike[str]) -> IntervalLog: ...
    def __iter__(self) -> IntervalLog: ...
    def __next__(self) -> dict[str, Any]: ...
    @property
    def truncated(self) -> bool: ...
    @property
    def header(self) -> Optional[tuple[int, int]]: ...

def merge_results(results_json: list[str]) -> str:
    """Several hosts' run results (JSON) → their exact merge (JSON). Raises
    IolabError for results of different iolab versions or intervals."""

def parse_size(text: str, kb_base: int = 1024) -> int:
    """fio's size syntax → bytes (kb_base 1024 or 1000). Raises ValueError."""

def parse_time_ns(text: str, default_unit_ns: int = 1_000_000_000) -> int:
    """fio's time syntax → ns; a bare number is in ``default_unit_ns``. Raises ValueError."""

def parse_duration_ns(text: str) -> int:
    """iolab's durations (``1.5s``, ``500ms``, ``2`` = seconds) → ns. Raises ValueError."""

def parse_bool(text: Optional[str] = None) -> bool:
    """fio's boolean options: ``1``/``0``, ``true``/``false``; None (a bare flag) = true. Raises ValueError."""

def parse_uint(text: str) -> int:
    """A whole number, decimal or ``0x`` hex, no units. Raises ValueError."""

def version() -> str:
    """iolab's version."""

def hist_merge(hists: list[str]) -> str:
    """Exact merge of HdrHistogram V2 base64 strings (the union's histogram)."""

def hist_from_counts(counts: list[tuple[int, int]]) -> str:
    """A V2 base64 histogram from ``(value_ns, count)`` pairs."""

def hist_buckets(hist: str) -> list[tuple[int, int]]:
    """Recorded buckets ``(value_ns, count)`` ascending (highest equivalent value)."""

def hist_stats(hist: str, percentiles: list[float]) -> dict[str, Any]:
    """``count``, ``min_ns``, ``max_ns``, ``mean_ns``, ``stdev_ns`` and
    ``percentiles`` ``{percent: value_ns}`` (the core's ``LatSummary``). Raises ValueError for a
    percentile outside 0..100, IolabError for a string that is not a histogram."""

PROM_BUCKET_WIDTH_PCT: float

def prom_latency(name: str, help: str, series: list[tuple[list[tuple[str, str]], str]], summaries: bool = False) -> str:
    """A Prometheus latency family as text: each ``(labels, histogram)`` as a
    classic histogram in seconds (the core's one bucket layout), and the
    quantile summary family beside it when ``summaries``."""

def prom_bounds_ns() -> list[float]:
    """The finite upper bounds of the Prometheus buckets, ns, ascending."""

PROM_PROTOBUF_CONTENT_TYPE: str

def prom_protobuf(families: list[tuple[str, str, str, list[tuple[list[tuple[str, str]], float | str]]]]) -> bytes:
    """Families ``(name, help, kind, [(labels, value)])`` as Prometheus'
    length-delimited protobuf exposition; ``kind`` is counter, gauge or
    histogram (then each value a V2 base64 histogram): native histograms,
    schema 3, beside the classic buckets. ValueError for a value of the
    wrong kind."""

def iolog_to_fio(inputs: list[str], out: str, value: str, log_offset: bool = False, log_prio: bool = False) -> int:
    """Write fio's per-I/O log (``value``: lat, clat, slat, bw or iops) from the workers'
    record files ``inputs`` merged in time order; return the lines written."""

def lab_model(
    spec: str,
    rw: str,
    bs: int,
    iodepth: int,
    region: int,
    runtime_ns: int,
    rtt_ns: int,
    seed: int = 1,
) -> tuple[int, int, int]:
    """Run a job on the export of a compact spec on a virtual clock;
    ``(ios, bytes, elapsed_ns)``. Raises ValueError for a bad spec or rw."""

class Run:
    """One run: prepare (in the constructor) → start → poll → stop → wait."""

    def __new__(
        cls,
        jobs: list[tuple[str, Options]],
        interval_ns: int = 1_000_000_000,
        allow_overwrite: bool = False,
        host: Optional[str] = None,
        host_index: int = 0,
        interval_log: Optional[str | os.PathLike[str]] = None,
        per_worker_intervals: bool = False,
        snapshots: bool = False,
    ) -> Run: ...
    def layout_notes(self) -> list[str]:
        """What layout did, one line each."""

    def start(self, at_unix_ns: Optional[int] = None) -> None:
        """Start every worker at ``at_unix_ns`` (wall clock), or now."""

    def poll(self, timeout_s: float) -> dict[str, Any]:
        """Latest progress; waits up to ``timeout_s`` for a new interval."""

    def snapshot(self) -> str:
        """The result so far as JSON (the form ``wait`` returns, no series):
        every worker's measured window up to the last interval it closed,
        or its end. Needs ``snapshots=True``."""

    def stop(self) -> None:
        """Ask every worker to stop now; the result covers what was done."""

    def stop_job(self, job: int) -> None:
        """Stop the workers of job ``job`` (its index in the run); the others go on."""

    def finished(self) -> bool: ...
    def wait(self) -> str:
        """Wait for the end; return the run result as JSON.

        An error that ended the run early (an I/O error: ``OSError``) is
        raised with the result of the work done before it, as JSON, in its
        ``result_json`` attribute."""

class Target:
    """An iolab NBD target: parse and bind in the constructor → start →
    (shutdown) → wait. Config errors raise ``ValueError`` naming the key;
    a socket that cannot be bound raises ``OSError``."""

    def __new__(
        cls,
        config_toml: Optional[str] = None,
        exports: list[str] = ...,
        listen: Optional[str] = None,
        stats_http: Optional[str] = None,
        read_only: bool = False,
        max_connections: Optional[int] = None,
        allow_remote: bool = False,
        pacing: Optional[str] = None,
        max_request: Optional[str] = None,
        realtime: bool = False,
        metrics_summaries: bool = False,
        conn_io: Optional[str] = None,
        zero_copy: Optional[str] = None,
    ) -> Target: ...
    def start(self) -> None:
        """Serve on a background thread."""

    def addresses(self) -> dict[str, Optional[str]]:
        """``{"nbd": ..., "stats_http": ... or None}``."""

    def exports(self) -> list[tuple[str, int, str, bool]]:
        """(name, size in bytes, stack, read-only) per export."""

    def stats_json(self, reset: bool = False) -> str:
        """The stats window as JSON; with ``reset`` a new one starts at once."""

    def shutdown(self) -> None:
        """Ask for a clean stop (returns at once)."""

    def wait(self) -> None:
        """Wait until serving ends, running signal handlers meanwhile."""
