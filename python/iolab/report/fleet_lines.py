"""Lines about a fleet run's hosts, from its ``fleet.json`` document: the
start skew and clock offsets, the spread of IOPS across hosts, and the
host rows per group and direction. Pure functions over the document, in
the report layer so that both the HTML report and :mod:`iolab.fleet.report`
(the text report) use them without an upward import.
"""

from __future__ import annotations

import statistics
from typing import Any


def skew_line(doc: dict[str, Any]) -> str:
    c = doc["clock"]
    offs = [abs(r["offset_ns"]) for r in c["ranks"]]
    return (
        f"start skew {c['start_skew_ns'] / 1e6:.3f} ms; clock offsets up to {max(offs, default=0) / 1e6:.3f} ms "
        f"(round trip median {c['round_trip_median_ns'] / 1e3:.1f} µs)"
    )


def spread_line(sel: list[dict[str, Any]]) -> str:
    """The spread of IOPS across hosts (max/min and CV), or "" for fewer than two."""
    iops = [r["iops"] for r in sel]
    if len(iops) < 2 or min(iops) <= 0:
        return ""
    cv = statistics.pstdev(iops) / statistics.mean(iops) * 100
    return (
        f"spread across hosts: min {min(iops) / 1e3:.2f}, max {max(iops) / 1e3:.2f} kIOPS "
        f"(max/min {max(iops) / min(iops):.3f}, CV {cv:.1f} %)"
    )


def by_group_dir(doc: dict[str, Any]) -> list[tuple[tuple[int, str], list[dict[str, Any]]]]:
    """The table's host rows (no Total) per (group, direction)."""
    rows = [r for r in doc["table"] if r["host"] != "Total"]
    return [
        (k, [r for r in rows if (r["group"], r["dir"]) == k]) for k in sorted({(r["group"], r["dir"]) for r in rows})
    ]
