"""One run, start to end: the pipeline every caller runs jobs through.

``iolab run``, the library API (``iolab.run(...)``, :func:`iolab.run.api.run`,
which ``iolab lab raid`` drives), each job of ``iolab quick`` and each run of
a sweep (its points, warm-ups, precondition and steady-state rounds) take the
same stages, so an option one of them honours works in all:

1. **prepare** (:class:`RunPipeline`): the options handled around the engine
   (:func:`iolab.jobs.effects.plan_extras`: notes, ``wait_for``,
   ``allow_file_create``, log and steady-state windows) split off, each job
   prepared once (:func:`~iolab.run.local.prepare_all`), ``--readonly``
   refused, fio's steady state (:class:`~iolab.run.steady.FioSteadyState`)
   and the observers (target statistics, /proc/diskstats) set up. An extra
   option the caller cannot apply is refused here, by name, with the
   caller's reason (:func:`refuse_extras`), before anything runs.
2. **start, poll/progress, stop** (:meth:`RunPipeline.execute`): the I/O
   schedulers checked, ``exec_prerun``, then the engine driven by
   :func:`~iolab.run.local.run_jobs` (or the caller's runner, e.g. a
   fleet's): start, live progress, stop on Ctrl-C, on steady state, or on
   the caller's own stop (a sweep's per-point timeout wraps the run). The
   progress snapshots also feed the engine's Prometheus endpoint when the
   caller serves one (``--metrics``, :mod:`iolab.run.metrics`).
3. **record**: fio's ``steadystate`` report into
   ``RunOutput.observed["steadystate"]``; the fio log files the jobs ask
   for, written by the caller's :data:`LogWriter` into ``log_dir`` and
   listed in ``observed["fio_logs"]``. (The writer is injected:
   :mod:`iolab.results` is a layer above ``run``.) A run that ended early
   on an error records its steady state only.
4. **report**: the caller's (render, a run directory), also for a run that
   ended early on an error (its partial results, before the error is raised).
5. ``exec_postrun``.

Fleet ranks run the engine through their own start-together driver
(:mod:`iolab.fleet.runner`), which applies none of the options around the
engine: rank 0 refuses them by name, with why, through :func:`refuse_extras`
(a fleet sweep passes the same table to the sweep's runs), and each rank
takes the prepare stage on its own host's files (:func:`engine_jobs`: fio's
size syntax read as fio reads it, percentages of its own files, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NoReturn, Optional

from iolab import _native
from iolab.errors import IolabError, JobError
from iolab.jobs import JobSpec
from iolab.jobs.effects import plan_extras
from iolab.jobs.extras import EXTRA_OPTIONS, NOTE_ONLY, JobExtras, split_extras
from iolab.run.diskstats import diskstats_observers
from iolab.run.exec_hooks import run_exec_hooks
from iolab.run.iosched import check_ioschedulers
from iolab.run.local import (
    RunFactory,
    RunLike,
    RunObserver,
    RunOutput,
    StatusReports,
    partial_output,
    prepare_all,
    run_jobs,
)
from iolab.run.metrics import MetricsServer
from iolab.run.progress import ProgressSink
from iolab.run.readonly import refuse_writes
from iolab.run.steady import FioSteadyState
from iolab.run.wire import target_observer

Json = dict[str, Any]

#: ``(result, extras, directory) → files written``: fio's log files of a run
#: (:func:`iolab.results.fio_logs.write_fio_logs`).
LogWriter = Callable[[Json, Sequence[JobExtras], Path], list[Path]]

#: ``runner(engine_jobs, allow_overwrite=, interval_ns=, progress=, run_factory=,
#: observers=, prepared=)``: :func:`~iolab.run.local.run_jobs`, a fleet's, or a test double.
Runner = Callable[..., RunOutput]

#: The caller's report: ``(output, error)``, error None for a run that finished.
Report = Callable[[RunOutput, Optional[BaseException]], None]

#: A caller's extra wrapper around the engine's run (a sweep's per-point timeout).
RunWrap = Callable[[RunLike], RunLike]


def _silent(_line: str) -> None:
    pass


@dataclass(frozen=True)
class RunSettings:
    """How one run is taken; every field has the single run's default."""

    allow_overwrite: bool = False
    #: The interval the user asked for (``--interval``); the jobs' log or
    #: steady-state window decides when they have one (and must agree).
    interval: Optional[str] = None
    #: The stats URL of the iolab target the (nbd) jobs drive, and the name
    #: the caller gives that setting in errors (``--target-stats``).
    target_stats: Optional[str] = None
    target_stats_option: str = "target_stats"
    #: Measure the devices' /proc/diskstats over the run (kept as diskstats.json).
    diskstats: bool = False
    #: fio's ``--readonly``: refuse every job that writes, before anything runs.
    readonly: bool = False
    #: False for ``--parse-only``: ``allow_file_create=0`` looks for no files.
    check_files: bool = True
    #: Writes the fio log files (``write_bw_log``, ...); None: the caller
    #: writes none, and jobs asking for them are refused by name.
    write_logs: Optional[LogWriter] = None
    #: Where the log files go; None: this run's logs are not kept (a
    #: sweep's discarded warm-up run).
    log_dir: Optional[Path] = Path(".")
    #: Extra options this caller cannot apply → why; refused by name.
    cannot_apply: Mapping[str, str] = field(default_factory=dict)
    #: The caller, in those refusals ("a fleet run").
    where: str = "this run"
    #: The engine's Prometheus endpoint (``--metrics``): fed every progress
    #: snapshot of the run; None: not served.
    metrics: Optional[MetricsServer] = None
    #: Stream the measured intervals to this interval log (``.hlog``) as
    #: the run goes (``--stream-intervals``); None: kept in the result.
    interval_log: Optional[Path] = None
    #: Each worker's intervals in that log too (``--per-worker-intervals``).
    per_worker_intervals: bool = False
    #: Interim reports while the run goes (fio's ``--status-interval``); None: none.
    status: Optional[StatusReports] = None


