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

from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from iolab import _native
from iolab.errors import EngineError, IolabError, JobError, RefusedError
from iolab.jobs import JobSpec
from iolab.jobs.extras import JobExtras
from iolab.results.fio_logs import write_fio_logs
from iolab.results.rundir import load
from iolab.run import api as _api
from iolab.run.api import Job, prepare
from iolab.run.local import RunOutput, partial_output
from iolab.run.progress import ProgressSink


def run(
    jobs: JobSpec | Sequence[JobSpec],
    *,
    log_dir: str | Path = ".",
    allow_overwrite: bool = False,
    interval: Optional[str] = None,
    progress: Optional[ProgressSink] = None,
    target_stats: Optional[str] = None,
) -> RunOutput:
    """Run jobs on this host: :func:`iolab.run.api.run`, then the fio log
    files the jobs ask for (``write_bw_log``, ...) written to ``log_dir``
    and listed in ``output.observed["fio_logs"]["files"]``, as ``iolab run``
    writes them."""
    extras: list[JobExtras] = []
    out = _api.run(
        jobs,
        allow_overwrite=allow_overwrite,
        interval=interval,
        progress=progress,
        target_stats=target_stats,
        extras_out=extras,
    )
    files = write_fio_logs(out.result, extras, Path(log_dir))
    if files:
        out.observed["fio_logs"] = {"files": [str(f) for f in files]}
    return out


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
