"""A rank's own interval log, read as the engine writes it.

With ``--stream-intervals`` every rank's engine streams its intervals
(each job's workers merged) to ``SPOOL/RUN/rank-R.hlog`` — the interval
log format of ``iolab run --stream-intervals`` (iolab-core
``stats::hlog``). :class:`LogTail` reads what the engine has written
since the last call, complete lines only, and turns it into small plain
records that travel to rank 0 with the rank's interval snapshot (and the
rest with its final result); rank 0 merges them across hosts
(:mod:`iolab.fleet.streamlog`).

A record is held only until its histogram lines have all arrived, so the
tail's memory is one record at most, whatever the run's length. Per-worker
records (``--per-worker-intervals``) stay in the rank's log: the fleet's
total is of each job's workers merged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

Json = dict[str, Any]

HEADER = "#[iolab: "
RECORD = "#iolab-interval "
JOB = "#iolab-job "
JOB_END = "#iolab-end "


def _fields(rest: str) -> dict[str, str]:
    return dict(f.split("=", 1) for f in rest.split(" ") if "=" in f)


@dataclass
class LogTail:
    """What a rank sends rank 0 from its own log (see the module doc)."""

    path: Path
    offset: int = 0
    #: A record whose histogram lines (one per direction) are still coming.
    _pending: Optional[Json] = None
    #: Histogram lines of a worker's record still to skip.
    _skipping: int = 0
    #: Parts read so far: rank 0 applies a rank's parts in this order (a
    #: snapshot may arrive after the final result: MPI orders messages per tag).
    parts: int = 0
    header_sent: bool = False
    _header: Optional[Json] = None
    _jobs: list[Json] = field(default_factory=list)

    def read(self) -> Json:
        """What is new since the last call: its ``part`` number, ``header``
        (base and interval, once, with the jobs), ``records`` and ``ends``
        (jobs whose workers all finished)."""
        out: Json = {"part": self.parts, "records": [], "ends": []}
        self.parts += 1
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return out
        cut = data.rfind(b"\n") + 1  # a line still being written waits for the next call
        self.offset += cut
        for raw in data[:cut].decode("utf-8").splitlines():
            self._line(raw.rstrip("\r"), out)
        # The job lines follow the header at once: by the first record they are all in.
        if self._header is not None and not self.header_sent and (out["records"] or out["ends"]):
            out["header"] = {**self._header, "jobs": list(self._jobs)}
            self.header_sent = True
        return out

    def _line(self, line: str, out: Json) -> None:
        if line.startswith(HEADER):
            f = _fields(line[len(HEADER) :].rstrip("]"))
            self._header = {"base_unix_ns": int(f["base_unix_ns"]), "interval_ns": int(f["interval_ns"])}
        elif line.startswith(JOB):
            head, _, name = line[len(JOB) :].partition(" name=")
            f = _fields(head)
            self._jobs.append({"job": int(f["job"]), "workers": int(f["workers"]), "name": name})
        elif line.startswith(JOB_END):
            f = _fields(line[len(JOB_END) :])
            out["ends"].append({"job": int(f["job"]), "intervals": int(f["intervals"])})
        elif line.startswith(RECORD):
            f = _fields(line[len(RECORD) :])
            ios = [int(x) for x in f["ios"].split(",")]
            if f["worker"] != "-":
                self._pending, self._skipping = None, len(ios)
                return
            self._pending = {
                "job": int(f["job"]),
                "i": int(f["i"]),
                "offset_ns": int(f["offset_ns"]),
                "start_ns": int(f["start_ns"]),
                "end_ns": int(f["end_ns"]),
                "ios": ios,
                "bytes": [int(x) for x in f["bytes"].split(",")],
                "lat_ns": [],
            }
        elif line and not line.startswith(("#", '"')):
            self._histogram(line, out)

    def _histogram(self, line: str, out: Json) -> None:
        if self._skipping:
            self._skipping -= 1
            return
        if self._pending is None:
            return
        self._pending["lat_ns"].append(line.rsplit(",", 1)[1])
        if len(self._pending["lat_ns"]) == len(self._pending["ios"]):
            out["records"].append(self._pending)
            self._pending = None


__all__ = ["LogTail"]
