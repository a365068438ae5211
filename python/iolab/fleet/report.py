"""The fleet part of ``iolab report RUN|SWEEP`` in every format: per-host
bars, the spread across hosts, and the start skew and clock offsets; for
a fleet sweep, per point, each host's IOPS from its own kept results.

- text and Markdown: :func:`fleet_section` (appended to the report);
- HTML: :func:`fleet_sweep_html` (a sweep's table; a run's section and bars
  are drawn by :mod:`iolab.report.html` from ``fleet.json``);
- JSON: :func:`fleet_json` (the report's ``fleet`` object).

Reads ``fleet.json`` of a run directory (:mod:`iolab.fleet.rundir`); a
run without it (one host) gets nothing. The bars are the table's own rows
(per host, per direction); the spread is over hosts that completed.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Optional

from iolab.errors import ResultFormatError
from iolab.fleet.rundir import iter_rank_results, read_fleet
from iolab.report.analysis_text import Table
from iolab.report.fleet_lines import (
    ENDS,
    ROWS_MAX,
    by_group_dir,
    host_spread,
    many_hosts_lines,
    quantiles_line,
    rows_spread,
    skew_line,
    spread_line,
)

BAR_CHARS = 40


def _bar(x: float, top: float) -> str:
    n = 0 if top <= 0 else round(BAR_CHARS * x / top)
    return "#" * n


def _sweep_points(directory: Path) -> list[Path]:
    """A fleet sweep's point directories (those with ``fleet.json``); [] for anything else."""
    if not directory.is_dir():
        return []
    return sorted(p for p in (directory / "points").glob("*") if read_fleet(p) is not None)


def fleet_section(directory: Path) -> str:
    """The section for a fleet run directory or fleet sweep, or "" for any other source."""
    if not directory.is_dir():
        return ""
    doc = read_fleet(directory)
    if doc is not None:
        return format_fleet(doc)
    points = _sweep_points(directory)
    return format_fleet_sweep(points) if points else ""


def _spread(iops: list[float]) -> Optional[dict[str, float]]:
    """The spread across hosts (as :func:`spread_line` words it), or None for fewer than two."""
    if len(iops) < 2 or min(iops) <= 0:
        return None
    cv = statistics.pstdev(iops) / statistics.mean(iops) * 100
    return {"min_iops": min(iops), "max_iops": max(iops), "max_over_min": max(iops) / min(iops), "cv_pct": cv}


def _sweep_point(p: Path) -> dict[str, Any]:
    """One point of a fleet sweep: each host's IOPS (its own group total), the spread, the skew."""
    doc = read_fleet(p)
    labels = {int(h["rank"]): h["host"] for h in doc["hosts"]}
    hosts = [{"rank": r, "host": labels.get(r, f"rank {r}"), "iops": _host_iops(d)} for r, d in iter_rank_results(p)]
    return {
        "point": p.name,
        "hosts": hosts,
        "spread": _spread([h["iops"] for h in hosts]),
        "start_skew_ns": doc["clock"]["start_skew_ns"],
        "incomplete": bool(doc.get("incomplete")),
        "faults": list(doc.get("faults", [])),
    }


def fleet_json(directory: Path) -> Optional[dict[str, Any]]:
    """The report's ``fleet`` object, or None for a source that is not a fleet.

    A run: ``{"kind": "run", "hosts": N, "table": [a row per host and
    direction, then the totals], "spread": [per group and direction: its
    ``group``, ``dir`` and :func:`~iolab.report.fleet_lines.rows_spread`],
    "clock": ..., "incomplete", "faults"}`` (the rows as in ``fleet.json``:
    ``iops``, ``bw_bytes_per_s``, ``lat_p50_ns``, ``lat_p99_ns``...). A sweep: ``{"kind": "sweep", "points": [{"point",
    "hosts": [{"rank", "host", "iops"}], "spread": {"min_iops", "max_iops",
    "max_over_min", "cv_pct"} or null, "start_skew_ns", "incomplete",
    "faults"}]}``."""
    if not directory.is_dir():
        return None
    doc = read_fleet(directory)
    if doc is not None:
        return {
            "kind": "run",
            "hosts": len(doc["hosts"]),
            "table": doc["table"],
            "spread": [{"group": g, "dir": d, **(rows_spread(sel) or {})} for (g, d), sel in by_group_dir(doc)],
            "clock": doc["clock"],
            "incomplete": bool(doc.get("incomplete")),
            "faults": list(doc.get("faults", [])),
        }
    points = _sweep_points(directory)
    return {"kind": "sweep", "points": [_sweep_point(p) for p in points]} if points else None


def sweep_table(directory: Path) -> Optional[Table]:
    """A fleet sweep's per-host table: a row per point, a kIOPS column per
    host (above :data:`ROWS_MAX` hosts: the quantiles of host kIOPS and the
    slowest host), the spread and the start skew; None for a source that
    is not one."""
    made = _sweep_table(directory)
    return None if made is None else made[0]


