"""fio's create_only, lockmem and percentage_random as `iolab run` takes
them, each checked against what it must do (the offsets of
percentage_random are checked against binomial bounds in the core's
generator tests, crates/iolab-core/tests/integration/gen.rs)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from iolab import _native

from tests.waits import wait_until

MIB = 1 << 20


def test_create_only_lays_the_files_out_and_does_no_io(cli: Callable[..., Any], tmp_path: Path) -> None:
    args = ["--name=lay", f"--directory={tmp_path}", "--size=8m", "--rw=randread", "--numjobs=2", "--create_only=1"]
    # time_based with a long runtime: it must not run for it either.
    r = cli("run", *args, "--time_based", "--runtime=600", "--output-format=json")
    assert r.exit_code == 0, r.output
    for w in (0, 1):
        assert (tmp_path / f"lay.{w}.0").stat().st_size == 8 * MIB
    doc = json.loads(r.stdout)
    for worker in doc["summary"]["jobs"][0]["workers"]:
        stats = worker["stats"]
        assert all(stats.get(d) is None or stats[d]["ios"] == 0 for d in ("read", "write", "trim")), stats
    # The text report says what happened, not a table of zeros.
    r = cli("run", *args)
    assert r.exit_code == 0, r.output
    assert "lay: create_only=1: set up only, no I/O ran (2 file(s) laid out" in r.stdout, r.stdout
    assert f"  reused {tmp_path}/lay.1.0: 8388608 bytes" in r.stdout, r.stdout
    assert "IOPS" not in r.stdout and "Run status" not in r.stdout, r.stdout


def test_create_only_extends_a_short_file_as_the_job_would(cli: Callable[..., Any], tmp_path: Path) -> None:
    f = tmp_path / "short"
    r = cli("run", "--name=a", f"--filename={f}", "--size=4m", "--rw=write", "--create_only=1")
    assert r.exit_code == 0, r.output
    assert f.stat().st_size == 4 * MIB


def _vmlck_bytes(pid: str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmLck:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmLck in /proc/PID/status")


def _may_lock_beyond_limit() -> bool:
    caps = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("CapEff:"))
    return bool(int(caps.split()[1], 16) >> 14 & 1)  # CAP_IPC_LOCK


def _can_lock(n: int) -> bool:
    soft, _hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    return soft == resource.RLIM_INFINITY or soft >= n + _vmlck_bytes() or _may_lock_beyond_limit()


@pytest.mark.skipif(not _can_lock(64 * MIB), reason="RLIMIT_MEMLOCK below 64 MiB: the refusal test runs instead")
def test_lockmem_locks_while_the_run_runs_and_releases_after() -> None:
    before = _vmlck_bytes()
    job = ("lk", [("ioengine", "null"), ("size", "1m"), ("time_based", None), ("runtime", "600"), ("lockmem", "64m")])
    run = _native.Run([job], interval_ns=50_000_000)
    try:
        run.start()
        wait_until(lambda: _vmlck_bytes() >= before + 64 * MIB, 60, "VmLck to grow by lockmem=64m")
    finally:
        run.stop()
        run.wait()
    assert _vmlck_bytes() == before


def test_lockmem_over_the_limit_is_refused_naming_it(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", "--name=lk", "--ioengine=null", "--size=1m"]
    cmd += ["--lockmem=64m", "--numjobs=2"]
    if _may_lock_beyond_limit():
        # The limit binds only a process without CAP_IPC_LOCK: drop it.
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("CAP_IPC_LOCK lifts RLIMIT_MEMLOCK and setpriv, which could drop it, is missing")
        cmd = [setpriv, "--bounding-set=-ipc_lock", "--inh-caps=-ipc_lock", *cmd]

    def lower_limit() -> None:  # 1 MiB, whatever the machine allows
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (MIB, resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]))

    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, preexec_fn=lower_limit, env=os.environ)
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert "would lock 128 MiB (134217728 bytes), more than RLIMIT_MEMLOCK allows (1 MiB)" in lines[0], r.stderr
    assert "ulimit -l 131072" in lines[0], r.stderr


def test_percentage_random_is_per_direction_and_checked(cli: Callable[..., Any]) -> None:
    r = cli("run", "--dry-run", "--name=a", "--ioengine=null", "--size=1m", "--rw=randrw", "--percentage_random=30,0")
    assert r.exit_code == 0, r.output
    assert "percentage_random: read 30, write 0" in r.stdout, r.stdout
    r = cli("run", "--dry-run", "--name=a", "--ioengine=null", "--size=1m", "--rw=randread", "--percentage_random=130")
    assert r.exit_code == 2 and "expected a whole percentage from 0 to 100" in r.output, r.output
