"""Bottleneck verdicts and consistency checks on data with a known answer."""

from __future__ import annotations

import pytest
from iolab.analysis import analyze
from iolab.analysis.model import CpuFigures

from analysis.synth import dataset, device, point, qd_sweep, sample

GIB = 2**30


def _verdict(ds):  # type: ignore[no-untyped-def]
    return analyze(ds).bottleneck


def test_device_busy_99_pct() -> None:
    b = _verdict(qd_sweep([1, 8], lambda qd: 1000.0 * qd, device=device(99.0)))
    assert b["verdict"] == "device" and b["point"] == 2
    assert b["evidence"] == {"device": "nvme0n1", "util_pct": 99.0}


def test_client_cpu_one_core_per_worker() -> None:
    busy = CpuFigures(usr_cpu_pct=35.0, sys_cpu_pct=65.0, sys_busy_pct=50.0)
    b = _verdict(qd_sweep([1, 8], lambda qd: 1000.0 * qd, cpu=busy, device=device(40.0)))
    assert b["verdict"] == "client_cpu"
    assert b["evidence"]["worker_cpu_pct"] == pytest.approx(100.0)
    assert "100% of one CPU" in b["text"]


def test_bandwidth_ceiling_across_block_sizes() -> None:
    # 2 GiB/s from 128 KiB up: IOPS halve as blocks double, bytes stay at the ceiling.
    pts = []
    for i, bs in enumerate((65536, 131072, 262144, 524288, 1048576), 1):
        bw = min(bs * 16_384.0, 2 * GIB)
        pts.append(point(i, {"bs": bs}, [sample(bw / bs, bs=bs, iodepth=8)] * 2))
    b = _verdict(dataset(pts))
    assert b["verdict"] == "bandwidth_ceiling"
    assert b["evidence"]["ceiling_bytes_per_s"] == pytest.approx(2 * GIB)
    assert b["evidence"]["points"] == [2, 3, 4, 5]


def test_rate_limited() -> None:
    ds = qd_sweep([1, 8], lambda qd: 999.0, rate_limited=True, rate_iops=1000.0)
    b = _verdict(ds)
    assert b["verdict"] == "rate_limit" and b["evidence"]["cap"] == 1000.0
    assert "99.9%" in b["text"]


def test_not_determined_when_nothing_points_anywhere() -> None:
    b = _verdict(qd_sweep([1, 8], lambda qd: 1000.0 * qd, device=device(30.0)))
    assert b["verdict"] == "not_determined"
    assert "device busy 30.0%" in b["text"]


def test_littles_law_holds() -> None:
    an = analyze(qd_sweep([1, 4, 32], lambda qd: 10_000.0 * qd))
    f = next(f for f in an.findings if f.kind == "littles_law")
    assert f.severity == "info" and f.text.startswith("Little's law holds at all 3 points")
    assert [e["ratio"] for e in f.figures["checked"]] == pytest.approx([1.0, 1.0, 1.0])


def test_littles_law_violated_low_and_high() -> None:
    # 320k IOPS x 50 µs = 16 in flight of 32 configured: the queue never filled.
    low = analyze(dataset([point(1, {"iodepth": 32}, [sample(320_000.0, iodepth=32, lat_mean_ns=50_000)])]))
    f = next(f for f in low.findings if f.kind == "littles_law")
    assert f.figures["low"][0]["in_flight"] == pytest.approx(16.0)
    assert "16.0 on average" in f.text and "of 32 = iodepth x numjobs, 50.0%" in f.text
    # 320k IOPS x 200 µs = 64 in flight of 32: impossible for the queue, an error in the data.
    high = analyze(dataset([point(1, {"iodepth": 32}, [sample(320_000.0, iodepth=32, lat_mean_ns=200_000)])]))
    g = next(f for f in high.findings if f.kind == "littles_law")
    assert g.severity == "error" and g.figures["high"][0]["ratio"] == pytest.approx(2.0)


def test_rate_limited_points_are_not_held_to_littles_law() -> None:
    ds = dataset([point(1, {"iodepth": 32}, [sample(1000.0, iodepth=32, lat_mean_ns=50_000, rate_limited=True)])])
    assert not [f for f in analyze(ds).findings if f.kind == "littles_law"]


def test_bandwidth_identity_holds_and_is_violated() -> None:
    ok = analyze(qd_sweep([1, 4], lambda qd: 1000.0 * qd))
    assert not [f for f in ok.findings if f.kind == "bandwidth_identity"]
    bad = dataset([point(1, {"iodepth": 1}, [sample(1000.0, bs=4096, bw=8192_000.0)])])
    f = next(f for f in analyze(bad).findings if f.kind == "bandwidth_identity")
    assert f.severity == "error" and f.figures["deviation_pct"] == pytest.approx(100.0)
    assert "4 KiB x 1.00k IOPS = 3.91 MiB/s" in f.text
    assert analyze(bad).findings[0].kind == "bandwidth_identity"  # errors rank first


def test_littles_law_on_a_fleet_counts_every_host() -> None:
    # Issue 21: 2 hosts x QD 32 keep 64 I/Os in flight; the bound is hosts x iodepth x numjobs, not 32.
    fleet = [sample(640_000.0, iodepth=32, lat_mean_ns=100_000, hosts=2) for _ in range(2)]
    an = analyze(dataset([point(1, {"iodepth": 32}, fleet), point(2, {"iodepth": 16}, fleet[:1])]))
    f = next(f for f in an.findings if f.kind == "littles_law")
    assert f.severity == "info", f.text
    assert f.figures["checked"][0]["configured"] == 64 and f.figures["checked"][0]["ratio"] == pytest.approx(1.0)
    assert "of 2 hosts x iodepth x numjobs" in f.text, f.text
    # a host short of its share is still seen: 48 in flight of 2 x 32
    short = [sample(480_000.0, iodepth=32, lat_mean_ns=100_000, hosts=2)]
    g = next(f for f in analyze(dataset([point(1, {"iodepth": 32}, short)])).findings if f.kind == "littles_law")
    assert "48.0 on average" in g.text and "of 64 = 2 hosts x iodepth x numjobs, 75.0%" in g.text, g.text


def test_littles_law_on_one_point_says_the_one_point() -> None:
    an = analyze(dataset([point(1, {"iodepth": 4}, [sample(40_000.0, iodepth=4)])]))
    f = next(f for f in an.findings if f.kind == "littles_law")
    assert f.text.startswith("Little's law holds at the one point: "), f.text
    assert "100% of iodepth x numjobs" in f.text and " to " not in f.text.split(":")[1], f.text


def test_littles_law_names_the_depth_a_sync_engine_ran() -> None:
    # Session 12: a psync sweep over iodepth 1 and 2 read "Little's law holds ...: 96% of iodepth x
    # numjobs" at iodepth=2, where 2 was the bound a reader computes; the engine ran depth 1.
    an = analyze(
        dataset(
            [
                point(1, {"iodepth": 1}, [sample(40_000.0, iodepth=1)]),
                point(2, {"iodepth": 2}, [sample(40_000.0, iodepth=1)]),
            ]
        )
    )
    f = next(f for f in an.findings if f.kind == "littles_law")
    assert f.severity == "info", f.text
    assert "(iodepth as the engine ran it: 1 at iodepth=2; a synchronous engine keeps one I/O per worker)" in f.text
    same = analyze(dataset([point(1, {"iodepth": 4}, [sample(40_000.0, iodepth=4)])]))
    assert "as the engine ran it" not in next(f for f in same.findings if f.kind == "littles_law").text
