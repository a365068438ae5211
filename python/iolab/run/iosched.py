"""fio's ``ioscheduler``: the I/O scheduler the job's devices should use.

fio writes the name into each device's ``queue/scheduler`` in sysfs before
the job (as root) and stops the job when the kernel does not offer it; a
file on no block device (tmpfs, a network filesystem) is skipped. iolab
changes no host setting: it checks that each device already uses the
scheduler asked for, and otherwise stops before the run with the command
that switches it. ``noop`` and ``none`` are one scheduler (blk-mq kernels
renamed it). A file on no block device gets a note, as fio skips it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable

from iolab.errors import JobError
from iolab.jobs.extras import JobExtras
from iolab.run.hostfacts import storage_facts

_SAME = {"noop": "none"}


def _paths(job: dict[str, Any]) -> list[Path]:
    names = [str(f) for f in job.get("filenames") or []]
    # Without filename= the engine creates the files in directory=, else the working directory.
    return [Path(n) for n in names] or [Path(str(job.get("directory") or "."))]


def check_ioschedulers(
    prepared: Sequence[dict[str, Any]],
    extras: Sequence[JobExtras],
    say: Callable[[str], None],
    facts: Callable[[Path], dict[str, Any]] = storage_facts,
) -> None:
    """Check every job's ``ioscheduler`` against its devices (see the module
    doc); ``say`` gets the notes. Raises :class:`JobError` on a mismatch."""
    for job, e in zip(prepared, extras):
        asked = e.text("ioscheduler")
        if not asked or job.get("nbd"):
            continue
        want = _SAME.get(asked, asked)
        for path in _paths(job):
            f = facts(Path(os.path.abspath(path)))
            scheduler, disk = f.get("scheduler"), f.get("disk")
            if not scheduler or not disk:
                say(f"note: ioscheduler={asked}: {path} is on no block device, so it has no scheduler (fio skips it)")
            elif _SAME.get(str(scheduler), str(scheduler)) != want:
                raise JobError(
                    f"job {job['name']}: ioscheduler={asked}: {disk} (under {path}) uses {scheduler}; iolab does "
                    f"not switch schedulers: echo {want} > /sys/block/{disk}/queue/scheduler (as root), "
                    "or drop the option"
                )
