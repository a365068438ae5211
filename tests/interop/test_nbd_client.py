"""iolab's nbd client (``--ioengine=nbd``) against nbdkit's memory plugin,
side by side with fio's nbd engine on the same options: size-based counts
and bytes agree exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.peers import require_peer
from tests.waits import wait_until


@pytest.fixture
def nbdkit_uri(tmp_path: Path) -> Iterator[str]:
    """nbdkit serving 64 MiB of memory on a Unix socket; its nbd+unix URI."""
    exe = require_peer("nbdkit")
    sock = tmp_path / "kit.sock"
    proc = subprocess.Popen([exe, "--foreground", "--exit-with-parent", "-U", str(sock), "memory", "64M"])
    try:
        wait_until(sock.exists, 10, "nbdkit's socket", proc)
        yield f"nbd+unix:///?socket={sock}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def iolab(args: list[str]) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", *args, "--output-format=fio-json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def fio(args: list[str], out: Path) -> dict[str, Any]:
    exe = require_peer("fio")
    # fio's nbd engine prints a line on stdout; keep the JSON in a file.
    subprocess.run([exe, *args, "--output-format=json", f"--output={out}"], capture_output=True, check=True)
    return json.loads(out.read_text())


def totals(doc: dict[str, Any], direction: str) -> tuple[int, int]:
    jobs = doc["jobs"]
    return sum(j[direction]["total_ios"] for j in jobs), sum(j[direction]["io_bytes"] for j in jobs)


def test_randread_counts_match_fio_against_nbdkit(nbdkit_uri: str, tmp_path: Path) -> None:
    job = ["--ioengine=nbd", f"--uri={nbdkit_uri}", "--rw=randread", "--bs=4k", "--size=16m", "--iodepth=16",
           "--name=x"]  # fmt: skip
    i, f = iolab(job), fio(job, tmp_path / "fio.json")
    assert totals(i, "read") == totals(f, "read") == (4096, 16 << 20)


def test_randrw_over_two_connections(nbdkit_uri: str) -> None:
    job = ["--ioengine=nbd", f"--uri={nbdkit_uri}", "--rw=randrw", "--bs=4k", "--size=8m", "--iodepth=32",
           "--nbd_connections=2", "--name=x"]  # fmt: skip
    i = iolab(job)
    (r, rb), (w, wb) = totals(i, "read"), totals(i, "write")
    assert (r + w, rb + wb) == (2048, 8 << 20)
    assert r > 0 and w > 0


def test_a_missing_export_names_uri_and_export(nbdkit_uri: str) -> None:
    uri = nbdkit_uri.replace(":///", ":///nosuch")
    # nbdkit serves any export name by default; a bad socket is the error here.
    bad = uri.replace("kit.sock", "missing.sock")
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", "--ioengine=nbd", f"--uri={bad}", "--rw=read",
           "--size=1m", "--name=x"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode != 0
    assert bad in out.stderr and "cannot connect" in out.stderr, out.stderr
