"""The arithmetic of a verdict: two figures compared beyond the noise, a
trend classified along an axis, and the verdict each gives, with the text
that names the numbers (:mod:`.claims` applies them to seed 002's
statements).

Noise: a difference counts only beyond ``max(LAB_NOISE_PCT, the
repeats' CV at either end)`` and, with two or more repeats, only when the
two 95 % intervals of the mean do not overlap; trends are classified by
:func:`iolab.analysis.trends.classify` (monotone beyond the noise, or
Kendall's tau with p < 0.05 and a straight line agreeing), and a
supported trend also needs a whole change beyond ``LAB_NOISE_PCT`` and
Kendall's tau of at least ``TAU_MIN`` in its direction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from iolab.analysis.stats import describe
from iolab.analysis.trends import TREND_NOISE_PCT, classify
from iolab.lab.fio_study.consistency import bs_bytes

Json = dict[str, Any]
Points = list[Json]
SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE = "supported", "contradicted", "inconclusive", "not testable"
#: The smallest difference a verdict counts (%), a chosen bound above
#: analysis/trends.py's 5 %: a point's repeats run back to back and share
#: the machine's state, so their spread understates the noise between
#: points run minutes apart (a ±3 % wiggle between points with ±1 % repeats
#: made a 5 % floor call a step, tests/lab/test_fio_study.py).
LAB_NOISE_PCT = 10.0
#: A trend verdict also needs Kendall's tau at least this strong in the
#: claimed direction: a series whose ends differ but whose points are out of
#: order (one high last point) is not "rising".
TAU_MIN = 0.6


def values(p: Json, direction: str, key: str) -> list[float]:
    """A point's per-repeat ``key`` in ``direction`` (read, write, or total: both)."""
    d = p["total"] if direction == "total" else p.get(direction)
    if not d:
        return []
    return [float(v) for v in d["per_repeat"][key] if v is not None]


def mean_of(vs: Sequence[float]) -> float:
    return sum(vs) / len(vs)


def compare(a: Sequence[float], b: Sequence[float]) -> Json:
    """b against a: ``{"a", "b", "diff_pct", "noise_pct", "order"}`` with
    ``order`` "higher", "lower" or "same" (within the noise; see the module doc)."""
    sa, sb = describe(a, "x"), describe(b, "x")
    diff = (sb.mean / sa.mean - 1) * 100 if sa.mean else 0.0
    noise = max([LAB_NOISE_PCT, *(s.cv_pct for s in (sa, sb) if s.cv_pct is not None)])
    apart = True
    if sa.ci95_low is not None and sb.ci95_low is not None:
        assert sa.ci95_high is not None and sb.ci95_high is not None
        apart = sb.ci95_low > sa.ci95_high or sa.ci95_low > sb.ci95_high
    order = "same"
    if abs(diff) > noise and apart:
        order = "higher" if diff > 0 else "lower"
    return {"a": sa.mean, "b": sb.mean, "diff_pct": diff, "noise_pct": noise, "separated": apart, "order": order}


def num(v: float) -> str:
    """A figure in evidence text: two decimals below 100, whole above."""
    return f"{v:,.2f}" if abs(v) < 100 else f"{v:,.0f}"


def cmp_text(c: Json, a: str, b: str, unit: str) -> str:
    """``b``'s figure against ``a``'s (``compare(a, b)``): "b B vs a A (+d%, noise n%)"."""
    sep = "" if c["separated"] else ", 95% intervals overlap"
    return f"{b} {num(c['b'])} {unit} vs {a} {num(c['a'])} {unit} ({c['diff_pct']:+.0f}%, noise {c['noise_pct']:.0f}%{sep})"


def axis_x(p: Json, axis: str) -> float:
    """A point's value on ``axis`` as a number (bs in bytes)."""
    x = p["params"][axis]
    return float(bs_bytes(str(x))) if axis == "bs" else float(x)


