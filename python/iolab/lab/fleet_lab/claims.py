"""Verdicts on the fleet lab's three claims, each a pure function of the
measured figures (:func:`iolab.lab.fleet_lab.run.measured_of`'s dict), so
that recorded runs test them:

- :func:`exact_total`: the cluster's total is the exact sum of its VMs —
  counts and bytes added, latency from the VMs' histograms merged bucket by
  bucket (never percentiles averaged);
- :func:`limits_held`: every VM ran at its own QoS limit, within 3 %;
- :func:`latency_within`: the average read latency is under the post's
  bound (1.5 ms) times the stated latency factor.

Each returns ``{"key", "statement", "verdict", "numbers", "text"}``; the
verdict is ``held``, ``did not hold`` or ``not measurable here``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from iolab import _native

HELD = "held"
NOT_HELD = "did not hold"
NOT_MEASURABLE = "not measurable here"
#: How far a VM's IOPS may be from its limit and still hold it (the issue's 3 %).
LIMIT_TOLERANCE = 0.03
#: The merged mean and the total's mean come from one histogram type, but
#: through two summations: equal within float rounding.
MEAN_REL_TOLERANCE = 1e-9


def _claim(key: str, statement: str, verdict: str, numbers: dict[str, Any], text: str) -> dict[str, Any]:
    return {"key": key, "statement": statement, "verdict": verdict, "numbers": numbers, "text": text}


def merged_stats(hists: Sequence[str]) -> dict[str, float]:
    """count, mean and p99 (ns) of the exact merge of ``hists``."""
    st = _native.hist_stats(_native.hist_merge(list(hists)), [99.0])
    return {"count": float(st["count"]), "mean_ns": float(st["mean_ns"]), "p99_ns": float(st["percentiles"][99.0])}


def exact_total(measured: dict[str, Any]) -> dict[str, Any]:
    """The fleet's total against the sum of the VMs, recomputed here: I/Os
    and bytes added, p99 and mean from the VMs' read-latency histograms merged."""
    statement = "The cluster's total is the exact sum of its VMs (counts added, latency histograms merged)"
    vms, total = measured["vms"], measured["total"]
    if not vms or any(not v.get("lat_hist") for v in vms):
        missing = [v["rank"] for v in vms if not v.get("lat_hist")]
        return _claim(
            "exact_total", statement, NOT_MEASURABLE, {"vms_without_histogram": missing}, "a VM returned no result"
        )
    merged = merged_stats([v["lat_hist"] for v in vms])
    n = {
        "vms": len(vms),
        "sum_ios": sum(int(v["ios"]) for v in vms),
        "total_ios": int(total["ios"]),
        "sum_bytes": sum(int(v["bytes"]) for v in vms),
        "total_bytes": int(total["bytes"]),
        "merged_count": int(merged["count"]),
        "merged_p99_ns": merged["p99_ns"],
        "total_p99_ns": float(total["lat_p99_ns"]),
        "merged_mean_ns": merged["mean_ns"],
        "total_mean_ns": float(total["lat_mean_ns"]),
    }
    off = []
    if n["sum_ios"] != n["total_ios"] or n["merged_count"] != n["total_ios"]:
        off.append(f"I/Os: {n['sum_ios']} summed, {n['total_ios']} in the total")
    if n["sum_bytes"] != n["total_bytes"]:
        off.append(f"bytes: {n['sum_bytes']} summed, {n['total_bytes']} in the total")
    if n["merged_p99_ns"] != n["total_p99_ns"]:
        off.append(f"p99: {n['merged_p99_ns'] / 1e6:.3f} ms merged, {n['total_p99_ns'] / 1e6:.3f} ms in the total")
    if abs(n["merged_mean_ns"] - n["total_mean_ns"]) > MEAN_REL_TOLERANCE * max(n["merged_mean_ns"], 1.0):
        off.append(f"mean: {n['merged_mean_ns'] / 1e6:.4f} ms merged, {n['total_mean_ns'] / 1e6:.4f} ms in the total")
    if off:
        return _claim("exact_total", statement, NOT_HELD, n, "; ".join(off))
    text = (
        f"{n['vms']} VMs: {n['total_ios']} I/Os and {n['total_bytes']} bytes, the sums of the VMs'; "
        f"p99 {n['total_p99_ns'] / 1e6:.3f} ms and mean {n['total_mean_ns'] / 1e6:.4f} ms equal those of "
        "the VMs' histograms merged"
    )
    return _claim("exact_total", statement, HELD, n, text)


