"""``iolab find`` over a grid of two axes (``--axis iodepth --axis
numjobs=1,2,4,8``): for each listed value of the second axis, the search
of :func:`iolab.plans.find.search` along the first. The answers make the
*frontier* (per row, the highest value of the first axis meeting the SLO
and the first breaking it); the best point of the grid is the frontier's
point with the most IOPS (all its repeats' I/Os over the time they ran).

Each row's search starts from the row before's answer (``guess``), scaled
by the ratio of the two rows' values where both axes multiply the I/Os in
flight (iodepth x numjobs: twice the jobs, half the depth), and goes up
or down from there: a row then costs a few values, not a bracket from the
axis's start. A point measured once is never run again (the measure reads
it back).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

from iolab.plans.find import (
    SEARCH_AXES,
    AxisSpace,
    Evaluation,
    FindError,
    FindOutcome,
    Judge,
    Measure,
    axis_number,
    axis_value_text,
    outcome_json,
    search,
    statement,
)
from iolab.plans.slo import Repeat, Slo, judge

#: Axes whose product is the I/Os a job set keeps in flight.
CONCURRENCY_AXES = ("iodepth", "numjobs")


@dataclass(frozen=True)
class GridAxis:
    """The second axis: its name and the values it takes, in order."""

    name: str
    values: tuple[int, ...]


def grid_axis(text: str, first: str) -> GridAxis:
    """``numjobs=1,2,4`` → :class:`GridAxis`. Raises :class:`FindError`."""
    name, eq, listed = text.partition("=")
    name = name.strip()
    if name not in SEARCH_AXES:
        raise FindError(
            f"--axis {text}: not a numeric job option find can search; give one of {', '.join(SEARCH_AXES)}"
        )
    if name == first:
        raise FindError(f"--axis {text}: the grid's two axes must differ (both are {name})")
    if not eq or not listed.strip():
        raise FindError(f"--axis {name}: the grid's second axis takes its values: --axis {name}=1,2,4")
    values = tuple(axis_number(name, f"--axis {name}=", v.strip()) for v in listed.split(","))
    if len(set(values)) != len(values):
        raise FindError(f"--axis {text}: a value is listed twice")
    return GridAxis(name, values)


#: ``measure(first value, second value, repeat) → Repeat`` (a fleet's: FleetRepeat).
GridMeasure = Callable[[int, int, int], Any]


@dataclass
class GridOutcome:
    slo: Slo
    space: AxisSpace
    grid: GridAxis
    rows: list[tuple[int, FindOutcome]]  # (second axis value, its search), in the order run
    repeats: int

    @property
    def runs(self) -> int:
        return sum(o.runs for _, o in self.rows)

    @property
    def best(self) -> Optional[tuple[int, Evaluation]]:
        """The frontier's point with the most IOPS: (second axis value, its evaluation)."""
        met = [(v, o.best) for v, o in self.rows if o.best is not None]
        return max(met, key=lambda t: point_iops(t[1].repeats), default=None)

    @property
    def full_sweep_runs(self) -> int:
        """A full sweep of the grid at the same resolution: every row from
        the first axis's start to the highest first value breaking the SLO
        (or run) in any row."""
        ends = [o.first_fail.value if o.first_fail else max(e.value for e in o.evaluations) for _, o in self.rows]
        return len(self.space.full_sweep_values(max(ends))) * len(self.rows) * self.repeats


def point_iops(repeats: Sequence[Any]) -> float:
    """All the repeats' I/Os (both directions) over the time they ran."""
    totals: list[Repeat] = [getattr(r, "total", r) for r in repeats]  # a fleet's repeat: its total
    ios = sum(d.ios for r in totals for d in r.values())
    runtime_ns = sum(max((d.runtime_ns for d in r.values() if d.ios), default=0) for r in totals)
    return ios / (runtime_ns / 1e9) if runtime_ns else 0.0


def search_grid(
    measure: GridMeasure,
    slo: Slo,
    space: AxisSpace,
    grid: GridAxis,
    *,
    repeats: int = 2,
    max_repeats: int = 5,
    judge_fn: Judge = judge,
) -> GridOutcome:
    """The search along ``space`` for each of ``grid``'s values (see the module doc)."""
    rows: list[tuple[int, FindOutcome]] = []
    guess: Optional[int] = None
    for v in grid.values:
        out = search(_row(measure, v), slo, space, repeats=repeats, max_repeats=max_repeats, guess=guess,
                     judge_fn=judge_fn)  # fmt: skip
        rows.append((v, out))
        guess = _next_guess(space.name, grid.name, v, out, grid.values)
    return GridOutcome(slo, space, grid, rows, repeats)


def _row(measure: GridMeasure, second: int) -> Measure:
    return lambda value, repeat: measure(value, second, repeat)


def _next_guess(first: str, second: str, v: int, out: FindOutcome, values: tuple[int, ...]) -> Optional[int]:
    at = out.best.value if out.best is not None else None
    if at is None:
        return None
    i = values.index(v)
    if i + 1 >= len(values):
        return None
    if first in CONCURRENCY_AXES and second in CONCURRENCY_AXES:
        return max(1, round(at * v / values[i + 1]))
    return at


def grid_statement(g: GridOutcome) -> list[str]:
    """The frontier row by row, the best point of the grid, the runs."""
    ax, gx = g.space.name, g.grid.name
    lines = [f"frontier of '{g.slo.text}' over {ax} x {gx}:"]
    for v, out in g.rows:
        first = statement(out)[0]
        iops = f" ({point_iops(out.best.repeats):,.0f} IOPS)" if out.best is not None else ""
        lines.append(f"  {axis_value_text(gx, v)}: {first}{iops}")
        if out.best is not None and out.first_fail is not None:
            lines.append(f"    {statement(out)[1]}")
    best = g.best
    if best is None:
        lines.append("no point of the grid meets it")
    else:
        v, ev = best
        lines.append(
            f"best over the grid: {axis_value_text(ax, ev.value)} x {axis_value_text(gx, v)}, "
            f"{point_iops(ev.repeats):,.0f} IOPS"
        )
    lines.append(
        f"{g.runs} runs over {sum(len(o.evaluations) for _, o in g.rows)} points of the grid "
        f"(a full sweep of the grid at the same resolution: {g.full_sweep_runs} runs)"
    )
    return lines


def grid_json(g: GridOutcome) -> dict[str, object]:
    """find.json of a grid: each row's search as a one-axis find.json, the best point, the statement."""
    best = g.best
    return {
        "slo": g.slo.text,
        "axis": g.space.name,
        "grid_axis": g.grid.name,
        "grid_values": list(g.grid.values),
        "rows": [{g.grid.name: v, **outcome_json(o)} for v, o in g.rows],
        "best": None
        if best is None
        else {g.space.name: best[1].value, g.grid.name: best[0], "iops": point_iops(best[1].repeats)},
        "first_fail": None,
        "runs": g.runs,
        "full_sweep_runs": g.full_sweep_runs,
        "statement": grid_statement(g),
    }


__all__ = ["GridAxis", "GridOutcome", "grid_axis", "grid_json", "grid_statement", "search_grid"]
