"""Saturation (the knee) along a numeric axis: the first axis value after
which more load stops adding throughput but keeps adding latency.

In a series (points ordered by the axis, the other axes fixed) the knee is
the first point ``k`` such that

- throughput rose to it: at least ``KNEE_MIN_RISE_PCT`` above the first point;
- throughput stays flat after it: every later point within ``KNEE_FLAT_PCT`` of it;
- latency keeps growing after it: the last point's latency at least
  ``KNEE_MIN_LAT_GROWTH_PCT`` above the knee's.

Throughput is bandwidth along a block-size axis, IOPS elsewhere; latency
is total p99 (else clat p99, else the mean). The finding says whether
latency grows linearly past the knee (r² of a line ≥ ``LINEAR_R2``), as a
saturated queue does: each extra I/O waits for one more service time.
"""

from __future__ import annotations

from typing import Any, Optional

from iolab.analysis import wording as w
from iolab.analysis.axes import Series, numeric_axes, series
from iolab.analysis.model import Dataset, Finding, Row
from iolab.analysis.stats import linear_fit
from iolab.analysis.tables import figure, latency_figure, unstable_metrics

KNEE_MIN_RISE_PCT = 20.0
KNEE_FLAT_PCT = 10.0
KNEE_MIN_LAT_GROWTH_PCT = 20.0
#: r² from which growth is called linear.
LINEAR_R2 = 0.95

Json = dict[str, Any]


def _lat(rows: list[Row]) -> tuple[str, list[Optional[float]]]:
    name = latency_figure(rows[0])[0]
    return name, [figure(r, name) for r in rows]


def find_knee(s: Series) -> Optional[Json]:
    """The knee of one series with its figures, or None."""
    tname, t = s.throughput()
    lname, lat = _lat(s.rows)
    n = len(t)
    if n < 3 or t[0] <= 0:
        return None
    for k in range(1, n - 1):
        tail_t, lk, le = t[k + 1 :], lat[k], lat[-1]
        if t[k] <= 0 or lk is None or le is None or lk <= 0:
            continue
        flat_pct = max(abs(v / t[k] - 1) for v in tail_t) * 100
        rise_pct = (t[k] / t[0] - 1) * 100
        growth_pct = (le / lk - 1) * 100
        if rise_pct >= KNEE_MIN_RISE_PCT and flat_pct <= KNEE_FLAT_PCT and growth_pct >= KNEE_MIN_LAT_GROWTH_PCT:
            return _knee_json(s, k, tname, t, lname, lat, flat_pct, rise_pct, growth_pct)
    return None


def _knee_json(
    s: Series, k: int, tname: str, t: list[float], lname: str, lat: list[Optional[float]],
    flat_pct: float, rise_pct: float, growth_pct: float,
) -> Json:  # fmt: skip
    tail_lat = [v for v in lat[k:] if v is not None]
    r2 = None
    if len(tail_lat) >= 3 and len(tail_lat) == len(s.xs[k:]):
        r2 = linear_fit(s.xs[k:], tail_lat)[2]
    return {
        "axis": s.axis,
        "dir": s.dir,
        "series": s.fixed,
        "point": s.rows[k].point,
        "value": s.xs[k],
        "label": s.x_text(k),
        "end_label": s.x_text(len(t) - 1),
        "throughput_metric": tname,
        "throughput": t[k],
        "throughput_first": t[0],
        "iops": figure(s.rows[k], "iops"),
        "bw_bytes_per_s": figure(s.rows[k], "bw_bytes_per_s"),
        "rise_to_knee_pct": rise_pct,
        "flat_after_within_pct": flat_pct,
        "latency_metric": lname,
        "lat_at_knee_ns": lat[k],
        "lat_at_end_ns": lat[-1],
        "lat_growth_after_pct": growth_pct,
        "lat_linear_r2": r2,
    }


def _tput(metric: str, v: float) -> str:
    return w.bytes_per_s(v) if metric == "bw_bytes_per_s" else w.iops(v)


def knee_finding(s: Series, knee: Json) -> Finding:
    lname = knee["latency_metric"].replace("_ns", "").replace("_", " ")
    linear = knee["lat_linear_r2"] is not None and knee["lat_linear_r2"] >= LINEAR_R2
    how = f"linearly (r² {knee['lat_linear_r2']:.2f})" if linear else ""
    tm = knee["throughput_metric"]
    text = (
        f"{s.dir} {lname} grows {how + ' ' if how else ''}with {s.axis} above {knee['label']}{s.where} "
        f"({w.ns(knee['lat_at_knee_ns'])} → {w.ns(knee['lat_at_end_ns'])} at {knee['end_label']}, "
        f"{w.signed_pct(knee['lat_growth_after_pct'])}) while {s.dir} throughput stays within "
        f"{w.pct(knee['flat_after_within_pct'])} of {_tput(tm, knee['throughput'])} "
        f"(it rose {w.signed_pct(knee['rise_to_knee_pct'])} from {_tput(tm, knee['throughput_first'])} to get there): "
        f"saturated at {knee['label']}; more {s.axis} only queues"
    )
    # A knee drawn through points whose repeats disagree may be noise: say so, and rank it lower.
    cvs = [cv for r in s.rows for cv in unstable_metrics(r.metrics).values()]
    if cvs:
        knee["unstable_worst_cv_pct"] = max(cvs)
        text += f"; but repeats in this series disagree (CV up to {w.pct(max(cvs))}), so the knee may be noise"
    return Finding("knee", "info", text, knee, s.axis, [r.point for r in s.rows], 60.0 if cvs else 80.0)


def knees(ds: Dataset, rows: list[Row]) -> tuple[dict[str, Optional[Json]], list[Finding]]:
    """Per numeric axis: the first series' knee (None when no series has one), and a finding per knee."""
    out: dict[str, Optional[Json]] = {}
    findings = []
    for axis in numeric_axes(ds):
        found = []
        for s in series(ds, rows, axis):
            k = find_knee(s)
            if k is not None:
                found.append(k)
                findings.append(knee_finding(s, k))
        out[axis] = {**found[0], "all": found[1:]} if found else None
    return out, findings
