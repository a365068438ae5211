"""continue_on_error, ignore_error, error_dump, exit_what and offset_increment
through `iolab run`, as fio's job files use them: failures injected by an
iolab target (its inject layer fails writes at chosen offsets with EIO) are
counted and reported as fio reports them (``total_err``, ``first_error`` in
fio's JSON and terse lines, the text summary's errors line), printed unless
``error_dump=0``; our own job files (tests/jobs/data/exit-what.fio,
stripes.fio) show exit_what and offset_increment at work.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from iolab import _native

DATA = Path(__file__).parent / "data"
BS = 64 * 1024
BAD = (1, 9)  # 64 KiB blocks whose writes fail


@pytest.fixture
def bad_uri(tmp_path: Path) -> Iterator[str]:
    """A 1 MiB memory export whose writes to blocks 1 and 9 fail with EIO."""
    sock = tmp_path / "nbd.sock"
    offsets = ":".join(str(b * BS + 100) for b in BAD)
    t = _native.Target(exports=[f"bad=memory,size=1m+inject,offsets={offsets},ops=write"], listen=f"unix:{sock}")
    t.start()
    try:
        yield f"nbd+unix:///bad?socket={sock}"
    finally:
        t.shutdown()
        t.wait()


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=cwd)


def _write_job(uri: str, *extra: str) -> list[str]:
    return ["--name=e", "--ioengine=nbd", f"--uri={uri}", "--rw=write", "--bs=64k", *extra]


def test_continue_on_error_counts_failures_as_fio_reports_them(bad_uri: str) -> None:
    out = _run(*_write_job(bad_uri, "--continue_on_error=write"), "--output-format=fio-json")
    assert out.returncode == 0, out.stderr
    job: dict[str, Any] = json.loads(out.stdout)["jobs"][0]
    assert (job["total_err"], job["first_error"]) == (2, 5)  # EIO
    assert job["write"]["total_ios"] == 16 - len(BAD)
    dumped = [line for line in out.stderr.splitlines() if "continuing (continue_on_error)" in line]
    assert len(dumped) == 2 and "EIO" in dumped[0] and f"offset={BAD[0] * BS} bytes" in dumped[0], out.stderr
    terse = _run(*_write_job(bad_uri, "--continue_on_error=write"), "--output-format=terse")
    assert terse.stdout.strip().split(";")[-2:] == ["2", "5"]
    text = _run(*_write_job(bad_uri, "--continue_on_error=write"))
    assert "errors: total=2, first_error=5/<Input/output error>" in text.stdout


def test_error_dump_0_prints_nothing_and_the_default_stops_at_the_first(bad_uri: str) -> None:
    quiet = _run(*_write_job(bad_uri, "--continue_on_error=io", "--error_dump=0"), "--output-format=fio-json")
    assert quiet.returncode == 0, quiet.stderr
    assert "continue_on_error" not in quiet.stderr
    assert json.loads(quiet.stdout)["jobs"][0]["total_err"] == 2
    stopped = _run(*_write_job(bad_uri), "--output-format=fio-json")
    assert stopped.returncode == 1
    assert f"offset {BAD[0] * BS}" in stopped.stderr or f"{BAD[0] * BS}" in stopped.stderr, stopped.stderr
    job = json.loads(stopped.stdout)["jobs"][0]
    # fio reports total_err only under continue_on_error.
    assert "total_err" not in job
    assert job["write"]["total_ios"] == BAD[0]


def test_exit_what_stops_the_group_or_everything(tmp_path: Path) -> None:
    out = _run(str(DATA / "exit-what.fio"), "--output-format=json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # Each job's own figures (the fio outputs merge a group's jobs under
    # group_reporting, as fio does; the document keeps every job).
    jobs = {j["name"]: j["merged"] for j in json.loads(out.stdout)["summary"]["jobs"]}
    # The pacers did their 20 I/Os; the busy jobs (60 s each) were stopped
    # with them, and the job after exit_what=all never ran.
    assert jobs["pacer1"]["read"]["ios"] == 20
    assert jobs["pacer2"]["write"]["ios"] == 20
    assert jobs["busy1"]["thread_runtime_ns"] < 30e9
    assert jobs["busy2"]["thread_runtime_ns"] < 30e9
    assert jobs["busy2"]["read"]["ios"] > 0
    assert jobs["never"]["read"]["ios"] == 0


def test_offset_increment_gives_each_clone_its_stripe(tmp_path: Path) -> None:
    out = _run(str(DATA / "stripes.fio"), "--output-format=fio-json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    clones = json.loads(out.stdout)["jobs"]
    # 32 writes of 16 KiB per clone (size=512k) wrap over the same 4 blocks
    # (16 KiB at each 128 KiB); the last of each was read back and verified
    # (a clone reading another's stripe would find the other's seeds).
    assert [(c["write"]["total_ios"], c["read"]["total_ios"]) for c in clones] == [(32, 4)] * 4
    # The last clone's stripe starts at 16 KiB + 3 MiB and spans 512 KiB.
    assert (tmp_path / "stripes.dat").stat().st_size == 16 * 1024 + 3 * 2**20 + 512 * 1024
