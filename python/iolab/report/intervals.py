"""``iolab report --window`` and the report of a run from its interval log
alone (a run killed mid-way): per job and direction, the intervals of the
window merged exactly (percentiles from the merged histograms, never
averaged), as a text table or JSON (``iolab.window/1``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from iolab import _native
from iolab.results.intervals import IntervalLogState, WindowRow
from iolab.units import fmt_secs, fmt_sig3

#: The percentiles of a window's rows.
WINDOW_PERCENTILES = (50.0, 90.0, 99.0, 99.9)
WINDOW_SCHEMA = "iolab.window/1"


def window_json(rows: Sequence[WindowRow], state: IntervalLogState, window: tuple[int, int]) -> dict[str, Any]:
    """The window's rows with their latency statistics (ns), and the log's state."""
    out_rows = []
    for r in rows:
        if r.ios == 0:  # a direction the job did not do
            continue
        stats = _native.hist_stats(r.lat_ns, list(WINDOW_PERCENTILES))
        pcts = {f"lat_p{p:g}_ns": stats["percentiles"][p] for p in WINDOW_PERCENTILES}
        out_rows.append(
            {
                "job": r.job,
                "dir": r.dir,
                "intervals": r.intervals,
                "start_ns": r.start_ns,
                "end_ns": r.end_ns,
                "ios": r.ios,
                "bytes": r.bytes,
                "iops": r.iops,
                "bw_bytes_per_s": r.bw_bytes_per_s,
                "lat_count": stats["count"],
                "lat_min_ns": stats["min_ns"],
                "lat_max_ns": stats["max_ns"],
                "lat_mean_ns": stats["mean_ns"],
                **pcts,
            }
        )
    return {
        "schema": WINDOW_SCHEMA,
        "window": {"start_ns": window[0], "end_ns": window[1] if window[1] < 2**64 - 1 else None},
        "interrupted": state.interrupted,
        "jobs": [dict(j) for j in state.jobs],
        "rows": out_rows,
    }


def format_window_text(doc: dict[str, Any]) -> str:
    """The window as a table: one line per job and direction, latency in µs."""
    w = doc["window"]
    end = "end" if w["end_ns"] is None else fmt_secs(w["end_ns"])
    lines = [f"window {fmt_secs(w['start_ns'])} .. {end} (whole intervals; times from each job's measured start)"]
    if doc["interrupted"]:
        last = ", ".join(f"{j['name']}: {j['intervals']} intervals to {fmt_secs(j['end_ns'])}" for j in doc["jobs"])
        lines.append(f"interrupted run: the interval log ends early ({last})")
    head = (
        "job",
        "dir",
        "intervals",
        "span s",
        "I/Os",
        "IOPS",
        "MB/s",
        *tuple(f"p{p:g} µs" for p in WINDOW_PERCENTILES),
        "max µs",
    )
    table = [head]
    for r in doc["rows"]:
        span_s = ((r["end_ns"] or 0) - (r["start_ns"] or 0)) / 1e9
        lat = tuple(fmt_sig3(r[f"lat_p{p:g}_ns"] / 1e3) for p in WINDOW_PERCENTILES)
        table.append(
            (r["job"], r["dir"], str(r["intervals"]), f"{span_s:.3f}", str(r["ios"]), fmt_sig3(r["iops"]), fmt_sig3(r["bw_bytes_per_s"] / 1000000.0), *lat, fmt_sig3(r["lat_max_ns"] / 1000.0))
        )  # fmt: skip
    if len(table) == 1:
        lines.append("no whole interval lies in the window")
    else:
        widths = [max(len(row[i]) for row in table) for i in range(len(head))]
        for row in table:
            lines.append("  ".join(c.rjust(wd) if i > 1 else c.ljust(wd) for i, (c, wd) in enumerate(zip(row, widths))))
    return "\n".join(lines) + "\n"


def format_window(doc: dict[str, Any], as_json: bool) -> str:
    return json.dumps(doc, indent=2) + "\n" if as_json else format_window_text(doc)
