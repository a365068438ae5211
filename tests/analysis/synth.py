"""Synthetic datasets with known answers for the analysis tests.

``sample(...)`` builds one repeat from a few headline figures (IOPS, block
size, mean and p99 latency, CPU, device); ``dataset(points)`` wraps points
into a sweep. Latency histograms are built only where a test needs them
(``iolab._native.hist_from_counts``).
"""

from __future__ import annotations

from typing import Any, Optional

from iolab import _native
from iolab.analysis.model import (
    CpuFigures,
    Dataset,
    DeviceFigures,
    DirResult,
    LatStats,
    Point,
    Sample,
    SampleConfig,
    Scalar,
)
from iolab.analysis.samples import lat_from_hist

RUNTIME_NS = 10**9


def lat(mean_ns: float, p99_ns: Optional[float] = None, count: int = 1_000_000) -> LatStats:
    """98% of the latencies at ``mean_ns``, 2% at ``p99_ns`` (so p99 is p99_ns to the histogram's
    precision), as a real histogram; the mean is kept as given (Little's law holds exactly)."""
    p99 = int(p99_ns if p99_ns is not None else 2 * mean_ns)
    hist = _native.hist_from_counts([(int(mean_ns), count - count // 50), (p99, count // 50)])
    st = lat_from_hist(hist, [50.0, 99.0, 99.9])
    return LatStats(st.count, st.min_ns, st.max_ns, float(mean_ns), st.stdev_ns, st.percentiles, hist)


def dir_result(iops: float, bs: int, lat_stats: Optional[LatStats] = None, bw: Optional[float] = None) -> DirResult:
    ios = int(iops * RUNTIME_NS / 1e9)
    return DirResult(
        ios, ios * bs, 0, RUNTIME_NS, iops, bw if bw is not None else iops * bs, None, lat_stats, lat_stats
    )


def idle() -> DirResult:
    return DirResult(0, 0, 0, 0, 0.0, 0.0)


def sample(
    iops: float,
    *,
    bs: int = 4096,
    lat_mean_ns: Optional[float] = None,
    lat_p99_ns: Optional[float] = None,
    iodepth: int = 1,
    numjobs: int = 1,
    rw: str = "randread",
    direct: bool = True,
    cpu: Optional[CpuFigures] = None,
    device: Optional[DeviceFigures] = None,
    bw: Optional[float] = None,
    count: int = 1_000_000,
    **config: Any,
) -> Sample:
    """One repeat; the mean latency defaults to Little's law at the configured depth."""
    mean = lat_mean_ns if lat_mean_ns is not None else iodepth * numjobs / iops * 1e9
    d = dir_result(iops, bs, lat(mean, lat_p99_ns, count), bw)
    cfg = SampleConfig(rw, bs, bs, iodepth, numjobs, direct, "io_uring", **config)
    read, write = (d, idle()) if "write" not in rw else (idle(), d)
    return Sample("s", cfg, read, write, RUNTIME_NS, cpu or CpuFigures(usr_cpu_pct=5, sys_cpu_pct=5), device)


def point(
    index: int, params: dict[str, Scalar], samples: list[Sample], values: Optional[dict[str, float]] = None
) -> Point:
    nums = values if values is not None else {k: float(v) for k, v in params.items() if isinstance(v, (int, float))}
    return Point(index, params, nums, samples)


def dataset(points: list[Point], axes: Optional[list[str]] = None, **plan: Any) -> Dataset:
    facts = {"repeats": 2, "warmup": True, "precondition": False, "drop_caches": None, **plan}
    host = {"memory_bytes": 16 * 2**30, "cpu": {"scaling_governors": ["performance"]}}
    names = axes if axes is not None else list(dict.fromkeys(k for p in points for k in p.params))
    return Dataset("iolab-sweep", "synthetic", "/nowhere", names, points, host, facts)


def device(util_pct: float, reads: int = 0, read_bytes: int = 0, bytes_known: bool = True) -> DeviceFigures:
    return DeviceFigures("nvme0n1", RUNTIME_NS, util_pct, reads, 0, read_bytes, 0, bytes_known)


def qd_sweep(depths: list[int], iops_of: Any, repeats: int = 2, **kw: Any) -> Dataset:
    """A QD sweep: IOPS from ``iops_of(qd)``, mean latency by Little's law, p99 = 2 x mean."""
    pts = [
        point(i, {"iodepth": qd}, [sample(iops_of(qd), iodepth=qd, **kw) for _ in range(repeats)])
        for i, qd in enumerate(depths, 1)
    ]
    return dataset(pts)