def _sweep_table(directory: Path) -> Optional[tuple[Table, int]]:
    """:func:`sweep_table` and how many hosts ran the sweep."""
    points = [_sweep_point(p) for p in _sweep_points(directory)]
    if not points:
        return None
    hosts = sorted({(h["rank"], h["host"]) for pt in points for h in pt["hosts"]})
    many = len(hosts) > ROWS_MAX
    per_host = [f"{label} kIOPS" for _, label in hosts]
    header = ["point", *(_QUANTILE_HEADER if many else per_host), "max/min", "CV (%)", "start skew (ms)"]
    rows = []
    for pt in points:
        own = {(h["rank"], h["host"]): h["iops"] for h in pt["hosts"]}
        sp = pt["spread"]
        cells = _quantile_cells(pt["hosts"]) if many else [f"{own[k] / 1e3:.2f}" if k in own else "-" for k in hosts]
        spread = [f"{sp['max_over_min']:.3f}", f"{sp['cv_pct']:.1f}"] if sp else ["-", "-"]
        rows.append([pt["point"], *cells, *spread, f"{pt['start_skew_ns'] / 1e6:.3f}"])
    notes = ["each host's kIOPS is its own group total (both directions), from hosts/rank-R.json of the point"]
    if many:
        notes.append(f"{len(hosts)} hosts: kIOPS across them (nearest rank) and the slowest, not a column per host")
    notes += [f"{pt['point']} INCOMPLETE: " + "; ".join(pt["faults"]) for pt in points if pt["incomplete"]]
    return Table(f"Fleet sweep: {len(points)} points, each run on every host", header, rows, 1, notes), len(hosts)


_QUANTILE_HEADER = ["hosts", "min kIOPS", "p10 kIOPS", "median kIOPS", "p90 kIOPS", "max kIOPS", "slowest"]


def _quantile_cells(hosts: list[dict[str, Any]]) -> list[str]:
    """A point's hosts (``host``, ``iops``) as :data:`_QUANTILE_HEADER`'s cells."""
    sp = host_spread([h["iops"] for h in hosts])
    if sp is None:
        return ["0", *["-"] * (len(_QUANTILE_HEADER) - 1)]
    q = sp.quantiles
    quantiles = [f"{q[k] / 1e3:.2f}" for k in ("min", "p10", "p50", "p90", "max")]
    return [str(sp.hosts), *quantiles, str(hosts[sp.order[0]]["host"])]


def fleet_sweep_html(directory: Path) -> str:
    """A fleet sweep's per-host section for the HTML report, or "" for any other source."""
    from iolab.report.html import html_table

    made = _sweep_table(directory)
    if made is None:
        return ""
    table, hosts = made
    return f"<h2>Fleet: {hosts} hosts</h2>\n{html_table(table)}"


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
        doc, pt = read_fleet(p), _sweep_point(p)
        if len(pt["hosts"]) > ROWS_MAX:
            sp = host_spread([h["iops"] for h in pt["hosts"]])
            assert sp is not None
            slow = ", ".join(f"{pt['hosts'][i]['host']} {pt['hosts'][i]['iops'] / 1e3:.2f}" for i in sp.order[:ENDS])
            lines.append(f"  {p.name}: {len(pt['hosts'])} hosts, {quantiles_line(sp)}; slowest: {slow}")
        else:
            per = ", ".join(f"{h['host']} {h['iops'] / 1e3:.2f}" for h in pt["hosts"])
            lines.append(f"  {p.name}: kIOPS per host: {per or '- (no per-host results kept)'}")
        rows = [{"iops": h["iops"]} for h in pt["hosts"]]
        tail = "; " + spread_line(rows) if spread_line(rows) else ""
        lines.append(f"    {skew_line(doc)}{tail}")
        if pt["incomplete"]:
            lines.append("    INCOMPLETE: " + "; ".join(pt["faults"]))
    return "\n".join(lines) + "\n"


def format_fleet(doc: dict[str, Any]) -> str:
    """A fleet run: per group and direction a bar per host, or above
    :data:`ROWS_MAX` hosts their spread (quantiles, a histogram of host
    kIOPS, the slowest hosts, the stragglers); the start skew; faults."""
    lines = ["", f"Fleet: {len(doc['hosts'])} hosts", "  " + skew_line(doc)]
    for key, sel in by_group_dir(doc):
        if len(sel) > ROWS_MAX:
            spread = rows_spread(sel)
            assert spread is not None
            lines.append(f"  group {key[0]} {key[1]}: {len(sel)} hosts")
            lines += many_hosts_lines(spread)
        else:
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


__all__ = [
    "by_group_dir",
    "fleet_json",
    "fleet_section",
    "fleet_sweep_html",
    "format_fleet",
    "format_fleet_sweep",
    "skew_line",
    "spread_line",
    "sweep_table",
]
