"""SNIA PTS steady state on known series, and the page-cache drop."""

from __future__ import annotations

from iolab.plans.model import PtsSteadyState
from iolab.plans.progress import fmt_eta
from iolab.plans.steady import steady_state_check

SS = PtsSteadyState(rounds=5, max_rounds=25, excursion_pct=20.0, slope_pct=10.0)


def test_flat_series_is_steady() -> None:
    check = steady_state_check([50, 100, 100, 101, 99, 100, 100], SS)
    assert check["reached"] is True
    assert abs(check["excursion_pct"] - 2.0) < 1e-9


def test_too_few_rounds() -> None:
    assert steady_state_check([100, 100], SS) == {"reached": False, "why": "2 of 5 rounds"}


def test_excursion_over_20_pct_is_not_steady() -> None:
    # range 25 over mean 100: 25 % > 20 %, slope zero
    check = steady_state_check([100, 87.5, 112.5, 100, 100], SS)
    assert check["reached"] is False and abs(check["excursion_pct"] - 25.0) < 1e-9


def test_slope_over_10_pct_is_not_steady() -> None:
    # a steady climb of 3 per round: range 12 % (within 20 %), slope x 4 rounds = 12 % of 100
    check = steady_state_check([94, 97, 100, 103, 106], SS)
    assert abs(check["slope_pct"] - 12.0) < 1e-9
    assert check["excursion_pct"] <= 20 and check["reached"] is False


def test_eta_format() -> None:
    assert [fmt_eta(s) for s in (4.4, 65, 3725)] == ["4s", "1m05s", "1h02m"]
