"""fio's nbd engine with verify against ``iolab target`` (a real peer).

fio 3.33 (``--ioengine=nbd``, libnbd) writes a few MiB with mixed block
sizes and verifies them with crc32c headers, then a second fio reads the
same layout back in a verify-only pass. Both must exit 0 with no verify
error, and the target's stats for each fio run's window (bracketed with
``POST /reset``) must count exactly the I/Os and bytes fio reports.

The negative test serves the same job from an export with the corrupt
layer (every read has one bit flipped; stored data untouched): fio's
verify must fail, which proves the positive test can fail.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.peers import require_peer
from tests.waits import read_until

SIZE_BYTES = 4 << 20
# Mixed sizes; with fio's random map every block is written exactly once.
JOB = [
    "--name=verify",
    "--ioengine=nbd",
    "--rw=randwrite",
    "--bssplit=4k/50:32k/25:128k/25",
    f"--size={SIZE_BYTES}",
    "--iodepth=8",
    "--verify=crc32c",
    "--verify_fatal=1",
    "--randseed=7",
    "--output-format=json",
]


EXPORTS = ("d=memory,size=8m", "bad=memory,size=8m+corrupt,rate=1")


class Target:
    """``iolab target`` on a Unix socket with its stats endpoint."""

    def __init__(self, tmp_path: Path, exports: tuple[str, ...] = EXPORTS) -> None:
        self.sock = tmp_path / "nbd.sock"
        cmd = [sys.executable, "-m", "iolab.cli.main", "target", "--unix", str(self.sock)]
        for e in exports:
            cmd += ["--export", e]
        cmd += ["--stats-http", "127.0.0.1:0"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stats_url = self._announced_stats_url()

    def _announced_stats_url(self) -> str:
        assert self.proc.stderr is not None
        line = read_until(self.proc, self.proc.stderr, "stats on", 20)
        return line.split("stats on ", 1)[1].strip()

    def uri(self, export: str) -> str:
        return f"nbd+unix:///{export}?socket={self.sock}"

    def reset(self) -> dict[str, Any]:
        """End the stats window; the finished window's per-export summary."""
        url = self.stats_url.rsplit("/", 1)[0] + "/reset"
        with urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=10) as r:
            summary: dict[str, Any] = json.load(r)["summary"]
        return summary

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=20)
        assert self.proc.returncode == 0, err


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Target]:
    t = Target(tmp_path)
    try:
        yield t
    finally:
        t.stop()


def run_fio(uri: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    """fio's exit status, its job's JSON, and its stderr."""
    exe = require_peer("fio")
    # verify_state_save=0: a failing verify must not leave fio's state file in the working directory.
    cmd = [exe, *JOB, f"--uri={uri}", "--verify_state_save=0", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    # libnbd's engine prints "fio: connected to NBD server" before the JSON.
    doc = json.loads(out.stdout[out.stdout.index("{") :])
    return out.returncode, doc["jobs"][0], out.stderr


def counts(job: dict[str, Any], direction: str) -> tuple[int, int]:
    return job[direction]["total_ios"], job[direction]["io_bytes"]


def served(summary: dict[str, Any], export: str, op: str) -> tuple[int, int]:
    s = summary[export][op]
    assert s["errors"] == 0, s
    return s["ios"], s["bytes"]


def test_fio_write_then_verify_and_verify_only_pass(target: Target) -> None:
    target.reset()
    rc, job, err = run_fio(target.uri("d"), "--do_verify=1")
    assert rc == 0, err
    assert job["error"] == 0 and "verify failed" not in err, err
    writes, reads = counts(job, "write"), counts(job, "read")
    assert writes[1] == SIZE_BYTES and reads == writes  # every block written once, read back once
    window = target.reset()
    assert served(window, "d", "write") == writes
    assert served(window, "d", "read") == reads

    rc, job, err = run_fio(target.uri("d"), "--verify_only=1")
    assert rc == 0, err
    assert job["error"] == 0 and "verify failed" not in err, err
    assert counts(job, "read") == reads  # the same layout, read and checked again
    window = target.reset()
    assert served(window, "d", "read") == reads
    assert served(window, "d", "write") == (0, 0)  # verify_only writes nothing


def test_fio_verify_fails_on_a_corrupting_export(target: Target) -> None:
    rc, job, err = run_fio(target.uri("bad"), "--do_verify=1")
    assert rc != 0
    assert job["error"] != 0
    assert "crc32c: verify failed" in err, err
