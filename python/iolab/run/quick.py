"""``iolab quick``: a standard one-minute characterisation of one place.

Seven jobs, one after another (stonewall), on one test file: sequential
1 MiB read and write at QD 8, random 4 KiB read and write at QD 1 and
QD 32, and a 70/30 random mix at QD 16 — O_DIRECT where the filesystem
allows it.

Engines (:func:`engine_for`): psync for the QD 1 jobs, io_uring for the
others. One I/O at a time needs no queue, and a sync engine adds the least
of its own to the latency; above all, io_uring hands buffered I/O it cannot
complete at once to kernel worker threads (io-wq): where O_DIRECT is not
available (tmpfs on older kernels) a QD 1 io_uring job measured that
fallback (13.5k IOPS, p50 84 µs where psync does 525k IOPS at 1.6 µs on the
same file, issue #13). Where the deeper io_uring jobs run buffered, the
analysis compares them with the psync figures and says so when the queue
made things slower (``warn_buffered_io_uring``).

Where (:func:`plan_target`):
- nothing given: a new temporary directory, removed afterwards;
- a directory: a new file ``iolab-quick.dat`` in it, removed afterwards;
- an existing file or block device: used in place. Its data is never
  written unless ``allow_overwrite``: without it only the read jobs run
  (the engine refuses writes to data iolab did not create in any case).

Each job runs as its own run, so the device under the test file is
watched over each job's own window (/proc/diskstats before and after,
:mod:`iolab.run.diskstats`): what the device did besides the job's own
I/Os — another program's writeback, a build — is in
``QuickOutput.device``, one entry per job, and the report leads with it.
The runs are merged into one result (one stonewall group per job), as one
run of all seven would give. Ctrl-C ends the job running and skips the
rest: ``QuickOutput.not_run`` names them.

This module plans and runs; what quick leaves behind (its results JSON and
the HTML report, analysed from memory) is written by
:mod:`iolab.report.quick`, above the analysis it needs.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

from iolab import _native
from iolab.errors import EngineError
from iolab.jobs import JobSpec
from iolab.run.diskstats import device_requests, other_traffic, own_io, request_limit_bytes
from iolab.run.hostfacts import host_facts
from iolab.run.local import INTERRUPTED_NOTE, RunOutput, attach_partial, partial_output
from iolab.run.pipeline import RunPipeline, RunSettings
from iolab.run.progress import ProgressSink

#: (name, rw, bs, iodepth, extra options) — the order they run in.
QUICK_JOBS: tuple[tuple[str, str, str, int, tuple[tuple[str, str], ...]], ...] = (
    ("seq-read-1m-qd8", "read", "1m", 8, ()),
    ("seq-write-1m-qd8", "write", "1m", 8, ()),
    ("rand-read-4k-qd1", "randread", "4k", 1, ()),
    ("rand-read-4k-qd32", "randread", "4k", 32, ()),
    ("rand-write-4k-qd1", "randwrite", "4k", 1, ()),
    ("rand-write-4k-qd32", "randwrite", "4k", 32, ()),
    ("randrw-70-30-4k-qd16", "randrw", "4k", 16, (("rwmixread", "70"),)),
)

TEST_FILE_NAME = "iolab-quick.dat"


@dataclass(frozen=True)
class QuickTarget:
    """Where quick runs and what it may do there."""

    filename: Path
    #: Remove this (file or directory) afterwards: quick created it.
    cleanup: Optional[Path]
    include_writes: bool
    direct: bool
    #: Lines to tell the user (where, what was left out and why).
    notes: tuple[str, ...]


@dataclass(frozen=True)
class QuickOutput:
    """A finished quick run: where it ran, its output, and what its report records."""

    target: QuickTarget
    run: RunOutput
    #: The jobs as run and the host facts of the target (taken before the
    #: test file is removed): the report's config and host facts.
    jobs: tuple[JobSpec, ...] = ()
    host: Optional[dict[str, Any]] = None
    #: Per job that ran, in order: what else the device did during it
    #: (:func:`iolab.run.diskstats.other_traffic`, with the job's ``name``).
    device: tuple[dict[str, Any], ...] = ()
    #: The jobs Ctrl-C kept from running, in order.
    not_run: tuple[str, ...] = ()


def direct_io_supported(path: Path) -> bool:
    """Whether ``path`` (a file or device), or files created in ``path`` (a
    directory), can be opened with O_DIRECT — tmpfs on older kernels and
    some FUSE filesystems cannot."""
    o_direct = getattr(os, "O_DIRECT", 0)
    if not path.is_dir():
        return _opens(path, os.O_RDONLY | o_direct)
    fd, probe = tempfile.mkstemp(prefix=".iolab-direct-probe-", dir=path)
    os.close(fd)
    try:
        return _opens(Path(probe), os.O_RDWR | o_direct)
    finally:
        os.unlink(probe)


def _opens(path: Path, flags: int) -> bool:
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    os.close(fd)
    return True


def plan_target(path: Optional[Path], *, allow_overwrite: bool) -> QuickTarget:
    """Decide the test file, clean-up, writes and O_DIRECT for ``path`` (see module doc)."""
    if path is None:
        tmp = Path(tempfile.mkdtemp(prefix="iolab-quick-"))
        note = f"testing in a new temporary directory {tmp} (removed afterwards)"
        return QuickTarget(tmp / TEST_FILE_NAME, tmp, True, direct_io_supported(tmp), (note,))
    if path.is_dir():
        f = path / TEST_FILE_NAME
        note = f"testing with a new file {f} (removed afterwards)"
        return QuickTarget(f, f, True, direct_io_supported(path), (note,))
    if not path.exists():
        raise EngineError(f"{path}: no such file or directory; give a directory, a file or a block device")
    kind = "block device" if stat.S_ISBLK(path.stat().st_mode) else "file"
    notes = [f"testing the existing {kind} {path}"]
    if not allow_overwrite:
        notes.append("write jobs skipped: they would overwrite its data (pass --allow-overwrite to run them)")
    return QuickTarget(path, None, allow_overwrite, direct_io_supported(path), tuple(notes))


def engine_for(iodepth: int) -> str:
    """psync for one I/O at a time, io_uring for a queue (see the module doc)."""
    return "psync" if iodepth == 1 else "io_uring"


def quick_jobs(target: QuickTarget, *, size: str, runtime: str) -> list[JobSpec]:
    """The quick job list for ``target``."""
    common = (
        ("filename", str(target.filename)),
        ("size", size),
        ("direct", "1" if target.direct else "0"),
        ("time_based", None),
        ("runtime", runtime),
        ("stonewall", None),
    )
    jobs = []
    for name, rw, bs, iodepth, extra in QUICK_JOBS:
        if "write" in rw or rw == "randrw":
            if not target.include_writes:
                continue
        options = (
            *common,
            ("ioengine", engine_for(iodepth)),
            ("rw", rw),
            ("bs", bs),
            ("iodepth", str(iodepth)),
            *extra,
        )
        jobs.append(JobSpec(name, options))
    return jobs


@contextmanager
def _cleaned(target: QuickTarget) -> Iterator[None]:
    try:
        yield
    finally:
        if target.cleanup is not None:
            if target.cleanup.is_dir():
                shutil.rmtree(target.cleanup, ignore_errors=True)
            else:
                target.cleanup.unlink(missing_ok=True)


#: The test region without --size: 1 GiB, or an existing target's size when smaller.
DEFAULT_SIZE_BYTES = 1 << 30
#: An existing target's region is whole MiB: the sequential jobs' block size.
_REGION_ALIGN_BYTES = 1 << 20


def default_size(target: QuickTarget) -> str:
    """``--size`` left out: 1 GiB, or an existing file's or device's size
    (whole MiB) when smaller; a file or device the user named is used as it
    is, never extended."""
    if target.cleanup is not None:
        return str(DEFAULT_SIZE_BYTES)
    fd = os.open(target.filename, os.O_RDONLY)
    try:
        have = os.lseek(fd, 0, os.SEEK_END)  # a block device's size too
    finally:
        os.close(fd)
    whole = have // _REGION_ALIGN_BYTES * _REGION_ALIGN_BYTES
    return str(min(DEFAULT_SIZE_BYTES, whole or have))


def run_quick(
    path: Optional[Path],
    *,
    size: Optional[str] = None,
    runtime_per_job: str = "8s",
    allow_overwrite: bool = False,
    progress: Optional[ProgressSink] = None,
) -> QuickOutput:
    """Run the quick characterisation (see the module doc)."""
    target = plan_target(path, allow_overwrite=allow_overwrite)
    with _cleaned(target):
        if progress is not None:
            for line in target.notes:
                progress.note(line)
            if not target.direct:
                progress.note("O_DIRECT is not supported here: buffered I/O (page cache) is measured")
        jobs = quick_jobs(target, size=size or default_size(target), runtime=runtime_per_job)
        # allow_overwrite reaches the engine only for an existing target the
        # user named; quick's own file is one iolab creates.
        runs, device, interrupted = _run_each(jobs, target, allow_overwrite and target.cleanup is None, progress)
        host = host_facts(target.filename if target.filename.exists() else target.filename.parent)
    out = merge_runs(runs, interrupted)
    not_run = tuple(j.name for j in jobs[len(runs) :])
    return QuickOutput(target, out, tuple(jobs[: len(runs)]), host, tuple(device), not_run)


def _run_each(
    jobs: list[JobSpec], target: QuickTarget, allow_overwrite: bool, progress: Optional[ProgressSink]
) -> tuple[list[RunOutput], list[dict[str, Any]], bool]:
    """Each job as its own run with the device watched over it; stops at Ctrl-C."""
    runs: list[RunOutput] = []
    device: list[dict[str, Any]] = []
    sink = _NewNotesOnly(progress) if progress is not None else None
    for job in jobs:
        # The one run pipeline (run/pipeline.py), with the device under the
        # job's file watched over the run (RunSettings.diskstats).
        settings = RunSettings(allow_overwrite=allow_overwrite, diskstats=True, where="iolab quick")
        try:
            out = RunPipeline([job], settings, sink.note if sink is not None else None).execute(sink)
        except KeyboardInterrupt:
            # Between two jobs (the engine's own Ctrl-C ends a run cleanly):
            # keep what ran; with nothing run there is nothing to keep.
            if not runs:
                raise
            if progress is not None:
                progress.note(INTERRUPTED_NOTE)
            return runs, device, True
        except Exception as e:
            partial = partial_output(e)
            if partial is not None and runs:
                attach_partial(e, merge_runs([*runs, partial], partial.interrupted))
            raise
        if out.interrupted and not _did_io(out) and runs:
            return runs, device, True  # stopped before its first I/O: not run
        runs.append(out)
        device.append({"name": job.name, **_traffic(out, target)})
        if out.interrupted:
            return runs, device, True
    return runs, device, False


class _NewNotesOnly:
    """``progress``, less the notes each job's run repeats: the test file
    "reused" after the first job's layout note, and a note already shown
    (the same io_uring ring)."""

    def __init__(self, progress: ProgressSink) -> None:
        self.progress = progress
        self.shown: set[str] = set()

    def note(self, line: str) -> None:
        if line in self.shown or (self.shown and line.startswith("reused ")):
            return
        self.shown.add(line)
        self.progress.note(line)

    def update(self, progress: Any) -> None:
        self.progress.update(progress)

    def close(self) -> None:
        self.progress.close()


def _did_io(out: RunOutput) -> bool:
    m = out.summary["jobs"][0]["merged"]
    return int(m["read"]["ios"]) + int(m["write"]["ios"]) > 0


def _traffic(out: RunOutput, target: QuickTarget) -> dict[str, Any]:
    """What else the device did during one job's run."""
    # I/Os in flight when the window closes may complete on the device
    # without being counted as the job's: at most iodepth x the largest block.
    job = out.summary["jobs"][0]
    config = job["config"]
    observed = out.observed.get("diskstats", {})
    disk = next((d.get("disk") or d["device"] for d in observed.get("devices", [])), None)
    limit = request_limit_bytes(disk) if disk else None
    own = own_io(job)
    for d in ("read", "write"):
        own[f"{d}_requests"] = device_requests(own[f"{d}_ios"], int(config[f"bs_{d}"]["max_bytes"]), limit)
    slack = int(config["iodepth"]) * max(int(config[f"bs_{d}"]["max_bytes"]) for d in ("read", "write"))
    return other_traffic(observed, own, direct=target.direct, slack_bytes=slack)


def merge_runs(runs: list[RunOutput], interrupted: bool) -> RunOutput:
    """Runs of one job each → one output with one stonewall group per run,
    in order (as a single run of all the jobs records them)."""
    if len(runs) == 1:
        return runs[0]
    docs = [json.loads(r.result_json) for r in runs]
    merged = {**docs[0], "jobs": [], "cpu": [], "layout_notes": []}
    for group, doc in enumerate(docs):
        merged["jobs"] += [{**j, "group": group} for j in doc["jobs"]]
        merged["cpu"] += [{**c, "group": group} for c in doc["cpu"]]
        merged["layout_notes"] += [n for n in doc.get("layout_notes", []) if n not in merged["layout_notes"]]
    result_json = json.dumps(merged)
    notes = tuple(dict.fromkeys(n for r in runs for n in r.layout_notes))
    prepared = tuple(p for r in runs for p in r.prepared)
    return RunOutput(result_json, _native.summarize(result_json), interrupted, notes, {}, prepared)


def default_results_path(now: Optional[datetime] = None) -> Path:
    """``./iolab-quick-YYYYmmdd-HHMMSS.json`` (local time)."""
    return Path(f"iolab-quick-{(now or datetime.now()):%Y%m%d-%H%M%S}.json")
