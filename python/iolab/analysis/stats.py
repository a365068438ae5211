"""Statistics over a point's repeats and along a study's axes, from
scipy.stats (the library statisticians use; nothing here is hand-written
numerics):

- :func:`describe` — mean, sample standard deviation, coefficient of
  variation and a 95% Student t confidence interval of the mean, as one
  :class:`~iolab.analysis.model.Stat` (:func:`t95`: ``scipy.stats.t.ppf``);
- :func:`bootstrap_ci95` / :func:`bootstrap_ci95_many` — a 95% bootstrap
  interval of the mean (``scipy.stats.bootstrap``, percentile method, fixed
  seed so a report is reproducible) for figures whose per-repeat values are
  not normal: a latency percentile's (:mod:`iolab.analysis.tables`);
- :func:`linear_fit` — least squares (``scipy.stats.linregress``);
- :func:`kendall` — Kendall's tau rank correlation and its two-sided p
  (``scipy.stats.kendalltau``), the test behind "rises" / "falls".
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any, Optional

from iolab.analysis.model import Stat

#: Resamples of :func:`bootstrap_ci95`; its seed makes a report reproducible.
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20_250_101


def _scipy() -> tuple[Any, Any]:
    """numpy and scipy.stats, imported on first use: importing scipy takes
    a good part of a second, and most iolab commands never need it."""
    import numpy as np
    from scipy import stats as sps  # type: ignore[import-untyped]  # scipy ships no type information

    return np, sps


def t95(df: float) -> float:
    """Two-sided 95% quantile of Student's t with ``df`` degrees of freedom."""
    _, sps = _scipy()
    if not df >= 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    return float(sps.t.ppf(0.975, df))


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def sample_sd(values: Sequence[float]) -> Optional[float]:
    """Sample standard deviation (n - 1); None for fewer than two values."""
    if len(values) < 2:
        return None
    return statistics.stdev(float(v) for v in values)


def describe(
    values: Sequence[float], unit: str, value: Optional[float] = None, ci95: Optional[tuple[float, float]] = None
) -> Stat:
    """The :class:`Stat` of per-repeat ``values``; ``value`` overrides the
    headline figure (a percentile of the merged histogram), else the mean;
    ``ci95`` overrides the Student t interval (a percentile's bootstrap one)."""
    if not values:
        raise ValueError("describe: no values")
    m = mean(values)
    sd = sample_sd(values)
    cv = None if sd is None or m == 0 else abs(sd / m) * 100.0
    low = high = None
    if sd is not None:
        half = t95(len(values) - 1) * sd / math.sqrt(len(values))
        low, high = (m - half, m + half) if ci95 is None else ci95
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


def bootstrap_ci95(values: Sequence[float]) -> Optional[tuple[float, float]]:
    """95% bootstrap interval (percentile method) of the mean of ``values``;
    None for fewer than two values. It never leaves the values' range, so a
    non-negative figure never gets a negative bound."""
    return bootstrap_ci95_many([values])[0]


def bootstrap_ci95_many(rows: Sequence[Sequence[float]]) -> list[Optional[tuple[float, float]]]:
    """:func:`bootstrap_ci95` of several figures measured over the same
    repeats (one row per figure, one column per repeat), in ONE resampling:
    a point's 17 percentiles cost one call, not 17."""
    np, sps = _scipy()
    if not rows or len(rows[0]) < 2:
        return [None] * len(rows)
    if any(len(r) != len(rows[0]) for r in rows):
        raise ValueError("bootstrap_ci95_many: every row needs one value per repeat")
    data = np.asarray(rows, dtype=float)
    res = sps.bootstrap(
        (data,),
        np.mean,
        axis=-1,
        confidence_level=0.95,
        n_resamples=BOOTSTRAP_RESAMPLES,
        method="percentile",
        random_state=np.random.default_rng(BOOTSTRAP_SEED),
    )
    low, high = np.atleast_1d(res.confidence_interval.low), np.atleast_1d(res.confidence_interval.high)
    # A row without spread has no resampling to do: its interval is its value.
    return [
        (float(r[0]), float(r[0])) if len(set(r)) == 1 else (float(lo), float(hi)) for r, lo, hi in zip(rows, low, high)
    ]


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float]:
    """Least squares ``y = slope x + intercept``; returns (slope, intercept, r²).
    r² is 1.0 when every y is equal (a flat line fits exactly)."""
    np, sps = _scipy()
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("linear_fit needs two or more (x, y) pairs")
    if len(set(xs)) == 1:
        raise ValueError("linear_fit: every x is equal")
    if len(set(ys)) == 1:
        return 0.0, float(ys[0]), 1.0
    fit = sps.linregress(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))
    return float(fit.slope), float(fit.intercept), float(fit.rvalue) ** 2


def kendall(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Kendall's tau-b of ``ys`` against ``xs`` and its two-sided p-value;
    (0.0, 1.0) when either side is constant (no order to test)."""
    np, sps = _scipy()
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("kendall needs two or more (x, y) pairs")
    if len(set(xs)) == 1 or len(set(ys)) == 1:
        return 0.0, 1.0
    res = sps.kendalltau(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))
    return float(res.statistic), float(res.pvalue)
