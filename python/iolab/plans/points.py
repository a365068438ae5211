"""A plan's points: expansion (matrix or zip), ``--quick`` and ``--target``
applied, and each point's job validated by the native core before anything runs.

A point's job is, in order (later options win): ``[base]``, the point's axis
values, the warm-up ``ramp_time``, the ``[quick]`` options (with
``--quick``) and ``filename`` (with ``--target``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any, Optional

from iolab.errors import JobError
from iolab.jobs import JobSpec
from iolab.plans.model import Plan, PlanError, Value
from iolab.run.api import Job
from iolab.run.pipeline import RunPipeline, RunSettings

#: ``[quick]`` keys that scale the plan itself rather than the job.
_QUICK_PLAN_KEYS = ("repeats", "max_rounds")


@dataclass(frozen=True)
class Point:
    """One point of a sweep: its index (1-based) and axis values."""

    index: int
    params: tuple[tuple[str, Value], ...]

    @property
    def label(self) -> str:
        """``bs=512k, iodepth=64`` (``base`` for a plan without axes)."""
        return ", ".join(f"{k}={_text(v)}" for k, v in self.params) or "base"

    @property
    def key(self) -> str:
        """The point's directory name: ``p007``."""
        return f"p{self.index:03d}"


def _text(v: Value) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def resolve(plan: Plan, *, quick: bool = False, target: Optional[str] = None) -> Plan:
    """The plan as it will run: ``[quick]`` folded into it and ``--target``
    in its base, so the plan hash covers both."""
    base = list(plan.base)
    if quick:
        if not plan.quick:
            raise PlanError(f"plan {plan.name}: --quick: the plan has no [quick] table saying how to shrink it")
        axis_names = {a.name for a in plan.axes}
        for key, _ in plan.quick:
            if key in axis_names:
                raise PlanError(f"plan {plan.name}: quick.{key}: is also an axis; quick would make every point equal")
        quick_plan = dict(plan.quick)
        base += [(k, v) for k, v in plan.quick if k not in _QUICK_PLAN_KEYS]
        plan = _quick_plan_keys(plan, quick_plan)
    if target is not None:
        base.append(("filename", target))
    merged = tuple(dict(base).items())
    return replace(plan, base=merged, quick=())


def _quick_plan_keys(plan: Plan, quick: dict[str, Value]) -> Plan:
    for key in _QUICK_PLAN_KEYS:
        v = quick.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise PlanError(f"plan {plan.name}: quick.{key}: expected a whole number ≥ 1, got {v!r}")
    if "repeats" in quick:
        plan = replace(plan, repeats=int(quick["repeats"]))
    if "max_rounds" in quick:
        if plan.steady_state is None:
            raise PlanError(f"plan {plan.name}: quick.max_rounds: the plan has no [steady_state]")
        rounds = min(plan.steady_state.rounds, int(quick["max_rounds"]))
        ss = replace(plan.steady_state, max_rounds=int(quick["max_rounds"]), rounds=rounds)
        plan = replace(plan, steady_state=ss)
    return plan


def expand(plan: Plan) -> list[Point]:
    """Every point, in run order (matrix: the last axis varies fastest)."""
    names = [a.name for a in plan.axes]
    columns = [a.values for a in plan.axes]
    combos = list(zip(*columns)) if plan.mode == "zip" else list(itertools.product(*columns))
    if not plan.axes:
        combos = [()]
    return [Point(i, tuple(zip(names, combo))) for i, combo in enumerate(combos, 1)]


def point_job(plan: Plan, point: Point) -> JobSpec:
    """The job of ``point`` (``plan`` already :func:`resolve` d)."""
    options: dict[str, Value] = dict(plan.base)
    options.update(point.params)
    if plan.warmup_ramp_time is not None:
        options["ramp_time"] = plan.warmup_ramp_time
    return Job(plan.name, **options)


def warmup_job(plan: Plan, point: Point) -> Optional[JobSpec]:
    """The discarded warm-up run before a point (``[warmup] runtime``)."""
    if plan.warmup_runtime is None:
        return None
    return point_job(plan, point).with_options(("time_based", None), ("runtime", plan.warmup_runtime))


def precondition_job(plan: Plan) -> Optional[JobSpec]:
    """The fill run once before the points: the base target, size x size_factor."""
    if not plan.precondition:
        return None
    base = dict(plan.base)
    options: dict[str, Value] = {
        k: base[k] for k in ("filename", "uri", "size", "directory", "ioengine", "direct") if k in base
    }
    fill = dict(plan.precondition)
    options["loops"] = fill.pop("size_factor", 1)
    options.update(fill)
    return Job("precondition", **options)


def validate(plan: Plan, points: list[Point], settings: Optional[RunSettings] = None) -> list[dict[str, Any]]:
    """Prepare every job before the sweep starts, as the run pipeline will
    (:class:`~iolab.run.pipeline.RunPipeline`: the options around the
    engine too, with ``settings``' limits); the prepared jobs, in order.
    Files are not looked for (``allow_file_create=0``): the precondition
    may create them; each run checks them when it starts.

    Raises ``JobError`` naming the point: ``point 7 (bs=512k, iodepth=64): ...``.
    """
    settings = replace(settings or RunSettings(), check_files=False)
    prepared: list[dict[str, Any]] = []
    for point in points:
        try:
            prepared.extend(RunPipeline([point_job(plan, point)], settings).prepared)
            extra = warmup_job(plan, point)
            if extra is not None:
                RunPipeline([extra], replace(settings, log_dir=None))
        except JobError as e:
            raise JobError(f"point {point.index} ({point.label}): {e}") from None
    fill = precondition_job(plan)
    if fill is not None:
        try:
            RunPipeline([fill], settings)
        except JobError as e:
            raise JobError(f"precondition: {e}") from None
    return prepared