def refuse_extras(specs: Sequence[JobSpec], cannot_apply: Mapping[str, str], where: str) -> None:
    """Refuse, by name and with why, every extra option in ``specs`` that
    ``cannot_apply`` lists (a :class:`JobError` naming the job and the
    options)."""
    for spec in specs:
        extras = split_extras(spec)[1]
        by_reason: dict[str, list[str]] = {}
        for name in sorted(n for n in extras.values if n in cannot_apply):
            by_reason.setdefault(cannot_apply[name], []).append(name)
        if by_reason:
            reasons = "; ".join(f"{', '.join(names)}: {why}" for why, names in by_reason.items())
            raise JobError(f"job {spec.name}: not applied on {where}: {reasons}")


#: Every extra option that acts around the engine (the others are notes).
ACTING_EXTRAS: frozenset[str] = frozenset(d.name for d in EXTRA_OPTIONS if d.name not in NOTE_ONLY)


def engine_jobs(specs: Sequence[JobSpec], settings: RunSettings) -> list[JobSpec]:
    """The prepare stage alone, for a driver that runs the engine itself (a
    fleet rank, on its own host's files): the jobs the engine gets, as
    :class:`RunPipeline` makes them. A refusal is a plain :class:`JobError`
    (its one message), which such a driver can relay to other processes."""
    try:
        return RunPipeline(specs, settings).jobs
    except JobError as e:
        raise JobError(str(e)) from None


def _refuse_logs(extras: Sequence[JobExtras], where: str) -> NoReturn:
    logs = sorted({n for e in extras for n in e.values if n.startswith("write_") and n.endswith("_log")})
    raise JobError(
        f"{', '.join(logs)}: {where} writes no log files; run the jobs with `iolab run` or iolab.run(jobs, log_dir=...)"
    )


