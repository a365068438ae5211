"""``realtime=1``: the job's worker threads run under SCHED_FIFO (read from
/proc while the run is measuring), and a run without it stays in the
ordinary class."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waits import busy_workers, wait_until

SCHED_OTHER, SCHED_FIFO = 0, 1


def worker_policies(pid: int) -> list[int]:
    """The scheduling policy (stat field 41) of each engine worker thread."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if not (task / "comm").read_text().startswith("iolab-w"):
                continue
            stat = (task / "stat").read_text()
        except OSError:
            continue
        out.append(int(stat.rsplit(")", 1)[1].split()[38]))  # fields from 3 on
    return out


@pytest.mark.parametrize("realtime", [True, False])
def test_realtime_workers_run_under_sched_fifo(tmp_path: Path, realtime: bool) -> None:
    if realtime and os.geteuid() != 0:
        pytest.skip("SCHED_FIFO needs CAP_SYS_NICE (root here)")
    # A paced job: its worker sleeps between I/Os, so a real-time thread
    # never holds a CPU.
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", "--name=rt", f"--filename={tmp_path / 'f'}", "--size=1m"]
    cmd += ["--rw=randread", "--rate_iops=200", "--time_based", "--runtime=30s", f"--realtime={int(realtime)}"]
    with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        try:
            if realtime:
                # The class is set as the worker starts, before its backend opens.
                wait_until(lambda: worker_policies(proc.pid) == [SCHED_FIFO], 30, "a SCHED_FIFO worker", proc)
            else:
                wait_until(lambda: busy_workers(proc.pid, 1), 30, "the worker to run I/O", proc)
                assert worker_policies(proc.pid) == [SCHED_OTHER]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
