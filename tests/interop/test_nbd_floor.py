"""bench/nbd_floor.c, the minimal NBD server that bench/nbd_floor.py uses
as the floor of CPU per request (issue 25 part 4), serves real clients
correctly: a floor that answered wrongly would give a cheap, meaningless
figure. fio's nbd engine (libnbd) reads every block it asks for, pipelined
(QD 8) and batched, without an error; iolab's nbd client does too; and
libnbd (nbdsh) reads the zeros the floor serves, at the export's size."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.peers import require_peer
from tests.waits import wait_until

BENCH = Path(__file__).resolve().parents[2] / "bench"
SIZE = 64 << 20


@pytest.fixture
def floor(tmp_path: Path) -> Iterator[str]:
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (cc) to build bench/nbd_floor.c")
    exe = tmp_path / "nbd_floor"
    subprocess.run([cc, "-O2", "-o", str(exe), str(BENCH / "nbd_floor.c"), "-lpthread"], check=True)
    sock = tmp_path / "f.sock"
    proc = subprocess.Popen([str(exe), str(sock), str(SIZE)])
    try:
        wait_until(sock.exists, 30, "the floor server's socket", proc)
        yield str(sock)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_fio_reads_every_block_from_the_floor(floor: str) -> None:
    fio = require_peer("fio")
    uri = f"nbd+unix:///?socket={floor}"
    for extra in ([], ["--iodepth_batch_submit=8", "--iodepth_batch_complete_min=8"]):
        cmd = [fio, "--name=f", "--ioengine=nbd", f"--uri={uri}", "--rw=randread", "--bs=4k", "--iodepth=8",
               "--size=8m", *extra, "--output-format=json"]  # fmt: skip
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        job = json.loads(out.stdout[out.stdout.index("{") :])["jobs"][0]
        assert job["error"] == 0
        assert job["read"]["total_ios"] == 2048, job["read"]


def test_iolab_reads_the_zeros_the_floor_serves(floor: str, tmp_path: Path) -> None:
    uri = f"nbd+unix:///?socket={floor}"
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", "--name=f", "--ioengine=nbd", f"--uri={uri}",
           "--rw=read", "--bs=64k", "--iodepth=4", "--size=4m", "--output-format=fio-json"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    job = json.loads(out.stdout)["jobs"][0]
    assert job["read"]["io_bytes"] == 4 << 20
    assert job["error"] == 0


def test_qemu_and_libnbd_see_the_size_and_zeros(floor: str) -> None:
    uri = f"nbd+unix:///?socket={floor}"
    info = subprocess.run([require_peer("nbdinfo"), "--size", uri], capture_output=True, text=True, timeout=60)
    assert info.returncode == 0, info.stderr
    assert int(info.stdout) == SIZE
    # qemu-io's `read -P 0` fails unless every byte read is 0.
    reads = [c for off in (0, 4096 * 777, SIZE - 65536) for c in ("-c", f"read -P 0 {off} 64k")]
    out = subprocess.run([require_peer("qemu-io"), "-f", "raw", uri, *reads], capture_output=True, text=True,
                         timeout=60)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("read 65536/65536 bytes") == 3, out.stdout
    assert "Pattern verification failed" not in out.stdout