class RunPipeline:
    """One run of ``specs`` on this host, prepared (stage 1, at construction;
    raises ``JobError`` naming the job and option) and then executed
    (:meth:`execute`). ``say`` gets the notes and the lines around the run
    (schedulers, exec hooks)."""

    def __init__(
        self,
        specs: Sequence[JobSpec],
        settings: Optional[RunSettings] = None,
        say: Optional[Callable[[str], None]] = None,
    ) -> None:
        self.settings = settings or RunSettings()
        self.say = say or _silent
        s = self.settings
        refuse_extras(specs, s.cannot_apply, s.where)
        user_ns = None if s.interval is None else parse_interval_ns(s.interval)
        plan = plan_extras(specs, user_ns, check_files=s.check_files)
        self._wants_logs = plan.wants_logs()
        if self._wants_logs and s.write_logs is None:
            _refuse_logs(plan.extras, s.where)
        if self._wants_logs and s.interval_log is not None:
            raise JobError(
                "fio's log files (write_*_log) are made from the intervals kept in the result: "
                "not with --stream-intervals (its .hlog has the interval histograms)"
            )
        for note in plan.notes:
            self.say(f"note: {note}")
        #: The jobs the engine gets (the options around it taken out), in order.
        self.jobs: list[JobSpec] = plan.jobs
        #: Each job's options handled around the engine, in the same order.
        self.extras: list[JobExtras] = plan.extras
        #: Every job prepared once: observers, engine warnings and config.json share it.
        self.prepared: tuple[Json, ...] = prepare_all(self.jobs)
        if s.readonly:
            refuse_writes(self.prepared)
        self.interval_ns: int = plan.interval_ns or user_ns or parse_interval_ns("1s")
        self.steady = FioSteadyState.plan(self.extras, list(self.prepared), self.interval_ns)

    def observers(self) -> list[RunObserver]:
        """What is measured beside the run, checked before it starts."""
        s = self.settings
        found: list[RunObserver] = []
        if s.target_stats:
            found.append(target_observer(s.target_stats, self.prepared, s.target_stats_option))
        if s.diskstats:
            found.extend(diskstats_observers(self.prepared))
        return found

    def execute(
        self,
        progress: Optional[ProgressSink] = None,
        *,
        runner: Runner = run_jobs,
        wrap: Optional[RunWrap] = None,
        report: Optional[Report] = None,
    ) -> RunOutput:
        """Stages 2 to 5 (see the module doc). An error that ended the run
        early is raised after ``report`` saw its partial results."""
        s = self.settings
        check_ioschedulers(self.prepared, self.extras, self.say)
        run_exec_hooks(self.extras, "prerun", self.say)
        observers = self.observers()
        if s.metrics is not None:
            progress = s.metrics.sink([j.name for j in self.jobs], progress)
        optional: dict[str, Any] = {}
        if s.interval_log is not None:
            optional = {"interval_log": s.interval_log, "per_worker_intervals": s.per_worker_intervals}
        if s.status is not None:
            optional["status"] = s.status
        try:
            out = runner(
                self.jobs,
                allow_overwrite=s.allow_overwrite,
                interval_ns=self.interval_ns,
                progress=progress,
                run_factory=self._factory(wrap),
                observers=observers,
                prepared=self.prepared,
                **optional,
            )
        except (IolabError, OSError) as e:
            partial = partial_output(e)
            if partial is not None:
                self._record_steady(partial)
                if report is not None:
                    report(partial, e)
            raise
        self._record_steady(out)
        self._record_logs(out)
        if report is not None:
            report(out, None)
        run_exec_hooks(self.extras, "postrun", self.say)
        return out

    def _factory(self, wrap: Optional[RunWrap]) -> RunFactory:
        base: RunFactory = self.steady.factory if self.steady else _native.Run
        if wrap is None:
            return base

        def wrapped(*args: Any, **kwargs: Any) -> RunLike:
            return wrap(base(*args, **kwargs))

        return wrapped

    def _record_steady(self, out: RunOutput) -> None:
        if self.steady:
            out.observed["steadystate"] = self.steady.fio_entries(out.summary)

    def _record_logs(self, out: RunOutput) -> None:
        s = self.settings
        if s.write_logs is None or s.log_dir is None or not self._wants_logs:
            return
        s.log_dir.mkdir(parents=True, exist_ok=True)
        files = s.write_logs(out.result, self.extras, s.log_dir)
        if files:
            out.observed["fio_logs"] = {"files": [str(f) for f in files]}

    def steady_line(self, out: RunOutput) -> Optional[str]:
        """fio's ``steadystate : attained=...`` lines for the text output, or None."""
        return self.steady.line(out.summary) if self.steady else None


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


__all__ = [
    "ACTING_EXTRAS",
    "LogWriter",
    "Report",
    "RunPipeline",
    "RunSettings",
    "RunWrap",
    "Runner",
    "engine_jobs",
    "parse_interval_ns",
    "refuse_extras",
]
