"""fio's own JSON → Dataset (iolab.analysis.fio_import), checked against
what fio printed.

The files under data/fio/ are real fio 3.33 outputs made on this project's
machine from the job files next to them (their headers give the commands);
``test_fresh_fio_run`` makes a new one on the spot. The truth everywhere is
fio's own figures in the same file: counts, bytes, IOPS and bandwidth sum
exactly; percentiles from our histogram of the json+ bins equal fio's
printed percentiles to fio's bin precision (see :func:`assert_fio_bin`).
"""

from __future__ import annotations

import json
import subprocess
from bisect import bisect_left
from pathlib import Path
from typing import Any

import pytest
from iolab import _native
from iolab.analysis.fio_import import fio_size, fio_time_ns, load_fio_json
from iolab.analysis.model import Dataset
from iolab.errors import ResultFormatError

from tests.peers import require_peer

DATA = Path(__file__).parent / "data" / "fio"
Json = dict[str, Any]


def fio_doc(name: str) -> Json:
    return json.loads((DATA / name).read_text())


def bin_values(lat: Json) -> list[int]:
    return sorted(int(v) for v in lat["bins"])


def assert_fio_bin(ours: int, fio_value: int, bins: list[int]) -> None:
    """Our percentile agrees with fio's to fio's bin precision.

    fio's histogram is log-linear (64 bins per power of two, ~1.6 % wide)
    and what it prints for a percentile is the value of the bin where the
    cumulative count reaches p·N/100. hist_from_counts records each bin
    value in an HdrHistogram of 3 significant digits, which reports the
    highest value of its bucket: at most 0.1 % (+1 ns of rounding) above
    the bin value. fio's rank rule (a float compare of the cumulative
    count) and HdrHistogram's (an integer rank) may land on neighbouring
    bins when p·N/100 falls exactly on a bin's edge, so the neighbouring
    bins are accepted too — never anything further away.
    """
    assert fio_value in bins, f"fio's percentile {fio_value} is not one of its bins"
    i = bisect_left(bins, fio_value)
    near = bins[max(0, i - 1) : i + 2]
    assert any(abs(ours - b) <= 0.001 * b + 1 for b in near), f"ours {ours} ns vs fio {fio_value} ns (bins {near})"


def fio_rank_percentile(bins: dict[int, int], p: float) -> int:
    """fio's rule (stat.c calc_clat_percentiles): the first bin whose
    cumulative count reaches p/100 x N."""
    total = sum(bins.values())
    cum = 0
    for v in sorted(bins):
        cum += bins[v]
        if cum >= p / 100 * total:
            return v
    raise AssertionError("empty bins")


# -- json+ -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["groups_plus.json", "gr_plus.json"])
def test_bins_histogram_percentiles_equal_fio_printed(name: str) -> None:
    checked = 0
    for job in fio_doc(name)["jobs"]:
        for d in ("read", "write"):
            for kind in ("slat_ns", "clat_ns", "lat_ns"):
                lat = job[d][kind]
                if lat["N"] == 0 or "bins" not in lat:
                    continue
                assert sum(lat["bins"].values()) == lat["N"]
                hist = _native.hist_from_counts([(int(v), n) for v, n in lat["bins"].items()])
                fio_pcts = {float(p): v for p, v in lat["percentile"].items()}
                ours = _native.hist_stats(hist, list(fio_pcts))["percentiles"]
                for p, v in fio_pcts.items():
                    assert_fio_bin(ours[p], v, bin_values(lat))
                    checked += 1
    assert checked >= 100  # every kind fio binned, both directions, every percentile


def test_group_reporting_json_plus_keeps_fio_percentiles_and_histograms() -> None:
    doc = fio_doc("gr_plus.json")
    ds = load_fio_json(DATA / "gr_plus.json")
    assert ds.source == "fio-json" and ds.tool == "fio-3.33"
    assert ds.axes == ["iodepth"]
    assert [p.values for p in ds.points] == [{"iodepth": 1.0}, {"iodepth": 8.0}]
    for point, job in zip(ds.points, doc["jobs"]):
        s = point.samples[0]
        assert s.config.numjobs == 2 and str(s.config.iodepth) == job["job options"]["iodepth"]
        assert s.config.rw == "randrw" and s.config.rwmixread_pct == 50.0 and s.config.ioengine == "io_uring"
        for d in ("read", "write"):
            for kind in ("slat", "clat", "lat"):
                ours = getattr(s.dir(d), kind)
                theirs = job[d][f"{kind}_ns"]
                assert ours.percentiles == {float(p): v for p, v in theirs["percentile"].items()}
                assert ours.hist is not None and _native.hist_stats(ours.hist, [])["count"] == theirs["N"]
                assert (ours.min_ns, ours.max_ns, ours.mean_ns) == (theirs["min"], theirs["max"], theirs["mean"])


