"""Data integrity through the RAID layers and the controller cache, checked
by a real peer: fio's nbd engine (libnbd) writes with crc32c verify headers
and reads them back.

- raid5 (healthy, then degraded: the same file-backed members served again
  with one member marked failed, so every read of that member's strips is
  reconstructed from parity), raid1 and raid10 over memory members;
- cache write-back over file-backed raid5 members: fio ends with a FLUSH
  (``--end_fsync=1``), the target is killed with SIGKILL, a new target over
  the same files (no cache) verifies everything; without the FLUSH the same
  kill loses the writes still in the cache (fio's verify fails), which
  proves the positive test can fail.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

import pytest

from tests.peers import require_peer
from tests.waits import read_until

SIZE = "4m"
JOB = [
    "--name=verify",
    "--ioengine=nbd",
    "--rw=randwrite",
    "--bssplit=4k/50:32k/25:128k/25",
    f"--size={SIZE}",
    "--iodepth=8",
    "--verify=crc32c",
    "--verify_fatal=1",
    "--randseed=7",
    "--verify_state_save=0",
]


class Served:
    """``iolab target`` serving one export ``r`` on a Unix socket."""

    def __init__(self, sock: Path, spec: str) -> None:
        self.sock = sock
        cmd = [sys.executable, "-m", "iolab.cli.main", "target", "--unix", str(sock), "--export", f"r={spec}"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert self.proc.stderr is not None
        read_until(self.proc, self.proc.stderr, "listening on", 30)

    @property
    def uri(self) -> str:
        return f"nbd+unix:///r?socket={self.sock}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.communicate(timeout=30)

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.communicate(timeout=30)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[str], Served]]:
    started: list[Served] = []

    def start(spec: str) -> Served:
        s = Served(tmp_path / f"t{len(started)}.sock", spec)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def fio(uri: str, *extra: str) -> tuple[int, str]:
    exe = require_peer("fio")
    out = subprocess.run([exe, *JOB, f"--uri={uri}", *extra], capture_output=True, text=True, timeout=180)
    return out.returncode, out.stdout + out.stderr


def passes(uri: str, *extra: str) -> None:
    rc, out = fio(uri, *extra)
    assert rc == 0 and "verify failed" not in out, out


def file_members(d: Path) -> str:
    # 6 members of 1 MiB with 64 KiB strips: a 5 MiB raid5, fio uses 4 MiB.
    return f"raid5,members=6,strip=64k,member=file(path={d}/m{{i}}.img,size=1m)"


@pytest.mark.parametrize(
    "spec",
    [
        "raid5,members=6,strip=64k,member=memory(size=1m)",
        "raid5,members=4,strip=4k,member=memory(size=2m),failed=2",
        "raid1,members=2,member=memory(size=4m)",
        "raid10,members=4,strip=16k,member=memory(size=2m)",
    ],
)
def test_fio_verify_passes_through_raid(serve: Callable[[str], Served], spec: str) -> None:
    passes(serve(spec).uri, "--do_verify=1")


def test_raid5_verifies_degraded_after_a_healthy_write(serve: Callable[[str], Served], tmp_path: Path) -> None:
    healthy = serve(file_members(tmp_path))
    passes(healthy.uri, "--do_verify=1", "--end_fsync=1")
    healthy.stop()
    for failed in (0, 3):
        degraded = serve(file_members(tmp_path) + f",failed={failed}")
        passes(degraded.uri, "--verify_only=1")
        degraded.stop()


def test_write_back_survives_kill9_after_flush(serve: Callable[[str], Served], tmp_path: Path) -> None:
    cached = serve(file_members(tmp_path) + "+cache,write=back")
    passes(cached.uri, "--do_verify=0", "--end_fsync=1")
    cached.kill9()
    passes(serve(file_members(tmp_path)).uri, "--verify_only=1")


def test_write_back_without_flush_loses_data_on_kill9(serve: Callable[[str], Served], tmp_path: Path) -> None:
    cached = serve(file_members(tmp_path) + "+cache,write=back")
    passes(cached.uri, "--do_verify=1")  # the cache serves its own dirty data
    cached.kill9()
    rc, out = fio(serve(file_members(tmp_path)).uri, "--verify_only=1")
    # Blocks of the last, never completed stripe were only in the cache: zeroes on the members.
    assert rc != 0 and ("verify failed" in out or "bad magic header" in out), out
