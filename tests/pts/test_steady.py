"""The PTS steady-state window on hand-computed recorded rounds."""

from __future__ import annotations

import pytest
from iolab.pts.steady import PTS_RULE, first_steady, window


def test_steady_window_figures() -> None:
    # mean 100; range 4 → 4 %; Σ(x-2)(y-100) = -3 over Σ(x-2)² = 10 → slope -0.3/round,
    # x 4 rounds = 1.2 → 1.2 %; the line at round 1: 100 + 0.3 x 2 = 100.6
    w = window([100, 102, 98, 101, 99])
    assert w is not None and w.steady
    assert (w.first_round, w.last_round) == (1, 5)
    assert w.mean == pytest.approx(100) and w.excursion == pytest.approx(4)
    assert w.excursion_pct == pytest.approx(4.0)
    assert w.slope_per_round == pytest.approx(-0.3) and w.intercept == pytest.approx(100.6)
    assert w.slope_excursion_pct == pytest.approx(1.2)
    assert w.bands() == pytest.approx(
        {"mean": 100, "data_low": 90, "data_high": 110, "slope_low": 95, "slope_high": 105}
    )


def test_window_breaking_the_20_pct_rule() -> None:
    # mean 100, range 25 → 25 %; slope -0.5/round x 4 = 2 % (within 10 %)
    w = window([90, 115, 95, 110, 90])
    assert w is not None and not w.steady
    assert w.excursion_pct == pytest.approx(25.0) and not w.excursion_ok
    assert w.slope_excursion_pct == pytest.approx(2.0) and w.slope_ok
    assert w.failures() == ["data excursion 25.0 % > 20 % of the mean"]


def test_window_breaking_the_slope_rule() -> None:
    # a climb of 4 per round: range 16 % (within 20 %), the line moves 16 % over the window
    w = window([92, 96, 100, 104, 108])
    assert w is not None and w.excursion_ok and not w.slope_ok
    assert w.slope_excursion_pct == pytest.approx(16.0)
    assert w.failures() == ["slope excursion 16.0 % > 10 % of the mean"]


def test_first_steady_window_of_a_decay() -> None:
    rounds = [300, 250, 200, 160, 130, 112, 104, 100, 101, 99, 100]
    # rounds 5-9: range 30 over mean 109.4 = 27.4 % → fails the 20 % rule;
    # rounds 6-10: range 12.6 % but slope -2.9/round x 4 = 11.2 % of 103.2 → fails the slope rule;
    # rounds 7-11: range 5 over 100.8 = 5.0 %, slope -0.9 x 4 = 3.6 % of 100.8 → steady.
    assert not window(rounds[:9]).excursion_ok  # type: ignore[union-attr]
    w6 = window(rounds[:10])
    assert w6 is not None and w6.excursion_ok and not w6.slope_ok
    assert w6.slope_excursion_pct == pytest.approx(11.6 / 103.2 * 100)
    w = first_steady(rounds)
    assert w is not None and (w.first_round, w.last_round) == (7, 11)
    assert w.excursion_pct == pytest.approx(5 / 100.8 * 100)
    assert w.slope_excursion_pct == pytest.approx(3.6 / 100.8 * 100)


def test_too_few_rounds_and_never_steady() -> None:
    assert window([1, 2, 3, 4]) is None
    assert first_steady([100 + 30 * (i % 2) for i in range(40)]) is None  # stops looking at round 25
    assert PTS_RULE.max_rounds == 25
