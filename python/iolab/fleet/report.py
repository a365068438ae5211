"""The fleet part of ``iolab report RUN`` (text and Markdown): per-host
bars, the spread across hosts, and the start skew and clock offsets.

Reads ``fleet.json`` of a run directory (:mod:`iolab.fleet.rundir`); a
run without it (one host) gets nothing. The bars are the table's own rows
(per host, per direction); the spread is over hosts that completed.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from iolab.fleet.rundir import read_fleet

BAR_CHARS = 40


def _bar(x: float, top: float) -> str:
    n = 0 if top <= 0 else round(BAR_CHARS * x / top)
    return "#" * n


def fleet_section(directory: Path) -> str:
    """The section for a fleet run directory, or "" for any other source."""
    if not directory.is_dir():
        return ""
    doc = read_fleet(directory)
    if doc is None:
        return ""
    return format_fleet(doc)


def format_fleet(doc: dict[str, Any]) -> str:
    lines = ["", f"Fleet: {len(doc['hosts'])} hosts"]
    c = doc["clock"]
    offs = [abs(r["offset_ns"]) for r in c["ranks"]]
    lines.append(
        f"  start skew {c['start_skew_ns'] / 1e6:.3f} ms; clock offsets up to {max(offs, default=0) / 1e6:.3f} ms "
        f"(round trip median {c['round_trip_median_ns'] / 1e3:.1f} µs)"
    )
    rows = [r for r in doc["table"] if r["host"] != "Total"]
    for key in sorted({(r["group"], r["dir"]) for r in rows}):
        sel = [r for r in rows if (r["group"], r["dir"]) == key]
        top = max(r["iops"] for r in sel)
        lines.append(f"  group {key[0]} {key[1]}: kIOPS per host")
        width = max(len(r["host"]) for r in sel)
        for r in sel:
            lines.append(f"    {r['host']:<{width}} {r['iops'] / 1e3:>9.2f} {_bar(r['iops'], top)}")
        iops = [r["iops"] for r in sel]
        if len(iops) > 1 and min(iops) > 0:
            cv = statistics.pstdev(iops) / statistics.mean(iops) * 100
            lines.append(
                f"    spread across hosts: min {min(iops) / 1e3:.2f}, max {max(iops) / 1e3:.2f} kIOPS "
                f"(max/min {max(iops) / min(iops):.3f}, CV {cv:.1f} %)"
            )
    if doc.get("incomplete"):
        lines.append("  INCOMPLETE: " + "; ".join(doc.get("faults", [])))
    return "\n".join(lines) + "\n"


__all__ = ["fleet_section", "format_fleet"]
