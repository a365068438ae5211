"""fio's per-I/O logs (``log_avg_msec=0``) and per-priority latency from
``iolab run``.

Truths: a per-I/O log has one line per I/O (its lines per direction are the
run's ``total_ios``), its values agree with the run's histograms (mean and
max within HDR's 0.1 %), its offsets lie inside the file and are multiples
of the block size; with cmdprio_percentage the priority column and fio
json's ``prios`` count the I/Os of each priority, and the counts add up to
the run's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

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
    assert not list(Path("/tmp").glob("iolab-iolog-*/0.0.iolog"))  # records removed


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
