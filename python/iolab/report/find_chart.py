"""The chart of an ``iolab find`` directory: per SLO clause, the figure the
search measured at each value of the axis with its 95 % interval (from
find.json: the merged percentile, ± Student's t over the repeats), the
clause's threshold as a line, the point chosen (the highest meeting the
SLO) and the first breaking it marked. A grid draws one line per value of
its second axis, each row's chosen and breaking points, and the best
point of the grid; a fleet's search a line per host and one for the
total (each clause is judged on each).

Reads the search's own record (``Dataset.plan["find"]``, from find.json),
not the report's rows: the figures are exactly those the search decided on.
"""

from __future__ import annotations

from typing import Any, Optional

from iolab.analysis.model import Analysis, Json
from iolab.report.charts import Chart, layout, wide
from iolab.units import lat_unit_for

_MET = {"symbol": "star", "size": 16, "color": "#1e8449"}
_BROKEN = {"symbol": "x", "size": 14, "color": "#c0392b"}


def find_charts(an: Analysis) -> list[Chart]:
    """One chart per clause of the SLO; none for a directory that is not a search."""
    found = an.dataset.plan.get("find")
    if not isinstance(found, dict):
        return []
    rows: list[tuple[str, Json]] = (
        [(f"{found['grid_axis']}={r[found['grid_axis']]}", r) for r in found.get("rows") or []]
        if found.get("grid_axis")
        else [("", found)]
    )
    if not rows or not rows[0][1].get("evaluations"):
        return []
    # A fleet's search judges each clause on the total and on every host: one chart per clause,
    # a curve per scope.
    by_text: dict[str, list[int]] = {}
    for i, c in enumerate(rows[0][1]["evaluations"][0]["clauses"]):
        by_text.setdefault(c["clause"], []).append(i)
    return [c for text, idx in by_text.items() if (c := _clause_chart(found, rows, idx, text)) is not None]


def _clause_chart(found: Json, rows: list[tuple[str, Json]], idx: list[int], text: str) -> Optional[Chart]:
    axis = str(found["axis"])
    evs = [e for _, r in rows for e in r["evaluations"]]
    i = idx[0]
    unit_kind = evs[0]["clauses"][i]["unit"]
    figures = [e["clauses"][j]["value"] for e in evs for j in idx]
    if unit_kind == "ns":
        unit, scale = lat_unit_for(figures)
    else:
        unit, scale = "IOPS", 1.0
    data: list[Json] = []
    for name, r in rows:
        for j in idx:
            scope = r["evaluations"][0]["clauses"][j].get("scope", "total") if len(idx) > 1 else ""
            data.extend(_row_traces(" ".join(x for x in (name, scope) if x), r, j, scale))
    xs = [float(e["value"]) for e in evs]
    threshold = evs[0]["clauses"][i].get("threshold")
    if threshold is not None:
        data.append({"type": "scatter", "mode": "lines", "name": f"SLO: {text}", "x": [min(xs), max(xs)],
                     "y": [threshold / scale] * 2, "line": {"dash": "dash", "color": "#555", "width": 2}})  # fmt: skip
    best = found.get("best")
    if isinstance(best, dict):  # a grid: the best point over it, on its row's curve
        g = str(found["grid_axis"])
        row = next((r for _, r in rows if r.get(g) == best.get(g)), None)
        at = next((e for e in (row or {}).get("evaluations", []) if e["value"] == best.get(axis)), None)
        if at is not None:
            data.append(_mark(f"best over the grid: {axis}={at['value']} {g}={best[g]}", at, i, scale,
                              {"symbol": "star-diamond", "size": 22, "color": "#f1c40f",
                               "line": {"color": "#1e8449", "width": 2}}))  # fmt: skip
    vals = [v / scale for v in figures if v > 0]
    title = f"SLO search: {text} vs {axis}"
    ylabel = f"{_figure_name(text)} ({unit})"
    return Chart(title, data, layout(title, axis, ylabel, xlog=wide(xs), ylog=wide(vals)))


def _row_traces(name: str, r: Json, i: int, scale: float) -> list[Json]:
    """The curve of one search (its values in order along the axis, with
    their intervals), its chosen value and its first breaking one."""
    evs = sorted(r["evaluations"], key=lambda e: e["value"])
    label = f"{name} " if name else ""
    ys = [e["clauses"][i]["value"] / scale for e in evs]
    up, down = [], []
    for e, y in zip(evs, ys):
        ci = e["clauses"][i].get("ci95")
        up.append(ci[1] / scale - y if ci else 0.0)
        down.append(min(y - ci[0] / scale, y) if ci else 0.0)  # no bar below zero
    curve: Json = {"type": "scatter", "mode": "lines+markers", "name": f"{label}measured (± 95 % interval)",
                   "x": [e["value"] for e in evs], "y": ys}  # fmt: skip
    if any(up):
        curve["error_y"] = {"type": "data", "symmetric": False, "array": up, "arrayminus": down, "visible": True}
    out = [curve]
    for key, words, marker in (("best", "meets", _MET), ("first_fail", "first breaking", _BROKEN)):
        at = next((e for e in evs if e["value"] == r.get(key)), None) if not isinstance(r.get(key), dict) else None
        if at is not None:
            out.append(_mark(f"{label}{words}: {at['value']}", at, i, scale, marker))
    return out


def _mark(name: str, e: Json, i: int, scale: float, marker: dict[str, Any]) -> Json:
    return {"type": "scatter", "mode": "markers", "name": name, "x": [e["value"]],
            "y": [e["clauses"][i]["value"] / scale], "marker": marker}  # fmt: skip


def _figure_name(clause: str) -> str:
    """``read.p99<1ms`` → ``read.p99``: what the y axis shows."""
    for op in ("<=", ">=", "<", ">"):
        if op in clause:
            return clause.split(op)[0].strip()
    return clause
