"""Rank 0's fleet total, streamed: ``FLEET_RUN/intervals.hlog``.

With ``--stream-intervals`` every rank sends rank 0, with each interval
snapshot, the records its engine has written to its own interval log since
the last one (:mod:`iolab.fleet.tail`). :class:`FleetLog` merges them
across hosts interval by interval and appends each merged interval to the
fleet run's interval log — the same format as a single run's (iolab-core
``stats::hlog``; ``host=total`` in the tags) — as soon as every host has
delivered it (or has no more: its job ended, its final result came, or it
was declared lost). So the log holds the exact merge: I/Os and bytes
summed, the latency histograms merged bucket by bucket, never percentiles
averaged; ``iolab report FLEET_RUN --window`` and the end-of-run summary
read it like any run's.

Series are put on rank 0's clock as :mod:`iolab.fleet.align` does at the
end of a run without streaming: a host's job starts at its log's base
time plus the job's offset, minus the host's measured clock offset; a host
that started whole intervals after the first (nearest whole interval) has
its interval *k* merged into the fleet's *k + shift*; a merged interval's
window is the union of the windows merged into it.

Memory: per job, the intervals some host has delivered and another not yet
(a histogram per direction and host each), and a few integers per host —
bounded by how far the fastest host runs ahead of the slowest (a silent
host is declared lost within two intervals plus the deadline), never by
the run's length. Each merged interval is flushed as it is written: a
killed fleet run leaves every interval merged so far, and a job whose
hosts did not all end has no ``#iolab-end`` line (read as interrupted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, TextIO

from iolab import _native

Json = dict[str, Any]
DIRS = ("read", "write", "trim")
#: The host name the fleet total's histogram lines are tagged with.
TOTAL_HOST = "total"
_NOT_IN_TAG = str.maketrans({c: "_" for c in ", \r\n;=\t"})


@dataclass
class _Merged:
    """One fleet interval of one job while its hosts' records arrive."""

    start_ns: Optional[int] = None
    end_ns: int = 0
    ios: list[int] = field(default_factory=list)
    bytes: list[int] = field(default_factory=list)
    lat_ns: list[list[str]] = field(default_factory=list)

    def add(self, start_ns: int, end_ns: int, rec: Json) -> None:
        self.start_ns = start_ns if self.start_ns is None else min(self.start_ns, start_ns)
        self.end_ns = max(self.end_ns, end_ns)
        n = len(rec["ios"])
        for xs in (self.ios, self.bytes):
            xs.extend([0] * (n - len(xs)))
        self.lat_ns.extend([] for _ in range(n - len(self.lat_ns)))
        for d in range(n):
            self.ios[d] += int(rec["ios"][d])
            self.bytes[d] += int(rec["bytes"][d])
            self.lat_ns[d].append(rec["lat_ns"][d])


def _seconds(ns: int) -> str:
    # as the hdrhistogram crate writes a Duration: whole seconds plus the fraction, to the ms
    return f"{ns // 1_000_000_000 + (ns % 1_000_000_000) / 1e9:.3f}"


