"""Every host's time series on rank 0's clock, before the exact merge.

Each host's result stamps its series relative to its own real start
(``start_unix_ns``, read on its own clock). With the measured clock offset
of each rank (``offset_ns`` = rank clock minus rank 0's, see
:mod:`iolab.fleet.clock`) that start maps onto rank 0's clock:

    start_on_zero_ns = start_unix_ns - offset_ns
    start_after_first_ns = start_on_zero_ns - min(start_on_zero_ns)

:func:`align` rewrites copies of the results onto that one clock: every
``start_unix_ns`` becomes its instant on rank 0's clock and every interval's
``start_ns``/``end_ns`` is shifted by the host's ``start_after_first_ns``,
so all series are relative to the first host's start. The core merges
series interval by interval (by index); a host that started whole
intervals late (``round(start_after_first_ns / interval_ns)`` > 0) gets
that many empty intervals in front, so its interval *k* is merged with the
first host's interval *k + shift* — the one it overlaps most. The merged
interval's window is the union of the windows merged into it (the core
keeps the earliest start and the latest end), so the residual skew is
visible, never hidden. Counts, bytes and histograms are not touched.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iolab import _native

Json = dict[str, Any]

METHOD = (
    "series on rank 0's clock: each host's start_unix_ns minus its measured offset; interval times shifted "
    "by start_after_first_ns; hosts that started whole intervals late are padded with that many empty "
    "intervals, so the merge (by index) joins the intervals that overlap most"
)


@dataclass(frozen=True)
class HostAlignment:
    """How one rank's series was put on rank 0's clock."""

    rank: int
    offset_ns: int
    start_unix_ns: int
    start_on_zero_ns: int
    start_after_first_ns: int
    shift_intervals: int

    def as_json(self) -> Json:
        return {
            "rank": self.rank,
            "offset_ns": self.offset_ns,
            "start_unix_ns": self.start_unix_ns,
            "start_on_rank0_clock_unix_ns": self.start_on_zero_ns,
            "start_after_first_ns": self.start_after_first_ns,
            "series_shift_ns": self.start_after_first_ns,
            "series_shift_intervals": self.shift_intervals,
        }


def plan(results: Mapping[int, Json], offsets_ns: Mapping[int, int]) -> list[HostAlignment]:
    """The alignment of each rank's result (rank → parsed result)."""
    if not results:
        return []
    interval = {int(r["interval_ns"]) for r in results.values()}
    if len(interval) != 1 or 0 in interval:
        raise ValueError(f"cannot align series with intervals {sorted(interval)} ns (give every host the same one)")
    interval_ns = interval.pop()
    # A host with no measured start (0: stopped before its window opened) is left where it is.
    started = {rank: r for rank, r in results.items() if int(r.get("start_unix_ns") or 0) > 0}
    on_zero = {rank: int(r["start_unix_ns"]) - int(offsets_ns.get(rank, 0)) for rank, r in started.items()}
    first = min(on_zero.values(), default=0)
    # Padding past the longest series would only add empty intervals.
    longest = max(
        (len(w.get("series") or []) for r in results.values() for j in r["jobs"] for w in j["workers"]), default=0
    )
    out = []
    for rank in sorted(results):
        if rank not in on_zero:
            out.append(HostAlignment(rank, int(offsets_ns.get(rank, 0)), 0, 0, 0, 0))
            continue
        after = on_zero[rank] - first
        out.append(
            HostAlignment(
                rank=rank,
                offset_ns=int(offsets_ns.get(rank, 0)),
                start_unix_ns=int(results[rank]["start_unix_ns"]),
                start_on_zero_ns=on_zero[rank],
                start_after_first_ns=after,
                # Nearest whole interval: interval k then overlaps the first host's k + shift most.
                shift_intervals=min((after + interval_ns // 2) // interval_ns, longest),
            )
        )
    return out


def _empty_interval(start_ns: int, end_ns: int, empty_hist: str) -> Json:
    return {
        "start_ns": start_ns,
        "end_ns": end_ns,
        "dirs": [{"ios": 0, "bytes": 0, "lat_ns": empty_hist} for _ in range(2)],
    }


def _copy_to_series(result: Json) -> Json:
    """A copy of ``result`` whose jobs, workers and series intervals are
    new objects (what :func:`aligned` changes) and whose other parts
    (histograms, options) are shared: a deep copy of 10,000 hosts'
    results cost more than their merge."""
    r = dict(result)
    r["jobs"] = [{**j, "workers": [dict(w) for w in j["workers"]]} for j in result["jobs"]]
    for job in r["jobs"]:
        for w in job["workers"]:
            if w.get("series"):
                w["series"] = [dict(s) for s in w["series"]]
    return r


def aligned(result: Json, a: HostAlignment) -> Json:
    """A copy of ``result`` on rank 0's clock (see the module doc); ``result`` is left as it was."""
    if not a.start_unix_ns:
        return copy.deepcopy(result)  # no measured start: nothing to align
    r = _copy_to_series(result)
    r["start_unix_ns"] = a.start_on_zero_ns
    interval_ns = int(r["interval_ns"])
    empty = _native.hist_from_counts([]) if a.shift_intervals else ""
    for job in r["jobs"]:
        for w in job["workers"]:
            series = w.get("series") or []
            for s in series:
                s["start_ns"] += a.start_after_first_ns
                s["end_ns"] += a.start_after_first_ns
            pad = [_empty_interval(k * interval_ns, (k + 1) * interval_ns, empty) for k in range(a.shift_intervals)]
            if series and pad:
                # The pad ends where the host's first interval begins (never overlaps it).
                pad[-1]["end_ns"] = min(pad[-1]["end_ns"], series[0]["start_ns"])
            w["series"] = pad + series
    return r


def align(results: Mapping[int, Json], offsets_ns: Mapping[int, int]) -> tuple[dict[int, Json], list[HostAlignment]]:
    """Copies of every rank's result on rank 0's clock, and how each was aligned."""
    how = plan(results, offsets_ns)
    return {a.rank: aligned(results[a.rank], a) for a in how}, how


def report(how: Sequence[HostAlignment]) -> Json:
    """The ``alignment`` section of a fleet result."""
    return {"method": METHOD, "ranks": [a.as_json() for a in how]}


__all__ = ["METHOD", "HostAlignment", "align", "aligned", "plan", "report"]
