"""What every rank of a fleet run shares: the configuration, a rank's
interval snapshots, its final result, and how a rank leaves when MPI can
no longer be trusted (a peer is gone).

Used by rank 0 (:mod:`iolab.fleet.watch`) and by every other rank
(:mod:`iolab.fleet.runner`); kept apart so those two import it and not
each other.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from iolab.fleet.live import host_row
from iolab.fleet.spool import DEFAULT_ROOT
from iolab.run.local import RunLike

#: Default stated deadline of the watchdog, beyond two intervals.
DEFAULT_DEADLINE_S = 5.0
#: Before the start, collectives wait for every rank; a rank that dies then
#: would leave the others waiting forever. Preparing (file layout) may take
#: long, so the bound is generous: this, plus the deadline.
PRESTART_LIMIT_S = 600.0


@contextmanager
def prestart_guard(limit_s: float, what: str) -> Iterator[None]:
    """Leave the process (exit 4, a message naming ``what``) if the block
    has not finished within ``limit_s``: MPI cannot be interrupted."""
    timer = threading.Timer(limit_s, lambda: die(f"{what} did not finish within {limit_s:.0f} s (a rank lost?)"))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


@dataclass(frozen=True)
class FleetConfig:
    interval_ns: int = 1_000_000_000
    #: A rank silent for 2 intervals + this is lost (and so is rank 0 to the others).
    deadline_s: float = DEFAULT_DEADLINE_S
    allow_overwrite: bool = False
    spool_root: Path = DEFAULT_ROOT
    #: ``--stream-intervals``: every rank streams its intervals to ``SPOOL/RUN/rank-R.hlog``
    #: and rank 0 the exact merge of them to :attr:`interval_log` (:mod:`iolab.fleet.streamlog`).
    stream_intervals: bool = False
    #: With ``stream_intervals``: each rank's log also has each worker's intervals.
    per_worker_intervals: bool = False
    #: Rank 0: the fleet run's interval log (``RUN/intervals.hlog``).
    interval_log: Optional[Path] = None

    @property
    def silence_limit_s(self) -> float:
        return 2 * self.interval_ns / 1e9 + self.deadline_s


@dataclass
class HostPart:
    """One rank's part of the run, as rank 0 knows it at the end."""

    rank: int
    host: str
    #: ``complete``, ``failed`` (its run ended on an error), ``lost`` (silent past the deadline).
    state: str = "complete"
    result_json: Optional[str] = None
    error: Optional[str] = None
    interrupted: bool = False
    notes: list[str] = field(default_factory=list)
    #: Its last interval snapshot (for a lost host: what it measured last).
    last_snapshot: Optional[dict[str, Any]] = None
    spool: str = ""
    #: Its own interval log on its host (``--stream-intervals``).
    interval_log: str = ""


def _cpu_s() -> float:
    t = os.times()
    return t.user + t.system


class Snapshotter:
    """A rank's interval snapshots: due every interval after the start,
    a little late so the engine's own interval has landed."""

    def __init__(
        self, rank: int, host: str, start_mono: float, interval_s: float, job_names: Sequence[str] = ()
    ) -> None:
        self.rank, self.host = rank, host
        self.job_names = tuple(job_names)
        self.interval_s = interval_s
        self.next_at = start_mono + interval_s * 1.15
        self.seq = 0
        self._cpu = (time.monotonic(), _cpu_s())

    def due(self, now: float) -> bool:
        return now >= self.next_at

    def poll_timeout_s(self, most_s: float) -> float:
        """How long to wait on the engine: no longer than until the next
        snapshot is due, so snapshots leave on time (the live view waits
        for them only a fraction of an interval)."""
        return min(most_s, max(0.005, self.next_at - time.monotonic()))

    def take(self, progress: dict[str, Any], now: float) -> dict[str, Any]:
        self.seq += 1
        self.next_at += self.interval_s
        wall, cpu = time.monotonic(), _cpu_s()
        cpu_pct = 100.0 * (cpu - self._cpu[1]) / max(wall - self._cpu[0], 1e-9)
        self._cpu = (wall, cpu)
        row = host_row(self.host, self.rank, progress, cpu_pct, self.job_names)
        return {"seq": self.seq, "rank": self.rank, "elapsed_ns": progress.get("elapsed_ns", 0), "row": row.__dict__}


def final_of(run: RunLike) -> dict[str, Any]:
    """The rank's result (partial when an error ended it early)."""
    try:
        return {"result_json": run.wait(), "error": None}
    except Exception as e:  # an I/O error keeps the work done before it
        partial = getattr(e, "result_json", None)
        return {"result_json": partial if isinstance(partial, str) else None, "error": str(e)}


def die(message: str) -> None:
    """Leave without MPI_Finalize (a peer is gone: finalize could hang)."""
    sys.stderr.write(f"iolab: {message}\n")
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(EXIT_HOST_LOST)


#: Exit status of a fleet run that lost a host (results incomplete).
EXIT_HOST_LOST = 4

__all__ = [
    "DEFAULT_DEADLINE_S",
    "EXIT_HOST_LOST",
    "PRESTART_LIMIT_S",
    "FleetConfig",
    "HostPart",
    "Snapshotter",
    "die",
    "final_of",
    "prestart_guard",
]