def test_numjobs_clones_merge_their_bins_exactly() -> None:
    doc = fio_doc("groups_plus.json")
    ds = load_fio_json(DATA / "groups_plus.json")
    for point in ds.points:
        gid = point.index - 1  # points count from 1, fio's groupid from 0
        entries = [j for j in doc["jobs"] if j["groupid"] == gid]
        clat = point.samples[0].read.clat
        assert clat is not None and clat.hist is not None
        union: dict[int, int] = {}
        for e in entries:
            for v, n in e["read"]["clat_ns"]["bins"].items():
                union[int(v)] = union.get(int(v), 0) + n
        assert clat.count == sum(union.values()) == sum(e["read"]["total_ios"] for e in entries)
        assert set(clat.percentiles) == {float(p) for p in entries[0]["read"]["clat_ns"]["percentile"]}
        # The merged percentiles equal fio's rule applied to the union of the clones' bins.
        for p, ours in clat.percentiles.items():
            assert_fio_bin(ours, fio_rank_percentile(union, p), sorted(union))
        n = [e["read"]["clat_ns"]["N"] for e in entries]
        means = [e["read"]["clat_ns"]["mean"] for e in entries]
        assert clat.mean_ns == pytest.approx(sum(a * b for a, b in zip(n, means)) / sum(n), rel=1e-12)
        assert clat.min_ns == min(e["read"]["clat_ns"]["min"] for e in entries)
        assert clat.max_ns == max(e["read"]["clat_ns"]["max"] for e in entries)
        # The pooled stdev agrees with the stdev of the bins (bins are ~1.6 % wide).
        assert clat.stdev_ns == pytest.approx(_native.hist_stats(clat.hist, [])["stdev_ns"], rel=0.05)


# -- plain json ----------------------------------------------------------------


def test_counts_bytes_rates_cpu_equal_fio_sums() -> None:
    doc = fio_doc("groups.json")
    ds = load_fio_json(DATA / "groups.json")
    assert len(ds.points) == 3
    assert [p.index for p in ds.points] == [1, 2, 3]  # from 1, as an iolab run's or plan's points
    for point in ds.points:
        entries = [j for j in doc["jobs"] if j["groupid"] == point.index - 1]
        s = point.samples[0]
        for d in ("read", "write"):
            r = s.dir(d)
            assert r.ios == sum(e[d]["total_ios"] for e in entries)
            assert r.bytes == sum(e[d]["io_bytes"] for e in entries)
            runtime_ms = max([e[d]["runtime"] for e in entries if e[d]["total_ios"]], default=0)
            assert r.runtime_ns == max(e[d]["runtime"] for e in entries) * 1_000_000
            # The core's definition: I/Os and bytes over the group's longest runtime.
            assert r.iops == pytest.approx(r.ios / runtime_ms * 1e3 if runtime_ms else 0.0, rel=1e-12)
            assert r.bw_bytes_per_s == pytest.approx(r.bytes / runtime_ms * 1e3 if runtime_ms else 0.0, rel=1e-12)
        rt = [e["job_runtime"] for e in entries]
        usr = sum(e["usr_cpu"] * w for e, w in zip(entries, rt)) / sum(rt)
        assert s.cpu.usr_cpu_pct == pytest.approx(usr)
    # Known by construction (groups.fio: io_size=1M per job, numjobs=2).
    assert ds.points[0].samples[0].read.bytes == 2 * 1024 * 1024
    assert ds.points[1].samples[0].read.ios == 2 * 16


