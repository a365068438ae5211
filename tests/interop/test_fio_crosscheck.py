"""iolab and fio on the same jobs agree where the answer is exact.

Both tools run the same fio-style options and both are read through fio's
JSON layout (iolab's ``--output-format fio-json``), so one parser serves
both and the fio-compatible output is exercised by a real consumer.

Exact agreements: I/O counts and bytes of size-based jobs; the read share
of randrw against rwmixread; the achieved rate of rate-limited jobs.
Timing agreement on a real device (IOPS within 10 %, p50/p99 within 20 %)
is a benchmark, not a test: bench/compare_fio.py, docs/performance.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.peers import require_peer


def fio(args: list[str]) -> dict[str, Any]:
    exe = require_peer("fio")
    out = subprocess.run([exe, *args, "--output-format=json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def iolab(args: list[str]) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", *args, "--output-format=fio-json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def totals(doc: dict[str, Any], direction: str) -> tuple[int, int]:
    """(total_ios, io_bytes) of a direction, summed over jobs."""
    jobs = doc["jobs"]
    return sum(j[direction]["total_ios"] for j in jobs), sum(j[direction]["io_bytes"] for j in jobs)


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    """A 16 MiB file laid out (and so owned) by iolab."""
    f = tmp_path / "data.bin"
    iolab([f"--filename={f}", "--size=16m", "--rw=read", "--bs=1m", "--name=layout"])
    return f


@pytest.mark.parametrize("engine", ["psync", "io_uring", "libaio", "sync", "pvsync", "pvsync2", "mmap"])
def test_size_based_counts_match_fio_exactly(data_file: Path, engine: str) -> None:
    job = [f"--filename={data_file}", "--size=8m", "--rw=randread", "--bs=4k", f"--ioengine={engine}", "--name=x"]
    if engine in ("io_uring", "libaio"):
        job.append("--iodepth=8")
    f, i = fio(job), iolab(job)
    assert totals(i, "read") == totals(f, "read") == (2048, 8 << 20)
    assert totals(i, "write") == totals(f, "write") == (0, 0)


def test_bssplit_bytes_are_exact(data_file: Path) -> None:
    job = [f"--filename={data_file}", "--size=8m", "--rw=read", "--bssplit=4k/50:64k/50", "--name=x"]
    f, i = fio(job), iolab(job)
    assert totals(i, "read")[1] == totals(f, "read")[1] == 8 << 20


@pytest.mark.parametrize("amount", [["--io_size=10m"], ["--number_ios=1000"], ["--io_limit=2m"]])
def test_io_size_and_number_ios_counts_match_fio(amount: list[str]) -> None:
    job = ["--ioengine=null", "--size=4m", "--bs=4k", "--rw=randread", "--name=amount", *amount]
    assert totals(iolab(job), "read") == totals(fio(job), "read")


def test_randrw_read_share_matches_rwmixread() -> None:
    # 100k I/Os on the null engine: both tools within 1 % of 70 %.
    job = ["--ioengine=null", "--size=400m", "--bs=4k", "--rw=randrw", "--rwmixread=70", "--name=mix"]
    for doc in (fio(job), iolab(job)):
        r, w = totals(doc, "read")[0], totals(doc, "write")[0]
        assert r + w == 102_400
        assert abs(r / (r + w) - 0.70) < 0.01, (r, w)


def test_rate_limited_iops_match_the_rate() -> None:
    job = ["--ioengine=null", "--size=1g", "--bs=4k", "--rw=randread", "--rate_iops=500", "--runtime=2",
           "--time_based", "--name=rate"]  # fmt: skip
    for doc in (fio(job), iolab(job)):
        iops = doc["jobs"][0]["read"]["iops"]
        assert abs(iops - 500) / 500 < 0.03, iops


def test_numjobs_are_reported_like_fio(data_file: Path) -> None:
    job = ["--ioengine=null", "--size=4m", "--bs=4k", "--rw=read", "--numjobs=3", "--name=n"]
    f, i = fio(job), iolab(job)
    assert len(i["jobs"]) == len(f["jobs"]) == 3
    f2, i2 = fio([*job, "--group_reporting"]), iolab([*job, "--group_reporting"])
    assert len(i2["jobs"]) == len(f2["jobs"]) == 1
    assert totals(i2, "read") == totals(f2, "read") == (3 * 1024, 3 * (4 << 20))


GROUPED = """[global]
ioengine=null
size=4m
bs=4k
group_reporting
[a]
rw=randread
[b]
rw=randwrite
numjobs=2
[c]
stonewall
rw=read
"""


def test_group_reporting_merges_a_groups_jobs_like_fio(tmp_path: Path) -> None:
    # fio 3.33: one entry per group, named after its first job, with the
    # last job's options; its counts are every member's (issue 21).
    job_file = tmp_path / "grouped.fio"
    job_file.write_text(GROUPED)
    f, i = fio([str(job_file)]), iolab([str(job_file)])
    assert [(j["jobname"], j["groupid"]) for j in i["jobs"]] == [(j["jobname"], j["groupid"]) for j in f["jobs"]]
    assert [(j["jobname"], j["groupid"]) for j in f["jobs"]] == [("a", 0), ("c", 1)]
    for fj, ij in zip(f["jobs"], i["jobs"]):
        for d in ("read", "write"):
            assert (ij[d]["total_ios"], ij[d]["io_bytes"]) == (fj[d]["total_ios"], fj[d]["io_bytes"]), d
        assert ij["job options"]["rw"] == fj["job options"]["rw"]
    assert (i["jobs"][0]["read"]["total_ios"], i["jobs"][0]["write"]["total_ios"]) == (1024, 2048)
    assert i["jobs"][0]["iolab"]["jobs"] == ["a", "b"]
    # The text says the same: one entry for group 0, the group line over it.
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", str(job_file)]
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert "a: (group 0, jobs a, b merged, workers 3):" in text, text
    assert "\nb: (" not in text and "c: (group 1, workers 1)" in text, text
    read0 = next(x for x in text.splitlines() if x.startswith("   READ:"))
    assert "per entry" in read0, read0
