"""Trend statements per numeric axis, in plain words, generated from the
figures they quote — and only when those figures support them.

For each series (see :mod:`iolab.analysis.axes`) and direction, throughput
and latency are each classified from their step-to-step changes:

- **flat**: no step and no overall spread beyond the noise;
- **rises** / **falls**, on one of two grounds, named in the evidence as
  ``basis``:

  - ``monotone``: no step goes against the direction by more than the
    noise, and the whole change exceeds it;
  - ``rank test``: the steps go both ways, but Kendall's tau says the
    values rise (or fall) with the axis (p < ``TREND_ALPHA``) *and* a
    straight line agrees in sign and fits with r² ≥ ``TREND_R2``;

  ("linearly" when a straight line fits with r² ≥ ``LINEAR_R2``);
- **ambiguous**: neither — the statement says there is no clear trend and
  quotes the steps, rather than pick a direction.

The noise of a step is ``TREND_NOISE_PCT`` or the repeats' coefficient of
variation at either end of it, whichever is larger (so noisy repeats need
bigger steps before a direction is claimed). Every figure used is in the
finding's JSON: steps, noise per step, tau and its p, slope and r².
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from iolab.analysis import wording as w
from iolab.analysis.axes import Series, numeric_axes, series
from iolab.analysis.knee import LINEAR_R2
from iolab.analysis.model import Dataset, Finding, Row, Stat
from iolab.analysis.stats import kendall, linear_fit
from iolab.analysis.tables import latency_figure

#: Steps (%) smaller than this are noise, not a trend.
TREND_NOISE_PCT = 5.0
#: Kendall's tau must reject "no order" at this level for a non-monotone series.
TREND_ALPHA = 0.05
#: ... and a straight line must fit at least this well.
TREND_R2 = 0.5

Json = dict[str, Any]


def _noise(stats: Sequence[Optional[Stat]], i: int) -> float:
    cvs = [st.cv_pct for st in (stats[i], stats[i + 1]) if st is not None and st.cv_pct is not None]
    return max([TREND_NOISE_PCT, *cvs])


def _fit(xs: Sequence[float], ys: Sequence[float]) -> Json:
    """Kendall's tau and the least-squares line of ``ys`` on ``xs`` (None below 3 distinct xs)."""
    if len(xs) < 3 or len(set(xs)) < 2:
        return {"kendall_tau": None, "kendall_p": None, "slope": None, "r2": None}
    tau, p = kendall(xs, ys)
    slope, _, r2 = linear_fit(xs, ys)
    return {"kendall_tau": tau, "kendall_p": p, "slope": slope, "r2": r2}


def _direction(steps: Sequence[float], noise: Sequence[float], change_pct: float, change_noise: float) -> str:
    """rises / falls when monotone within the noise, else ""."""
    if abs(change_pct) <= change_noise:
        return ""
    sign = 1.0 if change_pct > 0 else -1.0
    against = [s for s, n in zip(steps, noise) if s * sign < -n]
    return "" if against else ("rises" if sign > 0 else "falls")


def classify(xs: Sequence[float], ys: Sequence[float], stats: Sequence[Optional[Stat]] = ()) -> Json:
    """The trend of ``ys`` along ``xs`` with its evidence: ``trend`` (flat,
    rises, falls, ambiguous), ``basis`` (monotone, rank test or None),
    ``steps_pct``, ``noise_pct``, ``change_pct``, ``spread_pct``,
    ``kendall_tau``, ``kendall_p``, ``slope``, ``r2`` and ``linear``."""
    stats = list(stats) or [None] * len(ys)
    steps = [(b / a - 1) * 100 if a else 0.0 for a, b in zip(ys, ys[1:])]
    noise = [_noise(stats, i) for i in range(len(steps))]
    lo, hi = min(ys), max(ys)
    spread = (hi / lo - 1) * 100 if lo > 0 else 0.0
    change = (ys[-1] / ys[0] - 1) * 100 if ys[0] else 0.0
    out: Json = {"steps_pct": steps, "noise_pct": noise, "change_pct": change, "spread_pct": spread}
    out.update(_fit(xs, ys))
    big = any(abs(s) > n for s, n in zip(steps, noise))
    trend, basis = "ambiguous", None
    if not big and spread <= max(noise, default=TREND_NOISE_PCT):
        trend = "flat"
    elif d := _direction(steps, noise, change, max(noise, default=TREND_NOISE_PCT)):
        trend, basis = d, "monotone"
    elif out["kendall_p"] is not None and out["kendall_p"] < TREND_ALPHA and out["r2"] >= TREND_R2:
        if out["kendall_tau"] * out["slope"] > 0:
            trend, basis = ("rises" if out["kendall_tau"] > 0 else "falls"), "rank test"
    out["trend"], out["basis"] = trend, basis
    out["linear"] = out["r2"] is not None and out["r2"] >= LINEAR_R2 and trend in ("rises", "falls")
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
        big = any(abs(x) > n for x, n in zip(c["steps_pct"], c["noise_pct"]))
        why = "it goes up and down by more than the noise" if big else "its steps do not add up to one direction"
        return f"{what} along {s.axis}{s.where}: no clear trend, {why} (steps {steps}; {first}, {last})"
    how = " linearly" if c["linear"] else ""
    head = f"{what} {c['trend']}{how} with {s.axis}{s.where}: {first} → {last} ({w.signed_pct(c['change_pct'])})"
    if c["basis"] == "rank test":
        steps = ", ".join(w.signed_pct(x) for x in c["steps_pct"])
        return (
            f"{head}, not steadily: steps {steps}; Kendall tau {c['kendall_tau']:.2f} "
            f"(p {c['kendall_p']:.3f}), straight-line r² {c['r2']:.2f}"
        )
    return head


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
