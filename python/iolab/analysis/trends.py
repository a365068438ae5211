"""Trend statements per numeric axis, in plain words, generated from the
figures they quote.

For each series (see :mod:`iolab.analysis.axes`) and direction, throughput
and latency are each classified from their step-to-step changes:

- **flat**: no step and no overall spread beyond ``TREND_NOISE_PCT``;
- **rises** / **falls**: every step beyond the noise goes the same way
  ("linearly" when a straight line fits with r² ≥ ``LINEAR_R2``);
- **ambiguous**: steps beyond the noise go both ways — the statement says
  there is no clear trend and quotes the steps, rather than pick one.

A step is "beyond the noise" when it exceeds ``TREND_NOISE_PCT`` and also
the repeats' coefficient of variation at either end of the step (so noisy
repeats need bigger steps before a direction is claimed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from iolab.analysis import wording as w
from iolab.analysis.axes import Series, numeric_axes, series
from iolab.analysis.knee import LINEAR_R2
from iolab.analysis.model import Dataset, Finding, Row, Stat
from iolab.analysis.stats import linear_fit
from iolab.analysis.tables import latency_figure

#: Steps (%) smaller than this are noise, not a trend.
TREND_NOISE_PCT = 5.0

Json = dict[str, Any]


def _noise(stats: Sequence[Optional[Stat]], i: int) -> float:
    cvs = [st.cv_pct for st in (stats[i], stats[i + 1]) if st is not None and st.cv_pct is not None]
    return max([TREND_NOISE_PCT, *cvs])


def classify(xs: Sequence[float], ys: Sequence[float], stats: Sequence[Optional[Stat]] = ()) -> Json:
    """``{"trend": flat|rises|falls|ambiguous, "steps_pct": [...], "change_pct", "linear", "r2"}``."""
    stats = list(stats) or [None] * len(ys)
    steps = [(b / a - 1) * 100 if a else 0.0 for a, b in zip(ys, ys[1:])]
    big = [s for i, s in enumerate(steps) if abs(s) > _noise(stats, i)]
    lo, hi = min(ys), max(ys)
    spread = (hi / lo - 1) * 100 if lo > 0 else 0.0
    out: Json = {"steps_pct": steps, "change_pct": (ys[-1] / ys[0] - 1) * 100 if ys[0] else 0.0, "spread_pct": spread}
    if not big and spread <= TREND_NOISE_PCT:
        out["trend"] = "flat"
    elif big and all(s > 0 for s in big):
        out["trend"] = "rises"
    elif big and all(s < 0 for s in big):
        out["trend"] = "falls"
    elif not big and all(s >= 0 for s in steps):
        out["trend"] = "rises"  # small steps that all go one way add up beyond the noise
    elif not big and all(s <= 0 for s in steps):
        out["trend"] = "falls"
    else:
        out["trend"] = "ambiguous"
    r2 = linear_fit(xs, ys)[2] if len(xs) >= 3 and len(set(xs)) > 1 else None
    out["r2"] = r2
    out["linear"] = r2 is not None and r2 >= LINEAR_R2 and out["trend"] in ("rises", "falls")
    return out


def _fmt(metric: str, v: float) -> str:
    if metric == "bw_bytes_per_s":
        return w.bytes_per_s(v)
    if metric == "iops":
        return w.iops(v)
    return w.ns(v)


def _name(metric: str) -> str:
    return {"iops": "IOPS", "bw_bytes_per_s": "bandwidth"}.get(metric) or metric.replace("_ns", "").replace("_", " ")


def statement(s: Series, metric: str, ys: Sequence[float], c: Json) -> str:
    """The sentence for one classified series."""
    what = f"{s.dir} {_name(metric)}"
    first, last = f"{_fmt(metric, ys[0])} at {s.x_text(0)}", f"{_fmt(metric, ys[-1])} at {s.x_text(len(ys) - 1)}"
    if c["trend"] == "flat":
        return f"{what} stays within {w.pct(c['spread_pct'])} as {s.axis} varies{s.where} ({first}, {last})"
    if c["trend"] == "ambiguous":
        steps = ", ".join(w.signed_pct(x) for x in c["steps_pct"])
        return (
            f"{what} along {s.axis}{s.where}: no clear trend, the data are ambiguous: it goes up and down by more "
            f"than the noise (steps {steps}; {first}, {last})"
        )
    how = " linearly" if c["linear"] else ""
    return f"{what} {c['trend']}{how} with {s.axis}{s.where}: {first} → {last} ({w.signed_pct(c['change_pct'])})"


def _series_findings(s: Series) -> list[Finding]:
    out = []
    tname, _ = s.throughput()
    lname = latency_figure(s.rows[0])[0]
    for metric, score in ((tname, 50.0), (lname, 45.0)):
        pairs = [(x, st) for x, r in zip(s.xs, s.rows) if (st := r.metrics.get(metric)) is not None]
        if len(pairs) < 2:
            continue
        xs, stats = [x for x, _ in pairs], [st for _, st in pairs]
        ys = [st.value for st in stats]
        c = classify(xs, ys, stats)
        figs = {"metric": metric, "dir": s.dir, "series": s.fixed, "xs": xs, "values": ys, **c}
        kind_score = score + (5.0 if c["trend"] == "ambiguous" else 0.0)
        out.append(
            Finding("trend", "info", statement(s, metric, ys, c), figs, s.axis, [r.point for r in s.rows], kind_score)
        )
    return out


def trends(ds: Dataset, rows: list[Row]) -> list[Finding]:
    """Trend statements for every numeric axis, series and direction."""
    return [f for axis in numeric_axes(ds) for s in series(ds, rows, axis) for f in _series_findings(s)]
