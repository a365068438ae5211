"""Consistency of the figures with each other.

- **Bandwidth identity**: bandwidth = block size x IOPS for every sample
  and direction (with a fixed block size; with a varying one, the mean
  block size bytes/ios). A disagreement beyond ``BW_IDENTITY_TOL_PCT`` is
  an error in the data (a figure computed over another window, a unit
  slip in an import).
- **Little's law**: I/Os in flight on average = IOPS x mean latency
  (summed over directions), compared with what the configuration allows
  (iodepth x numjobs, times the hosts of a fleet run: each ran the job). Below ``LITTLE_LOW_RATIO`` of it, something kept
  the queue from filling: the tool (submission, its CPU, a sync engine) or
  the device (a smaller queue). Above ``LITTLE_HIGH_RATIO``, the latency
  counts time the I/O was not in flight. Rate-limited samples are skipped:
  a rate cap keeps the queue low on purpose.
"""

from __future__ import annotations

from typing import Optional

from iolab.analysis import wording as w
from iolab.analysis.model import DIRS, Dataset, Finding, Point, Sample

#: Largest disagreement (%) between bandwidth and block size x IOPS.
BW_IDENTITY_TOL_PCT = 1.0
#: In-flight / configured ratio below which the configured depth was not reached.
LITTLE_LOW_RATIO = 0.8
#: In-flight / configured ratio above which latency counts time outside the queue.
LITTLE_HIGH_RATIO = 1.1


def bandwidth_identity(ds: Dataset) -> list[Finding]:
    """One error finding per point and direction where bandwidth != bs x IOPS."""
    out = []
    for p in ds.points:
        for d in DIRS:
            worst: Optional[tuple[float, Sample, float]] = None
            for s in p.samples:
                r = s.dir(d)
                if not r.ios or r.iops <= 0:
                    continue
                configured = s.config.bs_read_bytes if d == "read" else s.config.bs_write_bytes
                bs = float(configured) if s.config.bs_fixed and configured else r.bytes / r.ios
                expect = r.iops * bs
                dev = abs(r.bw_bytes_per_s - expect) / expect * 100.0
                if dev > BW_IDENTITY_TOL_PCT and (worst is None or dev > worst[0]):
                    worst = (dev, s, bs)
            if worst is not None:
                dev, s, bs = worst
                r = s.dir(d)
                text = (
                    f"{w.label(p)} {d}: bandwidth {w.bytes_per_s(r.bw_bytes_per_s)} is not block size x IOPS "
                    f"({w.size(bs)} x {w.iops(r.iops)} = {w.bytes_per_s(bs * r.iops)}; off by {w.pct(dev)}): "
                    "the figures disagree with each other"
                )
                figs = {"bw_bytes_per_s": r.bw_bytes_per_s, "iops": r.iops, "bs_bytes": bs, "deviation_pct": dev}
                out.append(
                    Finding("bandwidth_identity", "error", text, {**figs, "sample": s.label}, None, [p.index], 90.0)
                )
    return out


def in_flight(s: Sample) -> Optional[float]:
    """Mean I/Os in flight by Little's law (IOPS x mean latency, both directions); None without latency."""
    total, seen = 0.0, False
    for d in DIRS:
        r = s.dir(d)
        lat = r.lat or r.clat
        if r.ios and lat is not None:
            total += r.iops * lat.mean_ns / 1e9
            seen = True
    return total if seen else None


def littles_law(ds: Dataset) -> list[Finding]:
    """One finding for the study: where the in-flight count disagrees with the configuration, or that it holds."""
    checked: list[dict[str, float]] = []
    bounds: set[str] = set()
    low: list[tuple[Point, dict[str, float]]] = []
    high: list[tuple[Point, dict[str, float]]] = []
    for p in ds.points:
        figs = [
            (f, s.config.outstanding)
            for s in p.samples
            if not s.config.rate_limited and (f := in_flight(s)) is not None
        ]
        if not figs:
            continue
        mean_in_flight = sum(f for f, _ in figs) / len(figs)
        configured = figs[0][1]
        ratio = mean_in_flight / configured
        entry = {"point": float(p.index), "in_flight": mean_in_flight, "configured": float(configured), "ratio": ratio}
        bounds.add(_bound(p))
        checked.append(entry)
        if ratio < LITTLE_LOW_RATIO:
            low.append((p, entry))
        elif ratio > LITTLE_HIGH_RATIO:
            high.append((p, entry))
    if not checked:
        return []
    out = []
    if low:
        p, e = min(low, key=lambda pe: pe[1]["ratio"])
        text = (
            f"Little's law: {_at(len(low), len(checked))} fewer I/Os were in flight than configured "
            f"(worst {w.label(p)}: {w.num(e['in_flight'])} on average = IOPS x mean latency, of "
            f"{e['configured']:.0f} = {_bound(p)}, {w.pct(e['ratio'] * 100)}){_as_run(ds)}: something kept the queue from "
            "filling: the tool (submission, its CPU, a sync engine) or the device (a smaller queue)"
        )
        out.append(
            Finding("littles_law", "info", text, {"low": [e for _, e in low]}, None, [q.index for q, _ in low], 75.0)
        )
    if high:
        p, e = max(high, key=lambda pe: pe[1]["ratio"])
        text = (
            f"Little's law: {_at(len(high), len(checked))} more I/Os were in flight than configured "
            f"(worst {w.label(p)}: {w.num(e['in_flight'])} of {e['configured']:.0f} = {_bound(p)}): "
            "the latency counts time outside the queue, or the figures come from different windows"
        )
        out.append(
            Finding(
                "littles_law", "error", text, {"high": [e for _, e in high]}, None, [q.index for q, _ in high], 85.0
            )
        )
    if not out:
        lo = min(e["ratio"] for e in checked) * 100
        hi = max(e["ratio"] for e in checked) * 100
        text = (
            f"Little's law holds {_at(len(checked), len(checked))}: I/Os in flight (IOPS x mean latency) are "
            f"{_range(lo, hi)} of {' or '.join(sorted(bounds))}{_as_run(ds)}: the queue stayed as full as configured"
        )
        out.append(
            Finding("littles_law", "info", text, {"checked": checked}, None, [int(e["point"]) for e in checked], 20.0)
        )
    return out


def _as_run(ds: Dataset) -> str:
    """Where the engine ran another depth than the point's iodepth (a
    synchronous engine keeps one I/O per worker): the bound is the depth as
    run, which the label does not show."""
    ran = []
    for p in ds.points:
        written = p.params.get("iodepth")
        if written is None or not p.samples or not str(written).isdigit():
            continue
        if int(str(written)) != p.samples[0].config.iodepth:
            ran.append(f"{p.samples[0].config.iodepth} at {w.label(p)}")
    if not ran:
        return ""
    return f" (iodepth as the engine ran it: {', '.join(ran)}; a synchronous engine keeps one I/O per worker)"


def _at(k: int, n: int) -> str:
    """Where, of ``n`` points checked: "at the one point", "at all 3 points", "at 2 of 3 points"."""
    if n == 1:
        return "at the one point"
    return f"at all {n} points" if k == n else f"at {k} of {n} points"


def _range(lo: float, hi: float) -> str:
    return w.pct(lo) if w.pct(lo) == w.pct(hi) else f"{w.pct(lo)} to {w.pct(hi)}"


def _bound(p: Point) -> str:
    """How a point's in-flight bound is made: iodepth x numjobs, times the hosts of a fleet."""
    hosts = max((s.config.hosts for s in p.samples), default=1)
    return "iodepth x numjobs" if hosts == 1 else f"{hosts} hosts x iodepth x numjobs"
