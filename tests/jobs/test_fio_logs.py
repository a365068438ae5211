"""fio's log files from ``iolab run`` (iolab.results.fio_logs).

Truths: the histogram log, decoded as fio's HOWTO describes it (``time,
direction, block size`` then one count per fio bucket), holds every I/O
(its counts sum to the run's I/O count per direction) and gives back the
lat percentiles iolab printed (within half a fio bucket, 1/128, plus HDR's
0.1 %); the iops log's windows add up to the run's I/O count (each line is
truncated to a whole number per second, as fio writes it); fio's own
``fio2gnuplot`` reads the bw and iops logs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest
from iolab.results.fio_plat import PLAT_NR, plat_percentile
from peers import require_peer

RUN = ["--name=a", "--ioengine=null", "--size=64m", "--bs=4k", "--rw=randrw", "--time_based", "--runtime=1200ms"]


def _run(cli: Callable[..., Any], *args: str) -> dict[str, Any]:
    r = cli("run", *RUN, *args, "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    return dict(json.loads(r.stdout))


def _rows(path: Path) -> list[list[int]]:
    return [[int(x) for x in line.split(", ")] for line in path.read_text().splitlines()]


def test_hist_log_decodes_back_into_the_printed_percentiles(cli: Callable[..., Any], workdir: Path) -> None:
    doc = _run(cli, "--write_hist_log=h", "--log_hist_msec=400")
    (entry,) = doc["jobs"]
    rows = _rows(workdir / "h_lat_hist.1.log")
    assert all(len(r) == 3 + PLAT_NR for r in rows)
    assert sorted({r[0] for r in rows}) == sorted({r[0] for r in rows if r[1] == 0})  # both directions each window
    for d, name in enumerate(("read", "write")):
        counts = [sum(col) for col in zip(*(r[3:] for r in rows if r[1] == d))]
        assert all(r[2] == 4096 for r in rows if r[1] == d)
        assert sum(counts) == entry[name]["total_ios"]
        for pct, printed_ns in entry[name]["lat_ns"]["percentile"].items():
            from_log = plat_percentile(counts, float(pct))
            assert abs(from_log - printed_ns) <= max(1, printed_ns / 64), (name, pct, from_log, printed_ns)


def test_bw_iops_and_lat_logs_in_fio_format(cli: Callable[..., Any], workdir: Path) -> None:
    doc = _run(cli, "--write_bw_log=x", "--write_iops_log=x", "--write_lat_log=x", "--log_avg_msec=200")
    (entry,) = doc["jobs"]
    bw, iops, lat = (_rows(workdir / f"x_{kind}.1.log") for kind in ("bw", "iops", "lat"))
    assert all(len(r) == 5 for r in bw + iops + lat)  # time, value, direction, block size, priority
    assert [r[0] for r in bw] == [r[0] for r in iops]
    times = sorted({r[0] for r in iops})
    assert times[0] == 200 and times[1] == 400  # windows of log_avg_msec
    for d, name in enumerate(("read", "write")):
        lines = [r for r in iops if r[2] == d]
        start = 0
        total = 0.0
        for r in lines:
            total += r[1] * (r[0] - start) / 1000
            start = r[0]
        # Each line is truncated to whole IOPS, and times to whole ms.
        assert abs(total - entry[name]["total_ios"]) <= len(lines) + entry[name]["iops"] * 0.001 * len(lines)
        means = [r[1] for r in lat if r[2] == d]
        # The job's min and max are exact, a log mean is over bucket middles (within 0.1 %).
        lo, hi = entry[name]["lat_ns"]["min"], entry[name]["lat_ns"]["max"]
        assert means and min(means) >= lo * 0.999 and max(means) <= hi * 1.001


def test_max_value_and_offset_columns(cli: Callable[..., Any], workdir: Path) -> None:
    doc = _run(cli, "--write_lat_log=m", "--log_avg_msec=300", "--log_max_value=both", "--log_offset=1")
    rows = _rows(workdir / "m_lat.1.log")
    assert all(len(r) == 7 and r[1] <= r[2] and r[4:] == [0, 0, 0] for r in rows)  # avg, max, dir, bs, offset, prio
    # The log's max comes from the interval histograms (buckets only): the
    # edge of the bucket holding the job's exact max, within 0.1 % above it.
    exact = max(doc["jobs"][0][d]["lat_ns"]["max"] for d in ("read", "write"))
    assert exact <= max(r[2] for r in rows) <= exact * 1.001 + 1


def test_per_job_logs_off_sums_the_workers(cli: Callable[..., Any], workdir: Path) -> None:
    doc = _run(cli, "--numjobs=2", "--group_reporting", "--write_iops_log=j", "--per_job_logs=0", "--log_avg_msec=400")
    assert not list(workdir.glob("j_iops.*.log"))
    rows = _rows(workdir / "j_iops.log")
    assert max(r[1] for r in rows) > 0 and doc["jobs"][0]["read"]["total_ios"] > 0


def test_fio2gnuplot_reads_iolab_bw_and_iops_logs(cli: Callable[..., Any], workdir: Path) -> None:
    tool = require_peer("fio2gnuplot")
    _run(cli, "--numjobs=2", "--write_bw_log=g", "--write_iops_log=g", "--log_avg_msec=300")
    for pattern in ("g_bw.*.log", "g_iops.*.log"):
        r = subprocess.run([tool, "-v", "-p", pattern], cwd=workdir, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "2 files Selected" in r.stdout and "Processing data file 2/2" in r.stdout, r.stdout
    globals_ = list(workdir.glob("*.global"))
    assert globals_ and all("values_count=" in p.read_text() for p in globals_)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--write_hist_log=x"], "needs log_hist_msec"),
        (["--write_bw_log=x", "--log_avg_msec=300", "--interval=1s"], "disagrees with the jobs' log"),
        (["--write_hist_log=x", "--log_hist_msec=500", "--interval=200ms"], "not a multiple"),
        (["--log_max_value=median"], "expected one of avg, max, both, 0, 1"),
    ],
)
def test_log_requests_iolab_cannot_honour_are_refused_before_the_run(
    cli: Callable[..., Any], workdir: Path, args: list[str], message: str
) -> None:
    r = cli("run", *RUN, *args)
    assert r.exit_code == 2 and message in r.stderr, r.output
    assert not list(workdir.iterdir())


def test_hist_coarseness_merges_adjacent_buckets(cli: Callable[..., Any], workdir: Path) -> None:
    doc = _run(cli, "--write_hist_log=c", "--log_hist_msec=600", "--log_hist_coarseness=2")
    rows = _rows(workdir / "c_lat_hist.1.log")
    assert all(len(r) == 3 + PLAT_NR // 4 for r in rows)
    for d, name in enumerate(("read", "write")):
        assert sum(sum(r[3:]) for r in rows if r[1] == d) == doc["jobs"][0][name]["total_ios"]
