"""fio's per-priority latency (``prios`` in each direction of fio's json)
from the workers' per-priority histograms.

Jobs with cmdprio options record each I/O's completion latency under its
priority (the result's ``dirs[i].prios``: ioprio value and clat
histogram). As fio does, the ``prios`` array is written only when at least
two priorities have samples; each entry names the class, level and hint
and holds ``clat_ns`` computed from the exact merge of the workers'
histograms (never an average of per-worker figures).
"""

from __future__ import annotations

from typing import Any

from iolab import _native

Json = dict[str, Any]


def prio_summaries(workers: list[Json], percentiles: list[float]) -> dict[str, list[tuple[Json, Json]]]:
    """Per direction with at least two priorities sampled: (fio's class,
    level and hint of the priority, the LatSummary of its merged clat)."""
    out: dict[str, list[tuple[Json, Json]]] = {}
    for i, d in enumerate(("read", "write")):
        by_prio: dict[int, list[str]] = {}
        for w in workers:
            for p in w["dirs"][i].get("prios", []):
                by_prio.setdefault(int(p["ioprio"]), []).append(p["clat_ns"])
        stats = {v: _native.hist_stats(_native.hist_merge(h), percentiles) for v, h in sorted(by_prio.items())}
        stats = {v: s for v, s in stats.items() if s["count"] > 0}
        if len(stats) < 2:
            continue
        out[d] = [
            (
                {"prioclass": v >> 13, "prio": v & 7, "priohint": (v >> 3) & 0x3FF},
                {**s, "percentiles": [{"percentile": float(p), "value_ns": ns} for p, ns in s["percentiles"].items()]},
            )
            for v, s in stats.items()
        ]
    return out
