"""The Python API: ``iolab.Job``, ``iolab.prepare``, ``iolab.run``.

A job is written with fio's option names as keywords::

    >>> job = Job("x", rw="randread", bs="4k", iodepth=32, time_based=True, runtime="5s")
    >>> job.options[-2:]
    (('time_based', None), ('runtime', '5s'))

``True`` is a bare flag (``--time_based``), ``False`` is ``0``, numbers are
written as decimal text: the same ``JobSpec`` the command line and job
files produce, so the three sources prepare to the same job.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Optional, Union

from iolab.jobs import JobSpec
from iolab.run.local import RunOutput, prepare
from iolab.run.pipeline import LogWriter, RunPipeline, RunSettings, parse_interval_ns
from iolab.run.progress import ProgressSink

OptionValue = Union[str, int, float, bool]


def Job(name: str, **options: OptionValue) -> JobSpec:
    """A job from fio option names as keywords (see the module doc)."""
    return JobSpec(name, tuple(_option(k, v) for k, v in options.items()))


def _option(name: str, value: OptionValue) -> tuple[str, Optional[str]]:
    if value is True:
        return (name, None)
    if value is False:
        return (name, "0")
    if isinstance(value, (int, float, str)):
        return (name, str(value))
    raise TypeError(f"option {name}: expected str, int, float or bool, got {type(value).__name__}")


def run(
    jobs: Union[JobSpec, Sequence[JobSpec]],
    *,
    allow_overwrite: bool = False,
    interval: Optional[str] = None,
    progress: Optional[ProgressSink] = None,
    target_stats: Optional[str] = None,
    log_dir: Union[str, Path] = ".",
    write_logs: Optional[LogWriter] = None,
) -> RunOutput:
    """Run jobs on this host (stonewall groups one after another) through
    the run pipeline (:mod:`iolab.run.pipeline`).

    ``progress`` receives notes, layout notes and live progress (e.g.
    ``iolab.run.progress.TerminalProgress()``); by default nothing is shown.
    ``interval``: sampling interval (default 1 s, or the window the jobs'
    logs or steady state need). ``target_stats``: the stats URL of the
    iolab target the (nbd) jobs drive; its window is measured alongside,
    and ``iolab.run.wire.wire_section(output)`` gives client, server and
    wire latency, server CPU and wire bytes.

    The options handled around the engine (:mod:`iolab.jobs.extras`) act
    as under ``iolab run``: ``steadystate`` ends a job when reached (fio's
    report in ``output.observed["steadystate"]``), notes go to ``progress``.
    fio's log files (``write_bw_log``, ...) are written by ``write_logs``
    into ``log_dir`` and listed in ``output.observed["fio_logs"]["files"]``;
    ``iolab.run(...)`` gives iolab.results' writer (a layer above ``run``).
    Without a writer a job asking for a log is refused by name.
    """
    specs = [jobs] if isinstance(jobs, JobSpec) else list(jobs)
    settings = RunSettings(
        allow_overwrite=allow_overwrite,
        interval=interval,
        target_stats=target_stats,
        write_logs=write_logs,
        log_dir=Path(log_dir),
        where="iolab.run.api.run without write_logs",
    )
    return RunPipeline(specs, settings, progress.note if progress is not None else None).execute(progress)


__all__ = ["Job", "OptionValue", "parse_interval_ns", "prepare", "run"]
