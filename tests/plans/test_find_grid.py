"""``iolab find`` over a grid of two axes, on a model whose frontier is
known by construction: a device of fixed capacity ``C`` IOPS kept busy by
numjobs x iodepth I/Os in flight, each job adding a fixed cost ``J`` to
every I/O (its own submission path). By Little's law an I/O waits
``numjobs x QD / C + J x numjobs``, so the highest QD meeting ``p99 < T``
at ``n`` jobs is ``floor((T - J n) C / n)``; its IOPS (I/Os in flight
over that latency, ``QD / (QD / C + J)``) is highest where QD is: the
best point of the grid is one job at QD 95.
"""

from __future__ import annotations

import math
import random

import pytest
from iolab.plans.find import FindError, axis_space
from iolab.plans.find_grid import grid_axis, grid_json, grid_statement, point_iops, search_grid
from iolab.plans.slo import DirRepeat, Repeat, parse_slo

from tests.plans.test_find import _repeat

CAPACITY_IOPS = 100_000.0
PER_JOB_S = 50e-6
T_S = 1e-3


class Busy:
    """``measure(qd, numjobs, repeat)``; counts the runs per point."""

    def __init__(self) -> None:
        self.runs: dict[tuple[int, int], int] = {}

    def __call__(self, qd: int, jobs: int, repeat: int) -> Repeat:
        self.runs[(qd, jobs)] = self.runs.get((qd, jobs), 0) + 1
        rng = random.Random(hash((qd, jobs, repeat)))
        base = jobs * qd / CAPACITY_IOPS + PER_JOB_S * jobs
        lats = [base * rng.uniform(0.99, 1.0) * 1e9 for _ in range(300)]
        # I/Os over the second they ran: the I/Os in flight over their latency (Little's law).
        return _repeat(lats, int(jobs * qd / base))


def true_qd(jobs: int) -> int:
    # Each I/O waits the model's time less up to 1 %: exactly T meets p99 < T.
    return math.floor((T_S - PER_JOB_S * jobs) * CAPACITY_IOPS / jobs + 1e-9)


def test_the_frontier_per_row_and_the_best_point_of_the_grid() -> None:
    model = Busy()
    space = axis_space("iodepth", limit="1024", resolution="1")
    grid = grid_axis("numjobs=1,2,4,8", "iodepth")
    g = search_grid(model, parse_slo("p99<1ms"), space, grid, repeats=1, max_repeats=1)
    # Rows: 1 job QD 95, 2 jobs QD 45, 4 jobs QD 20, 8 jobs QD 7 (the cost per job eats the budget).
    frontier = {v: (o.best.value if o.best else None, o.first_fail.value if o.first_fail else None) for v, o in g.rows}
    assert frontier == {n: (true_qd(n), true_qd(n) + 1) for n in (1, 2, 4, 8)}, grid_statement(g)
    best = g.best
    assert best is not None
    assert (best[0], best[1].value) == (1, 95)
    assert point_iops(best[1].repeats) == max(point_iops(o.best.repeats) for _, o in g.rows if o.best)
    # No point is run twice, and the rows after the first start from the row before's answer
    # scaled by the jobs: each costs a handful of values, not a bracket from QD 1.
    assert all(n == 1 for n in model.runs.values())
    per_row = [len(o.evaluations) for _, o in g.rows]
    assert all(n <= 6 for n in per_row[1:]), per_row
    assert g.runs * 3 <= g.full_sweep_runs, grid_statement(g)
    lines = grid_statement(g)
    assert lines[0] == "frontier of 'p99<1ms' over iodepth x numjobs:"
    assert lines[1].startswith("  numjobs 1: p99 ") and "at QD 95" in lines[1]
    assert any(line.startswith(f"best over the grid: QD {best[1].value} x numjobs {best[0]}, ") for line in lines)
    doc = grid_json(g)
    assert doc["grid_axis"] == "numjobs" and [r["numjobs"] for r in doc["rows"]] == [1, 2, 4, 8]  # type: ignore[index]


def test_point_iops_is_ios_over_the_time_they_ran() -> None:
    reps = [{"read": DirRepeat(1000, 500_000_000, {})}, {"read": DirRepeat(3000, 1_500_000_000, {})}]
    assert point_iops(reps) == pytest.approx(2000.0)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("numjobs", "takes its values: --axis numjobs=1,2,4"),
        ("iodepth=1,2", "must differ"),
        ("rw=1,2", "not a numeric job option"),
        ("numjobs=1,x", "not a number"),
        ("numjobs=2,2", "listed twice"),
    ],
)
def test_a_bad_grid_axis_is_one_line(text: str, says: str) -> None:
    with pytest.raises(FindError) as e:
        grid_axis(text, "iodepth")
    assert says in str(e.value) and "\n" not in str(e.value)
