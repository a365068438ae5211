"""The Python API: ``iolab.Job``, ``iolab.prepare``, ``iolab.run``.

A job is written with fio's option names as keywords::

    >>> job = Job("x", rw="randread", bs="4k", iodepth=32, time_based=True, runtime="5s")
    >>> job.options[-2:]
    (('time_based', None), ('runtime', '5s'))

``True`` is a bare flag (``--time_based``), ``False`` is ``0``, numbers are
written as decimal text: the same ``JobSpec`` the command line and job
files produce, so the three sources prepare to the same job.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional, Union

from iolab import _native
from iolab.jobs import JobSpec
from iolab.jobs.effects import plan_extras
from iolab.jobs.extras import JobExtras
from iolab.run.exec_hooks import run_exec_hooks
from iolab.run.iosched import check_ioschedulers
from iolab.run.local import RunOutput, prepare, prepare_all, run_jobs
from iolab.run.progress import ProgressSink
from iolab.run.steady import SteadyState
from iolab.run.wire import target_observer

OptionValue = Union[str, int, float, bool]


def Job(name: str, **options: OptionValue) -> JobSpec:
    """A job from fio option names as keywords (see the module doc)."""
    return JobSpec(name, tuple(_option(k, v) for k, v in options.items()))


def _option(name: str, value: OptionValue) -> tuple[str, Optional[str]]:
    if value is True:
        return (name, None)
    if value is False:
        return (name, "0")
    if isinstance(value, (int, float, str)):
        return (name, str(value))
    raise TypeError(f"option {name}: expected str, int, float or bool, got {type(value).__name__}")


def parse_interval_ns(text: str) -> int:
    """``"1s"``, ``"500ms"``, ``"2"`` (seconds) → nanoseconds (> 0), by the
    core's duration syntax (``_native.parse_duration_ns``)."""
    try:
        ns = _native.parse_duration_ns(text)
    except ValueError as e:
        raise ValueError(f"interval {e}") from None
    if ns <= 0:
        raise ValueError(f"interval '{text}': must be greater than zero")
    return ns


def run(
    jobs: Union[JobSpec, Sequence[JobSpec]],
    *,
    allow_overwrite: bool = False,
    interval: Optional[str] = None,
    progress: Optional[ProgressSink] = None,
    target_stats: Optional[str] = None,
    extras_out: Optional[list[JobExtras]] = None,
) -> RunOutput:
    """Run jobs on this host (stonewall groups one after another).

    ``progress`` receives notes, layout notes and live progress (e.g.
    ``iolab.run.progress.TerminalProgress()``); by default nothing is shown.
    ``interval``: sampling interval (default 1 s, or the window the jobs'
    logs or steady state need). ``target_stats``: the stats URL of the
    iolab target the (nbd) jobs drive; its window is measured alongside,
    and ``iolab.run.wire.wire_section(output)`` gives client, server and
    wire latency, server CPU and wire bytes.

    The options handled around the engine (:mod:`iolab.jobs.extras`) act
    as under ``iolab run``: ``steadystate`` ends a job when reached (fio's
    report in ``output.observed["steadystate"]``), notes go to ``progress``.
    fio's log files are written by ``iolab.run`` (the package's, a layer
    above: iolab.results), from the jobs' extras this function appends to
    ``extras_out``.
    """
    specs = [jobs] if isinstance(jobs, JobSpec) else list(jobs)
    plan = plan_extras(specs, None if interval is None else parse_interval_ns(interval))
    if progress is not None:
        for note in plan.notes:
            progress.note(f"note: {note}")
    prepared = prepare_all(plan.jobs)
    interval_ns = plan.interval_ns or parse_interval_ns(interval or "1s")
    steady = SteadyState.plan(plan.extras, list(prepared), interval_ns)
    observers = [target_observer(target_stats, prepared)] if target_stats else []
    check_ioschedulers(prepared, plan.extras, progress.note if progress is not None else lambda _: None)
    run_exec_hooks(plan.extras, "prerun", progress.note if progress is not None else lambda _: None)
    out = run_jobs(
        plan.jobs,
        allow_overwrite=allow_overwrite,
        interval_ns=interval_ns,
        progress=progress,
        observers=observers,
        prepared=prepared,
        run_factory=steady.factory if steady else _native.Run,
    )
    run_exec_hooks(plan.extras, "postrun", progress.note if progress is not None else lambda _: None)
    if steady:
        out.observed["steadystate"] = steady.fio_entries(out.summary)
    if extras_out is not None:
        extras_out.extend(plan.extras)
    return out


__all__ = ["Job", "OptionValue", "parse_interval_ns", "prepare", "run"]
