"""fio-compatible JSON (iolab.results.to_fio_json) against real fio output.

The key sets are compared with fio run here and now (skipped without fio,
a failure under CI=true): ours must equal fio's, less the documented
``FIO_OMITTED_KEYS``, plus the one ``"iolab"`` extras key.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from iolab.results import FIO_OMITTED_KEYS, to_fio_json
from peers import require_peer

Json = dict[str, Any]
OMIT_JOB = {k.split(".", 1)[1] for k in FIO_OMITTED_KEYS if k.startswith("job.")}
OMIT_DIR = {k.split(".", 1)[1] for k in FIO_OMITTED_KEYS if k.startswith("dir.")}


def _fio(tmp: Path, *args: str) -> Json:
    fio = require_peer("fio")
    out = subprocess.run([fio, "--output-format=json", *args], cwd=tmp, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


@pytest.fixture(scope="module")
def fio_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Json]:
    tmp = tmp_path_factory.mktemp("fio")
    base = ["--name=a", "--ioengine=null", "--size=8m", "--rw=randrw", "--bs=4k", "--iodepth=8"]
    pct = ["--slat_percentiles=1", "--lat_percentiles=1"]
    return {
        "per_worker": _fio(tmp, *base, *pct, "--numjobs=2"),
        "grouped": _fio(tmp, *base, *pct, "--numjobs=2", "--group_reporting"),
        "fsync": _fio(
            tmp,
            "--name=f",
            "--ioengine=psync",
            "--filename=f.dat",
            "--size=1m",
            "--rw=write",
            "--bs=4k",
            "--fsync=4",
        ),
    }


@pytest.fixture
def ours(doc: Json) -> Json:
    return to_fio_json(doc["result"], doc["summary"])


def test_entries_per_worker_or_per_job_like_fio(ours: Json, fio_runs: dict[str, Json]) -> None:
    assert len(fio_runs["per_worker"]["jobs"]) == 2 and len(fio_runs["grouped"]["jobs"]) == 1
    # The example: "randrw" (2 workers, no group_reporting), "rated-write" (2, grouped).
    assert [(j["jobname"], j["iolab"]["worker"]) for j in ours["jobs"]] == [
        ("randrw", 0),
        ("randrw", 1),
        ("rated-write", None),
    ]


def test_key_sets_match_fio(ours: Json, fio_runs: dict[str, Json]) -> None:
    fio = fio_runs["per_worker"]
    assert set(ours) - {"iolab version", "disk_util"} == set(fio) - {"global options", "disk_util"}
    assert "disk_util" in fio_runs["fsync"]
    fj, oj = fio["jobs"][0], ours["jobs"][0]
    assert set(oj) == (set(fj) - OMIT_JOB) | {"iolab"}
    assert [k for k in oj if k in fj] == [k for k in fj if k in oj], "same order as fio"
    for d in ("read", "write", "trim"):
        assert set(oj[d]) == set(fj[d]) - OMIT_DIR, d
        for lat in ("slat_ns", "clat_ns", "lat_ns"):
            fio_keys = set(fj[d][lat]) if fj[d][lat]["N"] else {"min", "max", "mean", "stddev", "N"}
            if d != "trim":
                fio_keys |= {"percentile"}
            assert set(oj[d][lat]) == fio_keys, (d, lat)
    for key in ("latency_ns", "latency_us", "latency_ms"):
        assert list(oj[key]) == list(fj[key]), key
    assert set(oj["sync"]) == set(fj["sync"])
    synced = ours["jobs"][2]["sync"]
    assert set(synced["lat_ns"]) == set(fio_runs["fsync"]["jobs"][0]["sync"]["lat_ns"])


def test_percentile_keys_are_formatted_like_fio(ours: Json, fio_runs: dict[str, Json]) -> None:
    keys = list(ours["jobs"][0]["read"]["clat_ns"]["percentile"])
    assert keys == ["1.000000", "50.000000", "90.000000", "99.000000", "99.900000", "99.990000"]
    fio_keys = set(fio_runs["per_worker"]["jobs"][0]["read"]["clat_ns"]["percentile"])
    assert set(keys) <= fio_keys
    assert all(re.fullmatch(r"\d+\.\d{6}", k) for k in keys)


def test_values_come_from_the_summary(ours: Json, doc: Json) -> None:
    job = doc["summary"]["jobs"][0]
    w = job["workers"][1]["stats"]
    e = ours["jobs"][1]
    r = e["read"]
    assert r["io_bytes"] == w["read"]["bytes"] and r["total_ios"] == w["read"]["ios"]
    assert r["runtime"] == 3000 and e["job_runtime"] == 3000
    # bw is KiB/s: io_kbytes over the runtime in seconds.
    assert r["bw"] == pytest.approx(r["io_kbytes"] / (r["runtime"] / 1000), rel=1e-3)
    assert r["bw_bytes"] == pytest.approx(r["io_bytes"] / 3.0, abs=1)
    assert r["iops"] == pytest.approx(r["total_ios"] / 3.0)
    assert r["clat_ns"]["percentile"]["99.000000"] == w["read"]["clat"]["percentiles"][3]["value_ns"]
    assert r["lat_ns"]["N"] == w["read"]["lat"]["count"]
    assert r["bw_samples"] == r["iops_samples"] == 3
    assert r["bw_mean"] == pytest.approx(w["read"]["intervals"]["bw_mean_bytes_per_s"] / 1024)
    assert r["bw_min"] <= r["bw_mean"] <= r["bw_max"]
    assert (e["usr_cpu"], e["ctx"]) == (w["usr_cpu_pct"], w["ctx_switches"])
    assert e["trim"]["total_ios"] == 0 and e["trim"]["iops"] == 0.0
    assert e["latency_depth"] == 8


def test_bw_agg_is_share_of_group_bandwidth(ours: Json) -> None:
    a, b, grouped = ours["jobs"]
    assert a["read"]["bw_agg"] + b["read"]["bw_agg"] == pytest.approx(100.0, rel=1e-9)
    assert grouped["write"]["bw_agg"] == pytest.approx(100.0)


def test_latency_distribution_percentages(ours: Json, doc: Json) -> None:
    e = ours["jobs"][0]
    shares = [*e["latency_ns"].values(), *e["latency_us"].values(), *e["latency_ms"].values()]
    assert sum(shares) == pytest.approx(100.0)
    counts = {b["below_ns"]: b["count"] for b in doc["summary"]["jobs"][0]["workers"][0]["stats"]["clat_dist"]}
    total = sum(counts.values())
    assert e["latency_us"]["100"] == pytest.approx(counts[100_000] / total * 100)
    assert e["latency_ms"]["2"] == pytest.approx(counts[2_000_000] / total * 100)


def test_tiny_nonzero_share_shows_as_fios_minimum(doc: Json) -> None:
    stats = doc["summary"]["jobs"][0]["workers"][0]["stats"]
    stats["clat_dist"][14]["count"] += 100_000
    stats["clat_dist"][-1]["count"] = 1  # one sample ≥ 2 s among > 100 000: 0.001 %
    e = to_fio_json(doc["result"], doc["summary"])["jobs"][0]
    assert e["latency_ms"][">=2000"] == 0.01


def test_rate_limited_extras_and_top_level(ours: Json, doc: Json) -> None:
    rated = ours["jobs"][2]["iolab"]
    assert set(rated["lat_intended_ns"]) == {"write"}
    assert rated["lat_intended_ns"]["write"]["N"] == ours["jobs"][2]["write"]["total_ios"]
    assert "intended" in rated["latency_definitions"]["lat_intended"]
    assert "lat_intended_ns" not in ours["jobs"][0]["iolab"]
    version = doc["result"]["tool_version"]
    assert ours["fio version"] == f"iolab-{version}" and ours["iolab version"] == version
    assert ours["timestamp"] == 1_700_000_000 and ours["timestamp_ms"] == 1_700_000_000_000
    assert ours["jobs"][0]["job options"] == {
        "rw": "randrw",
        "rwmixread": "70",
        "bs": "4k",
        "size": "64m",
        "iodepth": "8",
        "numjobs": "2",
        "time_based": "",
        "runtime": "2",
        "direct": "1",
        "ioengine": "null",
        "randseed": "1",
        "percentile_list": "1:50:90:99:99.9:99.99",
    }
    assert ours["disk_util"] == []


def test_json_plus_bins_use_fios_own_bucket_values(tmp_path: Path, doc: Json) -> None:
    """fio's json+ (run here) keys its bins by bucket midpoints: every key
    it wrote is a value of iolab's bucket scheme, and maps back to itself;
    iolab's json+ of the example result keys its bins the same way."""
    from iolab.results.fio_plat import PLAT_NR, plat_index, plat_value

    fio = require_peer("fio")
    args = ["--name=p", "--ioengine=null", "--size=64m", "--rw=randread", "--bs=4k", "--output-format=json+"]
    out = subprocess.run([fio, *args], cwd=tmp_path, capture_output=True, text=True, check=True)
    fio_keys = {int(k) for k in json.loads(out.stdout)["jobs"][0]["read"]["clat_ns"]["bins"]}
    values = {plat_value(i) for i in range(PLAT_NR)}
    assert fio_keys and fio_keys <= values
    assert all(plat_value(plat_index(v)) == v for v in fio_keys)
    plus = to_fio_json(doc["result"], doc["summary"], plus=True)
    for entry in plus["jobs"]:
        for d in ("read", "write"):
            bins = entry[d]["clat_ns"].get("bins", {})
            assert {int(k) for k in bins} <= values
            assert sum(bins.values()) == entry[d]["clat_ns"]["N"]


