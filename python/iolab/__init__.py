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

from iolab import _native
from iolab.errors import EngineError, IolabError, JobError, RefusedError
from iolab.jobs import JobSpec
from iolab.results.rundir import load
from iolab.run.api import Job, prepare, run
from iolab.run.local import RunOutput, partial_output

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
