"""iolab: a storage performance lab (Rust engine, Python front).

The Python API::

    import iolab

    job = iolab.Job("x", filename="testfile", size="1g", rw="randread", bs="4k",
                    iodepth=32, time_based=True, runtime="10s")
    iolab.prepare(job)          # the job as resolved: sizes in bytes, times in ns
    out = iolab.run(job)        # RunOutput: .summary, .result, .interrupted
    out.summary["jobs"][0]["merged"]["read"]["iops"]

Errors: :class:`JobError` (an option; also a ``ValueError``),
:class:`RefusedError` (would destroy data), :class:`EngineError`, and
``OSError`` subclasses for files; all but ``OSError`` are :class:`IolabError`.
"""

from __future__ import annotations

from iolab import _native
from iolab.errors import EngineError, IolabError, JobError, RefusedError
from iolab.jobs import JobSpec
from iolab.run.api import Job, prepare, run
from iolab.run.local import RunOutput

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
    "prepare",
    "run",
]
