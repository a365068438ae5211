"""What limited the throughput, where the data allow saying so.

Judged at the point of highest throughput (the one a reader cares about),
in this order — the first rule whose evidence is there wins:

1. **rate limit**: the job was rate-capped and reached at least
   ``RATE_REACHED_PCT`` of its cap;
2. **client CPU**: a worker thread used at least ``CPU_BOUND_PCT`` of one
   CPU (usr + sys), or the whole system was at least ``CPU_BOUND_PCT`` busy;
3. **device busy**: the device under the file was busy (/proc/diskstats
   io_ticks) at least ``DEVICE_BUSY_PCT`` of the window. A device that
   serves many I/Os in parallel (NVMe, RAID) can be 100% "busy" and still
   have headroom; the evidence says so;
4. **bandwidth ceiling**: at least ``CEILING_MIN_POINTS`` points with at
   least two different block sizes reach the same bandwidth within
   ``CEILING_BAND_PCT`` — bytes, not I/Os, are the limit;
5. otherwise **not determined**, with what was checked.
"""

from __future__ import annotations

from typing import Any, Optional

from iolab.analysis import wording as w
from iolab.analysis.model import Dataset, Finding, Point, Sample

RATE_REACHED_PCT = 95.0
CPU_BOUND_PCT = 90.0
DEVICE_BUSY_PCT = 95.0
CEILING_BAND_PCT = 5.0
CEILING_MIN_POINTS = 3

Json = dict[str, Any]


def _mean(values: list[Optional[float]]) -> Optional[float]:
    got = [v for v in values if v is not None]
    return sum(got) / len(got) if got else None


def _iops(s: Sample) -> float:
    return s.read.iops + s.write.iops


def _bw(s: Sample) -> float:
    return s.read.bw_bytes_per_s + s.write.bw_bytes_per_s


def point_bw(p: Point) -> float:
    return sum(_bw(s) for s in p.samples) / len(p.samples)


def rate_limit(p: Point) -> Optional[Json]:
    caps = [s for s in p.samples if s.config.rate_limited]
    if not caps:
        return None
    s = caps[0]
    reached = []
    if s.config.rate_iops:
        reached.append(("iops", _iops(s), s.config.rate_iops))
    if s.config.rate_bytes_per_s:
        reached.append(("bw_bytes_per_s", _bw(s), s.config.rate_bytes_per_s))
    for metric, got, cap in reached:
        if got >= cap * RATE_REACHED_PCT / 100:
            shown = w.iops if metric == "iops" else w.bytes_per_s
            text = (
                f"rate limit: {shown(got)} measured against a configured cap of {shown(cap)} ({w.pct(got / cap * 100)})"
            )
            return {"verdict": "rate_limit", "text": text, "evidence": {"metric": metric, "measured": got, "cap": cap}}
    return None


def client_cpu(p: Point) -> Optional[Json]:
    worker = _mean(
        [None if s.cpu.usr_cpu_pct is None else s.cpu.usr_cpu_pct + (s.cpu.sys_cpu_pct or 0) for s in p.samples]
    )
    system = _mean([s.cpu.sys_busy_pct for s in p.samples])
    ev = {"worker_cpu_pct": worker, "sys_busy_pct": system, "ncpus": p.samples[0].cpu.ncpus}
    if worker is not None and worker >= CPU_BOUND_PCT:
        text = f"client CPU: each worker thread used {w.pct(worker)} of one CPU (usr + sys): the tool could not submit faster"
        return {"verdict": "client_cpu", "text": text, "evidence": ev}
    if system is not None and system >= CPU_BOUND_PCT:
        text = f"client CPU: the system was {w.pct(system)} busy (all CPUs): no CPU was left to submit more I/O"
        return {"verdict": "client_cpu", "text": text, "evidence": ev}
    return None


def device_busy(p: Point) -> Optional[Json]:
    devs = [s.device for s in p.samples if s.device is not None]
    util = _mean([d.util_pct for d in devs])
    if util is None or util < DEVICE_BUSY_PCT:
        return None
    text = (
        f"device: {devs[0].device} was busy {w.pct(util)} of the time (/proc/diskstats); "
        "a device that serves I/Os in parallel can be 100% busy with headroom left, so read it with the knee"
    )
    return {"verdict": "device", "text": text, "evidence": {"device": devs[0].device, "util_pct": util}}


def bandwidth_ceiling(ds: Dataset) -> Optional[Json]:
    bws = [(p, point_bw(p)) for p in ds.points]
    top = max(bw for _, bw in bws)
    if top <= 0:
        return None
    near = [(p, bw) for p, bw in bws if bw >= top * (1 - CEILING_BAND_PCT / 100)]
    sizes = {s.config.bs_read_bytes if s.read.ios else s.config.bs_write_bytes for p, _ in near for s in p.samples}
    if len(near) < CEILING_MIN_POINTS or len(sizes) < 2:
        return None
    low = min(bw for _, bw in near)
    text = (
        f"bandwidth ceiling: {len(near)} points with {len(sizes)} block sizes all reach "
        f"{w.bytes_per_s(low)} to {w.bytes_per_s(top)} (within {w.pct(CEILING_BAND_PCT)}): bytes, not I/Os, are the limit"
    )
    ev = {"ceiling_bytes_per_s": top, "points": [p.index for p, _ in near], "block_sizes_bytes": sorted(sizes)}
    return {"verdict": "bandwidth_ceiling", "text": text, "evidence": ev}


def bottleneck(ds: Dataset) -> tuple[Json, list[Finding]]:
    """The verdict (``{"verdict", "text", "point", "evidence"}``) and its finding."""
    if not ds.points:
        return {"verdict": "not_determined", "text": "no points", "point": None, "evidence": {}}, []
    best = max(ds.points, key=point_bw)
    for rule in (rate_limit, client_cpu, device_busy):
        got = rule(best)
        if got is not None:
            break
    else:
        got = bandwidth_ceiling(ds)
    if got is None:
        checked = {
            "rate_limit": "no cap reached",
            "client_cpu": client_cpu_figures(best),
            "device": _device_util(best),
        }
        text = (
            f"bottleneck not determined at {w.label(best)}: no rate cap reached, no CPU at {w.pct(CPU_BOUND_PCT)}, "
            f"device busy {_util_text(best)}, no bandwidth ceiling across block sizes"
        )
        got = {"verdict": "not_determined", "text": text, "evidence": checked}
    got["point"] = best.index
    score = 30.0 if got["verdict"] == "not_determined" else 70.0
    text = got["text"] if got["verdict"] == "not_determined" else f"bottleneck at {w.label(best)}: {got['text']}"
    return got, [Finding("bottleneck", "info", text, dict(got), None, [best.index], score)]


def client_cpu_figures(p: Point) -> Json:
    return {
        "usr_cpu_pct": _mean([s.cpu.usr_cpu_pct for s in p.samples]),
        "sys_cpu_pct": _mean([s.cpu.sys_cpu_pct for s in p.samples]),
        "sys_busy_pct": _mean([s.cpu.sys_busy_pct for s in p.samples]),
    }


def _device_util(p: Point) -> Json:
    return {"util_pct": _mean([s.device.util_pct for s in p.samples if s.device is not None])}


def _util_text(p: Point) -> str:
    util = _device_util(p)["util_pct"]
    return "not measured" if util is None else w.pct(util)
