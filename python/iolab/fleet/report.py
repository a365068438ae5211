"""The fleet part of ``iolab report RUN`` (text and Markdown): per-host
bars, the spread across hosts, and the start skew and clock offsets; for
a fleet sweep, per point, each host's IOPS from its own kept results.

Reads ``fleet.json`` of a run directory (:mod:`iolab.fleet.rundir`); a
run without it (one host) gets nothing. The bars are the table's own rows
(per host, per direction); the spread is over hosts that completed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iolab.errors import ResultFormatError
from iolab.fleet.rundir import read_fleet, read_rank_results
from iolab.report.fleet_lines import by_group_dir, skew_line, spread_line

BAR_CHARS = 40


def _bar(x: float, top: float) -> str:
    n = 0 if top <= 0 else round(BAR_CHARS * x / top)
    return "#" * n


def fleet_section(directory: Path) -> str:
    """The section for a fleet run directory or fleet sweep, or "" for any other source."""
    if not directory.is_dir():
        return ""
    doc = read_fleet(directory)
    if doc is not None:
        return format_fleet(doc)
    points = sorted(p for p in (directory / "points").glob("*") if read_fleet(p) is not None)
    return format_fleet_sweep(points) if points else ""


def _host_iops(document: dict[str, Any]) -> float:
    """A host's IOPS at a sweep point, from its own results document: the
    core's group total (``groups[].total``: both directions, every worker
    merged). A point runs one job, so one stonewall group."""
    groups = document["summary"]["groups"]
    if len(groups) != 1:
        raise ResultFormatError(
            f"a fleet sweep point's host results have {len(groups)} stonewall groups, not 1: "
            "the directory was not written by a fleet sweep"
        )
    return float(groups[0]["total"]["iops"])


def format_fleet_sweep(points: list[Path]) -> str:
    """A fleet sweep: per point, each host's kIOPS read from its own results
    (``hosts/rank-R.json``), the spread across hosts and the start skew."""
    lines = ["", f"Fleet sweep: {len(points)} points, each run on every host"]
    for p in points:
        doc = read_fleet(p)
        hosts = read_rank_results(p)
        labels = {int(h["rank"]): h["host"] for h in doc["hosts"]}
        per = ", ".join(f"{labels.get(r, f'rank {r}')} {_host_iops(d) / 1e3:.2f}" for r, d in hosts.items())
        lines.append(f"  {p.name}: kIOPS per host: {per or '- (no per-host results kept)'}")
        rows = [{"iops": _host_iops(d)} for d in hosts.values()]
        tail = "; " + spread_line(rows) if spread_line(rows) else ""
        lines.append(f"    {skew_line(doc)}{tail}")
        if doc.get("incomplete"):
            lines.append("    INCOMPLETE: " + "; ".join(doc.get("faults", [])))
    return "\n".join(lines) + "\n"


def format_fleet(doc: dict[str, Any]) -> str:
    lines = ["", f"Fleet: {len(doc['hosts'])} hosts", "  " + skew_line(doc)]
    for key, sel in by_group_dir(doc):
        top = max(r["iops"] for r in sel)
        lines.append(f"  group {key[0]} {key[1]}: kIOPS per host")
        width = max(len(r["host"]) for r in sel)
        for r in sel:
            lines.append(f"    {r['host']:<{width}} {r['iops'] / 1e3:>9.2f} {_bar(r['iops'], top)}")
        if spread_line(sel):
            lines.append("    " + spread_line(sel))
    if doc.get("incomplete"):
        lines.append("  INCOMPLETE: " + "; ".join(doc.get("faults", [])))
    return "\n".join(lines) + "\n"


__all__ = ["by_group_dir", "fleet_section", "format_fleet", "format_fleet_sweep", "skew_line", "spread_line"]
