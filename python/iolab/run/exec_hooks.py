"""fio's ``exec_prerun`` and ``exec_postrun``: a shell command around a job.

fio runs the command with ``system(3)``, its output and errors going to
``JOBNAME.prerun.txt`` (``.postrun.txt``) in the working directory, and a
prerun that fails stops the job before any I/O. iolab does the same, with
two differences stated in docs/options.md: the commands run once per job
(fio: once per clone, each overwriting the same file), and every prerun runs
before the run starts and every postrun after it ends (fio: around each
job, so a job behind a ``stonewall`` runs its prerun when its group starts),
and a prerun runs before iolab lays out the job's files (fio: after).
A failing prerun is an error naming the command and its exit status
(fio stops the job without saying why).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from iolab.errors import IolabError
from iolab.jobs.extras import JobExtras

#: Which extra holds the command, by mode.
_OPTION = {"prerun": "exec_prerun", "postrun": "exec_postrun"}


def run_exec_hooks(extras: Sequence[JobExtras], mode: str, say: Callable[[str], None]) -> None:
    """Run every job's ``exec_<mode>`` command (mode: prerun or postrun) in
    job order; ``say`` gets one line per command, as fio prints it. A prerun
    that exits non-zero raises :class:`IolabError` (exit status 1); a failing postrun is said."""
    option = _OPTION[mode]
    for e in extras:
        command = e.text(option)
        if not command:
            continue
        out = Path(f"{e.job}.{mode}.txt")
        say(f"{e.job}: saving output of {mode} in {out}")
        with out.open("wb") as f:
            # shell=True is the option's meaning: fio hands the string to system(3).
            status = subprocess.run(command, shell=True, stdout=f, stderr=subprocess.STDOUT, check=False).returncode
        if status == 0:
            continue
        message = f"job {e.job}: {option}={command!r} exited with status {status} (its output: {out})"
        if mode == "prerun":
            raise IolabError(message + "; no job ran")
        say(message)
