"""Seed 001 as data: the Storage Spaces Direct post's setup and figures
(shared/seeds/001_*.txt, "Storage Spaces Direct throughput with iWARP").

Four nodes, 20 VMs each (80), every VM reading its own 16 GiB file at
random, 512 KiB at queue depth 3; 4 x 2 TB 3-way mirrored virtual disks,
one per node, on Samsung PM1725 NVMe. The Watch-Cluster window showed the
aggregate bandwidth "exceeded 83GB/s", each VM "more than 1GB/s", and "the
average read latency is <1.5ms".

The post's GB/s are read as 10^9 bytes/s (Watch-Cluster's unit is not
stated; decimal is Windows' performance counters' and the network's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

GB = 1e9
KIB = 1024

#: The post's workload, as written.
POST_NODES = 4
POST_VMS = 80
POST_BS_BYTES = 512 * KIB
POST_IODEPTH = 3
POST_FILE = "16GiB"
POST_MIRROR_COPIES = 3
#: "the aggregated bandwidth exceeded 83GB/s"
POST_AGGREGATE_BYTES_PER_S = 83 * GB
#: "Each VM realized more than 1GB/s of throughput"
POST_PER_VM_BYTES_PER_S = 1 * GB
#: "the average read latency is <1.5ms"
POST_AVG_LAT_NS = 1_500_000


@dataclass(frozen=True)
class PostFigure:
    """One figure of the post: its label, the column it was read from, the
    unit as printed, the value and which side of it the post claims."""

    key: str
    label: str
    column: str
    unit: str
    value: Optional[float]
    #: ">" (the post's figure is a floor), "<" (a ceiling), "" (none given)
    relation: str


FIGURES = (
    PostFigure("aggregate", "Aggregate bandwidth (all VMs)", "Watch-Cluster: bandwidth", "GB/s", 83.0, ">"),
    PostFigure("per_vm", "Bandwidth of each VM (the slowest)", "Watch-Cluster: per-VM bandwidth", "GB/s", 1.0, ">"),
    PostFigure("avg_lat", "Average read latency", "Watch-Cluster: read latency", "ms", 1.5, "<"),
    PostFigure("p99_lat", "p99 read latency", "(not in the post)", "ms", None, ""),
)


def little_outstanding(bw_bytes_per_s: float, lat_ns: float, bs_bytes: int = POST_BS_BYTES) -> float:
    """Little's law: the mean number of I/Os in flight at a throughput and a mean latency."""
    return bw_bytes_per_s / bs_bytes * lat_ns / 1e9


def post_consistency() -> dict[str, float]:
    """The post's three figures are one statement at QD 3 (Little's law):
    3 x 512 KiB in flight per VM over 1.5 ms is 1.049 GB/s per VM, and
    83 GB/s over 80 VMs is 1.0375 GB/s per VM."""
    per_vm_from_latency = POST_IODEPTH * POST_BS_BYTES / (POST_AVG_LAT_NS / 1e9)
    per_vm_from_aggregate = POST_AGGREGATE_BYTES_PER_S / POST_VMS
    return {
        "per_vm_bytes_per_s_from_latency": per_vm_from_latency,
        "per_vm_bytes_per_s_from_aggregate": per_vm_from_aggregate,
        "outstanding_at_post_figures": little_outstanding(per_vm_from_aggregate, POST_AVG_LAT_NS),
    }


__all__ = [
    "FIGURES",
    "GB",
    "POST_AGGREGATE_BYTES_PER_S",
    "POST_AVG_LAT_NS",
    "POST_BS_BYTES",
    "POST_IODEPTH",
    "POST_NODES",
    "POST_PER_VM_BYTES_PER_S",
    "POST_VMS",
    "PostFigure",
    "little_outstanding",
    "post_consistency",
]
