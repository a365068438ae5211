"""Run a plan: every point x repeat, written as it finishes, resumable.

The sweep directory is ``RESULTS/<plan name>/``::

    sweep.json        id, plan hash, --quick, target, points, state (written before the first point)
    plan.toml         the plan file as given
    plan.json         the plan as resolved (quick and target applied)
    host.json         host facts with the target's filesystem and device
    precondition/     the fill run, when the plan has one (a run directory)
    points/p007-r2/   one run directory per point and repeat (iolab.results.rundir), with the
                      device's /proc/diskstats deltas over it (diskstats.json), fio's
                      steady-state report (steadystate.json) and the fio log files
                      (write_bw_log, ...) when the job asks for them

Every run (point, warm-up, precondition, steady-state round) goes through the
run pipeline (:mod:`iolab.run.pipeline`), so a point's job takes every option
``iolab run`` takes; a warm-up's fio logs are not kept (the run is discarded).

A point x repeat counts as finished when its ``run.json`` exists (written
last), so a sweep stopped anywhere resumes at the first unfinished one.
Resuming needs the same plan hash; a changed plan is refused (use a new
``--results`` directory, or ``restart=True`` to discard the old points).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from iolab import _native
from iolab.errors import IolabError
from iolab.jobs import JobSpec
from iolab.plans.model import Plan, load_plan
from iolab.plans.points import Point, expand, point_job, precondition_job, resolve, validate, warmup_job
from iolab.plans.progress import SweepProgress
from iolab.plans.steady import DROP_CACHES, drop_caches, steady_metric, steady_state_check
from iolab.results.catalog import Catalog
from iolab.results.fio_logs import write_fio_logs
from iolab.results.rundir import is_complete, observed_files, run_config, write_json, write_run_dir
from iolab.run.hostfacts import host_facts
from iolab.run.local import RunLike, RunOutput, prepare_all, run_jobs
from iolab.run.metrics import MetricsServer
from iolab.run.pipeline import Runner, RunPipeline, RunSettings

SWEEP_FILE = "sweep.json"

#: The file of a point's directory that keeps fio's ``steadystate`` report.
STEADYSTATE_FILE = "steadystate.json"


class PlanChangedError(IolabError):
    """The results directory holds a sweep of a different plan."""


class SweepInterrupted(IolabError):
    """Ctrl-C stopped the sweep; the finished points are kept."""


@dataclass
class SweepOutcome:
    directory: Path
    sweep_id: str
    points: int
    runs_total: int
    runs_done_before: int
    runs_done_now: int
    timed_out: list[str] = field(default_factory=list)


@dataclass
class SweepOptions:
    quick: bool = False
    target: Optional[str] = None
    restart: bool = False
    allow_overwrite: bool = False
    runner: Runner = run_jobs
    drop_caches_path: Path = DROP_CACHES
    progress: Optional[SweepProgress] = None
    clock: Callable[[], float] = time.monotonic
    #: Job options the runner cannot apply → why (a fleet's); refused by
    #: name before the sweep starts.
    cannot_apply: Mapping[str, str] = field(default_factory=dict)
    #: The sweep, in those refusals.
    where: str = "a sweep"
    #: The engine's /metrics (``--metrics``), fed by every run of the sweep.
    metrics: Optional[MetricsServer] = None

    def run_settings(self, log_dir: Optional[Path] = None) -> RunSettings:
        """How each run of the sweep is taken: the device's diskstats measured,
        the fio logs kept in ``log_dir`` (None: not kept)."""
        return RunSettings(
            allow_overwrite=self.allow_overwrite,
            diskstats=True,  # kept as diskstats.json in the point's directory
            write_logs=write_fio_logs,
            log_dir=log_dir,
            cannot_apply=self.cannot_apply,
            where=self.where,
            metrics=self.metrics,
        )


class _TimedRun:
    """A native run that stops itself once ``timeout_s`` has passed: the
    point keeps what it measured and is marked timed out."""

    def __init__(self, inner: RunLike, timeout_s: float, clock: Callable[[], float]) -> None:
        self.inner, self.timeout_s, self.clock = inner, timeout_s, clock
        self.deadline: Optional[float] = None
        self.timed_out = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def start(self, at_unix_ns: Optional[int] = None) -> None:
        self.deadline = self.clock() + self.timeout_s
        self.inner.start(at_unix_ns)

    def poll(self, timeout_s: float) -> dict[str, Any]:
        if self.deadline is not None and not self.timed_out and self.clock() >= self.deadline:
            self.timed_out = True
            self.inner.stop()
        return self.inner.poll(timeout_s)


def run_sweep(plan_path: Path, results_root: Path, opts: Optional[SweepOptions] = None) -> SweepOutcome:
    """Validate every point, then run what is not finished yet. Raises
    ``PlanError``, ``JobError`` (a point's job, before anything runs),
    :class:`PlanChangedError`, :class:`SweepInterrupted`."""
    return run_plan(load_plan(plan_path), plan_path.read_text(encoding="utf-8"), results_root, opts)


def run_plan(plan: Plan, plan_text: str, results_root: Path, opts: Optional[SweepOptions] = None) -> SweepOutcome:
    """:func:`run_sweep` of a plan already read (``plan_text`` is kept as plan.toml)."""
    opts = opts or SweepOptions()
    plan = resolve(plan, quick=opts.quick, target=opts.target)
    points = expand(plan)
    validate(plan, points, opts.run_settings())
    directory = results_root / plan.name
    catalog = Catalog(results_root)
    done_before = _open_dir(directory, plan, plan_text, opts, catalog)
    SweepRun(plan, points, directory, catalog, opts).run_all()
    outcome = SweepOutcome(directory, plan.name, len(points), len(points) * plan.repeats, done_before, 0)
    outcome.runs_done_now = sum(1 for _ in (directory / "points").iterdir() if is_complete(_)) - done_before
    return outcome


def open_sweep(plan: Plan, plan_text: str, results_root: Path, opts: SweepOptions) -> SweepRun:
    """The sweep directory of ``plan`` (already :func:`resolve` d) opened, or
    reopened when it holds the same plan, for points run one at a time
    (:meth:`SweepRun.run_one`); each point's job is validated as it runs."""
    directory = results_root / plan.name
    catalog = Catalog(results_root)
    _open_dir(directory, plan, plan_text, opts, catalog)
    return SweepRun(plan, [], directory, catalog, opts)


def _open_dir(directory: Path, plan: Plan, plan_text: str, opts: SweepOptions, catalog: Catalog) -> int:
    """Create or reopen the sweep directory; the number of finished runs in it."""
    meta_path = directory / SWEEP_FILE
    # A sweep of another plan that finished no run (stopped at its first point: a
    # --target in a missing directory, a typo) holds nothing to keep: start over.
    changed = meta_path.exists() and _read_json(meta_path).get("plan_hash") != plan.plan_hash()
    if meta_path.exists() and (opts.restart or (changed and not _finished_runs(directory))):
        shutil.rmtree(directory)
        catalog.forget(plan.name)
    if meta_path.exists():
        meta = _read_json(meta_path)
        if meta.get("plan_hash") != plan.plan_hash():
            raise PlanChangedError(
                f"{directory} holds sweep '{plan.name}' of a different plan (or --quick/--target differ): "
                "give another --results directory, or --restart to discard its points"
            )
        catalog.add_sweep(meta, directory)  # re-indexes it if the catalog was removed
        return _finished_runs(directory)
    (directory / "points").mkdir(parents=True, exist_ok=True)
    (directory / "plan.toml").write_text(plan_text, encoding="utf-8")
    write_json(directory / "plan.json", plan.to_json())
    target = dict(plan.base).get("filename")
    write_json(directory / "host.json", host_facts(Path(str(target)) if target else None))
    meta = {
        "id": plan.name,
        "kind": "sweep",
        "plan_hash": plan.plan_hash(),
        "quick": opts.quick,
        "target": target,
        "points": len(expand(plan)),
        "repeats": plan.repeats,
        "started_unix_ns": time.time_ns(),
        "tool_version": _native.version(),
    }
    write_json(meta_path, meta)
    catalog.add_sweep(meta, directory)
    return 0


def _finished_runs(directory: Path) -> int:
    points = directory / "points"
    return sum(1 for p in points.iterdir() if is_complete(p)) if points.is_dir() else 0


def _read_json(path: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return value


class SweepRun:
    """A sweep directory being written: :meth:`run_all` runs a plan's points;
    :meth:`run_one` one point x repeat at a time, for a caller that decides the
    next point from the last (``iolab find``, :mod:`iolab.plans.find_run`)."""

    def __init__(
        self,
        plan: Plan,
        points: list[Point],
        directory: Path,
        catalog: Catalog,
        opts: SweepOptions,
    ) -> None:
        self.plan, self.points, self.dir, self.catalog, self.opts = plan, points, directory, catalog, opts
        self.progress = opts.progress or SweepProgress()
        self.target = dict(plan.base).get("filename")
        # Taken again by every process, so points resumed elsewhere describe the host that ran them.
        self.host = host_facts(Path(str(self.target))) if self.target else host_facts()
        self._said: set[str] = set()

    def run_all(self) -> None:
        todo = [
            (p, r)
            for p in self.points
            for r in range(1, self.plan.repeats + 1)
            if not is_complete(self.point_dir(p, r))
        ]
        total = len(self.points) * self.plan.repeats
        self.progress.begin(total, total - len(todo))
        self.catalog.set_status(self.plan.name, "running")
        try:
            if todo:
                self.precondition()
            for point, repeat in todo:
                self.run_one(point, repeat, self.plan.repeats)
        except KeyboardInterrupt:
            self.catalog.set_status(self.plan.name, "interrupted")
            raise SweepInterrupted(
                f"interrupted: finished points are kept in {self.dir}; run the same command to resume"
            ) from None
        except (IolabError, OSError):
            # The finished points stay; the same command resumes once the cause is fixed.
            self.catalog.set_status(self.plan.name, "failed")
            raise
        finally:
            self.progress.close()
        self.catalog.set_status(self.plan.name, "complete")

    def run_one(self, point: Point, repeat: int, repeats: int) -> Path:
        """Run one point x repeat (its warm-up first) and write its directory;
        ``repeats``: how many the progress line says the point gets."""
        self.progress.start_point(point.label, repeat, repeats)
        started = self.opts.clock()
        self._run_point(point, repeat)
        self.progress.end_point(self.opts.clock() - started)
        return self.point_dir(point, repeat)

    def point_dir(self, point: Point, repeat: int) -> Path:
        return self.dir / "points" / f"{point.key}-r{repeat}"

    def _run(self, specs: Sequence[JobSpec], log_dir: Optional[Path] = None) -> tuple[RunOutput, bool]:
        """One run through the pipeline (fio logs kept in ``log_dir``); Ctrl-C
        inside it becomes KeyboardInterrupt here (after its results)."""
        timed: list[_TimedRun] = []

        def wrap(run: RunLike) -> RunLike:
            if self.plan.timeout_per_point_ns is None:
                return run
            timed.append(_TimedRun(run, self.plan.timeout_per_point_ns / 1e9, self.opts.clock))
            return timed[-1]

        pipeline = RunPipeline(specs, self.opts.run_settings(log_dir), self._say)
        out = pipeline.execute(self.progress, runner=self.opts.runner, wrap=wrap)
        timed_out = any(t.timed_out for t in timed)
        if out.interrupted and not timed_out:
            raise KeyboardInterrupt
        return out, timed_out

    def _say(self, line: str) -> None:
        """A note around a run, once per sweep: every point would repeat it."""
        if line not in self._said:
            self._said.add(line)
            self.progress.note(line)

    def precondition(self) -> None:
        """The plan's fill run, once per directory (before the first point)."""
        job = precondition_job(self.plan)
        target = self.dir / "precondition"
        if job is None or is_complete(target):
            return
        fill = ", ".join(f"{k}={v}" for k, v in self.plan.precondition)
        self.progress.note(f"precondition: {fill} over {self.target}")
        out, timed_out = self._run([job], target)
        self._write(target, out, [job], {"kind": "precondition", "timed_out": timed_out})

    def _run_point(self, point: Point, repeat: int) -> None:
        meta: dict[str, Any] = {"kind": "point", "point": point.index, "repeat": repeat, "params": dict(point.params)}
        if self.plan.drop_caches:
            meta["drop_caches"] = drop_caches(self.opts.drop_caches_path)
            if not meta["drop_caches"]["done"]:
                self.progress.note(f"point {point.index}: page cache NOT dropped: {meta['drop_caches']['error']}")
        warm = warmup_job(self.plan, point)
        if warm is not None:
            self._run([warm])  # discarded: only brings the device and caches to the working state
            meta["warmup_run"] = self.plan.warmup_runtime
        job = point_job(self.plan, point)
        target = self.point_dir(point, repeat)
        out, timed_out = self._run([job], target)
        if self.plan.steady_state is not None:
            out, timed_out, meta["steady_state"] = self._until_steady(job, out, timed_out, target)
        meta["timed_out"] = timed_out
        if timed_out:
            self.progress.note(f"point {point.index} ({point.label}): stopped at the per-point timeout")
        self._write(target, out, [job], meta)

    def _until_steady(
        self, job: JobSpec, out: RunOutput, timed_out: bool, target: Path
    ) -> tuple[RunOutput, bool, dict[str, Any]]:
        ss = self.plan.steady_state
        assert ss is not None
        values = [steady_metric(out.summary, ss.metric)]
        check = steady_state_check(values, ss)
        while not check["reached"] and len(values) < ss.max_rounds:
            out, timed_out = self._run([job], target)  # each round's logs replace the last's
            values.append(steady_metric(out.summary, ss.metric))
            check = steady_state_check(values, ss)
        # The recorded figures are the last round's, as SNIA PTS reports the steady-state window.
        return out, timed_out, {**check, "metric": ss.metric, "rounds": len(values), "values": values}

    def _write(self, target: Path, out: RunOutput, jobs: Sequence[JobSpec], meta: dict[str, Any]) -> None:
        run_id = f"{self.plan.name}/{target.name}"
        config = run_config(jobs, out.prepared or prepare_all(jobs))
        run_meta = {"id": run_id, "sweep": self.plan.name, "interrupted": out.interrupted, **meta}
        run_meta["finished_unix_ns"] = time.time_ns()
        extra = observed_files(out.observed)
        if "steadystate" in out.observed:
            extra[STEADYSTATE_FILE] = out.observed["steadystate"]
        doc = write_run_dir(
            target, out.result_json, out.summary_json, run_meta=run_meta, config=config, host=self.host, extra=extra
        )
        if meta["kind"] == "point":
            self.catalog.add_point(run_meta, target, doc)
