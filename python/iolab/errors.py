"""iolab's exceptions, declared once for the native module and Python alike.

- ``IolabError``: base of everything iolab raises on purpose.
- ``JobError`` (also a ``ValueError``): a job option is unknown, malformed,
  out of range or contradicts another; the message names the option.
- ``RefusedError``: iolab refuses to write where it could destroy data it
  did not create (existing files, block devices) unless
  ``allow_overwrite``/``--allow-overwrite`` is given.
- ``EngineError``: the engine cannot run the job as asked (missing
  directory, file too small, io_uring unavailable, ...).

OS errors on a named file arrive as the matching built-in ``OSError``
subclass (``FileNotFoundError``, ``PermissionError``, ...). The native
module raises these classes (``pyo3::import_exception!``); they live here
because ``JobError`` has two bases, which PyO3's ``create_exception!``
cannot declare.
"""

from __future__ import annotations


class IolabError(Exception):
    """Base of iolab's own errors. ``str(e)`` is one line for the user."""


class JobError(IolabError, ValueError):
    """A job option is unknown, malformed, out of range or conflicting."""


class RefusedError(IolabError):
    """Writing would destroy data iolab did not create."""


class EngineError(IolabError):
    """The engine cannot run the job as asked."""


class ResultFormatError(IolabError, ValueError):
    """A results document or file is not in a format (or schema version) this
    iolab reads: not an iolab result, not fio JSON."""


__all__ = ["EngineError", "IolabError", "JobError", "RefusedError", "ResultFormatError"]
