"""A fleet run on every rank: plan, prepare, start together, gather, merge.

Every rank calls :func:`fleet_run` with the same arguments (the same
command line); only rank 0 reads the jobs (``plan``: job files may exist
on rank 0 alone) and the hosts table, and broadcasts them.

Before the start (collectives; every rank alive): broadcast the jobs,
gather host names, each rank prepares its engine with its hosts-table
options, in waves so that ranks sharing a file lay it out once
(:mod:`iolab.fleet.prepare`), and reports the outcome (one failure ends
every rank with the failing host named), clock ping-pong, broadcast of the start instant.

From the start on (non-blocking point-to-point only, see
:mod:`iolab.fleet.comm`): ranks send an interval snapshot (which is also
their heartbeat) and finally their result; rank 0 sends a heartbeat to
each. :mod:`iolab.fleet.watch` runs rank 0's side (live view, watchdog,
final gather); :func:`_follow` is the other ranks' side, with their own
watchdog against rank 0.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from iolab import _native
from iolab.fleet import clock
from iolab.fleet.comm import TAG_BEAT, TAG_DONE, TAG_FINAL, TAG_INTERVAL, TAG_STOP, World
from iolab.fleet.hosts import HostsTable
from iolab.fleet.parts import (
    DEFAULT_DEADLINE_S,
    EXIT_HOST_LOST,
    PRESTART_LIMIT_S,
    FleetConfig,
    HostPart,
    Snapshotter,
    die,
    final_of,
    prestart_guard,
)
from iolab.fleet.prepare import prepare_in_waves
from iolab.fleet.seeds import same_sequence_notes, seed_keys
from iolab.fleet.spool import Spool
from iolab.fleet.streamlog import FleetLog
from iolab.fleet.tail import LogTail
from iolab.jobs import JobSpec
from iolab.run.local import POLL_S, RunLike, native_jobs
from iolab.run.pipeline import ACTING_EXTRAS, RunSettings, engine_jobs, refuse_extras

#: What rank 0 broadcasts instead of a plan when a fleet sweep has no more points.
SWEEP_END = "iolab-fleet-sweep-end"


_AROUND = (
    "a fleet rank drives the engine alone, without the steps a single run takes around it; run the job with `iolab run`"
)
_LOGS = "a fleet run writes no fio log files; with --results each host's own results, series included, are kept in hosts/rank-R.json"
_STEADY = "each host would end the job at its own moment, so the fleet's merged total would cover unequal windows"

#: The options around the engine (iolab.jobs.extras) a fleet run does not
#: apply, and why: refused by name on rank 0 before any rank prepares.
CANNOT_APPLY: dict[str, str] = {
    name: _STEADY if name.startswith("steadystate") else _LOGS if "log" in name else _AROUND for name in ACTING_EXTRAS
}


class SweepEnded(Exception):
    """A rank waiting for the next point of a fleet sweep learnt there is none."""


#: Lead of the start instant over the broadcast (ranks convert and arm their engines).
START_LEAD_NS = 300_000_000


@dataclass(frozen=True)
class Plan:
    """What rank 0 broadcasts."""

    jobs: tuple[JobSpec, ...]
    hosts: Optional[HostsTable]
    run_id: str


@dataclass
class FleetOutcome:
    """Rank 0's view of the finished run (other ranks get None)."""

    parts: list[HostPart]
    clock: dict[str, Any]
    faults: list[str]
    interrupted: bool
    jobs: tuple[JobSpec, ...]
    config: FleetConfig

    @property
    def incomplete(self) -> bool:
        return any(p.state != "complete" for p in self.parts)


def host_labels(hostnames: Sequence[str]) -> list[str]:
    """A label per rank: the host name, or ``host/rank`` where ranks share a host."""
    return [h if hostnames.count(h) == 1 else f"{h}/{r}" for r, h in enumerate(hostnames)]


