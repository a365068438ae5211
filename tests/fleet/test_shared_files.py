"""Ranks that share a file lay it out once (issue 21, item 1: a fleet on one
machine failed its first run with ``create: File exists``).

Without MPI: the waves of :mod:`iolab.fleet.prepare` on a threaded stand-in
for the MPI world, with the real engine laying out one file for four ranks.
With MPI: ``iolab fleet -n 2|4 run`` in a fresh directory, with and without
``--filename``, succeeds the first time, five fresh directories in a row.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable

import pytest
from iolab import _native
from iolab.fleet.launch import SESSION_BASE_VAR, find_mpiexec, session_environ
from iolab.fleet.prepare import RACE_HINT, prepare_in_waves, prepare_waves
from iolab.jobs import JobSpec
from iolab.run.local import RunLike, native_jobs

from .faults import RUN_LIMIT_S
from .test_mpi import _require_mpi

#: A collective must not take longer than this in the threaded world (a loaded 2-core machine).
COLLECTIVE_LIMIT_S = 60.0


class ThreadWorld:
    """One rank of a world whose ranks are threads: ``allgather`` is the only collective the waves use."""

    def __init__(self, rank: int, shared: dict[str, Any]) -> None:
        self.rank = rank
        self.size = shared["size"]
        self._shared = shared

    def allgather(self, value: Any) -> list[Any]:
        sh = self._shared
        sh["box"][self.rank] = value
        sh["barrier"].wait(COLLECTIVE_LIMIT_S)
        got = list(sh["box"])
        sh["barrier"].wait(COLLECTIVE_LIMIT_S)  # every rank has read the box before it is reused
        return got


def _run_ranks(hostnames: Sequence[str], make: Callable[[int], RunLike]) -> list[Any]:
    """Every rank prepares in its thread; each rank's run or the exception it raised."""
    n = len(hostnames)
    shared: dict[str, Any] = {"size": n, "box": [None] * n, "barrier": threading.Barrier(n)}
    out: list[Any] = [None] * n
    labels = [f"{h}/{r}" for r, h in enumerate(hostnames)]

    def rank(r: int) -> None:
        try:
            out[r] = prepare_in_waves(ThreadWorld(r, shared), hostnames, labels, lambda: make(r))  # type: ignore[arg-type]
        except Exception as e:  # the test looks at what each rank raised
            out[r] = e

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(RUN_LIMIT_S)
    assert not any(t.is_alive() for t in threads), "a rank is still preparing"
    return out


def test_waves_rank_0_then_each_other_hosts_first_rank_then_the_rest() -> None:
    assert prepare_waves(["a", "a", "a", "a"]) == [0, 2, 2, 2]
    assert prepare_waves(["a", "b", "a", "c", "b"]) == [0, 1, 2, 1, 2]
    assert prepare_waves(["a"]) == [0]


def test_four_ranks_on_one_host_lay_out_one_shared_file_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.dat"
    job = JobSpec("r", (("filename", str(path)), ("rw", "randread"), ("bs", "4k"), ("size", "1m")))
    notes: list[list[str]] = [[] for _ in range(4)]

    def make(r: int) -> RunLike:
        run = _native.Run(native_jobs([job]), host=f"h/{r}")
        notes[r] = run.layout_notes()
        return run

    runs = _run_ranks(["h"] * 4, make)
    assert not [x for x in runs if isinstance(x, BaseException)], runs
    assert path.stat().st_size == 1 << 20
    created = [r for r, n in enumerate(notes) if any(line.startswith("created") for line in n)]
    assert created == [0], notes  # laid out once, by rank 0; the others found it


def test_a_failure_in_an_earlier_wave_stops_every_rank_with_the_host_named() -> None:
    order: list[int] = []

    def make(r: int) -> RunLike:
        order.append(r)
        if r == 0:
            raise FileExistsError("x.dat: create: File exists (os error 17)")
        raise AssertionError("a later wave must not prepare after a failure")

    got = _run_ranks(["h", "h", "g"], make)
    assert order == [0]
    for e in got:  # every rank raises the same error: what raced, and the way out
        assert isinstance(e, FileExistsError), got
        assert str(e).startswith("h/0 (rank 0): x.dat: create: File exists"), str(e)
        assert RACE_HINT in str(e) and 'filename = "NAME.{rank}"' in str(e)