def test_group_rates_are_ios_over_the_longest_runtime_when_jobs_ran_for_different_times(tmp_path: Path) -> None:
    # Issue 22 (a second definition): the import summed fio's per-job rates while the core (summary/group.rs
    # group_dir, and fio's own "Run status group" line) divides the group's I/Os by its longest runtime.
    # Two jobs of one group, 32 I/Os each, one in 100 ms and one in 50 ms: the sum said 320 + 640 = 960 IOPS;
    # the group did 64 I/Os in 100 ms, 640 IOPS.
    doc = fio_doc("groups.json")
    entries = [j for j in doc["jobs"] if j["groupid"] == 1]
    assert len(entries) == 2
    for e, runtime_ms in zip(entries, (100, 50)):
        r = e["read"]
        r.update(total_ios=32, io_bytes=32 * 65536, runtime=runtime_ms)
        r.update(iops=32 / runtime_ms * 1e3, bw_bytes=32 * 65536 / runtime_ms * 1e3)
    src = tmp_path / "uneven.json"
    src.write_text(json.dumps(doc))
    read = load_fio_json(src).points[1].samples[0].read
    assert sum(e["read"]["iops"] for e in entries) == pytest.approx(960.0)  # the old answer
    assert read.iops == pytest.approx(640.0) and read.bw_bytes_per_s == pytest.approx(64 * 65536 / 0.1)
    assert read.runtime_ns == 100_000_000


def test_plain_json_drops_percentiles_of_several_jobs_and_says_why() -> None:
    doc = fio_doc("groups.json")
    ds = load_fio_json(DATA / "groups.json")
    merged, single = ds.points[0].samples[0], ds.points[2].samples[0]
    assert merged.read.clat is not None and merged.read.clat.percentiles == {} and merged.read.clat.hist is None
    assert any("percentiles left out" in n and "json+" in n for n in merged.notes)
    mix = next(j for j in doc["jobs"] if j["jobname"] == "mix")
    assert single.read.clat is not None and single.read.clat.hist is None
    assert single.read.clat.percentiles == {float(p): v for p, v in mix["read"]["clat_ns"]["percentile"].items()}
    assert not any("percentiles left out" in n for n in single.notes)
    # psync has no submission latency: fio's N is 0 → no slat figures at all.
    assert single.read.slat is None


def test_axes_are_options_that_differ_with_fio_defaults_and_sizes() -> None:
    ds = load_fio_json(DATA / "groups.json")
    assert ds.axes == ["rw", "bs", "numjobs", "rwmixread"]
    assert [p.params["bs"] for p in ds.points] == ["4k", "64k", "4k"]
    assert [p.values["bs"] for p in ds.points] == [4096.0, 65536.0, 4096.0]
    # "mix" sets no numjobs: fio's default 1 fills the axis.
    assert [p.values["numjobs"] for p in ds.points] == [2.0, 2.0, 1.0]
    assert "rw" not in ds.points[0].values  # not numeric
    cfg = ds.points[2].samples[0].config
    assert (cfg.rw, cfg.rwmixread_pct, cfg.iodepth, cfg.numjobs, cfg.direct) == ("randrw", 70.0, 1, 1, False)
    assert (cfg.ioengine, cfg.bs_read_bytes, cfg.size_bytes, cfg.rate_iops) == ("psync", 4096, 1 << 20, None)
    assert ds.points[0].samples[0].config.numjobs == 2 and ds.points[0].samples[0].config.rwmixread_pct is None


def test_single_group_has_no_axes_and_device_figures() -> None:
    doc = fio_doc("single.json")
    ds = load_fio_json(DATA / "single.json")
    assert ds.axes == [] and len(ds.points) == 1 and ds.points[0].params == {}
    s = ds.points[0].samples[0]
    assert s.config.iodepth == 4 and s.config.outstanding == 4
    disk = doc["disk_util"][0]
    assert s.device is not None and s.device.device == disk["name"] and s.device.util_pct == disk["util"]
    assert (s.device.reads_completed, s.device.read_ticks_ms) == (disk["read_ios"], disk["read_ticks"])
    assert s.device.bytes_known is False  # fio's disk_util counts I/Os, not bytes


def test_several_groups_get_no_device_figures() -> None:
    ds = load_fio_json(DATA / "groups.json")
    for p in ds.points:
        assert p.samples[0].device is None
        assert any("disk_util covers its whole run" in n for n in p.samples[0].notes)


@pytest.mark.parametrize(
    ("text", "kb_base", "expected"),
    [("4k", 1024, 4096), ("4K", 1024, 4096), ("4kb", 1024, 4096), ("4KiB", 1024, 4000), ("1m", 1024, 1 << 20)],
)
def test_fio_size_follows_kb_base(text: str, kb_base: int, expected: int) -> None:
    assert fio_size(text, kb_base) == expected


def test_fio_size_and_time_edge_cases() -> None:
    assert fio_size("4KiB", 1000) == 4096 and fio_size("4k", 1000) == 4000
    assert fio_size("512") == 512 and fio_size("50%") is None and fio_size("4k-16k") is None
    assert (
        fio_time_ns("10") == 10_000_000_000
        and fio_time_ns("2m") == 120_000_000_000
        and fio_time_ns("250ms") == 250_000_000
        and fio_time_ns("x") is None
    )


