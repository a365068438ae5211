"""stats: mean, sd, CV and the 95% t interval against hand-computed values."""

from __future__ import annotations

import math

import pytest
from iolab.analysis.stats import describe, linear_fit, t95


def test_ci_of_three_repeats_matches_hand_computation() -> None:
    # mean 12, sd 2 (n-1), t(0.975, 2) = 4.303: half-width 4.303 * 2 / sqrt(3) = 4.9687
    st = describe([10.0, 12.0, 14.0], "iops")
    assert st.value == st.mean == 12.0
    assert st.sd == pytest.approx(2.0)
    assert st.cv_pct == pytest.approx(100 * 2 / 12)
    assert st.ci95_low == pytest.approx(12 - 4.303 * 2 / math.sqrt(3))
    assert st.ci95_high == pytest.approx(7.0313 + 2 * 4.9687, abs=1e-3)
    assert st.n == 3 and st.unit == "iops"


def test_one_repeat_has_no_spread_and_headline_value_can_differ() -> None:
    st = describe([5.0], "ns", value=7.0)
    assert (st.value, st.mean, st.sd, st.cv_pct, st.ci95_low) == (7.0, 5.0, None, None, None)


def test_t_table() -> None:
    assert t95(1) == 12.706 and t95(9) == 2.262 and t95(30) == 2.042
    assert t95(45) == 2.021 and t95(100_000) == 1.960
    with pytest.raises(ValueError):
        t95(0)
    with pytest.raises(ValueError):
        describe([], "iops")


def test_linear_fit_exact_line() -> None:
    slope, intercept, r2 = linear_fit([1, 2, 3, 4], [3, 5, 7, 9])
    assert (slope, intercept, r2) == pytest.approx((2.0, 1.0, 1.0))
    assert linear_fit([1, 2, 3], [1, 5, 2])[2] < 0.5
