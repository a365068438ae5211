"""One iolab run directory's stonewall group → a :class:`Sample`.

Reads only what the run directory already holds (the ``iolab.result/1``
document, ``run.json``, ``diskstats.json``): per-direction IOPS, bandwidth
and latency, and the time series, are the core's group figures
(``summary.groups[]``, computed once in
crates/iolab-core/src/summary/group.rs), each latency kept with the
exact merge of every worker's histogram for later merges; the job
configuration as the engine resolved it, CPU figures of the group and the
device's /proc/diskstats deltas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from iolab import _native
from iolab.analysis.model import (
    DIRS,
    LAT_KINDS,
    CpuFigures,
    DeviceFigures,
    DirResult,
    Interval,
    LatStats,
    Sample,
    SampleConfig,
)

Json = dict[str, Any]


def group_jobs(doc: Json, group: int) -> list[tuple[Json, Json]]:
    """(summary job, result job) pairs of one stonewall group."""
    pairs = zip(doc["summary"]["jobs"], doc["result"]["jobs"])
    return [(s, r) for s, r in pairs if s["group"] == group]


def _worker_hists(rjobs: list[Json], d: int, kind: str) -> list[str]:
    hists = []
    for job in rjobs:
        for w in job["workers"]:
            h = w["dirs"][d].get(f"{kind}_ns")
            if isinstance(h, str):
                hists.append(h)
    return hists


def _lat_from_summary(lat: Json, hist: Optional[str]) -> LatStats:
    pcts = {float(e["percentile"]): int(e["value_ns"]) for e in lat.get("percentiles", [])}
    return LatStats(lat["count"], lat["min_ns"], lat["max_ns"], lat["mean_ns"], lat["stdev_ns"], pcts, hist)


def merged_hist(hists: Sequence[str]) -> Optional[str]:
    """One histogram of the union of ``hists`` (exact); a single one as it is; None for none."""
    if len(hists) <= 1:
        return hists[0] if hists else None
    return _native.hist_merge(list(hists))


def lat_from_hist(hist: str, percentiles: list[float]) -> LatStats:
    """LatStats of a histogram (native decode: exact to the histogram's precision)."""
    st = _native.hist_stats(hist, percentiles)
    pcts = {float(k): int(v) for k, v in st["percentiles"].items()}
    return LatStats(st["count"], st["min_ns"], st["max_ns"], st["mean_ns"], st["stdev_ns"], pcts, hist)


def _lat(group_dir: Json, rjobs: list[Json], d: int, kind: str) -> Optional[LatStats]:
    """The group's latency of one kind (the core's exact merge), with the merged histogram."""
    lat = group_dir[kind]
    return _lat_from_summary(lat, merged_hist(_worker_hists(rjobs, d, kind))) if lat["count"] else None


def _dir_result(group: Json, rjobs: list[Json], d: int) -> DirResult:
    """One direction of the group: the core's group figures (summary ``groups[].read/write``)."""
    g = group[(*DIRS, "trim")[d]]
    ios = int(g["ios"])
    kinds = {k: _lat(g, rjobs, d, k) if ios else None for k in LAT_KINDS}
    runtime = int(g["runtime_max_ns"])
    return DirResult(
        ios, int(g["bytes"]), int(g["errors"]), runtime, float(g["iops"]), float(g["bw_bytes_per_s"]), **kinds
    )


def _per_worker_cap(job: Json, field: str) -> Optional[float]:
    """One worker's cap (``rate_iops`` or ``rate_bytes_per_s``, per direction in
    the job spec) over the directions the job issues; None when one of them
    is uncapped (fio's ``rate_iops=500,0``: writes run free)."""
    read_pct = int(job["rw"].get("read_pct", 100))
    issued = [read_pct > 0, read_pct < 100]
    caps = [c for c, on in zip(job[field], issued) if on]
    return float(sum(caps)) if caps and all(caps) else None


def _rate_caps(rjobs: list[Json], per_rank: Sequence[Json] = ()) -> tuple[Optional[float], Optional[float]]:
    """The configured rate caps over every worker that ran the group's jobs
    (IOPS, bytes/s; None when some worker runs uncapped): each job's
    per-worker cap times the workers that ran it — numjobs on one host,
    numjobs x hosts in a fleet's merged result. ``per_rank``: a fleet's own
    results documents per rank (``hosts/rank-R.json``), whose job specs hold
    each host's own cap (a hosts table may set a different ``rate_iops`` per
    host, while the merged result keeps rank 0's spec): summed over them."""
    keys = {(r["name"], r["group"]) for r in rjobs}
    if per_rank:
        sources = [j for d in per_rank for j in d["result"]["jobs"] if (j["name"], j["group"]) in keys]
    else:
        sources = rjobs
    totals: list[Optional[float]] = []
    for field in ("rate_iops", "rate_bytes_per_s"):
        capped = [(_per_worker_cap(j["job"], field), len(j["workers"])) for j in sources]
        whole = all(c is not None for c, _ in capped) and capped
        totals.append(sum(c * n for c, n in capped if c is not None) if whole else None)
    return totals[0], totals[1]


def sample_config(sjobs: list[Json], rjobs: list[Json], hosts: int = 1, per_rank: Sequence[Json] = ()) -> SampleConfig:
    """The first job's configuration; in-flight I/Os and rate caps summed over
    the group's jobs (caps over every worker of every host: :func:`_rate_caps`);
    ``hosts``: the fleet ranks that each ran them."""
    c, job = sjobs[0]["config"], rjobs[0]["job"]
    outstanding = sum(int(s["config"]["iodepth"]) * int(s["config"]["numjobs"]) for s in sjobs)
    rate_iops, rate_bw = _rate_caps(rjobs, per_rank)
    size = job.get("size")
    return SampleConfig(
        rw=c["rw"],
        bs_read_bytes=int(c["bs_read"]["max_bytes"]),
        bs_write_bytes=int(c["bs_write"]["max_bytes"]),
        iodepth=int(c["iodepth"]),
        numjobs=int(c["numjobs"]),
        direct=bool(c["direct"]),
        ioengine=str(c["ioengine"]),
        rwmixread_pct=None if c.get("rwmixread_pct") is None else float(c["rwmixread_pct"]),
        size_bytes=int(size) if isinstance(size, int) else None,
        ramp_time_ns=int(c.get("ramp_time_ns") or 0),
        rate_limited=any(bool(s["config"].get("rate_limited")) for s in sjobs),
        time_based=bool(c.get("time_based")),
        rate_iops=rate_iops,
        rate_bytes_per_s=rate_bw,
        outstanding_total=outstanding if len(sjobs) > 1 else None,
        bs_fixed=all(c[k]["min_bytes"] == c[k]["max_bytes"] for k in ("bs_read", "bs_write")),
        hosts=hosts,
    )


def cpu_figures(group: Json, sjobs: list[Json]) -> CpuFigures:
    """The group's CPU: worker threads (mean over jobs), the process and the system (this host)."""
    cpus = group.get("cpu") or []
    usr = [float(j["merged"]["usr_cpu_pct"]) for j in sjobs]
    sys_ = [float(j["merged"]["sys_cpu_pct"]) for j in sjobs]
    fig = CpuFigures(
        usr_cpu_pct=sum(usr) / len(usr) if usr else None, sys_cpu_pct=sum(sys_) / len(sys_) if sys_ else None
    )
    if not cpus:
        return fig
    c = cpus[0]
    fig.proc_cpu_pct = c.get("proc_cpu_pct")
    idle, iowait = c.get("sys_idle_pct"), c.get("sys_iowait_pct")
    fig.sys_busy_pct = None if idle is None or iowait is None else 100.0 - idle - iowait
    fig.steal_pct = c.get("sys_steal_pct")
    fig.iowait_pct = iowait
    fig.ncpus = c.get("ncpus")
    fig.cycles_per_io = c.get("cycles_per_io")
    fig.cycles_per_byte = c.get("cycles_per_byte")
    source = str(c.get("clock_source") or "")
    fig.clock_note = "varies" if "may vary" in source else ("fixed" if source else None)
    return fig


#: At most this many worker-interval histograms are merged into per-interval
#: histograms for the heat map when a result is loaded (a long run's report
#: draws its bands from the summary's percentiles and leaves the heat map
#: out rather than decode them all; ``iolab report --window`` reads any
#: window of a streamed run exactly).
MAX_INTERVAL_HISTS = 20_000


def _interval_hists(rjobs: list[Json]) -> dict[int, str]:
    """Each interval's total-latency histogram (by its start, ns), every
    worker and direction of the group's jobs merged exactly; {} when the
    workers kept no interval histograms or there are too many to merge."""
    by_start: dict[int, list[str]] = {}
    for j in rjobs:
        for w in j.get("workers") or []:
            for iv in w.get("series") or []:
                for d in iv.get("dirs") or []:
                    if d.get("ios") and d.get("lat_ns"):
                        by_start.setdefault(int(iv["start_ns"]), []).append(d["lat_ns"])
    if sum(len(v) for v in by_start.values()) > MAX_INTERVAL_HISTS:
        return {}
    return {t: h for t, hs in by_start.items() if (h := merged_hist(hs)) is not None}


#: A group's series longer than this is decimated as it is read (a 24-hour
#: run of 1 s intervals has 86,400; a chart has a few hundred pixels): cut
#: into runs of consecutive intervals, one per ``MAX_SERIES_INTERVALS // 3``,
#: each run keeps its intervals of lowest IOPS, highest IOPS and highest
#: p99 (each once, in time order). Every dip, peak and latency spike stays
#: on the chart at its own time and value; no value is averaged.
MAX_SERIES_INTERVALS = 3_000


def _series(group: Json, rjobs: list[Json]) -> list[Interval]:
    """The group's time series as the core merged it (``groups[].series``:
    every job's intervals merged, counts added, histograms merged exactly),
    with the p50, p99 and max of every I/O of the interval and, where the
    workers kept them, the interval's merged histogram; decimated past
    :data:`MAX_SERIES_INTERVALS` (read one row at a time: a streamed run's
    series comes from its ``timeseries.parquet``)."""
    rows = group["series"]
    hists = _interval_hists(rjobs) if rows else {}
    n = len(rows)
    per = 1 if n <= MAX_SERIES_INTERVALS else -(-n // (MAX_SERIES_INTERVALS // 3))
    out: list[Interval] = []
    run: list[Interval] = []
    for s in rows:
        run.append(_interval(s, hists))
        if len(run) == per:
            out.extend(_extremes(run))
            run = []
    out.extend(_extremes(run))
    return out


def _interval(s: Json, hists: dict[int, str]) -> Interval:
    t = s["total"]
    ios = bool(t["ios"])
    return Interval(
        int(s["t_start_ns"]),
        int(s["t_end_ns"]),
        float(t["iops"]),
        float(t["bw_bytes_per_s"]),
        int(t["lat_p99_ns"]) if ios else None,
        int(t["lat_p50_ns"]) if ios and "lat_p50_ns" in t else None,
        int(t["lat_max_ns"]) if ios and "lat_max_ns" in t else None,
        hists.get(int(s["t_start_ns"])) if ios else None,
    )


def _extremes(run: list[Interval]) -> list[Interval]:
    """The intervals of ``run`` with its lowest and highest IOPS and highest p99, in time order."""
    if len(run) <= 3:
        return run
    keep = {
        min(range(len(run)), key=lambda i: run[i].iops),
        max(range(len(run)), key=lambda i: run[i].iops),
        max(range(len(run)), key=lambda i: run[i].lat_p99_ns or -1),
    }
    return [run[i] for i in sorted(keep)]


def device_figures(diskstats: Optional[Json]) -> Optional[DeviceFigures]:
    """The first device of a ``diskstats.json`` (the one under the job's file)."""
    if not diskstats or not diskstats.get("devices"):
        return None
    d = diskstats["devices"][0]
    return DeviceFigures(
        device=str(d["device"]),
        window_ns=int(d["window_ns"]),
        util_pct=float(d["util_pct"]),
        reads_completed=int(d["reads_completed"]),
        writes_completed=int(d["writes_completed"]),
        read_bytes=int(d["read_bytes"]),
        write_bytes=int(d["write_bytes"]),
        read_ticks_ms=d.get("read_ticks_ms"),
        write_ticks_ms=d.get("write_ticks_ms"),
        in_queue_ms=d.get("in_queue_ms"),
    )


def group_sample(
    doc: Json,
    group: Json,
    label: str,
    notes: list[str],
    device: Optional[DeviceFigures],
    per_rank: Sequence[Json] = (),
) -> Sample:
    """One stonewall group of a results document as a Sample; ``per_rank``:
    a fleet run's own documents per rank (for each host's rate cap)."""
    pairs = group_jobs(doc, int(group["group"]))
    sjobs, rjobs = [p[0] for p in pairs], [p[1] for p in pairs]
    read, write = (_dir_result(group, rjobs, d) for d in range(len(DIRS)))
    # Summaries written before iolab issued trims have no trim.
    trim = _dir_result(group, rjobs, 2) if group.get("trim", {}).get("ios") else None
    return Sample(
        label=label,
        config=sample_config(sjobs, rjobs, hosts=len(doc["result"].get("hosts") or [None]), per_rank=per_rank),
        read=read,
        write=write,
        runtime_ns=max(read.runtime_ns, write.runtime_ns, trim.runtime_ns if trim else 0),
        cpu=cpu_figures(group, sjobs),
        device=device,
        series=_series(group, rjobs),
        notes=list(notes),
        trim=trim,
    )
