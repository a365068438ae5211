"""The latency-load curve ``iolab find`` fits as it goes, to guess where
the SLO breaks.

A value's *badness* is its worst latency clause's figure over its
threshold (``p99 / 1 ms``): below 1 the SLO's latency holds, above it
breaks. Two shapes cover the curves a load axis gives:

- **linear** (``s = a + b x``): a closed loop past saturation, where by
  Little's law every I/O waits ``QD / capacity`` (QD, numjobs);
- **inverse** (``1/s = a + b x``): an open queue approaching its capacity,
  where the latency grows as ``1 / (capacity - rate)`` (rate_iops; exact
  for M/M/1).

Each is put through two measured values and judged by how well it
predicts a third (the nearest other value measured): the better one says
where ``s`` crosses 1. Between a value that met the SLO and one that broke
it that is an interpolation, so it always lies inside the bracket; above
the highest value met it is an extrapolation, which the search only
follows where it is closer than the next geometric step
(:func:`iolab.plans.find.search`). A guess only chooses the next value to
measure: every verdict is still measured.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Optional

from iolab.plans.slo import Verdict

#: (axis value, badness) of a measured value.
CurvePoint = tuple[int, float]


def badness(verdict: Verdict) -> Optional[float]:
    """The worst latency clause's figure over its threshold; None without a
    latency clause (an IOPS floor alone has no curve to fit) or without I/O."""
    ratios = [c.value / c.clause.threshold for c in verdict.clauses if c.clause.upper]
    if not ratios or not all(math.isfinite(r) and r > 0 for r in ratios):
        return None
    return max(ratios)


def _linear(p: CurvePoint, q: CurvePoint) -> Optional[tuple[float, float]]:
    """(intercept, slope) of s through p and q; None unless s rises."""
    if q[1] <= p[1] or q[0] == p[0]:
        return None
    slope = (q[1] - p[1]) / (q[0] - p[0])
    return p[1] - slope * p[0], slope


def _inverse(p: CurvePoint, q: CurvePoint) -> Optional[tuple[float, float]]:
    """(intercept, slope) of 1/s through p and q; None unless s rises."""
    return None if (line := _linear((p[0], -1 / p[1]), (q[0], -1 / q[1]))) is None else (-line[0], -line[1])


def _at(model: str, line: tuple[float, float], x: float) -> float:
    y = line[0] + line[1] * x
    if model == "linear":
        return y
    return 1 / y if y > 0 else math.inf


def _crossing(model: str, line: tuple[float, float]) -> float:
    """Where s = 1 (for both shapes: the line reaches 1)."""
    return (1 - line[0]) / line[1]


def predict(
    pair: tuple[CurvePoint, CurvePoint], others: Sequence[CurvePoint], *, within: Optional[float] = None
) -> Optional[float]:
    """Where the curve through ``pair`` crosses 1, in the shape that best
    predicts the (up to three) nearest of ``others``; None when neither
    shape rises, or (``within``) when that shape misses the nearest by more
    than this fraction (or there is none to check it on)."""
    p, q = sorted(pair)
    fits = {m: f(p, q) for m, f in (("linear", _linear), ("inverse", _inverse))}
    usable = {m: line for m, line in fits.items() if line is not None}
    near = sorted(others, key=lambda o: min(abs(o[0] - p[0]), abs(o[0] - q[0])))[:3]
    if not usable or (not near and within is not None):
        return None

    def error(m: str, o: CurvePoint) -> float:
        guess = _at(m, usable[m], o[0])
        return abs(math.log(guess / o[1])) if 0 < guess < math.inf else math.inf

    # One noisy value can make either shape look right; three seldom do.
    model = (
        min(usable, key=lambda m: sum(error(m, o) for o in near))
        if near
        else ("linear" if "linear" in usable else "inverse")
    )
    if within is not None and error(model, near[0]) > math.log1p(within):
        return None
    x = _crossing(model, usable[model])
    return x if math.isfinite(x) else None
