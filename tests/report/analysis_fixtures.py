"""Synthetic datasets and analyses with known figures, for the report tests.

- :func:`stat` — a :class:`Stat` from per-repeat values (t quantiles from a
  table, as the analysis does; the tests of the reports only need them right
  for n = 1..5).
- :func:`sweep` — an ``iodepth`` sweep 1..64 with a knee at 8: IOPS
  saturate at 8 and latency grows after it; real HdrHistograms
  (``hist_from_counts``), time series, repeats.
- :func:`single_run` — a run without axes: two jobs (points), one repeat.
"""

from __future__ import annotations

import math
import statistics
from typing import Optional

from iolab import _native
from iolab.analysis.model import (
    Analysis,
    CpuFigures,
    Dataset,
    DirResult,
    Finding,
    Interval,
    LatStats,
    Point,
    Row,
    Sample,
    SampleConfig,
    Stat,
)

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 9: 2.262}
PCTS = (50.0, 99.0, 99.9)
QDS = (1, 2, 4, 8, 16, 32, 64)


def stat(values: list[float], unit: str, value: Optional[float] = None) -> Stat:
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return Stat(value if value is not None else mean, n, mean, None, None, None, None, unit)
    sd = statistics.stdev(values)
    half = T975[n - 1] * sd / math.sqrt(n)
    cv = sd / mean * 100 if mean else None
    return Stat(value if value is not None else mean, n, mean, sd, cv, mean - half, mean + half, unit)


def lat_stats(base_ns: int, count: int) -> LatStats:
    """A latency distribution around ``base_ns``: 90% at it, a tail to 10x."""
    counts = [(base_ns, count * 90 // 100), (base_ns * 2, count * 9 // 100), (base_ns * 10, count // 100)]
    h = _native.hist_from_counts(counts)
    s = _native.hist_stats(h, list(PCTS))
    return LatStats(
        s["count"], s["min_ns"], s["max_ns"], s["mean_ns"], s["stdev_ns"], dict(s["percentiles"].items()), h
    )


def _interval(i: int, step: int, iops: float, lat_ns: int) -> Interval:
    """Interval i: its IOPS alternating 2 %, its latency the sample's
    distribution shifted up 10 % per interval (a histogram and its figures)."""
    base = lat_ns + lat_ns * i // 10
    lat = lat_stats(base, 1000)
    p = lat.percentiles
    rate = iops * (1 + 0.02 * (i % 2))
    return Interval(i * step, (i + 1) * step, rate, rate * 4096, int(p[99.0]), int(p[50.0]), lat.max_ns, lat.hist)


def sample(label: str, qd: int, iops: float, lat_ns: int, rw: str = "randread", intervals: int = 5) -> Sample:
    cfg = SampleConfig(rw, 4096, 4096, qd, 1, True, "io_uring", size_bytes=2**30, time_based=True)
    runtime = 1_000_000_000
    ios = int(iops)
    read = DirResult(ios, ios * 4096, 0, runtime, iops, iops * 4096, lat=lat_stats(lat_ns, 10_000))
    write = DirResult(0, 0, 0, 0, 0.0, 0.0)
    if rw == "randwrite":
        read, write = write, read
    step = runtime // intervals
    series = [_interval(i, step, iops, lat_ns) for i in range(intervals)]
    cpu = CpuFigures(usr_cpu_pct=5.0, sys_cpu_pct=20.0, cycles_per_byte=1.5)
    return Sample(label, cfg, read, write, runtime, cpu, series=series)


def _iops(qd: int) -> float:
    return 10_000.0 * min(qd, 8)


def _lat(qd: int) -> int:
    return int(qd / _iops(qd) * 1e9)  # Little's law


def row_of(point: Point, d: str) -> Row:
    """The row the analysis would compute for one point and direction."""
    dirs = [s.dir(d) for s in point.samples]
    metrics = {
        "iops": stat([x.iops for x in dirs], "iops"),
        "bw_bytes_per_s": stat([x.bw_bytes_per_s for x in dirs], "bytes_per_s"),
    }
    lats = [x.lat for x in dirs if x.lat is not None]
    merged = _native.hist_stats(_native.hist_merge([ls.hist for ls in lats if ls.hist]), list(PCTS))
    metrics["lat_mean_ns"] = stat([ls.mean_ns for ls in lats], "ns", merged["mean_ns"])
    metrics["lat_min_ns"] = stat([float(ls.min_ns) for ls in lats], "ns", merged["min_ns"])
    metrics["lat_max_ns"] = stat([float(ls.max_ns) for ls in lats], "ns", merged["max_ns"])
    for p in PCTS:
        metrics[f"lat_p{p:g}_ns"] = stat([float(ls.percentiles[p]) for ls in lats], "ns", merged["percentiles"][p])
    metrics["usr_cpu_pct"] = stat([s.cpu.usr_cpu_pct or 0.0 for s in point.samples], "pct")
    return Row(point.index, point.params, d, metrics)


def sweep(repeats: int = 3, noise: float = 0.01, name: str = "qd-sweep") -> Analysis:
    """An iodepth sweep with a knee at 8 (see the module doc)."""
    points = []
    for i, qd in enumerate(QDS, start=1):
        jitter = [1 + noise * (r - (repeats - 1) / 2) for r in range(repeats)]
        samples = [sample(f"p{i:03d}-r{r + 1}", qd, _iops(qd) * j, _lat(qd)) for r, j in enumerate(jitter)]
        points.append(Point(i, {"iodepth": qd}, {"iodepth": float(qd)}, samples))
    ds = Dataset(
        "iolab-sweep", name, f"/results/{name}", ["iodepth"], points, host={"hostname": "box"}, tool="iolab 0.1.0"
    )
    rows = [row_of(p, "read") for p in points]
    knee = {"point": 4, "value": 8.0, "iops": 80000.0}
    findings = [
        Finding("knee", "info", "read IOPS stop growing at iodepth=8 (80000 IOPS); latency grows after it", score=9)
    ]
    warnings = [Finding("warn_one_host", "warning", "only one target file: results describe this file system", score=2)]
    return Analysis(
        ds, rows, findings, warnings, {"iodepth": knee}, {"verdict": "device busy", "evidence": {"util_pct": 99.5}}
    )


def single_run(intervals: int = 5) -> Analysis:
    """A run without axes: two jobs as points, one repeat each, read and write;
    ``intervals=1``: 1 s jobs, whose time series is one interval."""
    points = [
        Point(1, {}, {}, [sample("rand-read-4k-qd1", 1, 9000.0, 110_000, intervals=intervals)]),
        Point(2, {}, {}, [sample("rand-write-4k-qd1", 1, 7000.0, 140_000, rw="randwrite", intervals=intervals)]),
    ]
    ds = Dataset("iolab-run", "run-1", "/results/run-1", [], points, tool="iolab 0.1.0")
    rows = [row_of(points[0], "read"), row_of(points[1], "write")]
    return Analysis(ds, rows, [], [], {}, {"verdict": "not determined"})