def fleet_run(
    world: World,
    plan: Callable[[], Plan],
    cfg: FleetConfig,
    run_factory: Callable[..., RunLike] = _native.Run,
    on_view: Optional[Callable[[Any], None]] = None,
    note: Callable[[str], None] = lambda _line: None,
) -> Optional[FleetOutcome]:
    """The whole run on this rank; rank 0 returns the outcome."""
    with prestart_guard(PRESTART_LIMIT_S + cfg.deadline_s, f"rank {world.rank}: planning, preparing and starting"):
        run, labels, specs, samples, offsets, run_id, start_mono = _before_start(world, plan, cfg, run_factory)
        tail = LogTail(rank_log(cfg, run_id, world.rank)) if cfg.stream_intervals else None
        keys = world.allgather(seed_keys(specs))  # every rank: a collective
    if world.rank == 0:
        for line in same_sequence_notes(keys, labels):
            note(line)
    spool = Spool(cfg.spool_root / run_id, world.rank)
    snap = Snapshotter(world.rank, labels[world.rank], start_mono, cfg.interval_ns / 1e9, [s.name for s in specs])
    if world.rank != 0:
        _follow(world, run, cfg, snap, spool, tail)
        return None
    from iolab.fleet.watch import Watch

    fleet_log = None
    if tail is not None and cfg.interval_log is not None:
        fleet_log = FleetLog(cfg.interval_log, world.size, offsets)
    watch = Watch(world, run, cfg, snap, spool, labels, on_view=on_view, note=note, streams=(tail, fleet_log))
    parts, faults, interrupted = watch.run()
    starts = {p.rank: _start_ns(p.result_json) for p in parts if p.result_json is not None}
    skew = clock.start_skew({r: t for r, t in starts.items() if t is not None}, offsets)
    for p in parts:
        p.spool = str(cfg.spool_root / run_id / f"rank-{p.rank}.jsonl")
        if cfg.stream_intervals:
            p.interval_log = str(rank_log(cfg, run_id, p.rank))
    return FleetOutcome(parts, clock.clock_report(samples, skew, labels), faults, interrupted, tuple(specs), cfg)


def _before_start(world: World, plan: Callable[[], Plan], cfg: FleetConfig, run_factory: Callable[..., RunLike]) -> Any:
    """Collectives: plan, host names, prepare, clocks, the start instant; starts the engine."""
    the_plan = _broadcast_plan(world, plan)
    hostnames = world.allgather(world.host)
    labels = host_labels(hostnames)
    if the_plan.hosts is not None:
        the_plan.hosts.check_against(hostnames)  # the same on every rank: all raise alike
    specs = the_plan.hosts.apply(the_plan.jobs, world.rank, world.host) if the_plan.hosts else list(the_plan.jobs)
    run = _prepare_everywhere(world, specs, cfg, hostnames, labels, run_factory, the_plan.run_id)
    samples = clock.measure(world)
    start_at = world.bcast(clock.start_instant(samples, START_LEAD_NS) if world.rank == 0 else None)
    offsets = world.bcast({s.rank: s.offset_ns for s in samples} if world.rank == 0 else None)
    local_at = start_at + offsets[world.rank]
    start_mono = time.monotonic() + (local_at - time.time_ns()) / 1e9
    run.start(local_at)
    return run, labels, specs, samples, offsets, the_plan.run_id, start_mono


def _start_ns(result_json: Optional[str]) -> Optional[int]:
    import json

    if result_json is None:
        return None
    value = json.loads(result_json).get("start_unix_ns")
    return int(value) if value else None


def _broadcast_plan(world: World, plan: Callable[[], Plan]) -> Plan:
    """Rank 0 plans; an error there ends every rank with its message."""
    sent: Any = None
    if world.rank == 0:
        try:
            sent = plan()
            refuse_extras(sent.jobs, CANNOT_APPLY, "a fleet run")
        except Exception as e:  # every rank must learn of it, or the others wait forever
            world.bcast(("error", e))
            raise
    got = world.bcast(sent)
    if isinstance(got, str) and got == SWEEP_END:
        raise SweepEnded
    if isinstance(got, tuple) and got and got[0] == "error":
        raise got[1]
    assert isinstance(got, Plan)
    return got


