"""Loading real results: a tiny sweep run by iolab.plans, a run with two
stonewall groups, the /proc/diskstats observer, and the loader's errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from iolab.analysis import DatasetError, analyze, load_dataset
from iolab.analysis.load import parse_number
from iolab.errors import ResultFormatError
from iolab.plans.sweep import SweepOptions, run_sweep
from iolab.results.catalog import save_run
from iolab.run.api import Job
from iolab.run.diskstats import DiskstatsObserver, delta, diskstats_observers, read_diskstats
from iolab.run.local import run_jobs
from iolab.run.progress import SilentProgress

PLAN = """
[plan]
name = "tiny"
repeats = 2
[base]
filename = "{target}"
size = "1m"
rw = "randread"
ioengine = "null"
time_based = true
runtime = "300ms"
[axes]
iodepth = [1, 4, 16]
"""


def test_sweep_to_analysis(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(target=tmp_path / "t.dat"))
    out = run_sweep(plan, tmp_path / "res", SweepOptions())
    ds = load_dataset(out.directory)
    assert (ds.source, ds.name, ds.axes) == ("iolab-sweep", "tiny", ["iodepth"])
    assert [p.values for p in ds.points] == [{"iodepth": 1.0}, {"iodepth": 4.0}, {"iodepth": 16.0}]
    assert [len(p.samples) for p in ds.points] == [2, 2, 2]
    assert ds.plan["repeats"] == 2 and ds.plan["warmup"] is False and ds.tool.startswith("iolab ")
    for p in ds.points:
        for s in p.samples:
            assert s.read.ios > 0 and s.write.ios == 0 and s.config.iodepth == p.values["iodepth"]
            assert s.read.bw_bytes_per_s == pytest.approx(s.read.iops * 4096, rel=1e-9)  # IOPS identity
            assert s.read.lat is not None and s.read.lat.hist is not None
    disk = json.loads((out.directory / "points" / "p001-r1" / "diskstats.json").read_text())
    assert "devices" in disk and disk["window_ns"] > 0
    an = analyze(ds)
    assert [(r.point, r.dir) for r in an.rows] == [(1, "read"), (2, "read"), (3, "read")]
    iops = an.rows[0].metrics["iops"]
    assert iops.n == 2 and iops.ci95_low is not None and iops.value == pytest.approx(iops.mean)
    assert an.rows[0].metrics["lat_p99_ns"].n == 2
    assert not [f for f in an.findings if f.kind == "bandwidth_identity"]
    assert an.bottleneck["verdict"] in ("client_cpu", "not_determined")
    assert [f for f in an.findings if f.kind == "trend" and f.axis == "iodepth"]
    json.dumps(an.to_json())


def test_run_with_two_groups_is_two_points(tmp_path: Path) -> None:
    common = {"filename": str(tmp_path / "g.dat"), "size": "1m", "rw": "randread", "ioengine": "null"}
    specs = [
        Job("a", **common, bs="4k", time_based=True, runtime="100ms"),
        Job("b", **common, bs="8k", time_based=True, runtime="100ms", stonewall=True),
    ]
    out = run_jobs(specs, progress=SilentProgress(), observers=diskstats_observers(specs))
    ds = load_dataset(save_run(tmp_path / "res", specs, out))
    assert ds.source == "iolab-run" and ds.axes == ["bs"]
    assert [p.params for p in ds.points] == [{"bs": "4k"}, {"bs": "8k"}]
    assert [p.values for p in ds.points] == [{"bs": 4096.0}, {"bs": 8192.0}]
    for p in ds.points:
        s = p.samples[0]
        assert s.device is None  # one diskstats window covers both groups
        assert s.read.bw_bytes_per_s == pytest.approx(s.read.iops * p.values["bs"], rel=1e-9)


def test_diskstats_deltas_from_two_snapshots(tmp_path: Path) -> None:
    stats = tmp_path / "diskstats"
    line = "259 1 nvme0n1p1 {r} 0 {rs} 0 {w} 0 {ws} 0 0 {ticks} 0 0 0 0 0"
    stats.write_text(line.format(r=100, rs=800, w=10, ws=80, ticks=1000) + "\n")
    clock = iter([0, 500_000_000])
    facts = {"device": "nvme0n1p1", "disk": "nvme0n1"}
    obs = DiskstatsObserver([tmp_path / "f"], stats, clock_ns=lambda: next(clock), find=lambda p: facts)
    obs.begin()
    stats.write_text(line.format(r=300, rs=1800, w=15, ws=96, ticks=1250) + "\n")
    got = obs.end()
    dev = got["devices"][0]
    assert (dev["reads_completed"], dev["read_bytes"], dev["writes_completed"], dev["write_bytes"]) == (
        200,
        1000 * 512,
        5,
        16 * 512,
    )
    assert dev["util_pct"] == pytest.approx(50.0)  # 250 ms busy of a 500 ms window
    assert dev["partition"] is True and "partition nvme0n1p1 of nvme0n1" in got["notes"][0]
    assert delta([0] * 14, [0] * 14, 0)["util_pct"] == 0.0
    assert "nvme0n1p1" in read_diskstats(stats)


def test_path_on_no_block_device_is_noted(tmp_path: Path) -> None:
    stats = tmp_path / "diskstats"
    stats.write_text("")
    obs = DiskstatsObserver([Path("/x")], stats, find=lambda p: {"device": None, "fstype": "tmpfs"})
    obs.begin()
    got = obs.end()
    assert got["devices"] == [] and "on no block device (tmpfs)" in got["notes"][0]


def test_a_folder_of_results_names_what_it_holds(tmp_path: Path) -> None:
    # `iolab sweep plan.toml --results before` writes before/<plan name>; `iolab compare before after`
    # said only "not an iolab run directory" (session 12, a fio user's first hour).
    sweep = tmp_path / "before" / "seed002-qd"
    sweep.mkdir(parents=True)
    (sweep / "sweep.json").write_text("{}")
    (tmp_path / "before" / "notes").mkdir()
    with pytest.raises(DatasetError) as e:
        load_dataset(tmp_path / "before")
    assert str(e.value).endswith(f"; it holds {sweep}: give one of them"), e.value
    with pytest.raises(DatasetError, match=r"nowhere: not an iolab run directory.* \(it does not exist\)$"):
        load_dataset(tmp_path / "nowhere")


def test_loader_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not an iolab run directory"):
        load_dataset(tmp_path)
    other = tmp_path / "x.json"
    other.write_text('{"schema": "something"}')
    with pytest.raises(DatasetError, match="without 'fio version'"):
        load_dataset(other)
    other.write_text("{")
    with pytest.raises(ResultFormatError, match=r"not valid JSON.*--output-format=json"):
        load_dataset(other)
    other.write_text('{"schema": "iolab.result/1"}')
    with pytest.raises(DatasetError, match=r"x.json: a iolab.result/1 document that cannot be read.*lacks 'tool'"):
        load_dataset(other)
    other.write_text('{"schema": "iolab.analysis/1"}')
    with pytest.raises(DatasetError, match="not results; report a results file"):
        load_dataset(other)


def test_a_damaged_iolab_file_is_named_as_one_not_as_fio_output(tmp_path: Path) -> None:
    # Issue 21 item 9: a truncated iolab results file was answered "run fio with --output-format=json".
    whole = (Path(__file__).parents[1] / "results" / "data" / "example_result.json").read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(whole[: len(whole) // 2])
    with pytest.raises(DatasetError) as e:
        load_dataset(cut)
    msg = str(e.value)
    assert msg.startswith(f"{cut}: an iolab.result/1 file cut short") and "fio" not in msg, msg
    assert "restore it, or rerun iolab run --output-format json --output FILE" in msg
    edited = tmp_path / "edited.json"
    edited.write_text(whole.replace('"tool_version"', "tool_version", 1))
    with pytest.raises(
        DatasetError, match=r"edited.json: an iolab.result/1 file that is not valid JSON \(.* at line 3\)"
    ):
        load_dataset(edited)
    # A JSON document from elsewhere that does not parse is still answered as possible fio output.
    other = tmp_path / "fio-cut.json"
    other.write_text('{"fio version": "fio-3.33", "jobs": [')
    with pytest.raises(ResultFormatError, match="--output-format=json"):
        load_dataset(other)


def test_numbers_of_axis_values() -> None:
    assert parse_number("4k") == 4096.0 and parse_number("1m") == 2.0**20 and parse_number(32) == 32.0
    assert parse_number("randread") is None and parse_number(True) is None


def test_fio_json_is_dispatched_to_the_fio_importer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import iolab.analysis.fio_import as fio_import

    seen: list[Path] = []
    monkeypatch.setattr(fio_import, "load_fio_json", lambda p: seen.append(p) or "dataset")
    out = tmp_path / "fio.json"
    out.write_text('{"fio version": "fio-3.33", "jobs": []}')
    assert load_dataset(out) == "dataset" and seen == [out]


def test_cli_run_with_results_keeps_diskstats_and_loads(tmp_path: Path, cli: Any) -> None:
    target = tmp_path / "c.dat"
    ran = cli(
        "run", "--name=c", f"--filename={target}", "--size=1m", "--ioengine=null", "--rw=randread",
        "--time_based", "--runtime=100ms", "--results", str(tmp_path / "res"),
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    (run_dir,) = [d for d in (tmp_path / "res").iterdir() if d.is_dir()]
    disk = json.loads((run_dir / "diskstats.json").read_text())
    assert disk["window_ns"] > 0 and isinstance(disk["devices"], list)
    ds = load_dataset(run_dir)
    assert len(ds.points) == 1 and ds.axes == [] and ds.points[0].samples[0].read.ios > 0
    if disk["devices"]:
        assert ds.points[0].samples[0].device is not None


def test_scaling_governors_read_from_sysfs(tmp_path: Path) -> None:
    from iolab.run.hostfacts import scaling_governors

    assert scaling_governors(tmp_path) is None  # no cpufreq: unknown, not guessed
    for cpu, gov in (("cpu0", "performance"), ("cpu1", "powersave"), ("cpu2", "performance")):
        d = tmp_path / cpu / "cpufreq"
        d.mkdir(parents=True)
        (d / "scaling_governor").write_text(gov + "\n")
    assert scaling_governors(tmp_path) == ["performance", "powersave"]
