"""Statistics over a point's repeats: mean, sample standard deviation,
coefficient of variation and a 95% Student t confidence interval of the
mean, as one :class:`~iolab.analysis.model.Stat`.

scipy is not a dependency of iolab and would be one large wheel for one
function, so the two-sided 95% t quantiles are a table (the standard
values, to three decimals) for 1 to 30 degrees of freedom, then a few rows to
120 and the normal 1.960 beyond; between rows the next smaller df is
used, which widens the interval slightly (conservative).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Optional

from iolab.analysis.model import Stat

#: t(0.975, df) for df = 1..30.
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_T95_LARGE = ((40, 2.021), (60, 2.000), (120, 1.980))
_Z95 = 1.960


def t95(df: int) -> float:
    """Two-sided 95% quantile of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T95):
        return _T95[df - 1]
    value = _T95[-1]
    for bound, t in _T95_LARGE:
        if df >= bound:
            value = t
    return value if df < 1000 else _Z95


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def sample_sd(values: Sequence[float]) -> Optional[float]:
    """Sample standard deviation (n - 1); None for fewer than two values."""
    if len(values) < 2:
        return None
    m = mean(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (len(values) - 1))


def describe(values: Sequence[float], unit: str, value: Optional[float] = None) -> Stat:
    """The :class:`Stat` of per-repeat ``values``; ``value`` overrides the
    headline figure (a percentile of the merged histogram), else the mean."""
    if not values:
        raise ValueError("describe: no values")
    m = mean(values)
    sd = sample_sd(values)
    cv = None if sd is None or m == 0 else abs(sd / m) * 100.0
    low = high = None
    if sd is not None:
        half = t95(len(values) - 1) * sd / math.sqrt(len(values))
        low, high = m - half, m + half
    return Stat(
        value=m if value is None else float(value),
        n=len(values),
        mean=m,
        sd=sd,
        cv_pct=cv,
        ci95_low=low,
        ci95_high=high,
        unit=unit,
    )


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float]:
    """Least squares ``y = slope x + intercept``; returns (slope, intercept, r²).
    r² is 1.0 when every y is equal (a flat line fits exactly)."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("linear_fit needs two or more (x, y) pairs")
    mx, my = mean(xs), mean(ys)
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("linear_fit: every x is equal")
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    intercept = my - slope * mx
    syy = math.fsum((y - my) ** 2 for y in ys)
    r2 = 1.0 if syy == 0 else (sxy * sxy) / (sxx * syy)
    return slope, intercept, r2
