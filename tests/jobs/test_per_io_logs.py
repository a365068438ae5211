"""fio's per-I/O logs (``log_avg_msec=0``) and per-priority latency from
``iolab run``.

Truths: a per-I/O log has one line per I/O (its lines per direction are the
run's ``total_ios``), its values agree with the run's histograms (mean and
max within HDR's 0.1 %), its offsets lie inside the file and are multiples
of the block size; with cmdprio_percentage the priority column and fio
json's ``prios`` count the I/Os of each priority, and the counts add up to
the run's; fio's fio2gnuplot reads the bw and iops logs, and fio itself
writes the same files, columns and line counts for the same job.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Callable

from peers import require_peer

RUN = ["--name=a", "--ioengine=io_uring", "--size=2m", "--bs=4k", "--rw=randrw", "--iodepth=4", "--loops=2"]


def _rows(path: Path) -> list[list[str]]:
    return [line.split(", ") for line in path.read_text().splitlines()]


def _run(cli: Callable[..., Any], *args: str) -> dict[str, Any]:
    r = cli("run", *RUN, *args, "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    return dict(json.loads(r.stdout))


def test_lat_log_has_one_line_per_io_matching_the_histograms(cli: Callable[..., Any], workdir: Path) -> None:
    doc = _run(cli, "--write_lat_log=p", "--write_bw_log=p", "--write_iops_log=p", "--log_offset=1")
    (entry,) = doc["jobs"]
    for kind in ("lat", "clat", "slat", "bw", "iops"):
        rows = _rows(workdir / f"p_{kind}.1.log")
        assert all(len(r) == 6 for r in rows)  # time, value, dir, bs, offset, prio
        for d, name in enumerate(("read", "write")):
            mine = [r for r in rows if r[2] == str(d)]
            assert len(mine) == entry[name]["total_ios"], (kind, name)
            assert all(r[3] == "4096" and int(r[4]) % 4096 == 0 and int(r[4]) < 2 << 20 for r in mine)
            if kind in ("lat", "clat"):
                values = [int(r[1]) for r in mine]
                want = entry[name][f"{kind}_ns"]
                assert abs(max(values) - want["max"]) <= want["max"] * 1e-3
                assert abs(sum(values) / len(values) - want["mean"]) <= want["mean"] * 1e-3
            if kind == "iops":
                assert {r[1] for r in mine} == {"1"}
    records = Path(entry["job options"]["per_io_log"])  # the engine's scratch records...
    assert records.name.startswith("iolab-iolog-") and not records.exists()  # ...removed once logged


def test_cmdprio_percentage_counts_per_priority(cli: Callable[..., Any], workdir: Path) -> None:
    doc = _run(
        cli,
        "--rw=randread",
        "--loops=6",
        "--prioclass=3",
        "--cmdprio_percentage=25",
        "--cmdprio_class=2",
        "--cmdprio=0",
        "--write_lat_log=q",
        "--log_prio=1",
    )
    (entry,) = doc["jobs"]
    ios = entry["read"]["total_ios"]
    prios = {(p["prioclass"], p["prio"]): p["clat_ns"]["N"] for p in entry["read"]["prios"]}
    assert set(prios) == {(2, 0), (3, 0)} and sum(prios.values()) == ios
    assert 0.15 * ios < prios[(2, 0)] < 0.35 * ios  # 25 % of 3072, ±7 sd
    column = [r[-1] for r in _rows(workdir / "q_lat.1.log")]  # no log_offset: 5 columns
    assert column.count("0x4000") == prios[(2, 0)] and column.count("0x6000") == prios[(3, 0)]


def test_fio2gnuplot_reads_per_io_bw_and_iops_logs(cli: Callable[..., Any], workdir: Path) -> None:
    tool = require_peer("fio2gnuplot")
    _run(cli, "--numjobs=2", "--write_bw_log=g", "--write_iops_log=g")
    for pattern in ("g_bw.*.log", "g_iops.*.log"):
        r = subprocess.run([tool, "-v", "-p", pattern], cwd=workdir, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "2 files Selected" in r.stdout and "Processing data file 2/2" in r.stdout, r.stdout


JOB = """[global]
filename={path}
size=1m
bs=4k
rw=randread
ioengine=io_uring
iodepth=4
write_lat_log=cmp
log_prio=1
log_offset=1

[prio]
prioclass=3
cmdprio_percentage=30
cmdprio_class=2
cmdprio=1
"""


def test_fio_and_iolab_write_the_same_log_files_and_columns(cli: Callable[..., Any], workdir: Path) -> None:
    fio = require_peer("fio")
    data = workdir / "data"
    data.write_bytes(os.urandom(1 << 20))
    for tool in ("fio", "iolab"):
        d = workdir / tool
        d.mkdir()
        (d / "job.fio").write_text(JOB.format(path=data))
        if tool == "fio":
            r = subprocess.run(
                [fio, "job.fio", "--output-format=json"], cwd=d, capture_output=True, text=True, timeout=120
            )
            assert r.returncode == 0, r.stderr
            ios = json.loads(r.stdout)["jobs"][0]["read"]["total_ios"]
        else:
            os.chdir(d)
            ran = cli("run", "job.fio", "--output-format=fio-json")
            assert ran.exit_code == 0, ran.output
            ios = json.loads(ran.stdout)["jobs"][0]["read"]["total_ios"]
        assert ios == 256
        names = sorted(p.name for p in d.glob("cmp_*.log"))
        assert names == ["cmp_clat.1.log", "cmp_lat.1.log", "cmp_slat.1.log"], (tool, names)
        for name in names:
            rows = _rows(d / name)
            assert len(rows) == ios, (tool, name)
            # time, value, direction 0, bs 4096, offset, priority as 0x%04x: idle or best effort 1
            assert all(len(r) == 6 and r[2] == "0" and r[3] == "4096" for r in rows), (tool, name)
            assert {r[5] for r in rows} == {"0x6000", "0x4001"}, (tool, name)
            assert sorted(int(r[4]) for r in rows) == list(range(0, 1 << 20, 4096)), (tool, name)


def test_per_job_logs_off_merges_workers_in_time_order_and_skips_the_ramp(
    cli: Callable[..., Any], workdir: Path
) -> None:
    r = cli(
        "run",
        "--name=m",
        "--ioengine=null",
        "--size=64m",
        "--rw=randread",
        "--numjobs=2",
        "--group_reporting",
        "--rate_iops=20000",
        "--ramp_time=200ms",
        "--time_based",
        "--runtime=300ms",
        "--write_iops_log=m",
        "--per_job_logs=0",
        "--output-format=fio-json",
    )
    assert r.exit_code == 0, r.output
    (entry,) = json.loads(r.stdout)["jobs"]
    assert not list(workdir.glob("m_iops.*.log"))
    rows = _rows(workdir / "m_iops.log")
    assert len(rows) == entry["read"]["total_ios"] > 0  # both workers, measured window only
    times = [int(row[0]) for row in rows]
    # ms from the measured start, so inside the measured window (its length
    # in ms: job_runtime, rounded), whatever the ramp took.
    assert times == sorted(times) and times[-1] <= entry["job_runtime"] + 1
