"""Comparison of two analyses (``iolab compare A B``): the same table rows,
matched by their parameters and direction, each metric's difference in %
and whether it is larger than the noise between repeats.

- :func:`compare` → :class:`Comparison` (pure: two :class:`Analysis` in).
- :func:`welch` — Welch's unequal-variance t-test from ``(n, mean, sd)`` of
  each side, two-sided, 95 %: the per-repeat values of each point are what
  the Stats summarise, so nothing else is needed.
- :func:`student_t_sf` — the Student t tail probability, through the
  regularised incomplete beta function (written here, Numerical Recipes'
  continued fraction, because scipy is not a dependency and this is the one
  function iolab would take from it).

Verdicts: ``significant`` (p < 0.05), ``within noise`` (p ≥ 0.05) and
``no repeats: cannot tell`` when either side has fewer than two repeats.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Optional

from iolab.analysis.model import Analysis, Json, Row, Scalar, Stat

SIGNIFICANT = "significant"
WITHIN_NOISE = "within noise"
NO_REPEATS = "no repeats: cannot tell"
ALPHA = 0.05


@dataclass
class Welch:
    #: t and df are None when neither side has any spread (sd 0): the test
    #: degenerates; p is then 0 for different means and 1 for equal ones.
    t: Optional[float]
    df: Optional[float]
    p_value: float


@dataclass
class MetricDiff:
    metric: str
    unit: str
    a: Stat
    b: Stat
    #: (b - a) / a x 100 on the headline values; None when a is 0
    diff_pct: Optional[float]
    verdict: str
    test: Optional[Welch] = None


@dataclass
class RowDiff:
    key: str  # "iodepth=32 bs=4k" (or the job's name for a run without axes)
    params: dict[str, Scalar]
    dir: str
    metrics: dict[str, MetricDiff]


@dataclass
class Comparison:
    a_name: str
    b_name: str
    rows: list[RowDiff]
    #: row keys ("key / dir") present on one side only
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)

    def to_json(self) -> Json:
        """The ``iolab.compare/1`` document."""
        return {"schema": "iolab.compare/1", **asdict(self)}


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 3e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln_front) * _betacf(b, a, 1.0 - x) / b


def student_t_sf(t: float, df: float) -> float:
    """Two-sided tail probability P(|T| > |t|) of Student's t with ``df`` degrees of freedom."""
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def welch(a: Stat, b: Stat) -> Optional[Welch]:
    """Welch's t-test of the two means; None when either side has < 2 repeats."""
    if a.n < 2 or b.n < 2 or a.sd is None or b.sd is None:
        return None
    va, vb = a.sd**2 / a.n, b.sd**2 / b.n
    se2 = va + vb
    if se2 == 0.0:
        # Both sides without any spread: any difference is beyond the noise.
        return Welch(None, None, 1.0 if a.mean == b.mean else 0.0)
    t = (b.mean - a.mean) / math.sqrt(se2)
    df = se2**2 / (va**2 / (a.n - 1) + vb**2 / (b.n - 1))
    return Welch(t, df, student_t_sf(t, df))


def diff_metric(metric: str, a: Stat, b: Stat) -> MetricDiff:
    """One metric of one matched row: difference and verdict."""
    pct = (b.value - a.value) / a.value * 100.0 if a.value else None
    test = welch(a, b)
    if test is None:
        verdict = NO_REPEATS
    else:
        verdict = SIGNIFICANT if test.p_value < ALPHA else WITHIN_NOISE
    return MetricDiff(metric, a.unit, a, b, pct, verdict, test)


def point_label(an: Analysis, point: int) -> str:
    """What names a point: its parameters, else (a run without axes) its job's name."""
    for p in an.dataset.points:
        if p.index == point:
            if p.params:
                return " ".join(f"{k}={v}" for k, v in p.params.items())
            return p.samples[0].label if p.samples else f"point {point}"
    return f"point {point}"


def _keyed(an: Analysis) -> dict[tuple[str, str], Row]:
    return {(point_label(an, r.point), r.dir): r for r in an.rows}


def compare(a: Analysis, b: Analysis) -> Comparison:
    """Match ``a``'s and ``b``'s rows by parameters and direction; diff every common metric."""
    ka, kb = _keyed(a), _keyed(b)
    rows = []
    for key, ra in ka.items():
        rb = kb.get(key)
        if rb is None:
            continue
        metrics = {m: diff_metric(m, sa, rb.metrics[m]) for m, sa in ra.metrics.items() if m in rb.metrics}
        rows.append(RowDiff(key[0], ra.params, key[1], metrics))
    return Comparison(
        a.dataset.name,
        b.dataset.name,
        rows,
        only_a=[f"{k} / {d}" for k, d in ka if (k, d) not in kb],
        only_b=[f"{k} / {d}" for k, d in kb if (k, d) not in ka],
    )