def test_plat_buckets_contain_their_values() -> None:
    """Every value lands in a bucket whose midpoint is within 1/128 of it
    (fio's stated error bound), and buckets are ordered."""
    from iolab.results.fio_plat import plat_index, plat_value

    for v in [*range(0, 5000), *(int(1.0137**k) for k in range(600, 1500))]:
        i = plat_index(v)
        assert abs(plat_value(i) - v) <= max(1.0, v / 128), v
        assert plat_index(v + 1) >= i


def test_a_trim_job_s_trim_object_is_laid_out_as_fios(tmp_path: Path) -> None:
    """A null randtrim: fio's and iolab's trim objects (json+) have the same
    keys, latencies with percentiles and bins, and the same counts."""
    import sys

    args = ["--name=t", "--ioengine=null", "--size=4m", "--rw=randtrim", "--bs=4k", "--output-format=json+"]
    # iolab writes every latency's percentiles; fio when asked (as fio_runs does).
    fio = _fio(tmp_path, *args, "--lat_percentiles=1")["jobs"][0]
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", *args[:-1], "--output-format=json+"]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, check=True)
    mine = json.loads(out.stdout)["jobs"][0]
    assert set(mine["trim"]) == set(fio["trim"]) - OMIT_DIR
    for lat in ("clat_ns", "lat_ns"):
        assert set(mine["trim"][lat]) == set(fio["trim"][lat]), lat
        assert sum(mine["trim"][lat]["bins"].values()) == mine["trim"][lat]["N"] == 1024
    assert (mine["trim"]["total_ios"], mine["trim"]["io_bytes"]) == (fio["trim"]["total_ios"], fio["trim"]["io_bytes"])
    assert mine["read"]["total_ios"] == mine["write"]["total_ios"] == 0
