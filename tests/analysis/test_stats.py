"""stats (scipy.stats underneath): mean, sd, CV and the 95% t interval
against hand-computed values; t quantiles, Kendall's tau and the bootstrap
interval against published tables and closed forms."""

from __future__ import annotations

import math

import pytest
from iolab.analysis.stats import bootstrap_ci95, bootstrap_ci95_many, describe, kendall, linear_fit, t95


def test_ci_of_three_repeats_matches_hand_computation() -> None:
    # mean 12, sd 2 (n-1), t(0.975, 2) = 4.303: half-width 4.303 * 2 / sqrt(3) = 4.9687
    st = describe([10.0, 12.0, 14.0], "iops")
    assert st.value == st.mean == 12.0
    assert st.sd == pytest.approx(2.0)
    assert st.cv_pct == pytest.approx(100 * 2 / 12)
    assert st.ci95_low == pytest.approx(12 - 4.303 * 2 / math.sqrt(3), abs=1e-3)
    assert st.ci95_high == pytest.approx(7.0313 + 2 * 4.9687, abs=1e-3)
    assert st.n == 3 and st.unit == "iops"


def test_one_repeat_has_no_spread_and_headline_value_can_differ() -> None:
    st = describe([5.0], "ns", value=7.0)
    assert (st.value, st.mean, st.sd, st.cv_pct, st.ci95_low) == (7.0, 5.0, None, None, None)


@pytest.mark.parametrize(
    ("df", "published"),
    # two-sided 95% Student t quantiles as printed in the tables (3 decimals)
    [(1, 12.706), (2, 4.303), (5, 2.571), (9, 2.262), (30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980)],
)
def test_t_quantiles_match_published_tables(df: int, published: float) -> None:
    assert t95(df) == pytest.approx(published, abs=5e-4)


def test_t_limits() -> None:
    assert t95(10**7) == pytest.approx(1.960, abs=5e-4)
    with pytest.raises(ValueError):
        t95(0)
    with pytest.raises(ValueError):
        describe([], "iops")


def test_linear_fit_exact_line() -> None:
    slope, intercept, r2 = linear_fit([1, 2, 3, 4], [3, 5, 7, 9])
    assert (slope, intercept, r2) == pytest.approx((2.0, 1.0, 1.0))
    assert linear_fit([1, 2, 3], [1, 5, 2])[2] < 0.5


def test_kendall_tau_closed_forms() -> None:
    # n = 4, all 6 pairs concordant: tau 1, exact two-sided p = 2/4! = 1/12
    tau, p = kendall([1, 2, 3, 4], [10.0, 20.0, 30.0, 40.0])
    assert tau == pytest.approx(1.0) and p == pytest.approx(1 / 12)
    # one discordant pair of 6: tau = (5 - 1) / 6
    tau, _ = kendall([1, 2, 3, 4], [10.0, 30.0, 20.0, 40.0])
    assert tau == pytest.approx(4 / 6)
    assert kendall([1, 2, 3], [5.0, 5.0, 5.0]) == (0.0, 1.0)


def test_bootstrap_interval_stays_within_the_data() -> None:
    values = [100.0, 130.0, 90.0, 140.0]
    low, high = bootstrap_ci95(values)  # type: ignore[misc]
    assert 90.0 <= low < sum(values) / 4 < high <= 140.0
    assert bootstrap_ci95(values) == (low, high)  # seeded: reproducible
    assert bootstrap_ci95([7.0]) is None and bootstrap_ci95([3.0, 3.0]) == (3.0, 3.0)


def test_bootstrap_of_many_rows_is_each_rows_own() -> None:
    rows = [[100.0, 130.0, 90.0], [5.0, 9.0, 7.0], [4.0, 4.0, 4.0]]
    many = bootstrap_ci95_many(rows)
    for got, row in zip(many[:2], rows):
        assert got == pytest.approx(bootstrap_ci95(row))
    assert many[2] == (4.0, 4.0)
    with pytest.raises(ValueError):
        bootstrap_ci95_many([[1.0, 2.0], [1.0]])
