"""`iolab quick` watches the device under its test file during each job
(issue 21): /proc/diskstats before and after the job against the job's
own I/Os. Other traffic is named first, with its numbers; where it cannot
be told (no block device, buffered I/O) quick says so and why.

The arithmetic is checked on made-up windows; one shrunk quick runs beside
a writer on the same file system and must name the writer's traffic.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from iolab.analysis.model import Analysis, Dataset, Finding
from iolab.report.quick import device_traffic_finding
from iolab.run.diskstats import device_requests, other_traffic, request_limit_bytes
from iolab.run.hostfacts import storage_facts

from tests.conftest import Ran
from tests.waits import wait_until

MIB = 1 << 20


def window(reads: int, read_bytes: int, writes: int, write_bytes: int) -> dict[str, Any]:
    d = {
        "device": "vda",
        "disk": "vda",
        "partition": False,
        "reads_completed": reads,
        "read_bytes": read_bytes,
        "writes_completed": writes,
        "write_bytes": write_bytes,
        "util_pct": 50.0,
        "window_ns": 1_000_000_000,
    }
    return {"window_ns": 1_000_000_000, "devices": [d], "notes": []}


def own(read_ios: int = 0, read_bytes: int = 0, write_ios: int = 0, write_bytes: int = 0) -> dict[str, int]:
    return {"read_ios": read_ios, "read_bytes": read_bytes, "write_ios": write_ios, "write_bytes": write_bytes}


def test_the_jobs_own_io_alone_is_not_flagged() -> None:
    # 1000 random 4 KiB writes; the device saw them and a journal commit of 3 blocks.
    t = other_traffic(window(0, 0, 1003, 4096 * 1003), own(write_ios=1000, write_bytes=4096 * 1000), direct=True)
    assert t["measured"] and (t["other_ios"], t["other_bytes"]) == (3, 3 * 4096) and not t["flagged"], t


def test_another_writer_is_flagged_with_its_numbers() -> None:
    # The case: 462 writes of iolab's own at QD 1 beside a build's writeback.
    t = other_traffic(
        window(10, 40960, 1462, 462 * 4096 + 300 * MIB), own(write_ios=462, write_bytes=462 * 4096), direct=True
    )
    assert t["flagged"] and t["other_write_ios"] == 1000 and t["other_write_bytes"] == 300 * MIB, t
    assert (t["other_read_ios"], t["other_read_bytes"]) == (10, 40960)
    f = device_traffic_finding([{"name": "rand-write-4k-qd1", **t}, {"name": "rand-read-4k-qd1", "flagged": False}])
    assert f is not None and f.kind == "device_other_traffic"
    assert f.text.startswith("other I/O on vda during 1 of 2 jobs — rand-write-4k-qd1: ~1,010 other I/Os, 300.0 MiB")
    assert "beside iolab's own 462 I/Os" in f.text, f.text


def test_in_flight_ios_and_small_shares_are_not_flagged() -> None:
    # 8 x 1 MiB still in flight at the window's end: inside the job's own slack.
    big = own(read_ios=400, read_bytes=400 * MIB)
    assert not other_traffic(window(808, 408 * MIB, 0, 0), big, direct=True, slack_bytes=8 * MIB)["flagged"]
    # 10 MiB beside 4 GiB of the job's own: under 5 %.
    huge = own(read_ios=4096, read_bytes=4096 * MIB)
    assert not other_traffic(window(4106, 4106 * MIB, 0, 0), huge, direct=True)["flagged"]


def test_not_measured_says_why() -> None:
    none = other_traffic({"devices": [], "notes": ["/x: on no block device (tmpfs)"]}, own(), direct=True)
    assert none == {"measured": False, "why": "not measured: /x: on no block device (tmpfs)"}
    buffered = other_traffic(window(1, 1, 1, 1), own(), direct=False)
    assert not buffered["measured"] and "buffered I/O" in buffered["why"], buffered


def test_split_requests_are_the_jobs_own(tmp_path: Path) -> None:
    q = tmp_path / "vdz" / "queue"
    q.mkdir(parents=True)
    (q / "max_sectors_kb").write_text("4096\n")
    (q / "max_segments").write_text("254\n")
    limit = request_limit_bytes("vdz", tmp_path)
    assert limit == 254 * 4096  # a 1 MiB read is two requests on a 254-segment virtio disk
    assert device_requests(400, MIB, limit) == 800 and device_requests(400, 4096, limit) == 400
    assert request_limit_bytes("nope", tmp_path) is None and device_requests(5, MIB, None) == 5
    mine = {**own(read_ios=400, read_bytes=400 * MIB), "read_requests": 800}
    t = other_traffic(window(806, 400 * MIB + 6 * 4096, 0, 0), mine, direct=True)
    assert t["other_read_ios"] == 6, t


def test_the_device_finding_leads_and_the_warmup_warning_trails() -> None:
    from iolab.report.quick import _with_device

    ds = Dataset("iolab-run", "q", "q", [], [], {}, {}, "iolab")
    warmup = Finding("warn_no_warmup", "warning", "no warm-up: ...", score=40.0)
    theirs = Finding("warn_other_device_io", "warning", "other I/O on vda during point 5", score=70.0)
    an = _with_device(Analysis(ds, [], [], [warmup, theirs]), [])
    assert [f.kind for f in an.top(3)] == ["warn_other_device_io", "warn_no_warmup"]
    assert an.top(3)[1].text.startswith("quick's standard jobs have no warm-up")
    t = other_traffic(window(0, 0, 500, 100 * MIB), own(write_ios=100, write_bytes=400 * 1024), direct=True)
    an = _with_device(Analysis(ds, [], [], [warmup, theirs]), [{"name": "rand-write-4k-qd1", **t}])
    assert [f.kind for f in an.top(3)] == ["device_other_traffic", "warn_no_warmup"]


WRITER = """
import os, sys
path = sys.argv[1]
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
buf = os.urandom(1 << 20)
while True:
    for i in range(8):
        os.pwrite(fd, buf, i << 20)
    os.fdatasync(fd)
"""


def test_quick_names_a_concurrent_writer_first(cli: Callable[..., Ran], workdir: Path) -> None:
    facts = storage_facts(workdir)
    if facts.get("device") is None or not Path("/proc/diskstats").is_file():
        pytest.skip(f"{workdir} is on no block device ({facts.get('fstype')}): quick says 'not measured' there")
    target = workdir / "t"
    target.mkdir()
    scratch = workdir / "writer.dat"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(scratch)])
    try:
        # Writing: its 8 MiB are on the file system (and go to the device at each fdatasync).
        wait_until(lambda: scratch.exists() and scratch.stat().st_size >= 8 * MIB, 60, "the writer to write")
        r = cli("quick", str(target), "--runtime-per-job", "300ms", "--size", "8M", "-o", "q.json")
    finally:
        writer.kill()
        writer.wait()
    assert r.exit_code == 0, r.output
    top = r.stdout.split("Top findings:\n")[1].splitlines()
    assert top[0].startswith(f"  ! other I/O on {facts['device']} during "), r.output
    assert "other I/Os" in top[0] and "written" in top[0] and "beside iolab's own" in top[0], r.output
    import json

    doc = json.loads((workdir / "q.json").read_text())
    device = doc["quick"]["device"]
    assert [d["name"] for d in device] == [j["name"] for j in doc["summary"]["jobs"]]
    flagged = [d for d in device if d.get("flagged")]
    assert flagged and all(d["other_write_bytes"] > MIB for d in flagged), device
    assert "q.html" in r.stderr
    assert "other I/O on" in (workdir / "q.html").read_text()
