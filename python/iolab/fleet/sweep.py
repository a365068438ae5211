"""A sweep on a fleet: each point (x repeat) runs on every rank.

Rank 0 runs the sweep as on one host (:func:`iolab.plans.sweep.run_sweep`:
plan, resume, point directories, catalog) with a runner that makes each
point a fleet run (:func:`iolab.fleet.runner.fleet_run`): the point's jobs
are broadcast, every rank prepares and starts together, and the point's
result is the exact merge of the hosts. The other ranks wait for the next
point's broadcast and run it, until rank 0 broadcasts the end.

A point that loses a host ends the whole sweep (the finished points are
kept: running the same command again resumes): the point's total would be
silently smaller otherwise. Each point directory keeps, beside the merged
result, ``fleet.json`` (table, clock, series alignment) and each host's own
results in ``hosts/rank-R.json``, as ``iolab run --results`` does.
The device statistics of a point (diskstats) are not measured on a fleet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

from iolab import _native
from iolab.errors import IolabError
from iolab.fleet.comm import World
from iolab.fleet.env import FleetError
from iolab.fleet.hosts import HostsTable
from iolab.fleet.output import build
from iolab.fleet.rundir import fleet_observed
from iolab.fleet.runner import CANNOT_APPLY, SWEEP_END, FleetConfig, FleetOutcome, Plan, SweepEnded, fleet_run
from iolab.fleet.spool import run_id
from iolab.jobs import JobSpec
from iolab.plans.sweep import SweepOptions, SweepOutcome, run_sweep
from iolab.run.local import RunOutput


def merged_output(outcome: FleetOutcome) -> RunOutput:
    """A fleet point's result as one run: the exact merge of its hosts (their
    series on rank 0's clock), with ``fleet.json`` and each host's own
    results as observed files of the point's directory."""
    res = build(outcome)
    if res.total is None:
        raise FleetError("no host returned a result: " + "; ".join(outcome.faults))
    notes = tuple(f"{p.host}: {n}" for p in outcome.parts for n in p.notes)
    t = res.total
    return RunOutput(t.result_json, t.summary_json, outcome.interrupted, notes, fleet_observed(res))


def fleet_sweep(
    world: World,
    plan_path: Path,
    results_root: Path,
    opts: SweepOptions,
    cfg: FleetConfig,
    hosts: Optional[HostsTable],
    on_incomplete: Callable[[FleetOutcome], None],
) -> Optional[SweepOutcome]:
    """Every rank calls this; rank 0 returns the sweep's outcome."""
    return on_fleet(world, lambda o: run_sweep(plan_path, results_root, o), opts, cfg, hosts, on_incomplete)


T = TypeVar("T")


def on_fleet(
    world: World,
    body: Callable[[SweepOptions], T],
    opts: SweepOptions,
    cfg: FleetConfig,
    hosts: Optional[HostsTable],
    on_incomplete: Callable[[FleetOutcome], None],
    where: str = "a fleet sweep",
) -> Optional[T]:
    """Rank 0 runs ``body`` (a sweep, or a search: anything that runs points
    through ``SweepOptions.runner``) with every point run on every rank and
    returns what it returns; the other ranks run each point rank 0
    broadcasts until it broadcasts the end, and return None."""
    if world.rank != 0:
        while True:
            try:
                fleet_run(world, lambda: Plan((), None, ""), cfg)
            except SweepEnded:
                return None
            except (IolabError, OSError):
                continue  # every rank raised it; rank 0's sweep stops on it and broadcasts the end
    point = 0

    def runner(specs: Sequence[JobSpec], **kw: Any) -> RunOutput:
        nonlocal point
        point += 1
        name = f"{run_id('fleet-sweep')}-p{point}"
        factory = kw.get("run_factory") or _native.Run
        outcome = fleet_run(world, lambda: Plan(tuple(specs), hosts, name), cfg, run_factory=factory)
        assert outcome is not None
        if outcome.incomplete:
            on_incomplete(outcome)  # does not return: a rank is gone, MPI cannot end cleanly
        return merged_output(outcome)

    try:
        return body(replace(opts, runner=runner, cannot_apply=CANNOT_APPLY, where=where))
    finally:
        world.bcast(SWEEP_END)


__all__ = ["fleet_sweep", "merged_output", "on_fleet"]
