"""Drive one run of the native engine on this host.

:func:`run_jobs` is the whole lifecycle for a local run: prepare (the
native ``Run`` validates the jobs and lays out files), show what layout
did, start, poll for progress until the end, wait for the result, and
summarise it. With :class:`StatusReports` (fio's ``--status-interval``) the driver
also hands over, every so often, the run's result *so far* as a
:class:`RunOutput` of the same form as the final one (the engine's
``Run.snapshot``: cumulative since the start, ramp left out; see
crates/iolab-engine/src/run/snapshot.rs), so the same renderers print it.
Ctrl-C stops the workers and keeps what was measured so far
(``RunOutput.interrupted`` says so); a second Ctrl-C while the workers
stop gives up. An error that ends the run early (an I/O error) is raised
with the results of the work done before it attached:
:func:`partial_output` gets them.

The engine is injected (``run_factory``) so the driver's own behaviour —
notes, progress, interruption — is tested without real I/O as well as
with it.
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Protocol

from iolab import _native
from iolab.errors import JobError
from iolab.jobs import JobSpec
from iolab.jobs.extras import engine_job
from iolab.run.progress import ProgressSink, SilentProgress
from iolab.run.series import attach_series, summarize_streamed

#: A job as the native module takes it: ``(name, [(option, value or None), ...])``.
NativeJob = tuple[str, list[tuple[str, Optional[str]]]]

#: How often the driver polls; also how soon Ctrl-C is noticed.
POLL_S = 0.25

#: What a run stopped by Ctrl-C says; a sweep says otherwise (it discards the run).
INTERRUPTED_NOTE = "interrupted: the results cover only the time that ran"


class JobLike(Protocol):
    def to_native(self) -> NativeJob: ...


class RunLike(Protocol):
    """What the driver uses of ``iolab._native.Run``."""

    def layout_notes(self) -> list[str]: ...
    def start(self, at_unix_ns: Optional[int] = None) -> None: ...
    def poll(self, timeout_s: float) -> dict[str, Any]: ...
    def stop(self) -> None: ...
    def finished(self) -> bool: ...
    def snapshot(self) -> str:
        """The result so far as JSON (a run made with ``snapshots=True``)."""
        ...

    def wait(self) -> str:
        """The result JSON; an error that ended the run early is raised with
        the partial result JSON in its ``result_json`` attribute."""
        ...


RunFactory = Callable[..., RunLike]


class RunObserver(Protocol):
    """Something measured alongside a run over the same window (the
    device's /proc/diskstats, an iolab target's server statistics).

    ``begin()`` is called just before the workers start, ``end()`` once
    the run is over (also when it was interrupted or ended on an error);
    what ``end()`` returns lands in ``RunOutput.observed[name]``."""

    name: str

    def begin(self) -> None: ...
    def end(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class RunOutput:
    """A finished (or interrupted) run."""

    #: The lossless result (schema ``iolab.result/1``), as the engine wrote it.
    result_json: str
    #: Its summary (schema ``iolab.summary/1``), computed by the core.
    summary_json: str
    #: True when Ctrl-C stopped the run early: figures cover the time that ran.
    interrupted: bool
    #: What layout did before the run, one line each.
    layout_notes: tuple[str, ...]
    #: What each :class:`RunObserver` measured over the run, by its name.
    observed: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The jobs as the core prepared them (every option resolved), in order.
    prepared: tuple[dict[str, Any], ...] = ()
    #: Where the summary's series file is (``summary_json`` names one: a
    #: run that streamed its intervals; :mod:`iolab.run.series`).
    series_dir: Optional[Path] = None

    @property
    def result(self) -> dict[str, Any]:
        """The lossless result, parsed."""
        parsed: dict[str, Any] = json.loads(self.result_json)
        return parsed

    @property
    def summary(self) -> dict[str, Any]:
        """The summary, parsed: ``summary["jobs"][i]["merged"]["read"]["iops"]``, ..."""
        parsed: dict[str, Any] = json.loads(self.summary_json)
        return attach_series(parsed, self.series_dir) if self.series_dir is not None else parsed


@dataclass(frozen=True)
class StatusReports:
    """fio's ``--status-interval``: every ``every_ns`` of the run (wall
    clock from its start), ``show`` gets the run's result so far and the
    report's number (1, 2, ...). Each is cumulative since the start, made
    of the intervals the workers closed by then (at most one ``interval_ns``
    behind), so its rates are over the time its I/Os ran."""

    every_ns: int
    show: Callable[[RunOutput, int], None]


def _engine(job: JobLike) -> JobLike:
    # Options handled around the engine (iolab.jobs.extras) never reach it:
    # note-only ones are dropped, the others were applied by the run
    # pipeline (iolab.run.pipeline) or are refused here by name.
    return engine_job(job, "the engine alone (prepare, run_jobs)") if isinstance(job, JobSpec) else job


def native_jobs(specs: Iterable[JobLike]) -> list[NativeJob]:
    return [_engine(s).to_native() for s in specs]


def prepare(job: JobLike) -> dict[str, Any]:
    """Validate ``job``; return the prepared job (sizes in bytes, times in ns).

    Raises ``iolab.JobError`` naming the option when the job is invalid.
    """
    job = _engine(job)
    name, options = job.to_native()
    try:
        result: dict[str, Any] = json.loads(_native.prepare_job(name, options))
    except JobError as e:
        raise _where(job, e) from None
    return result


_NAMED_OPTION = re.compile(r"option '([^']+)'")


def _where(job: JobLike, error: JobError) -> JobError:
    """``error`` with the file and line of the option it names
    (``job.fio:12: unknown option 'x': see `iolab options` ...``), when the job
    came from a job file; otherwise ``error`` itself."""
    message = str(error)
    m = _NAMED_OPTION.search(message)
    origin = getattr(job, "origin", None)
    if m is None or not callable(origin):
        return error
    where = origin(m.group(1))
    if where is None:
        return error
    return JobError(f"{where}: {message}")


def prepare_all(specs: Iterable[JobLike]) -> tuple[dict[str, Any], ...]:
    """Every job prepared, once: what observers, run directories and
    :func:`run_jobs` share for one run."""
    return tuple(prepare(s) for s in specs)


#: Between a job's name and a warning about its settings (:func:`job_warnings`).
WARNING_MARK = ": warning: "


def job_warnings(prepared: Sequence[dict[str, Any]]) -> list[str]:
    """Settings that have no effect, one line per job and warning (from the
    core's validation; invalid jobs raise ``JobError`` when prepared)."""
    return [f"{job['name']}{WARNING_MARK}{w}" for job in prepared for w in job.get("warnings", [])]


def run_jobs(
    specs: Sequence[JobLike],
    *,
    allow_overwrite: bool = False,
    interval_ns: int = 1_000_000_000,
    progress: Optional[ProgressSink] = None,
    host: Optional[str] = None,
    run_factory: RunFactory = _native.Run,
    observers: Sequence[RunObserver] = (),
    prepared: Optional[Sequence[dict[str, Any]]] = None,
    interval_log: Optional[Path] = None,
    per_worker_intervals: bool = False,
    status: Optional[StatusReports] = None,
) -> RunOutput:
    """Run ``specs`` (stonewall groups one after another) and summarise them.
    ``prepared``: the jobs as :func:`prepare_all` gave them, when the caller
    prepared them already (they are prepared here otherwise).
    ``interval_log``: stream the measured intervals to this interval log
    (``.hlog``) as the run goes instead of keeping them in the result (each
    job's workers merged; each worker's too with ``per_worker_intervals``).
    ``status``: interim reports while it runs (:class:`StatusReports`).

    Raises ``JobError`` for invalid jobs, ``RefusedError`` when a write
    would destroy data iolab did not create, ``EngineError``/``OSError``
    when the run cannot be done.
    """
    sink = progress or SilentProgress()
    jobs = native_jobs(specs)
    ready = tuple(prepared) if prepared is not None else prepare_all(specs)
    for line in job_warnings(ready):
        sink.note(line)
    streaming: dict[str, Any] = {}
    if interval_log is not None:
        streaming = {"interval_log": str(interval_log), "per_worker_intervals": per_worker_intervals}
    elif per_worker_intervals:
        raise JobError("per-worker intervals are streamed to an interval log: give one (--stream-intervals)")
    series_dir = None if interval_log is None else interval_log.parent
    run = run_factory(
        jobs,
        interval_ns=interval_ns,
        allow_overwrite=allow_overwrite,
        host=host or socket.gethostname(),
        **streaming,
        **({"snapshots": True} if status is not None else {}),
    )
    for o in observers:
        o.begin()
    interim = None if status is None else _Interim(status, ready)
    interrupted, shown = _drive(run, sink, _show_new_notes(run, sink, ()), interim)
    try:
        result_json = run.wait()
    except Exception as e:
        partial = getattr(e, "result_json", None)
        if not isinstance(partial, str):
            raise
        sink.note("the run ended early on an error: the results cover the work done before it")
        observed = _end_observers(observers, sink)
        summary = summarize_result(partial, interval_log)
        setattr(e, _PARTIAL, RunOutput(partial, summary, interrupted, shown, observed, ready, series_dir))
        raise
    observed = _end_observers(observers, sink)
    if interrupted:
        sink.note(INTERRUPTED_NOTE)
    summary_json = summarize_result(result_json, interval_log)
    return RunOutput(result_json, summary_json, interrupted, shown, observed, ready, series_dir)


def summarize_result(result_json: str, interval_log: Optional[Path] = None) -> str:
    """The summary (JSON) of a run result; when the run streamed its
    intervals to ``interval_log``, made from it, its series in
    ``timeseries.parquet`` beside it (:func:`iolab.run.series.summarize_streamed`)."""
    if interval_log is None:
        return _native.summarize(result_json)
    return summarize_streamed(result_json, interval_log)


def _end_observers(observers: Sequence[RunObserver], sink: ProgressSink) -> dict[str, dict[str, Any]]:
    """End every observer; one that fails is noted, not fatal (the run's own
    results are worth keeping)."""
    observed = {}
    for o in observers:
        try:
            observed[o.name] = o.end()
        except Exception as e:  # any failure of a side measurement is reported, not raised
            sink.note(f"{o.name}: could not measure over the run: {e}")
    return observed


#: The attribute of an exception that ended a run early holding its partial output.
_PARTIAL = "partial_output"


def partial_output(e: BaseException) -> Optional[RunOutput]:
    """The results of the work done before ``e`` ended a run early, if it did."""
    partial = getattr(e, _PARTIAL, None)
    return partial if isinstance(partial, RunOutput) else None


def attach_partial(e: BaseException, out: RunOutput) -> None:
    """Make ``out`` the results :func:`partial_output` gives for ``e`` (a
    caller that ran several runs attaches them all)."""
    setattr(e, _PARTIAL, out)


def _show_new_notes(run: RunLike, sink: ProgressSink, shown: tuple[str, ...]) -> tuple[str, ...]:
    notes = tuple(run.layout_notes())
    for line in notes[len(shown) :]:
        sink.note(line)
    return notes


class _Interim:
    """When the next interim report is due, and how it is made."""

    def __init__(self, status: StatusReports, prepared: tuple[dict[str, Any], ...]):
        self.status = status
        self.prepared = prepared
        self.count = 0
        self.started_ns = 0
        self.due_ns = status.every_ns

    def begin(self) -> None:
        self.started_ns = time.monotonic_ns()

    def poll_s(self) -> float:
        return min(POLL_S, self.status.every_ns / 1e9)

    def maybe_show(self, run: RunLike, shown: tuple[str, ...]) -> None:
        elapsed_ns = time.monotonic_ns() - self.started_ns
        if elapsed_ns < self.due_ns:
            return
        while self.due_ns <= elapsed_ns:  # a slow report skips the times it overran
            self.due_ns += self.status.every_ns
        snapshot_json = run.snapshot()
        summary_json = _native.summarize(snapshot_json)
        self.count += 1
        self.status.show(RunOutput(snapshot_json, summary_json, False, shown, {}, self.prepared), self.count)


def _drive(
    run: RunLike, sink: ProgressSink, shown: tuple[str, ...], interim: Optional[_Interim] = None
) -> tuple[bool, tuple[str, ...]]:
    """Start and poll until the end (showing the interim reports asked
    for). Returns whether Ctrl-C stopped it, and the notes shown so far."""
    try:
        if interim is not None:
            interim.begin()  # the run's clock: its workers start at the start call
        run.start(None)
        # Starting opens every worker's backend, which may add notes (a
        # fallback it took, a limit it hit).
        shown = _show_new_notes(run, sink, shown)
        poll_s = POLL_S if interim is None else interim.poll_s()
        while not run.finished():
            sink.update(run.poll(poll_s))
            if interim is not None and not run.finished():
                interim.maybe_show(run, shown)
        # One last snapshot: the workers' final intervals arrive as the run
        # ends, and a sink that counts (--metrics) must see every one.
        sink.update(run.poll(0.0))
    except KeyboardInterrupt:
        sink.close()
        sink.note("interrupted: stopping the workers (Ctrl-C again to give up)")
        run.stop()
        return True, shown
    finally:
        sink.close()
    return False, shown
