"""fio's zone modes and fill_device through the command line: job files of
our own (tests/jobs/data/zoned.fio, fill.fio) run as written, with the
effect each option asks for, and fill_device against a file system that
really runs out of space (a 4 MiB tmpfs in a private mount namespace)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

DATA = Path(__file__).parent.parent / "jobs" / "data"
MIB = 1 << 20


def _fio_json(cli: Callable[..., Any], name: str) -> dict[str, Any]:
    r = cli("run", str(DATA / name), "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    return dict(json.loads(r.stdout))


def test_zoned_job_file_moves_what_the_zones_allow(cli: Callable[..., Any], workdir: Path) -> None:
    jobs = {j["jobname"]: j for j in _fio_json(cli, "zoned.fio")["jobs"]}
    # Strided: 256 KiB read, 16 KiB per zone, zones 64 KiB apart.
    assert jobs["profile"]["read"]["io_bytes"] == 256 * 1024
    # zbd: random writes at the pointers of 4 zones of 32 KiB capacity
    # move the region's 256 KiB (full zones are reset and written again);
    # the sequential read then reads exactly what lies below the pointers.
    assert jobs["zbd-write"]["write"]["io_bytes"] == 256 * 1024
    read = jobs["zbd-read"]["read"]["io_bytes"]
    assert 0 < read <= 4 * 32 * 1024
    assert read % 4096 == 0


def test_fill_job_file_writes_then_scans(cli: Callable[..., Any], workdir: Path) -> None:
    jobs = {j["jobname"]: j for j in _fio_json(cli, "fill.fio")["jobs"]}
    assert jobs["fill"]["write"]["io_bytes"] == MIB
    assert jobs["scan"]["read"]["io_bytes"] == MIB
    assert (workdir / "fill.img").stat().st_size == MIB


def test_zoned_block_device_message_names_zbd_options(cli: Callable[..., Any], workdir: Path) -> None:
    r = cli("run", "--name=z", "--filename=z.img", "--size=1m", "--zonemode=zbd", "--zonesize=64k", "--zoneskip=4k")
    assert r.exit_code != 0
    assert "zoneskip must be 0" in r.output


def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
        capture_output=True,
    )
    return probe.returncode == 0


@pytest.mark.skipif(
    os.environ.get("CI") != "true" and not _can_mount_tmpfs(),
    reason="needs unshare and tmpfs in a user namespace (required under CI=true)",
)
def test_fill_device_stops_at_enospc_without_error(tmp_path: Path) -> None:
    # A 4 MiB tmpfs only this process tree sees: iolab writes until ENOSPC,
    # ends without an error, and the bytes it reports are the file's size
    # (counts at both ends).
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = (
        f"mount -t tmpfs -o size=4m tmpfs {mnt} && "
        f"{sys.executable} -m iolab.cli.main run --name=fill --filename={mnt}/f --rw=write "
        f"--bs=64k --fill_device=1 --output-format=fio-json > {tmp_path}/out.json; "
        f"echo rc=$?; stat -c %s {mnt}/f"
    )
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    lines = done.stdout.split()
    assert lines[0] == "rc=0", done.stderr
    on_disk = int(lines[1])
    doc = json.loads((tmp_path / "out.json").read_text())
    job = doc["jobs"][0]
    assert job["write"]["io_bytes"] == on_disk
    assert job["error"] == 0
    assert on_disk == 4 * MIB, "tmpfs of 4 MiB holds 4 MiB of file data"