def limits_held(measured: dict[str, Any], tolerance: float = LIMIT_TOLERANCE) -> dict[str, Any]:
    """Each VM's IOPS (its I/Os over the time they ran) against its own limit."""
    statement = f"Each VM holds its own QoS limit (IOPS within {tolerance:.0%} of it)"
    vms = measured["vms"]
    if not vms or any(v.get("limit_iops") is None for v in vms):
        return _claim("limits", statement, NOT_MEASURABLE, {}, "no QoS limit was set on every VM")
    rows = []
    for v in vms:
        iops = int(v["ios"]) / int(v["runtime_ns"]) * 1e9 if int(v["runtime_ns"]) > 0 else 0.0
        rows.append(
            {"rank": v["rank"], "limit_iops": v["limit_iops"], "iops": iops, "deviation": iops / v["limit_iops"] - 1}
        )
    worst = max(rows, key=lambda r: abs(r["deviation"]))
    n = {"tolerance": tolerance, "vms": rows, "worst_rank": worst["rank"], "worst_deviation": worst["deviation"]}
    where = (
        f"worst: VM {worst['rank']} at {worst['iops']:.2f} IOPS against its {worst['limit_iops']} "
        f"({worst['deviation']:+.2%})"
    )
    if abs(worst["deviation"]) > tolerance:
        outside = [r for r in rows if abs(r["deviation"]) > tolerance]
        return _claim(
            "limits",
            statement,
            NOT_HELD,
            n,
            f"{len(outside)} of {len(rows)} VMs off by more than {tolerance:.0%}; {where}",
        )
    return _claim("limits", statement, HELD, n, f"all {len(rows)} VMs within {tolerance:.0%}; {where}")


def device_mean_ns(vms: Sequence[dict[str, Any]]) -> Optional[float]:
    """The target's own service time per read over ``vms`` (each VM's mean
    weighted by its reads: the mean of all their reads), where the target
    recorded every one of them; else None."""
    servers = [v.get("server") for v in vms]
    if not servers or any(x is None or not x["ios"] for x in servers):
        return None
    n = sum(float(x["ios"]) for x in servers if x)
    return sum(float(x["ios"]) * float(x["service_mean_ns"]) for x in servers if x) / n


def latency_within(measured: dict[str, Any], bound_ns: float) -> dict[str, Any]:
    """The cluster's average read latency (the merged histogram's mean, as
    Watch-Cluster's average over every I/O) against ``bound_ns``."""
    total = measured["total"]
    statement = f"The average read latency is under the post's bound scaled ({bound_ns / 1e6:.3g} ms)"
    if int(total["ios"]) == 0:
        return _claim("latency", statement, NOT_MEASURABLE, {"bound_ns": bound_ns}, "no read completed")
    worst = max(measured["vms"], key=lambda v: float(v["lat_mean_ns"]))
    n = {
        "bound_ns": bound_ns,
        "mean_ns": float(total["lat_mean_ns"]),
        "p99_ns": float(total["lat_p99_ns"]),
        "worst_vm_rank": worst["rank"],
        "worst_vm_mean_ns": float(worst["lat_mean_ns"]),
        "device_mean_ns": device_mean_ns(measured["vms"]),
    }
    text = (
        f"average {n['mean_ns'] / 1e6:.3f} ms against {bound_ns / 1e6:.3g} ms "
        f"(p99 {n['p99_ns'] / 1e6:.3f} ms; slowest VM {worst['rank']}: average {n['worst_vm_mean_ns'] / 1e6:.3f} ms)"
    )
    if n["device_mean_ns"] is not None:
        text += (
            f"; of which the target's own service time {n['device_mean_ns'] / 1e6:.3f} ms "
            "(the rest: the socket, the client and the host's scheduling)"
        )
    return _claim("latency", statement, HELD if n["mean_ns"] < bound_ns else NOT_HELD, n, text)


__all__ = [
    "HELD",
    "LIMIT_TOLERANCE",
    "NOT_HELD",
    "NOT_MEASURABLE",
    "device_mean_ns",
    "exact_total",
    "latency_within",
    "limits_held",
    "merged_stats",
]
