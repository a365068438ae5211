"""The SNIA PTS steady-state test, and the page-cache drop between points.

:func:`steady_state_check`: over the last ``rounds`` values of a metric,
(1) the range (max - min) is within ``excursion_pct`` of their mean, and
(2) the least-squares line's change across the window (slope x (n - 1)) is
within ``slope_pct`` of the mean. SNIA PTS states the excursion as the
range over the mean (20 %) and the slope excursion as 10 % of the mean.

:func:`steady_metric`: a round's value — the core's group totals (IOPS,
bandwidth, mean latency), not a sum of per-job rates. :func:`drop_caches`:
the page-cache drop between points.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iolab.analysis.stats import linear_fit
from iolab.plans.model import PtsSteadyState

DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def steady_state_check(values: Sequence[float], ss: PtsSteadyState) -> dict[str, Any]:
    """Whether the window of the last ``ss.rounds`` values is steady, with the figures."""
    if len(values) < ss.rounds:
        return {"reached": False, "why": f"{len(values)} of {ss.rounds} rounds"}
    window = list(values[-ss.rounds :])
    n = len(window)
    mean = sum(window) / n
    if mean <= 0:
        return {"reached": False, "why": "mean is zero"}
    excursion_pct = (max(window) - min(window)) / mean * 100
    slope = _slope(window)
    slope_pct = abs(slope * (n - 1)) / mean * 100
    reached = excursion_pct <= ss.excursion_pct and slope_pct <= ss.slope_pct
    return {"reached": reached, "window_mean": mean, "excursion_pct": excursion_pct, "slope_pct": slope_pct}


def _slope(ys: Sequence[float]) -> float:
    """Least-squares slope of ``ys`` against 0, 1, 2, ... (per round)."""
    return linear_fit(range(len(ys)), ys)[0] if len(ys) >= 2 else 0.0


def steady_metric(summary: dict[str, Any], metric: str) -> float:
    """The run's value of a steady-state metric: the core's group total
    (``groups[].total``: both directions, every job merged). A point runs one
    job, so one stonewall group."""
    groups = summary["groups"]
    if len(groups) != 1:
        raise ValueError(f"steady state is judged on one stonewall group; this round ran {len(groups)}")
    total = groups[0]["total"]
    if metric == "iops":
        return float(total["iops"])
    if metric == "bw_bytes_per_s":
        return float(total["bw_bytes_per_s"])
    return float(total["lat"]["mean_ns"])


def drop_caches(path: Path = DROP_CACHES) -> dict[str, Any]:
    """Write dirty pages back, then drop the page cache, dentries and inodes.

    Returns what happened, for the point's record: ``{"done": True}`` or
    ``{"done": False, "error": "..."}`` (not root, a container's read-only /proc).
    """
    os.sync()
    try:
        with open(path, "w", encoding="ascii") as f:
            f.write("3\n")
    except OSError as e:
        return {"done": False, "error": f"{path}: {e.strerror or e}"}
    return {"done": True}
