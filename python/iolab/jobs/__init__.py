"""fio job files and fio-style command lines → :class:`JobSpec`.

A :class:`JobSpec` is what the user wrote for one job: its name and its
``(option, value)`` pairs in order, ``value`` ``None`` for a bare flag
(``time_based``). Later pairs win, so ``[global]`` options come first and
the job's own after them. Nothing is validated here: the Rust core does
that against its option table (``iolab.prepare``), so the job file, the
command line and the Python API all meet the same rules.

- :func:`parse_job_file`: fio's INI-like job files (:mod:`iolab.jobs.fiofile`).
- :func:`parse_fio_args`: fio's ``--name=x --bs=4k ...`` (:mod:`iolab.jobs.cmdline`).
- :class:`ParseError`: a line that cannot be read; a :class:`iolab.errors.JobError`,
  so the CLI reports it like any bad option.

This package is pure Python and does no I/O of its own beyond reading
included job files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from iolab.errors import JobError

#: ``(option, value)``; ``value`` is ``None`` for a bare flag.
Option = tuple[str, Optional[str]]


@dataclass(frozen=True)
class JobSpec:
    """One job as written: a name and ordered options (later ones win)."""

    name: str
    options: tuple[Option, ...] = field(default=())
    #: Where each option was written (``file.fio:12``), parallel to ``options``;
    #: ``None`` where unknown (command line, API). Not part of equality.
    origins: tuple[Optional[str], ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        # Accept any sequence of pairs, keep an immutable, hashable tuple.
        pairs = tuple((str(k), None if v is None else str(v)) for k, v in self.options)
        object.__setattr__(self, "options", pairs)
        origins = tuple(self.origins)
        if len(origins) != len(pairs):
            origins = (*origins[: len(pairs)], *(None,) * (len(pairs) - len(origins)))
        object.__setattr__(self, "origins", origins)

    def origin(self, option: str) -> Optional[str]:
        """Where the last ``option`` (the one in force) was written, if known."""
        for (k, _), where in zip(reversed(self.options), reversed(self.origins)):
            if k == option:
                return where
        return None

    def to_native(self) -> tuple[str, list[Option]]:
        """``(name, [(option, value), ...])`` as the native module takes it."""
        return self.name, list(self.options)

    def with_options(self, *options: Option) -> JobSpec:
        """This job with ``options`` appended (so they win)."""
        return JobSpec(self.name, (*self.options, *options), (*self.origins, *(None,) * len(options)))


class ParseError(JobError):
    """A job file line or command-line argument that cannot be read.

    ``str(e)`` is one line: ``file.fio:12: message`` (or ``source: message``
    when there is no line number).
    """

    def __init__(self, source: str, line: int | None, message: str) -> None:
        self.source = source
        self.line = line
        self.message = message
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {message}")


# Imported last: both modules use JobSpec and ParseError from here.
from iolab.jobs.cmdline import DEFAULT_JOB_NAME, check_max_jobs, command_line, parse_fio_args, select_sections  # noqa: E402
from iolab.jobs.fiofile import parse_job_file  # noqa: E402

__all__ = [
    "DEFAULT_JOB_NAME",
    "JobSpec",
    "Option",
    "ParseError",
    "check_max_jobs",
    "command_line",
    "parse_fio_args",
    "parse_job_file",
    "select_sections",
]
