"""The SNIA PTS steady-state window, with the figures its plot draws.

A test is steady at round x when the tracking variable's rounds x-4 .. x
(the measurement window, ``rounds`` = 5) satisfy both:

- data excursion: max - min of the window ≤ ``excursion_pct`` (20 %) of the
  window's mean — drawn as the band mean ± half of it (110 % / 90 %);
- slope excursion: the least-squares line through the window changes by
  ≤ ``slope_pct`` (10 %) of the mean from the window's first round to its
  last (|slope| x (rounds - 1)) — drawn as the band mean ± half of it.

Tests stop at the first steady window, or at ``max_rounds`` (25) without one.
The verdict itself is :func:`iolab.plans.steady.steady_state_check` (the
same rule a plan's ``[steady_state]`` applies); this module adds the line,
the bands and the reasons a window failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Optional

from iolab.analysis.stats import linear_fit
from iolab.plans.model import PtsSteadyState
from iolab.plans.steady import steady_state_check

#: The spec's rule: 5 rounds, 20 % data excursion, 10 % slope excursion, at most 25 rounds.
PTS_RULE = PtsSteadyState(metric="tracking", rounds=5, max_rounds=25, excursion_pct=20.0, slope_pct=10.0)


@dataclass(frozen=True)
class Window:
    """One window's verdict and figures; rounds are numbered from 1."""

    first_round: int
    last_round: int
    values: tuple[float, ...]
    mean: float
    excursion: float  # max - min, in the tracking variable's unit
    excursion_pct: float
    slope_per_round: float
    intercept: float  # the line's value at the window's first round
    slope_excursion_pct: float
    excursion_ok: bool
    slope_ok: bool

    @property
    def steady(self) -> bool:
        return self.excursion_ok and self.slope_ok

    def failures(self, rule: PtsSteadyState = PTS_RULE) -> list[str]:
        """Why the window is not steady, one phrase per broken rule."""
        out = []
        if not self.excursion_ok:
            out.append(f"data excursion {self.excursion_pct:.1f} % > {rule.excursion_pct:g} % of the mean")
        if not self.slope_ok:
            out.append(f"slope excursion {self.slope_excursion_pct:.1f} % > {rule.slope_pct:g} % of the mean")
        return out

    def bands(self, rule: PtsSteadyState = PTS_RULE) -> dict[str, float]:
        """The plot's lines: the mean, the data-excursion band (mean ± half the
        allowed range) and the slope band (mean ± half the allowed change)."""
        half_data = self.mean * rule.excursion_pct / 200
        half_slope = self.mean * rule.slope_pct / 200
        return {
            "mean": self.mean,
            "data_low": self.mean - half_data,
            "data_high": self.mean + half_data,
            "slope_low": self.mean - half_slope,
            "slope_high": self.mean + half_slope,
        }

    def to_json(self, rule: PtsSteadyState = PTS_RULE) -> dict[str, Any]:
        return {**asdict(self), "steady": self.steady, "bands": self.bands(rule)}


def window(values: Sequence[float], rule: PtsSteadyState = PTS_RULE) -> Optional[Window]:
    """The window of the last ``rule.rounds`` values (None while fewer)."""
    if len(values) < rule.rounds:
        return None
    win = [float(v) for v in values[-rule.rounds :]]
    check = steady_state_check(win, rule)
    first = len(values) - rule.rounds + 1
    if "why" in check:  # a zero mean: nothing to judge against
        return Window(first, len(values), tuple(win), 0.0, 0.0, float("inf"), 0.0, 0.0, float("inf"), False, False)
    slope, intercept, _ = linear_fit(range(rule.rounds), win)
    return Window(
        first_round=first,
        last_round=len(values),
        values=tuple(win),
        mean=check["window_mean"],
        excursion=max(win) - min(win),
        excursion_pct=check["excursion_pct"],
        slope_per_round=slope,
        intercept=intercept,
        slope_excursion_pct=check["slope_pct"],
        excursion_ok=check["excursion_pct"] <= rule.excursion_pct,
        slope_ok=check["slope_pct"] <= rule.slope_pct,
    )


def first_steady(values: Sequence[float], rule: PtsSteadyState = PTS_RULE) -> Optional[Window]:
    """The first steady window of a series of rounds (recorded rounds
    judged after the fact, as the procedure judges them round by round)."""
    for n in range(rule.rounds, min(len(values), rule.max_rounds) + 1):
        w = window(values[:n], rule)
        if w is not None and w.steady:
            return w
    return None
