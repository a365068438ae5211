"""Interval logs beside a result: ``RUN/intervals.hlog``.

A run started with ``--stream-intervals`` writes its interval histograms
to an HdrHistogram interval log (``.hlog``, V2 compressed, one ``Tag=`` per
job, host and direction) as it goes, instead of embedding every interval of
every worker in ``result.json`` (docs/results-schema.md, "Interval logs").
This module finds a run's log, reads windows of it exactly (the intervals'
histograms merged, never their percentiles averaged) and says whether the
run that wrote it finished: a run killed mid-way has a log and no
``run.json``, and its log lacks the end line of the jobs that were running.

Everything here reads the log in one pass, one record at a time
(``_native.hlog_window``): memory does not grow with the run's length.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from iolab import _native
from iolab.errors import ResultFormatError

#: The interval log's name in a run directory (iolab-core ``stats::hlog::HLOG_FILE``).
HLOG_FILE = "intervals.hlog"

Json = dict[str, Any]


def interval_log_of(directory: Path, result: Optional[Json] = None) -> Optional[Path]:
    """The interval log of the run in ``directory``: the one its result
    names, else ``intervals.hlog`` if there is one (a killed run has no
    result); None for a run that kept its intervals in the result."""
    ref = (result or {}).get("interval_log")
    if ref:
        path = directory / str(ref["file"])
        if not path.is_file():
            raise ResultFormatError(f"{directory}: the result names interval log {ref['file']}, which is missing")
        return path
    path = directory / HLOG_FILE
    return path if path.is_file() else None


def parse_window(text: str) -> tuple[int, int]:
    """``"10s..40s"`` → ``(10e9, 40e9)`` ns from the measured start; either
    end may be left out (``"10s.."``, ``"..40s"``)."""
    if ".." not in text:
        raise ValueError(f"window {text!r}: give START..END, e.g. 10s..40s (either end may be left out)")
    a, b = text.split("..", 1)
    try:
        start = _native.parse_duration_ns(a) if a.strip() else 0
        end = _native.parse_duration_ns(b) if b.strip() else 2**64 - 1
    except ValueError as e:
        raise ValueError(f"window {text!r}: {e}") from None
    if end <= start:
        raise ValueError(f"window {text!r}: its end must be after its start")
    return start, end


@dataclass(frozen=True)
class WindowRow:
    """One job and direction over a window: its whole intervals in it, merged."""

    job: str
    dir: str
    intervals: int
    #: What the intervals span, ns from the job's measured start (None: no interval).
    start_ns: Optional[int]
    end_ns: Optional[int]
    ios: int
    bytes: int
    #: The intervals' latency histograms merged (HdrHistogram V2, base64).
    lat_ns: str

    @property
    def span_ns(self) -> int:
        return 0 if self.start_ns is None or self.end_ns is None else self.end_ns - self.start_ns

    @property
    def iops(self) -> float:
        return self.ios * 1e9 / self.span_ns if self.span_ns else 0.0

    @property
    def bw_bytes_per_s(self) -> float:
        return self.bytes * 1e9 / self.span_ns if self.span_ns else 0.0


@dataclass(frozen=True)
class IntervalLogState:
    """How far a log goes: per job its intervals and where the last ends."""

    jobs: tuple[Json, ...]
    truncated: bool

    @property
    def interrupted(self) -> bool:
        """The run that wrote it did not finish: a record cut short, or a job
        whose workers never all finished."""
        return self.truncated or any(not j["ended"] for j in self.jobs)


def read_window(path: Path, start_ns: int = 0, end_ns: int = 2**64 - 1) -> tuple[list[WindowRow], IntervalLogState]:
    """Per job and direction, the intervals of the log at ``path`` wholly
    within ``[start_ns, end_ns]``, merged exactly; and the log's state."""
    got = _native.hlog_window(path, start_ns, end_ns)
    rows = [
        WindowRow(
            job=r["name"] if r["name"] is not None else f"job {r['job']}",
            dir=r["dir"],
            intervals=r["intervals"],
            start_ns=r["start_ns"],
            end_ns=r["end_ns"],
            ios=r["ios"],
            bytes=r["bytes"],
            lat_ns=r["lat_ns"],
        )
        for r in got["rows"]
    ]
    return rows, IntervalLogState(tuple(got["jobs"]), got["truncated"])
