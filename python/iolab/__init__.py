"""iolab: a storage performance lab (Rust engine, Python front).

The Python API::

    import iolab

    job = iolab.Job("x", filename="testfile", size="1g", rw="randread", bs="4k",
                    iodepth=32, time_based=True, runtime="10s")
    iolab.prepare(job)          # the job as resolved: sizes in bytes, times in ns
    out = iolab.run(job)        # RunOutput: .summary, .result, .interrupted
    out.summary["jobs"][0]["merged"]["read"]["iops"]

A result directory (``iolab run --results``, ``iolab sweep``) as a pandas
DataFrame: ``iolab.load("iolab-results/seed002-qd")`` (docs/plans.md).

Errors: :class:`JobError` (an option; also a ``ValueError``),
:class:`RefusedError` (would destroy data), :class:`EngineError`, and
``OSError`` subclasses for files; all but ``OSError`` are :class:`IolabError`.
An error that ended a run early (an I/O error) keeps what was measured
before it: ``iolab.partial_output(e)`` is that ``RunOutput``.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from iolab import _native
from iolab.errors import EngineError, IolabError, JobError, RefusedError
from iolab.jobs import JobSpec
from iolab.results.fio_logs import write_fio_logs
from iolab.results.rundir import load
from iolab.run import api as _api
from iolab.run.api import Job, prepare
from iolab.run.local import RunOutput, partial_output
from iolab.run.progress import ProgressSink


def _run(
    jobs: JobSpec | Sequence[JobSpec],
    *,
    log_dir: str | Path = ".",
    allow_overwrite: bool = False,
    interval: Optional[str] = None,
    progress: Optional[ProgressSink] = None,
    target_stats: Optional[str] = None,
) -> RunOutput:
    """``iolab.run(jobs, ...)``: :func:`iolab.run.api.run` with the fio log
    files the jobs ask for (``write_bw_log``, ...) written to ``log_dir``
    and listed in ``output.observed["fio_logs"]["files"]``, as ``iolab run``
    writes them."""
    return _api.run(
        jobs,
        allow_overwrite=allow_overwrite,
        interval=interval,
        progress=progress,
        target_stats=target_stats,
        log_dir=log_dir,
        write_logs=write_fio_logs,
    )


class _CallablePackage(types.ModuleType):
    """``iolab.run`` stays the package :mod:`iolab.run` (so ``import
    iolab.run as r`` gives the package, not a function) and, called, runs
    jobs: ``iolab.run(job)`` is :func:`_run`."""

    def __call__(self, *args: Any, **kwargs: Any) -> RunOutput:
        return _run(*args, **kwargs)


# The package, made callable (not shadowed by a function of the same name).
sys.modules["iolab.run"].__class__ = _CallablePackage
run = sys.modules["iolab.run"]

__version__ = _native.version()

__all__ = [
    "EngineError",
    "IolabError",
    "Job",
    "JobError",
    "JobSpec",
    "RefusedError",
    "RunOutput",
    "__version__",
    "load",
    "partial_output",
    "prepare",
    "run",
]
