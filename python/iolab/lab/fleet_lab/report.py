"""The fleet lab's report: the post's figures beside the measured ones
(scaled by the stated factors), a row per VM and per node, the claims'
verdicts, and the last interval of the live view. A plain dict, schema
``iolab.lab.fleet/1``, that :mod:`iolab.lab.fleet_lab.render` prints.

Scaling (docs/labs.md): bandwidth by ``F`` = the lowest VM's QoS limit
over the post's 1 GB/s per VM, and the aggregate also by the VMs' count
(N of the post's 80); latency by 1 — the simulated SSD reads a 512 KiB at
a real NAND SSD's speed, so a read takes real time; only the fleet's size
and the VMs' rates are scaled.
"""

from __future__ import annotations

from typing import Any, Optional

from iolab.lab.fleet_lab.claims import device_mean_ns, exact_total, latency_within, limits_held, merged_stats
from iolab.lab.fleet_lab.post import (
    FIGURES,
    GB,
    POST_AVG_LAT_NS,
    POST_VMS,
    little_outstanding,
    post_consistency,
)

SCHEMA = "iolab.lab.fleet/1"
#: The latency bound's scale: a read of the simulated SSD takes real time.
LATENCY_FACTOR = 1.0
MB = 1e6


def _ms(ns: Optional[float]) -> Optional[float]:
    return None if ns is None else ns / 1e6


def _bw(v: dict[str, Any]) -> float:
    return int(v["bytes"]) / int(v["runtime_ns"]) * 1e9 if int(v["runtime_ns"]) > 0 else 0.0


def vm_rows(measured: dict[str, Any]) -> list[dict[str, Any]]:
    """A row per VM: its limit, IOPS and bandwidth over the time its I/Os
    ran, read latency, and the I/Os in flight on average (Little's law)."""
    bs = int(measured["bs_bytes"])
    out = []
    for v in measured["vms"]:
        bw = _bw(v)
        iops = bw / bs
        limit = v.get("limit_iops")
        out.append(
            {
                "vm": f"vm{v['rank']}",
                "rank": v["rank"],
                "node": v["node"],
                "limit_iops": limit,
                "limit_mb_per_s": None if limit is None else limit * bs / MB,
                "iops": iops,
                "mb_per_s": bw / MB,
                "limit_deviation": None if not limit else iops / limit - 1,
                "lat_mean_ms": float(v["lat_mean_ns"]) / 1e6,
                "lat_p99_ms": float(v["lat_p99_ns"]) / 1e6,
                "device_ms": _ms(device_mean_ns([v])),
                "outstanding": little_outstanding(bw, float(v["lat_mean_ns"]), bs),
            }
        )
    return out


def node_rows(measured: dict[str, Any]) -> list[dict[str, Any]]:
    """A row per node: its VMs' rates added, latency from their histograms merged."""
    nodes: dict[str, list[dict[str, Any]]] = {}
    for v in measured["vms"]:
        nodes.setdefault(v["node"], []).append(v)
    bs = int(measured["bs_bytes"])
    out = []
    for name, vms in nodes.items():
        bw = sum(_bw(v) for v in vms)
        hists = [v["lat_hist"] for v in vms if v.get("lat_hist")]
        st = merged_stats(hists) if hists else None
        out.append(
            {
                "node": name,
                "vms": len(vms),
                "iops": bw / bs,
                "mb_per_s": bw / MB,
                "lat_mean_ms": None if st is None else st["mean_ns"] / 1e6,
                "lat_p99_ms": None if st is None else st["p99_ns"] / 1e6,
                "device_ms": _ms(device_mean_ns(vms)),
            }
        )
    return out


