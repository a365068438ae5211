"""``iolab find`` on this host: every value x repeat the search asks for is
run as a point of a sweep directory (``RESULTS/<name>/``, the writer of
:mod:`iolab.plans.sweep`, each run through the run pipeline), so
``iolab report`` reads it as any sweep; the search's answer is kept beside
the points as ``find.json``.

A value already measured in that directory (the same job: the same plan
hash) is read back, not run again: a stopped search resumes, and another
SLO over the same job reuses every point it shares.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional, Union

from iolab.analysis.load import run_samples
from iolab.analysis.model import Sample
from iolab.errors import JobError
from iolab.jobs import JobSpec
from iolab.plans.find import AxisSpace, FindOutcome, Judge, check_repeats, outcome_json, search, values_of
from iolab.plans.find_grid import GridAxis, GridOutcome, grid_json, search_grid
from iolab.plans.model import Axis, Plan, Value
from iolab.plans.points import Point, resolve, validate
from iolab.plans.slo import DIRECTIONS, DirRepeat, Repeat, Slo, judge
from iolab.plans.sweep import SweepInterrupted, SweepOptions, SweepRun, open_sweep
from iolab.results.rundir import RUN_FILE, is_complete, write_json

FIND_FILE = "find.json"


def plan_of_job(job: JobSpec, name: str, axes: Sequence[str]) -> Plan:
    """A plan of one job, without axes (find adds its own). An axis option
    in the job is refused: the search sets it."""
    base: dict[str, Value] = {}
    for k, v in job.options:
        if k in axes:
            raise JobError(f"job {job.name}: {k}={v}: is an axis find searches; drop it (use --start or --axis)")
        base[k] = True if v is None else v
    return Plan(name, f"iolab find over {' x '.join(axes)}", "matrix", 1, False, None, tuple(base.items()), ())


def plan_toml(plan: Plan) -> str:
    """The plan.toml kept in the directory of a search given as a job: its
    [plan] and [base] as a plan file would write them."""

    def value(v: Value) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v) if isinstance(v, (int, float)) else json.dumps(v)

    lines = ["[plan]", f"name = {json.dumps(plan.name)}", f"repeats = {plan.repeats}", "", "[base]"]
    return "\n".join([*lines, *(f"{k} = {value(v)}" for k, v in plan.base), ""])


def check_plan(plan: Plan, axes: Sequence[str]) -> None:
    """A plan file given to find: its base job is searched; axes are refused."""
    if plan.axes:
        names = ", ".join(a.name for a in plan.axes)
        raise JobError(f"plan {plan.name}: has axes ({names}); find searches its axes itself: remove [axes]")
    if plan.steady_state is not None:
        raise JobError(f"plan {plan.name}: [steady_state]: not applied by find; remove it")
    for axis in axes:
        if axis in dict(plan.base):
            raise JobError(f"plan {plan.name}: base.{axis}: is an axis find searches; drop it (use --start or --axis)")


def repeat_of(sample: Sample) -> Repeat:
    """One run's figures as the SLO reads them: per direction, I/Os over the
    time they ran, and the merged lat/clat histograms."""
    out: Repeat = {}
    for d in DIRECTIONS:
        r = sample.dir(d)
        hists = {k: lat.hist for k in ("lat", "clat") if (lat := getattr(r, k)) is not None and lat.hist}
        out[d] = DirRepeat(r.ios, r.runtime_ns, hists)
    return out


@dataclass
class _SweepMeasure:
    """``measure(value, repeat)`` (one axis) or ``measure(value, second,
    repeat)`` (a grid) over a sweep directory: each point's directory is
    found by its axis values, and read back when finished."""

    sweep: SweepRun
    axes: tuple[str, ...]
    max_repeats: int
    read: Callable[[Path], Any]

    def __post_init__(self) -> None:
        self.index: dict[tuple[int, ...], int] = {}
        for d in sorted((self.sweep.dir / "points").glob(f"*/{RUN_FILE}")):
            meta = json.loads(d.read_text(encoding="utf-8"))
            params = meta.get("params", {})
            values = tuple(params.get(a) for a in self.axes)
            if all(isinstance(v, int) for v in values):
                self.index.setdefault(values, int(meta["point"]))
        self.checked: set[tuple[int, ...]] = set()

    def __call__(self, value: int, repeat: int) -> Any:
        return self.run((value,), repeat)

    def grid(self, value: int, second: int, repeat: int) -> Any:
        return self.run((value, second), repeat)

    def run(self, values: tuple[int, ...], repeat: int) -> Any:
        if values not in self.index:
            self.index[values] = max(self.index.values(), default=0) + 1
        point = Point(self.index[values], tuple(zip(self.axes, values)))
        directory = self.sweep.point_dir(point, repeat)
        if not is_complete(directory):
            if values not in self.checked:
                validate(self.sweep.plan, [point], self.sweep.opts.run_settings())
                self.checked.add(values)
            # The progress line counts the value's planned repeats; beyond them, up to the most it may get.
            planned = self.sweep.plan.repeats
            self.sweep.run_one(point, repeat, planned if repeat <= planned else self.max_repeats)
        return self.read(directory)


def read_repeat(directory: Path) -> Repeat:
    """A run directory's figures as the SLO reads them (its first stonewall group)."""
    (sample,) = run_samples(directory)[:1]
    return repeat_of(sample)


