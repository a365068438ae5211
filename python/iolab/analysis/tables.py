"""The tables: one :class:`Row` per point and direction, every figure a
:class:`Stat` over the point's repeats.

Figures: IOPS, bandwidth, slat/clat/lat mean, min and max, their
percentiles, worker and process CPU, cycles per I/O and per byte, and the
device's utilisation. A percentile's figure is the percentile of the
repeats' merged histogram (merged only when there are several repeats, so
single-repeat studies decode nothing); the per-repeat percentiles give its
spread. Without histograms (fio's plain ``json``) a percentile over several
repeats is left out rather than averaged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable, Optional

from iolab import _native
from iolab.analysis.model import LAT_KINDS, Dataset, LatStats, Point, Row, Sample, Stat, metric_name
from iolab.analysis.samples import merged_hist
from iolab.analysis.stats import bootstrap_ci95_many, describe

#: A row is unstable when the CV of one of these over its repeats exceeds UNSTABLE_CV_PCT.
HEADLINE_METRICS = ("iops", "bw_bytes_per_s", "lat_mean_ns", "lat_p99_ns")
#: Coefficient of variation (%) above which repeats are said to disagree.
UNSTABLE_CV_PCT = 10.0

_CPU_METRICS: tuple[tuple[str, str, Callable[[Sample], Optional[float]]], ...] = (
    ("usr_cpu_pct", "pct", lambda s: s.cpu.usr_cpu_pct),
    ("sys_cpu_pct", "pct", lambda s: s.cpu.sys_cpu_pct),
    ("proc_cpu_pct", "pct", lambda s: s.cpu.proc_cpu_pct),
    ("sys_busy_pct", "pct", lambda s: s.cpu.sys_busy_pct),
    ("steal_pct", "pct", lambda s: s.cpu.steal_pct),
    ("cycles_per_io", "cycles_per_io", lambda s: s.cpu.cycles_per_io),
    ("cycles_per_byte", "cycles_per_byte", lambda s: s.cpu.cycles_per_byte),
    ("device_util_pct", "pct", lambda s: s.device.util_pct if s.device else None),
)


def active_dirs(point: Point) -> list[str]:
    """The directions in which any repeat of ``point`` did I/O."""
    return [d for d in ("read", "write", "trim") if any(s.dir(d).ios for s in point.samples)]


def _stat(values: Sequence[Optional[float]], unit: str) -> Optional[Stat]:
    got = [float(v) for v in values if v is not None]
    return describe(got, unit) if got else None


def percentile_stats(lats: Sequence[LatStats], kind: str) -> dict[str, Stat]:
    """Percentile Stats of one latency kind over repeats (merged histogram for the figure)."""
    pcts = sorted({p for lat in lats for p in lat.percentiles})
    if not pcts:
        return {}
    if len(lats) == 1:
        return {metric_name(kind, p): describe([lats[0].percentiles[p]], "ns") for p in lats[0].percentiles}
    hists = [lat.hist for lat in lats if lat.hist is not None]
    union = merged_hist(hists) if len(hists) == len(lats) else None
    if union is None:
        return {}  # percentiles are never averaged; without histograms there is no exact figure
    merged = _native.hist_stats(union, pcts)["percentiles"]
    per_repeat = {p: [float(lat.percentiles[p]) for lat in lats if p in lat.percentiles] for p in pcts}
    # A percentile over a few repeats is skewed, not normal: its interval is a
    # bootstrap one (within the repeats' range), for every percentile at once.
    full = [p for p in pcts if len(per_repeat[p]) == len(lats)]
    cis = dict(zip(full, bootstrap_ci95_many([per_repeat[p] for p in full])))
    return {
        metric_name(kind, p): describe(per_repeat[p], "ns", value=float(merged[p]), ci95=cis.get(p))
        for p in pcts
        if per_repeat[p]
    }


def latency_stats(samples: Sequence[Sample], d: str, kind: str) -> dict[str, Stat]:
    lats = [lat for s in samples if (lat := getattr(s.dir(d), kind)) is not None and lat.count]
    if not lats:
        return {}
    out = {
        f"{kind}_mean_ns": describe([lat.mean_ns for lat in lats], "ns"),
        f"{kind}_min_ns": describe([float(lat.min_ns) for lat in lats], "ns"),
        f"{kind}_max_ns": describe([float(lat.max_ns) for lat in lats], "ns"),
    }
    out.update(percentile_stats(lats, kind))
    return out


def row(point: Point, d: str) -> Row:
    """One point x direction."""
    samples = [s for s in point.samples if s.dir(d).ios]
    metrics: dict[str, Stat] = {
        "iops": describe([s.dir(d).iops for s in samples], "iops"),
        "bw_bytes_per_s": describe([s.dir(d).bw_bytes_per_s for s in samples], "bytes_per_s"),
    }
    for kind in LAT_KINDS:
        metrics.update(latency_stats(samples, d, kind))
    for name, unit, get in _CPU_METRICS:
        st = _stat([get(s) for s in samples], unit)
        if st is not None:
            metrics[name] = st
    return Row(point.index, dict(point.params), d, metrics, unstable=bool(unstable_metrics(metrics)))


def unstable_metrics(metrics: dict[str, Stat]) -> dict[str, float]:
    """Headline metrics whose repeats disagree: name → CV %."""
    out = {}
    for name in HEADLINE_METRICS:
        st = metrics.get(name)
        if st is not None and st.cv_pct is not None and st.cv_pct > UNSTABLE_CV_PCT:
            out[name] = st.cv_pct
    return out


def build_rows(ds: Dataset) -> list[Row]:
    """Every point x direction that did I/O, in point order."""
    return [row(p, d) for p in ds.points for d in active_dirs(p)]


def figure(r: Row, name: str) -> Optional[float]:
    st = r.metrics.get(name)
    return None if st is None else st.value


def latency_figure(r: Row) -> tuple[str, Optional[float]]:
    """The latency a trend or knee speaks of: total p99, else clat p99, else the mean."""
    for name in ("lat_p99_ns", "clat_p99_ns", "lat_mean_ns"):
        v = figure(r, name)
        if v is not None:
            return name, v
    return "lat_p99_ns", None