def _prepare_everywhere(
    world: World,
    specs: Sequence[JobSpec],
    cfg: FleetConfig,
    hostnames: Sequence[str],
    labels: Sequence[str],
    run_factory: Callable[..., RunLike],
    run_id: str,
) -> RunLike:
    """Every rank prepares, in waves so that ranks sharing a file lay it out
    once (:mod:`iolab.fleet.prepare`); if any cannot, every rank stops with
    the first failing host's error (all ranks raise the same error)."""

    streaming: dict[str, Any] = {}
    if cfg.stream_intervals:
        log = rank_log(cfg, run_id, world.rank)
        log.parent.mkdir(parents=True, exist_ok=True)
        streaming = {"interval_log": log, "per_worker_intervals": cfg.per_worker_intervals}

    def make() -> RunLike:
        return run_factory(
            native_jobs(engine_jobs(specs, RunSettings(cannot_apply=CANNOT_APPLY, where="a fleet run"))),
            interval_ns=cfg.interval_ns,
            allow_overwrite=cfg.allow_overwrite,
            host=labels[world.rank],
            host_index=world.rank,
            **streaming,
        )

    return prepare_in_waves(world, hostnames, labels, make)


def rank_log(cfg: FleetConfig, run_id: str, rank: int) -> Path:
    """A rank's own interval log (``--stream-intervals``), beside its spool."""
    return cfg.spool_root / run_id / f"rank-{rank}.hlog"


def _follow(
    world: World, run: RunLike, cfg: FleetConfig, snap: Snapshotter, spool: Spool, tail: Optional[LogTail]
) -> None:
    """A rank other than 0: run, send snapshots, obey STOP, watch rank 0."""
    last_from_zero = time.monotonic()
    lost_zero = False
    while not run.finished():
        try:
            progress = run.poll(snap.poll_timeout_s(POLL_S))
            now = time.monotonic()
            if snap.due(now):
                s = snap.take(progress, now)
                spool.write("interval", s)  # the records stay in the rank's own log
                world.post(s if tail is None else {**s, "log": tail.read()}, 0, TAG_INTERVAL)
            if world.drain(TAG_BEAT, 0):
                last_from_zero = now
            if world.drain(TAG_STOP, 0):
                run.stop()
            if now - last_from_zero > cfg.silence_limit_s:
                lost_zero = True
                run.stop()
        except KeyboardInterrupt:
            run.stop()  # rank 0 gets the same signal, stops every rank and reports
    final = final_of(run)
    spool.write("final", {k: v for k, v in final.items()})
    spool.close()
    if tail is not None:
        final["log"] = tail.read()  # the engine has closed its log: the rest of it
    if lost_zero:
        die(
            f"rank {snap.rank} ({snap.host}): rank 0 silent for more than {cfg.silence_limit_s:.1f} s; "
            f"stopped; this rank's results are in {spool.path}"
        )
    world.post(final, 0, TAG_FINAL)
    # Wait until rank 0 has it (or is gone): rank 0 answers DONE.
    deadline = time.monotonic() + cfg.silence_limit_s + 30.0
    world.flush(deadline)
    if world.receive_any(TAG_DONE, deadline, 0) is None:
        die(f"rank {snap.rank} ({snap.host}): rank 0 did not confirm the end; results are in {spool.path}")


__all__ = [
    "CANNOT_APPLY",
    "DEFAULT_DEADLINE_S",
    "EXIT_HOST_LOST",
    "SWEEP_END",
    "FleetConfig",
    "FleetOutcome",
    "HostPart",
    "Plan",
    "SweepEnded",
    "fleet_run",
    "host_labels",
    "prestart_guard",
]