def run_find(
    plan: Plan,
    plan_text: str,
    slo: Slo,
    space: AxisSpace,
    results_root: Path,
    opts: Optional[SweepOptions] = None,
    *,
    max_repeats: int = 5,
    grid: Optional[GridAxis] = None,
    read: Callable[[Path], Any] = read_repeat,
    judge_fn: Judge = judge,
) -> tuple[Union[FindOutcome, GridOutcome], Path]:
    """Search (along ``space``, or over it x ``grid``), writing every run into
    ``results_root/<plan name>/``; the outcome and that directory. Raises
    ``JobError`` (the job at the start value, before anything runs),
    :class:`SweepInterrupted`. ``read`` and ``judge_fn``: how a run
    directory's figures are read and judged (a fleet's: per host and total,
    :mod:`iolab.fleet.slo`)."""
    opts = opts or SweepOptions()
    check_repeats(plan.repeats, max_repeats)
    if not plan.name.strip() or "/" in plan.name:
        raise JobError(f"search name '{plan.name}': give a non-empty name without '/'")
    axes = (Axis(space.name, ()),) + (() if grid is None else (Axis(grid.name, grid.values),))
    plan = resolve(replace(plan, axes=axes), quick=opts.quick, target=opts.target)
    first = ((space.name, space.start),) + (() if grid is None else ((grid.name, grid.values[0]),))
    validate(plan, [Point(1, first)], opts.run_settings())
    sweep = open_sweep(plan, plan_text, results_root, opts)
    measure = _SweepMeasure(sweep, tuple(a.name for a in axes), max_repeats, read)
    sweep.progress.begin(0, 0)
    sweep.catalog.set_status(plan.name, "running")
    outcome: Union[FindOutcome, GridOutcome]
    try:
        sweep.precondition()
        if grid is None:
            outcome = search(measure, slo, space, repeats=plan.repeats, max_repeats=max_repeats, judge_fn=judge_fn)
        else:
            outcome = search_grid(measure.grid, slo, space, grid, repeats=plan.repeats, max_repeats=max_repeats,
                                  judge_fn=judge_fn)  # fmt: skip
    except KeyboardInterrupt:
        sweep.catalog.set_status(plan.name, "interrupted")
        raise SweepInterrupted(
            f"interrupted: finished runs are kept in {sweep.dir}; the same command resumes the search"
        ) from None
    except BaseException:
        sweep.catalog.set_status(plan.name, "failed")
        raise
    finally:
        sweep.progress.close()
    _record(sweep, outcome)
    return outcome, sweep.dir


def _record(sweep: SweepRun, outcome: Union[FindOutcome, GridOutcome]) -> None:
    """The values visited as the sweep's axes (what the report draws), and find.json."""
    directory = sweep.dir
    if isinstance(outcome, GridOutcome):
        values = values_of([e for _, o in outcome.rows for e in o.evaluations])
        axes = [{"name": outcome.space.name, "values": values},
                {"name": outcome.grid.name, "values": list(outcome.grid.values)}]  # fmt: skip
        points = sum(len(o.evaluations) for _, o in outcome.rows)
        doc = grid_json(outcome)
    else:
        values = values_of(outcome.evaluations)
        axes, points, doc = [{"name": outcome.space.name, "values": values}], len(values), outcome_json(outcome)
    plan_json = json.loads((directory / "plan.json").read_text(encoding="utf-8"))
    plan_json["axes"] = axes
    write_json(directory / "plan.json", plan_json)
    meta = json.loads((directory / "sweep.json").read_text(encoding="utf-8"))
    meta.update(points=points, find=FIND_FILE, finished_unix_ns=time.time_ns())
    write_json(directory / "sweep.json", meta)
    write_json(directory / FIND_FILE, doc)
    sweep.catalog.set_status(sweep.plan.name, "complete")