class FleetLog:
    """The exact cross-host merge of every rank's interval records, appended
    to ``path`` as intervals complete (see the module doc)."""

    def __init__(self, path: Path, ranks: int, offsets_ns: Mapping[int, int]) -> None:
        self.path = path
        self.ranks = ranks
        self.offsets_ns = dict(offsets_ns)
        self._out: Optional[TextIO] = None
        self._headers: dict[int, Json] = {}
        self._early: dict[int, list[tuple[int, Json]]] = {}  # job → (rank, record) before its shifts are known
        self._next: dict[tuple[int, int], int] = {}  # (rank, job) → records delivered
        self._ended: dict[tuple[int, int], int] = {}  # (rank, job) → its intervals
        self._start: dict[tuple[int, int], int] = {}  # (rank, job) → job's measured start, rank 0's clock
        self._done: set[int] = set()
        self._part: dict[int, int] = {}  # rank → its next part to apply
        self._held: dict[int, dict[int, tuple[Json, bool]]] = {}  # rank → parts that came early
        self._job_start: dict[int, int] = {}
        self._shift: dict[int, dict[int, int]] = {}
        self._pending: dict[int, dict[int, _Merged]] = {}
        self._written: dict[int, int] = {}
        self._closed_jobs: set[int] = set()
        self._jobs: set[int] = set()
        self.intervals_written = 0

    # ---- input ----

    def add(self, rank: int, got: Optional[Json], last: bool = False) -> None:
        """What rank ``rank``'s :class:`~iolab.fleet.tail.LogTail` read
        (``last``: the part sent with its final result). Parts are applied in
        the order they were read; one that overtook another waits for it."""
        if not got or rank in self._done:
            return
        held = self._held.setdefault(rank, {})
        held[int(got.get("part", 0))] = (got, last)
        nxt = self._part.get(rank, 0)
        while nxt in held:
            part, is_last = held.pop(nxt)
            nxt += 1
            self._part[rank] = nxt
            self._apply(rank, part)
            if is_last:
                self._done.add(rank)
                self._held.pop(rank, None)
                break
        self._advance()

    def waiting(self) -> set[int]:
        """Ranks whose final part came before some earlier part."""
        return {r for r, held in self._held.items() if any(last for _g, last in held.values())}

    def _apply(self, rank: int, got: Json) -> None:
        if "header" in got:
            self._headers[rank] = got["header"]
        for rec in got.get("records", ()):
            j = int(rec["job"])
            self._jobs.add(j)
            self._next[(rank, j)] = int(rec["i"]) + 1
            if (rank, j) not in self._start:
                self._start[(rank, j)] = self._on_zero(rank, int(rec["offset_ns"]))
            if j in self._shift:
                self._place(j, rank, rec)
            else:
                self._early.setdefault(j, []).append((rank, rec))
        for e in got.get("ends", ()):
            self._jobs.add(int(e["job"]))
            self._ended[(rank, int(e["job"]))] = int(e["intervals"])

    def rank_done(self, rank: int) -> None:
        """``rank`` sends no more records (it was lost): its intervals stop where they are."""
        self._done.add(rank)
        self._held.pop(rank, None)
        self._advance()

    def close(self) -> None:
        """Every rank done: the last intervals and the jobs' end lines."""
        self._done.update(range(self.ranks))
        self._advance()
        if self._out is not None:
            self._out.close()
            self._out = None

    # ---- merging ----

    def _on_zero(self, rank: int, offset_ns: int) -> int:
        base = int(self._headers[rank]["base_unix_ns"]) if rank in self._headers else 0
        return base + offset_ns - int(self.offsets_ns.get(rank, 0))

    def _shifts_known(self, j: int) -> bool:
        """Every rank's start of job ``j`` is known, or that rank has none."""
        for r in range(self.ranks):
            if (r, j) not in self._start and r not in self._done and (r, j) not in self._ended:
                return False
        return 0 in self._headers

    def _fix_shifts(self, j: int) -> None:
        starts = {r: t for (r, job), t in self._start.items() if job == j}
        first = min(starts.values(), default=0)
        step = int(self._headers[0]["interval_ns"]) or 1  # rank 0's header is in (_shifts_known)
        self._job_start[j] = first
        self._shift[j] = {r: (t - first + step // 2) // step for r, t in starts.items()}
        self._written.setdefault(j, 0)
        for rank, rec in self._early.pop(j, []):
            self._place(j, rank, rec)

    def _place(self, j: int, rank: int, rec: Json) -> None:
        k = int(rec["i"]) + self._shift[j].get(rank, 0)
        at = self._start[(rank, j)]
        m = self._pending.setdefault(j, {}).setdefault(k, _Merged())
        m.add(at + int(rec["start_ns"]), at + int(rec["end_ns"]), rec)

    def _complete(self, j: int, k: int) -> bool:
        for r in range(self.ranks):
            if r in self._done:
                continue
            idx = k - self._shift[j].get(r, 0)
            if idx < 0 or self._next.get((r, j), 0) > idx:
                continue
            if (r, j) in self._ended and idx >= self._ended[(r, j)]:
                continue
            return False
        return True

    def _advance(self) -> None:
        for j in sorted(self._jobs - self._closed_jobs):
            if j not in self._shift:
                if not self._shifts_known(j):
                    continue
                self._fix_shifts(j)
            pending = self._pending.get(j, {})
            while pending:
                k = min(pending)
                if not self._complete(j, k):
                    break
                self._write(j, k, pending.pop(k))
                self._written[j] = k + 1
            # A rank's end line follows its last record: every record of the job is in.
            if not pending and all((r, j) in self._ended for r in range(self.ranks)):
                out = self._out or self._open()
                out.write(f"#iolab-end job={j} intervals={self._written[j]}\n")
                out.flush()
                self._closed_jobs.add(j)

    # ---- output ----

    def _open(self) -> TextIO:
        """Write the header (rank 0's own log has told its base time: the
        shifts of a job, which precede its first write, wait for it)."""
        h = self._headers[0]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        out = self.path.open("w", encoding="utf-8")
        base = int(h["base_unix_ns"])
        names = [str(x["name"]) for x in h["jobs"]]
        at = _seconds(base)
        out.write(
            f"#[iolab: iolab.hlog/1 base_unix_ns={base} interval_ns={int(h['interval_ns'])}]\n"
            f"#[iolab {_native.version()} fleet of {self.ranks} ranks: jobs {' '.join(names)}; each interval the "
            f"exact merge of every host's (rank 0's clock)]\n"
            "#[latency: total (lat) per I/O, ns; Interval_Max in ns]\n"
            f"#[StartTime: {at} (seconds since epoch)]\n"
            f"#[BaseTime: {at} (seconds since epoch)]\n"
            '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"\n'
        )
        for x in h["jobs"]:
            # every rank runs the same jobs (a hosts table may not change numjobs)
            out.write(f"#iolab-job job={x['job']} workers={int(x['workers']) * self.ranks} name={x['name']}\n")
        out.flush()
        self._out = out
        return out

    def _write(self, j: int, k: int, m: _Merged) -> None:
        out = self._out or self._open()
        assert m.start_ns is not None
        base = int(self._headers[0]["base_unix_ns"])
        job_start = self._job_start[j]
        start, end = m.start_ns - job_start, m.end_ns - job_start
        offset = job_start - base
        lines = [
            f"#iolab-interval job={j} worker=- i={k} offset_ns={offset} start_ns={start} end_ns={end} "
            f"ios={','.join(map(str, m.ios))} bytes={','.join(map(str, m.bytes))}"
        ]
        name = str(self._job_name(j)).translate(_NOT_IN_TAG)
        for d, hists in enumerate(m.lat_ns):
            merged = _native.hist_merge(hists)
            top = _native.hist_stats(merged, [])["max_ns"] if m.ios[d] else 0
            lines.append(
                f"Tag=job={name};host={TOTAL_HOST};dir={DIRS[d]},{_seconds(offset + start)},"
                f"{_seconds(end - start)},{float(top):.3f},{merged}"
            )
        out.write("\n".join(lines) + "\n")
        out.flush()
        self.intervals_written += 1

    def _job_name(self, j: int) -> str:
        for x in self._headers[0]["jobs"]:
            if int(x["job"]) == j:
                return str(x["name"])
        return f"job{j}"


__all__ = ["TOTAL_HOST", "FleetLog"]
