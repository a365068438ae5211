"""Trims (``rw=trim|randtrim|trimwrite|randtrimwrite``): iolab and fio 3.33
issue the same number of trims and bytes on the same jobs, and the trims
do what they say.

- Over a file: fio 3.33's general engines send BLKDISCARD to a regular file
  and fail with ENOTTY; its ``falloc`` engine punches holes, as iolab's
  engines do on files. So fio runs with ``--ioengine=falloc`` and iolab with
  each of its file engines, and the trim and write counts must agree
  exactly; afterwards the file's trimmed blocks read back as zeroes and
  are given back to the file system.
- Over NBD: fio's nbd engine (libnbd) and iolab's against ``iolab target``
  (a memory export): the same counts, and the target's stats for each
  run's window count exactly those trims and writes.
- On a block device (a loop device, where this machine allows one) iolab's
  io_uring, libaio and psync and fio's psync all send BLKDISCARD: the same
  counts, and the loop device's backing file gives its blocks back.
- io_size and number_ios count a trimwrite's writes only (fio's rule).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_fio_nbd_verify import Target
from tests.peers import require_peer

SIZE = 4 << 20
FILE_ENGINES = ["psync", "io_uring", "libaio", "vsync", "posixaio", "pvsync", "pvsync2", "sync", "mmap"]


def fio(args: list[str]) -> dict[str, Any]:
    exe = require_peer("fio")
    out = subprocess.run([exe, *args, "--output-format=json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    # libnbd's engine prints "fio: connected to NBD server" before the JSON.
    doc: dict[str, Any] = json.loads(out.stdout[out.stdout.index("{") :])
    assert doc["jobs"][0]["error"] == 0, out.stderr
    return doc


def iolab(args: list[str], fmt: str = "fio-json") -> dict[str, Any]:
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", *args, f"--output-format={fmt}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def counts(doc: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """(total_ios, io_bytes) per direction, summed over the entries."""
    return {
        d: (sum(j[d]["total_ios"] for j in doc["jobs"]), sum(j[d]["io_bytes"] for j in doc["jobs"]))
        for d in ("read", "write", "trim")
    }


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    """A file of random bytes laid out (and so owned) by iolab."""
    f = tmp_path / "data.bin"
    iolab([f"--filename={f}", f"--size={SIZE}", "--rw=write", "--bs=1m", "--name=layout"])
    return f


def allocated_bytes(path: Path) -> int:
    return os.stat(path).st_blocks * 512


@pytest.mark.parametrize("rw", ["randtrim", "trimwrite", "trim", "randtrimwrite"])
@pytest.mark.parametrize("engine", FILE_ENGINES)
def test_file_trims_count_as_fios_falloc_engine(data_file: Path, rw: str, engine: str) -> None:
    job = [f"--filename={data_file}", f"--size={SIZE}", f"--rw={rw}", "--bs=16k", "--name=t"]
    mine = counts(iolab([*job, f"--ioengine={engine}", "--iodepth=4"]))
    theirs = counts(fio([*job, "--ioengine=falloc"]))
    assert mine == theirs
    assert mine["trim"] == (SIZE // 16384, SIZE)
    assert mine["write"] == ((SIZE // 16384, SIZE) if "write" in rw else (0, 0))


def test_a_trim_punches_a_hole_that_reads_back_zero(data_file: Path) -> None:
    before = allocated_bytes(data_file)
    assert before >= SIZE  # laid out: every block allocated
    # Trim the first half only (offset 0, 2 MiB), on the queued io_uring engine.
    iolab([f"--filename={data_file}", "--size=2m", "--rw=randtrim", "--bs=64k", "--ioengine=io_uring", "--name=t"])
    data = data_file.read_bytes()
    assert len(data) == SIZE  # KEEP_SIZE: the file keeps its length
    assert data[: 2 << 20] == bytes(2 << 20)
    assert data[2 << 20 :].count(0) < (2 << 20) // 2  # the rest is untouched random data
    # The blocks went back to the file system (give or take an extent-tree block).
    assert allocated_bytes(data_file) <= before - (2 << 20) + (16 << 10)


def test_trimwrite_leaves_written_data(data_file: Path) -> None:
    iolab([f"--filename={data_file}", f"--size={SIZE}", "--rw=trimwrite", "--bs=64k", "--name=t"])
    data = data_file.read_bytes()
    # Every block was trimmed and then written: no block of zeroes is left.
    assert all(data[o : o + 65536] != bytes(65536) for o in range(0, SIZE, 65536))


@pytest.mark.parametrize(
    ("amount", "expected"),
    [("--io_size=32k", (8, 32768)), ("--number_ios=6", (6, 24576))],
)
def test_trimwrite_io_size_and_number_ios_count_the_writes(amount: str, expected: tuple[int, int]) -> None:
    job = ["--ioengine=null", "--size=64k", amount, "--rw=trimwrite", "--bs=4k", "--name=t"]
    mine, theirs = counts(iolab(job)), counts(fio(job))
    assert mine == theirs
    assert mine["trim"] == mine["write"] == expected


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Target]:
    t = Target(tmp_path, ("d=memory,size=8m",))
    try:
        yield t
    finally:
        t.stop()


def served(window: dict[str, Any], op: str) -> tuple[int, int]:
    s = window["d"][op]
    assert s["errors"] == 0, s
    return s["ios"], s["bytes"]


@pytest.mark.parametrize("rw", ["randtrim", "trimwrite"])
def test_nbd_trims_match_fio_and_the_target_counts_them(target: Target, rw: str) -> None:
    # fio takes an engine's own options (uri=) only after --ioengine.
    job = ["--name=t", "--ioengine=nbd", f"--uri={target.uri('d')}", f"--size={SIZE}", f"--rw={rw}", "--bs=32k"]
    job.append("--iodepth=8")
    target.reset()
    theirs = counts(fio(job))
    fio_window = target.reset()
    mine = counts(iolab(job))
    my_window = target.reset()
    assert mine == theirs
    assert mine["trim"] == (SIZE // 32768, SIZE)
    for doc_counts, window in ((theirs, fio_window), (mine, my_window)):
        assert served(window, "trim") == doc_counts["trim"]
        assert served(window, "write") == doc_counts["write"]
        assert served(window, "read") == (0, 0)


def test_verify_trim_over_nbd_reads_trimmed_blocks_back_as_zeroes(target: Target) -> None:
    # fio's verify-trim (fio 3.33 aborts on it: an assertion in fio_ro_check
    # refuses a trim in a job whose rw has none). The target's memory export
    # reads trimmed ranges back as zeroes, which trim_verify_zero checks.
    job = ["--name=v", "--ioengine=nbd", f"--uri={target.uri('d')}", "--size=1m", "--bs=4k", "--rw=randwrite"]
    job += ["--verify=crc32c", "--verify_fatal=1", "--trim_percentage=50", "--trim_backlog=16", "--iodepth=4"]
    target.reset()
    mine = counts(iolab(job))
    window = target.reset()
    trims, writes = mine["trim"][0], mine["write"][0]
    assert writes == 256
    assert 90 < trims < 166, trims  # about half of the written blocks
    assert mine["read"][0] == 256  # each block read back: data, or zeroes where trimmed
    assert served(window, "trim") == mine["trim"]
    assert served(window, "write") == mine["write"]
    assert served(window, "read") == mine["read"]


def test_verify_trim_options_without_their_partners_are_said_to_do_nothing(tmp_path: Path) -> None:
    f = tmp_path / "x"
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", f"--filename={f}", "--size=64k", "--rw=write"]
    cmd += ["--verify=crc32c", "--trim_percentage=50", "--name=v", "--output-format=fio-json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "trim_percentage has no effect without trim_backlog" in out.stderr
    assert counts(json.loads(out.stdout))["trim"] == (0, 0)


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A 16 MiB loop device over a sparse file (needs root and loop devices)."""
    losetup = require_peer("losetup")
    backing = tmp_path / "loop.img"
    with open(backing, "wb") as f:
        f.truncate(16 << 20)
    made = subprocess.run([losetup, "-f", "--show", str(backing)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"no loop device here: {made.stderr.strip()}")
    dev = made.stdout.strip()
    try:
        yield dev, backing
    finally:
        subprocess.run([losetup, "-d", dev], check=True)


@pytest.mark.parametrize("engine", ["psync", "io_uring", "libaio"])
def test_block_device_trims_discard_as_fios_do(loop_device: tuple[str, Path], engine: str) -> None:
    dev, backing = loop_device
    base = [f"--filename={dev}", "--size=8m", "--name=t"]
    iolab([*base, "--rw=write", "--bs=1m", "--direct=1", "--allow-overwrite"])
    assert allocated_bytes(backing) >= 8 << 20
    job = [*base, "--rw=randtrim", "--bs=64k", f"--ioengine={engine}", "--iodepth=4"]
    mine = counts(iolab([*job, "--allow-overwrite"]))
    # BLKDISCARD on a loop device punches the backing file: the blocks go back.
    assert allocated_bytes(backing) <= 64 << 10
    with open(dev, "rb") as f:
        assert f.read(8 << 20) == bytes(8 << 20)
    theirs = counts(fio(job))  # fio's general engines send BLKDISCARD to a block device too
    assert mine == theirs == {"read": (0, 0), "write": (0, 0), "trim": (128, 8 << 20)}