def node_series(measured: dict[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """Watch-Cluster over time: each node's read bandwidth per interval
    (its VMs' bytes in the interval over the interval's length), as
    ``(seconds from the first start, MB/s)``; intervals are matched by index
    (the fleet aligned them on rank 0's clock)."""
    series = measured.get("series") or {}
    node_of = {v["host"]: v["node"] for v in measured["vms"]}
    out: dict[str, dict[int, tuple[float, float]]] = {}
    for host, points in series.items():
        node = out.setdefault(node_of.get(host, "?"), {})
        for k, (start, end, nbytes, _ios) in enumerate(points):
            if end <= start:
                continue
            t, mb = node.get(k, (start / 1e9, 0.0))
            node[k] = (t, mb + nbytes / ((end - start) / 1e9) / MB)
    return {name: [pts[k] for k in sorted(pts)] for name, pts in out.items()}


def scale_of(vms: int, limit_iops: Optional[int], bs: int) -> dict[str, Any]:
    """The stated factors and what each comes from."""
    f = None if limit_iops is None else limit_iops * bs / GB
    return {
        "bandwidth_factor": f,
        "vm_ratio": vms / POST_VMS,
        "latency_factor": LATENCY_FACTOR,
        "text": (
            (
                f"bandwidth x {f:.4g} (1/{1 / f:.1f}: the lowest VM limit, {limit_iops} IOPS x 512 KiB, over the "
                f"post's 1 GB/s per VM); aggregate also x {vms}/{POST_VMS} VMs; "
                if f is not None
                else "no QoS limits: bandwidth not scaled; aggregate x {vms}/{POST_VMS} VMs; "
            )
            + "latency x 1 (a simulated SSD reads 512 KiB in real time; only the fleet's size and rates are scaled)"
        ),
    }


def post_rows(measured: dict[str, Any], scale: dict[str, Any]) -> list[dict[str, Any]]:
    """The post's Watch-Cluster figures: label, column, unit and value as
    the post gives them, scaled, and measured."""
    f = scale["bandwidth_factor"] or 1.0
    total = measured["total"]
    vms = measured["vms"]
    measured_of = {
        "aggregate": float(total["bw_bytes_per_s"]) / GB,
        "per_vm": min(_bw(v) for v in vms) / GB if vms else None,
        "avg_lat": float(total["lat_mean_ns"]) / 1e6,
        "p99_lat": float(total["lat_p99_ns"]) / 1e6,
    }
    scaled_by = {"aggregate": f * scale["vm_ratio"], "per_vm": f, "avg_lat": scale["latency_factor"], "p99_lat": None}
    rows = []
    for fig in FIGURES:
        k = scaled_by[fig.key]
        scaled = None if fig.value is None or k is None else fig.value * k
        m = measured_of[fig.key]
        rows.append(
            {
                "key": fig.key,
                "label": fig.label,
                "column": fig.column,
                "unit": fig.unit,
                "value": fig.value,
                "relation": fig.relation,
                "scaled": scaled,
                "measured": m,
                "ratio": None if scaled is None or m is None else m / scaled,
            }
        )
    return rows


def build_report(
    measured: dict[str, Any], meta: dict[str, Any], live: Optional[dict[str, Any]] = None
) -> dict[str, Any]:
    """The report from the measured figures (:func:`~iolab.lab.fleet_lab.run.measured_of`)
    and the run's settings (``meta``: vm_count, node_count, limit_iops, mode, runtime_s, ...)."""
    scale = scale_of(len(measured["vms"]), meta.get("limit_iops"), int(measured["bs_bytes"]))
    bound_ns = POST_AVG_LAT_NS * scale["latency_factor"]
    claims = [exact_total(measured), limits_held(measured), latency_within(measured, bound_ns)]
    return {
        "schema": SCHEMA,
        **meta,
        "scale": scale,
        "post_consistency": post_consistency(),
        "tables": [
            {"title": "The post's Watch-Cluster figures beside the measured ones", "rows": post_rows(measured, scale)}
        ],
        "vms": vm_rows(measured),
        "nodes": node_rows(measured),
        "node_series": node_series(measured),
        "claims": claims,
        "live": live,
        "measured": measured,
    }


__all__ = ["LATENCY_FACTOR", "SCHEMA", "build_report", "node_rows", "node_series", "post_rows", "scale_of", "vm_rows"]