def trend(points: Points, axis: str, direction: str, key: str) -> Optional[Json]:
    """:func:`classify` of ``key`` along ``axis`` (per-repeat values → Stats), or None."""
    xs, ys, stats, labels = [], [], [], []
    # Along the axis's values, smallest first (the mix sweep runs 100 → 0).
    points = sorted(points, key=lambda p: axis_x(p, axis))
    for p in points:
        vs = values(p, direction, key)
        if not vs:
            continue
        xs.append(axis_x(p, axis))
        labels.append(str(p["params"][axis]))
        st = describe(vs, key)
        ys.append(st.mean)
        stats.append(st)
    if len(xs) < 2:
        return None
    return {"xs": xs, "labels": labels, "values": ys, **classify(xs, ys, stats)}


def trend_text(t: Json, what: str, unit: str) -> str:
    vals = ", ".join(f"{lab} {num(v)}" for lab, v in zip(t["labels"], t["values"]))
    tau = "" if t["kendall_tau"] is None else f"; Kendall tau {t['kendall_tau']:.2f} (p {t['kendall_p']:.3f})"
    noise = max(t["noise_pct"], default=TREND_NOISE_PCT)
    return f"{what} {t['trend']} ({vals} {unit}; change {t['change_pct']:+.0f}%, noise {noise:.0f}%{tau})"


def at(points: Points, **params: Any) -> list[Json]:
    """The points whose parameters match ``params`` (compared as text)."""
    return [p for p in points if all(str(p["params"].get(k)) == str(v) for k, v in params.items())]


def combine(parts: list[tuple[str, str]]) -> tuple[str, str]:
    """(verdict, evidence) of several (verdict, evidence) parts: contradicted
    if any part is, supported only if every part is."""
    verdicts = [v for v, _ in parts]
    # Where the parts disagree, each says its own verdict, so a claim
    # contradicted by one direction and flat or unclear in another says which.
    mixed = len(set(verdicts)) > 1
    text = "; ".join(f"{e} [{v}]" if mixed else e for v, e in parts)
    if CONTRADICTED in verdicts:
        return CONTRADICTED, text
    if verdicts and all(v == SUPPORTED for v in verdicts):
        return SUPPORTED, text
    if verdicts and all(v == NOT_TESTABLE for v in verdicts):
        return NOT_TESTABLE, text
    return INCONCLUSIVE, text


def trend_verdict(t: Optional[Json], want: str, what: str, unit: str) -> tuple[str, str]:
    if t is None:
        return NOT_TESTABLE, f"{what}: not measured"
    text = trend_text(t, what, unit)
    sign = 1.0 if want == "rises" else -1.0
    if t["trend"] == want and abs(t["change_pct"]) <= LAB_NOISE_PCT:
        return INCONCLUSIVE, f"{text}: a change within the lab's {LAB_NOISE_PCT:.0f}% noise bound"
    if t["trend"] == want and t["kendall_tau"] is not None and t["kendall_tau"] * sign < TAU_MIN:
        return INCONCLUSIVE, f"{text}: its ends differ, but its points are not in order (tau below {TAU_MIN})"
    if t["trend"] == want:
        return SUPPORTED, text
    if t["trend"] in ("rises", "falls") and t["kendall_tau"] is not None and abs(t["kendall_tau"]) < TAU_MIN:
        return INCONCLUSIVE, f"{text}: its ends differ, but its points are not in order (|tau| below {TAU_MIN})"
    if t["trend"] in ("rises", "falls", "flat"):
        return CONTRADICTED, text
    return INCONCLUSIVE, text


def order_verdict(c: Json, want: str, text: str) -> tuple[str, str]:
    if c["order"] == want:
        return SUPPORTED, text
    if c["order"] == "same":
        return INCONCLUSIVE, text
    return CONTRADICTED, text


# -- the claims, sweep by sweep -------------------------------------------------------------