def _fleet_run(cwd: Path, n: int, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iolab.cli.main", "fleet", "-n", str(n), "run", *args]
    cmd += [f"--fleet-spool={cwd / 'spool'}"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_LIMIT_S, cwd=cwd, check=False)


#: The issue's command, shrunk (a smaller file, a shorter run).
RACE_JOB = ("--name=r", "--rw=randread", "--bs=4k", "--size=1m", "--time_based", "--runtime=200ms")


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("filename", [True, False], ids=["filename", "default-names"])
def test_first_run_in_a_fresh_directory_succeeds_five_times_in_a_row(tmp_path: Path, n: int, filename: bool) -> None:
    _require_mpi()
    for i in range(5):
        fresh = tmp_path / f"fresh{i}"
        fresh.mkdir()
        args = [*RACE_JOB, *(["--filename=race1.dat"] if filename else [])]
        ran = _fleet_run(fresh, n, *args)
        assert ran.returncode == 0, f"fresh run {i + 1}: {ran.stderr[-3000:]}"
        laid_out = fresh / ("race1.dat" if filename else "r.0.0")
        assert laid_out.stat().st_size == 1 << 20, sorted(p.name for p in fresh.iterdir())
        assert "Total " in ran.stdout, ran.stdout


def test_a_session_folder_left_by_a_killed_launcher_does_not_stop_the_next(tmp_path: Path) -> None:
    """CI failed once with "The PMIx server's listener thread failed to start": the
    launcher (prterun) drew the PID of one killed earlier in the suite, whose
    ``$TMPDIR/ompi.PID`` was still there. The wrapper plants what such a launcher
    leaves, for its own PID, and becomes mpiexec (exec keeps the PID)."""
    _require_mpi()
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    names = " ".join(sorted({socket.gethostname(), socket.gethostname().split(".")[0]}))
    wrapper = tmp_path / "mpiexec"
    wrapper.write_text(
        '#!/bin/sh\nd="$TMPDIR/ompi.$$"\nmkdir -p "$d"\n'
        f'for h in {names}; do echo stale > "$d/pmix.$h.tool"; done\n'
        f'exec {find_mpiexec()} "$@"\n'
    )
    wrapper.chmod(0o755)
    env = {**os.environ, "TMPDIR": str(tmpdir), "IOLAB_MPIEXEC": str(wrapper)}
    cmd = [sys.executable, "-m", "iolab.cli.main", "fleet", "-n", "2", "run", *RACE_JOB]
    cmd += [f"--fleet-spool={tmp_path / 'spool'}"]
    ran = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_LIMIT_S, cwd=tmp_path, env=env, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    planted = sorted(p.name for p in tmpdir.glob("ompi.*/*"))
    assert planted and all(n.startswith("pmix.") and n.endswith(".tool") for n in planted), planted
    assert not list(tmpdir.glob("iolab-fleet-*")), "the launch's own session folder is removed after it"


def test_the_users_session_folder_is_kept(tmp_path: Path) -> None:
    base = tmp_path / "mine"
    env = session_environ({"PATH": "/bin"}, ["mpiexec", "-n", "2"], base)
    assert env[SESSION_BASE_VAR] == str(base)
    for chosen in ({"PRTE_MCA_prte_tmpdir_base": "/x"}, {"PRTE_MCA_prte_local_tmpdir_base": "/x"}):
        assert session_environ(chosen, ["mpiexec"], base) == chosen  # Open MPI refuses both together
    argv = ["mpiexec", "--prtemca", "prte_tmpdir_base", "/x"]
    assert SESSION_BASE_VAR not in session_environ({}, argv, base)
    # In the user's MCA parameter file (Open MPI refused the launch: "a global
    # tmpdir base ... values for the local and/or remote tmpdir base were also given").
    home = tmp_path / "home"
    (home / ".prte").mkdir(parents=True)
    (home / ".prte" / "mca-params.conf").write_text("# mine\nprte_tmpdir_base = /scratch/me  # fast disk\n")
    assert SESSION_BASE_VAR not in session_environ({"HOME": str(home)}, ["mpiexec"], base)
    (home / ".prte" / "mca-params.conf").write_text("# prte_tmpdir_base = /old\nprte_remote_tmpdir_base = /r\n")
    assert session_environ({"HOME": str(home)}, ["mpiexec"], base)[SESSION_BASE_VAR] == str(base)
    # The installation's file, beside the mpiexec that runs.
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "etc").mkdir()
    (prefix / "bin" / "mpiexec").write_text("")
    (prefix / "etc" / "prte-mca-params.conf").write_text("prte_local_tmpdir_base=/site\n")
    assert SESSION_BASE_VAR not in session_environ({}, [str(prefix / "bin" / "mpiexec")], base)