# -- bad input ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["single_normal.txt", "single_terse.txt"])
def test_fio_text_output_names_the_fix(name: str) -> None:
    with pytest.raises(ResultFormatError, match=r"fio's text .* --output-format=json or json\+"):
        load_fio_json(DATA / name)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("hello", "not JSON"),
        ('{"fio version": "fio-3.33", "jobs": [', "not valid JSON"),
        ('{"jobs": []}', "not fio output"),
        ("[1, 2]", "not fio output"),
        ('{"fio version": "fio-3.33", "jobs": []}', "no jobs"),
        ('{"fio version": "fio-3.33", "jobs": [{"jobname": "x"}]}', "lacks groupid, read, write"),
    ],
)
def test_bad_input_is_a_result_format_error(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "out.json"
    f.write_text(content)
    with pytest.raises(ResultFormatError, match=message):
        load_fio_json(f)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_fio_json(tmp_path / "nope.json")


def test_notes_printed_before_the_json_are_skipped(tmp_path: Path) -> None:
    f = tmp_path / "out.json"
    f.write_text(
        "note: both iodepth >= 1 and synchronous I/O engine are selected\n" + (DATA / "single.json").read_text()
    )
    assert load_fio_json(f).points[0].samples[0].read.ios == fio_doc("single.json")["jobs"][0]["read"]["total_ios"]


# -- fio on the spot -----------------------------------------------------------


def run_fio(tmp_path: Path, fmt: str, *args: str) -> Path:
    fio = require_peer("fio")
    out = tmp_path / f"out-{fmt}.json"
    common = [f"--filename={tmp_path / 'data'}", "--size=512k", "--io_size=512k", "--ioengine=psync"]
    cmd = [fio, f"--output-format={fmt}", f"--output={out}", *common, *args]
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    return out


def test_fresh_fio_run(tmp_path: Path) -> None:
    jobs = ["--name=a", "--rw=randread", "--bs=4k", "--numjobs=2", "--name=b", "--stonewall", "--rw=write", "--bs=16k"]
    out = run_fio(tmp_path, "json+", *jobs)
    doc = json.loads(out.read_text())
    ds = load_fio_json(out)
    assert ds.tool == doc["fio version"] and ds.axes == ["rw", "bs", "numjobs"]
    a, b = (p.samples[0] for p in ds.points)
    assert a.read.ios == 2 * 128 and a.read.bytes == 2 * 512 * 1024 and a.write.ios == 0
    assert b.write.ios == 32 and b.write.bytes == 512 * 1024 and b.config.bs_write_bytes == 16384
    for entry in doc["jobs"][:2]:  # each clone's own bins give its own printed percentiles
        lat = entry["read"]["clat_ns"]
        hist = _native.hist_from_counts([(int(v), n) for v, n in lat["bins"].items()])
        ours = _native.hist_stats(hist, [float(p) for p in lat["percentile"]])["percentiles"]
        for p, v in lat["percentile"].items():
            assert_fio_bin(ours[float(p)], v, bin_values(lat))
    bw = b.write
    assert bw.clat is not None and bw.clat.percentiles == {
        float(p): v for p, v in doc["jobs"][2]["write"]["clat_ns"]["percentile"].items()
    }


def test_fresh_fio_json_with_group_reporting(tmp_path: Path) -> None:
    out = run_fio(tmp_path, "json", "--name=g", "--rw=randrw", "--bs=4k", "--numjobs=3", "--group_reporting")
    doc = json.loads(out.read_text())
    ds: Dataset = load_fio_json(out)
    s = ds.points[0].samples[0]
    assert len(doc["jobs"]) == 1 and s.config.numjobs == 3 and ds.axes == []
    assert s.read.ios + s.write.ios == 3 * 128
    assert s.read.clat is not None and s.read.clat.percentiles == {
        float(p): v for p, v in doc["jobs"][0]["read"]["clat_ns"]["percentile"].items()
    }


def test_options_block_size_ranges_rates_and_kb_base(tmp_path: Path) -> None:
    doc = fio_doc("single.json")
    opts = doc["jobs"][0]["job options"]
    opts.update({"bssplit": "4k/10:64k/90,8k", "rate_iops": "500,0", "kb_base": "1000", "ramp_time": "2"})
    opts["rw"] = "randrw"
    f = tmp_path / "edited.json"
    f.write_text(json.dumps(doc))
    cfg = load_fio_json(f).points[0].samples[0].config
    assert (cfg.bs_fixed, cfg.bs_read_bytes, cfg.bs_write_bytes) == (False, 64000, 8000)
    # rate_iops=500,0: writes are uncapped, so the job as a whole is not capped.
    assert cfg.rate_iops is None and cfg.ramp_time_ns == 2_000_000_000
    opts["rate_iops"] = "500"
    f.write_text(json.dumps(doc))
    cfg = load_fio_json(f).points[0].samples[0].config
    assert cfg.rate_iops == 1000.0 and cfg.rate_limited  # 500 per direction, both issued, one thread
    assert load_fio_json(f).plan == {"repeats": 1, "warmup": True}


def test_a_job_s_trims_are_kept_beside_its_reads(tmp_path: Path) -> None:
    doc = fio_doc("single.json")
    doc["jobs"][0]["trim"] |= {"total_ios": 5, "io_bytes": 5 * 4096, "runtime": 10}
    f = tmp_path / "trim.json"
    f.write_text(json.dumps(doc))
    (s,) = load_fio_json(f).points[0].samples
    assert (s.dir("trim").ios, s.dir("trim").bytes, s.dir("trim").iops) == (5, 5 * 4096, 500.0)
    assert s.read.ios > 0


@pytest.mark.parametrize("name", ["groups.json", "groups_plus.json", "gr_plus.json", "single.json"])
def test_analyze_runs_on_fio_datasets(name: str) -> None:
    from iolab.analysis.analyze import analyze  # another engineer's module: imported here, where it is used

    result = analyze(load_fio_json(DATA / name))
    doc = result.to_json()
    json.dumps(doc)  # the iolab.analysis/1 document is plain JSON
    assert doc["source"]["tool"] == "fio-3.33"
    rows = {(r["point"], r["dir"]): r["metrics"] for r in doc["rows"]}
    ds = result.dataset
    for p in ds.points:
        s = p.samples[0]
        for d in ("read", "write"):
            if s.dir(d).ios:
                assert rows[(p.index, d)]["iops"]["value"] == pytest.approx(s.dir(d).iops)


@pytest.mark.parametrize(
    ("written", "direct", "time_based"),
    [
        ({"direct": "1", "time_based": "0"}, True, False),
        ({"direct": "true", "time_based": "1"}, True, True),
        ({"direct": "0", "buffered": "0"}, True, False),
        ({"direct": "false", "time_based": "false"}, False, False),
    ],
)
def test_boolean_options_read_by_the_cores_grammar(
    tmp_path: Path, written: dict[str, str], direct: bool, time_based: bool
) -> None:
    # time_based=0 is off (it was read as on because the key was there); direct=true is on.
    doc = fio_doc("single.json")
    doc["jobs"][0]["job options"].update(written)
    f = tmp_path / "edited.json"
    f.write_text(json.dumps(doc))
    cfg = load_fio_json(f).points[0].samples[0].config
    assert (cfg.direct, cfg.time_based) == (direct, time_based)
    doc["jobs"][0]["job options"]["direct"] = "yes"
    f.write_text(json.dumps(doc))
    with pytest.raises(ResultFormatError, match="direct=yes: 'yes': expected 0 or 1"):
        load_fio_json(f)


def test_a_trim_job_s_trims_reach_the_sample(tmp_path: Path) -> None:
    """fio's trim object and iolab's results document both give the sample
    its trims (fio's third direction)."""
    import sys

    from iolab.analysis.load import load_dataset

    args = ["--name=t", "--ioengine=null", "--size=1m", "--rw=randtrim", "--bs=4k"]
    fio = subprocess.run(
        [require_peer("fio"), *args, "--output-format=json"], capture_output=True, text=True, check=True
    )
    (tmp_path / "fio.json").write_text(fio.stdout)
    iolab = [sys.executable, "-m", "iolab.cli.main", "run", *args, "--output-format=json"]
    (tmp_path / "iolab.json").write_text(subprocess.run(iolab, capture_output=True, text=True, check=True).stdout)
    for name in ("fio.json", "iolab.json"):
        (s,) = load_dataset(tmp_path / name).points[0].samples
        assert (s.dir("trim").ios, s.dir("trim").bytes) == (256, 1 << 20), name
        assert s.dir("trim").iops > 0 and s.read.ios == s.write.ios == 0, name
