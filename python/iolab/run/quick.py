"""``iolab quick``: a standard one-minute characterisation of one place.

Seven jobs, one after another (stonewall), on one test file: sequential
1 MiB read and write at QD 8, random 4 KiB read and write at QD 1 and
QD 32, and a 70/30 random mix at QD 16 — io_uring, O_DIRECT where the
filesystem allows it.

Where (:func:`plan_target`):
- nothing given: a new temporary directory, removed afterwards;
- a directory: a new file ``iolab-quick.dat`` in it, removed afterwards;
- an existing file or block device: used in place. Its data is never
  written unless ``allow_overwrite``: without it only the read jobs run
  (the engine refuses writes to data iolab did not create in any case).

This module plans and runs; what quick leaves behind (its results JSON and
the HTML report, analysed from memory) is written by
:mod:`iolab.report.quick`, above the analysis it needs.
"""

from __future__ import annotations

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

from iolab.errors import EngineError
from iolab.jobs import JobSpec
from iolab.run.hostfacts import host_facts
from iolab.run.local import RunOutput, run_jobs
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


def quick_jobs(target: QuickTarget, *, size: str, runtime: str) -> list[JobSpec]:
    """The quick job list for ``target``."""
    common = (
        ("filename", str(target.filename)),
        ("size", size),
        ("ioengine", "io_uring"),
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
        options = (*common, ("rw", rw), ("bs", bs), ("iodepth", str(iodepth)), *extra)
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


def run_quick(
    path: Optional[Path],
    *,
    size: str = "1g",
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
        jobs = quick_jobs(target, size=size, runtime=runtime_per_job)
        # allow_overwrite reaches the engine only for an existing target the
        # user named; quick's own file is one iolab creates.
        out = run_jobs(jobs, allow_overwrite=allow_overwrite and target.cleanup is None, progress=progress)
        host = host_facts(target.filename if target.filename.exists() else target.filename.parent)
    return QuickOutput(target, out, tuple(jobs), host)


def default_results_path(now: Optional[datetime] = None) -> Path:
    """``./iolab-quick-YYYYmmdd-HHMMSS.json`` (local time)."""
    return Path(f"iolab-quick-{(now or datetime.now()):%Y%m%d-%H%M%S}.json")
