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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from iolab.analysis.load import run_samples
from iolab.analysis.model import Sample
from iolab.errors import JobError
from iolab.jobs import JobSpec
from iolab.plans.find import AxisSpace, FindOutcome, check_repeats, outcome_json, search, values_of
from iolab.plans.model import Axis, Plan, Value
from iolab.plans.points import Point, resolve, validate
from iolab.plans.slo import DIRECTIONS, DirRepeat, Repeat, Slo
from iolab.plans.sweep import SweepInterrupted, SweepOptions, SweepRun, open_sweep
from iolab.results.rundir import RUN_FILE, is_complete, write_json

FIND_FILE = "find.json"


def plan_of_job(job: JobSpec, name: str, axis: str) -> Plan:
    """A plan of one job, without axes (find adds its own). The axis option
    in the job is refused: the search sets it."""
    base: dict[str, Value] = {}
    for k, v in job.options:
        if k == axis:
            raise JobError(f"job {job.name}: {axis}={v}: is the axis find searches; drop it (use --start)")
        base[k] = True if v is None else v
    return Plan(name, f"iolab find over {axis}", "matrix", 1, False, None, tuple(base.items()), ())


def plan_toml(plan: Plan) -> str:
    """The plan.toml kept in the directory of a search given as a job: its
    [plan] and [base] as a plan file would write them."""

    def value(v: Value) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v) if isinstance(v, (int, float)) else json.dumps(v)

    lines = ["[plan]", f"name = {json.dumps(plan.name)}", f"repeats = {plan.repeats}", "", "[base]"]
    return "\n".join([*lines, *(f"{k} = {value(v)}" for k, v in plan.base), ""])


def check_plan(plan: Plan, axis: str) -> None:
    """A plan file given to find: its base job is searched; axes are refused."""
    if plan.axes:
        names = ", ".join(a.name for a in plan.axes)
        raise JobError(f"plan {plan.name}: has axes ({names}); find searches one axis itself: remove [axes]")
    if plan.steady_state is not None:
        raise JobError(f"plan {plan.name}: [steady_state]: not applied by find; remove it")
    if axis in dict(plan.base):
        raise JobError(f"plan {plan.name}: base.{axis}: is the axis find searches; drop it (use --start)")


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
    """``measure(value, repeat)`` over a sweep directory."""

    sweep: SweepRun
    axis: str
    max_repeats: int

    def __post_init__(self) -> None:
        self.index: dict[int, int] = {}
        for d in sorted((self.sweep.dir / "points").glob(f"*/{RUN_FILE}")):
            meta = json.loads(d.read_text(encoding="utf-8"))
            value = meta.get("params", {}).get(self.axis)
            if isinstance(value, int):
                self.index.setdefault(value, int(meta["point"]))
        self.checked: set[int] = set()

    def __call__(self, value: int, repeat: int) -> Repeat:
        if value not in self.index:
            self.index[value] = max(self.index.values(), default=0) + 1
        point = Point(self.index[value], ((self.axis, value),))
        directory = self.sweep.point_dir(point, repeat)
        if not is_complete(directory):
            if value not in self.checked:
                validate(self.sweep.plan, [point], self.sweep.opts.run_settings())
                self.checked.add(value)
            # The progress line counts the value's planned repeats; beyond them, up to the most it may get.
            planned = self.sweep.plan.repeats
            self.sweep.run_one(point, repeat, planned if repeat <= planned else self.max_repeats)
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
) -> tuple[FindOutcome, Path]:
    """Search, writing every run into ``results_root/<plan name>/``; the
    outcome and that directory. Raises ``JobError`` (the job at the start
    value, before anything runs), :class:`SweepInterrupted`."""
    opts = opts or SweepOptions()
    check_repeats(plan.repeats, max_repeats)
    if not plan.name.strip() or "/" in plan.name:
        raise JobError(f"search name '{plan.name}': give a non-empty name without '/'")
    plan = resolve(replace(plan, axes=(Axis(space.name, ()),)), quick=opts.quick, target=opts.target)
    validate(plan, [Point(1, ((space.name, space.start),))], opts.run_settings())
    sweep = open_sweep(plan, plan_text, results_root, opts)
    measure = _SweepMeasure(sweep, space.name, max_repeats)
    sweep.progress.begin(0, 0)
    sweep.catalog.set_status(plan.name, "running")
    try:
        sweep.precondition()
        outcome = search(measure, slo, space, repeats=plan.repeats, max_repeats=max_repeats)
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


def _record(sweep: SweepRun, outcome: FindOutcome) -> None:
    """The values visited as the sweep's axis (what the report draws), and find.json."""
    directory = sweep.dir
    values = values_of(outcome.evaluations)
    plan_json = json.loads((directory / "plan.json").read_text(encoding="utf-8"))
    plan_json["axes"] = [{"name": outcome.space.name, "values": values}]
    write_json(directory / "plan.json", plan_json)
    meta = json.loads((directory / "sweep.json").read_text(encoding="utf-8"))
    meta.update(points=len(values), find=FIND_FILE, finished_unix_ns=time.time_ns())
    write_json(directory / "sweep.json", meta)
    write_json(directory / FIND_FILE, outcome_json(outcome))
    sweep.catalog.set_status(sweep.plan.name, "complete")
