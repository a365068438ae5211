"""``nice=N``: each worker thread runs N nicer than iolab itself (fio's
nice(2)), read from /proc/PID/task/TID/stat while the run goes; the run's
other threads keep iolab's own nice value."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waits import wait_until


def thread_nices(pid: int) -> dict[str, int]:
    """Nice value (stat field 19) of each thread of ``pid``, by thread name."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            comm = (task / "comm").read_text().strip()
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended while we looked
            continue
        out[comm] = int(stat.rsplit(")", 1)[1].split()[16])  # fields from 3 on
    return out


@pytest.mark.parametrize("nice", [3, 0])
def test_workers_run_nicer_by_n(tmp_path: Path, nice: int) -> None:
    own = os.getpriority(os.PRIO_PROCESS, 0)  # the test may itself run niced
    want = min(19, own + nice)
    # A paced job: the worker lives for the whole runtime without a CPU.
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", "--name=n", "--ioengine=null", "--size=1m"]
    cmd += ["--rate_iops=100", "--time_based", "--runtime=30s", f"--nice={nice}"]
    with subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        try:
            # nice is set as the worker starts, before its backend opens.
            wait_until(lambda: thread_nices(proc.pid).get("iolab-w0.0") == want, 30, f"a worker at nice {want}", proc)
            nices = thread_nices(proc.pid)
            others = {name: n for name, n in nices.items() if not name.startswith("iolab-w")}
            assert others and set(others.values()) == {own}, nices
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_out_of_range_is_refused(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", "--dry-run", "--name=n", "--ioengine=null", "--size=1m"]
    out = subprocess.run([*cmd, "--nice=20"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 2 and "expected a whole number from -20 to 19" in out.stderr, out.stderr
