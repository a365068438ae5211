"""Seed 002's commands → sweep plans (:class:`iolab.plans.model.Plan`).

Each plan's ``[base]`` is the seed's command as written, parsed by
iolab's fio command-line parser (:func:`iolab.jobs.cmdline.parse_fio_args`)
with the swept option left out; its axis is the swept option with the
values the seed's tables list. Nothing is added to a command: the seed
names no ``ioengine`` and no ``direct``, so the jobs run with fio's
defaults (psync, buffered), unless the user adds options explicitly
(``additions``), which the report lists. ``--quick`` shrinks ``size`` and
``runtime`` only, through the plan's ``[quick]`` table.

The mix and queue-depth commands say ``--bs=4k``, and their latency tables
are at 4k, but their bandwidth tables list rows at 16k and 130k: those
sweeps also run at bs 16k and 130k (an axis over the command's bs), so
every table of the seed has a measured value beside it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from typing import Optional

from iolab.jobs.cmdline import parse_fio_args
from iolab.lab.fio_study.seed import COMMANDS, VARIED
from iolab.plans.model import Axis, Plan, Value

#: The values each sweep's tables list, in sweep order (the seed prints
#: the mix as 100/0, 50/50, 70/30, 0/100; iolab runs it from read-only to write-only).
AXIS_VALUES: dict[str, tuple[Value, ...]] = {
    "bs": ("4k", "16k", "32k", "64k", "130k", "256k", "512k"),
    "rwmix": (100, 70, 50, 0),
    "qd": (1, 16, 32, 64),
}
#: Block sizes of the mix and queue-depth sweeps: the command's 4k, then
#: the 16k and 130k of their bandwidth tables.
EXTRA_BS = ("4k", "16k", "130k")
QUICK_SIZE = "64m"
QUICK_RUNTIME = "1s"
PLACEHOLDER = "[Variable]"


@dataclass(frozen=True)
class Shrink:
    """What ``--quick`` (or ``--size``/``--runtime``) replaces; None keeps the seed's."""

    size: Optional[str] = None
    runtime: Optional[str] = None

    def table(self) -> tuple[tuple[str, Value], ...]:
        return tuple((k, v) for k, v in (("size", self.size), ("runtime", self.runtime)) if v is not None)


def seed_options(sweep: str) -> list[tuple[str, Optional[str]]]:
    """The options of the seed's command for ``sweep``, as written, the
    swept one left out (its value is ``[Variable]``)."""
    argv = shlex.split(COMMANDS[sweep])
    assert argv[0] == "fio"
    (job,) = parse_fio_args(argv[1:])
    return [(k, v) for k, v in job.options if v != PLACEHOLDER] + [("name", job.name)]


def _value(v: Optional[str]) -> Value:
    return True if v is None else v


def build_plan(
    sweep: str,
    *,
    repeats: int,
    shrink: Shrink = Shrink(),
    additions: tuple[tuple[str, Value], ...] = (),
    drop: tuple[str, ...] = (),
) -> Plan:
    """The plan of one sweep: the command's options (less ``drop``, e.g.
    ``filename`` for an NBD target), then ``additions``; ``shrink`` as its
    ``[quick]`` table."""
    base = [(k, _value(v)) for k, v in seed_options(sweep) if k != "name" and k not in drop]
    base += list(additions)
    axes = [Axis(VARIED[sweep], AXIS_VALUES[sweep])]
    if sweep != "bs":
        axes.insert(0, Axis("bs", EXTRA_BS))
    return Plan(
        name=f"fio-study-{sweep}",
        description=f"seed 002: {COMMANDS[sweep]}",
        mode="matrix",
        repeats=repeats,
        drop_caches=False,
        timeout_per_point_ns=None,
        base=tuple(base),
        axes=tuple(axes),
        quick=shrink.table(),
    )


def plan_toml(plan: Plan) -> str:
    """The plan as a plan file (kept as the sweep's plan.toml; ``iolab sweep`` runs it)."""

    def lit(v: Value) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v) if isinstance(v, int) else f'"{v}"'

    lines = [
        "# Seed 002 as run by `iolab lab fio-study`; `iolab sweep` reruns it (with --quick: [quick]).",
        f"#   {COMMANDS[plan.name.removeprefix('fio-study-')]}",
        "[plan]",
        f'name = "{plan.name}"',
        f"description = {lit(plan.description)}",
        f"repeats = {plan.repeats}",
        "",
        "[base]",
    ]
    lines += [f"{k} = {lit(v)}" for k, v in plan.base]
    if plan.quick:
        lines += ["", "[quick]"] + [f"{k} = {lit(v)}" for k, v in plan.quick]
    lines += ["", "[axes]"] + [f"{a.name} = [{', '.join(lit(v) for v in a.values)}]" for a in plan.axes]
    return "\n".join(lines) + "\n"


def with_repeats(plan: Plan, repeats: int) -> Plan:
    return replace(plan, repeats=repeats)
