"""The wire lab's report as text, Markdown, JSON or one HTML page: each of
seed 000's tables with the paper's value and the measured one side by side
in every cell (``paper / measured``, the paper's unit), the wire latency
by percentile (Figure 6), each claim's verdict with its numbers. The HTML
draws the paper's figures: client vs server CDF per size (Figure 5), wire
latency at the 10th-95th percentiles (Figure 6), and the scaling curves
(Figures 7, 11, 12: throughput and p90 against outstanding I/Os, the
saturation step marked x)."""

from __future__ import annotations

import html
import json
from typing import Any

from iolab.lab.render import html_page
from iolab.lab.wire.measure import WIRE_RANGE
from iolab.lab.wire.verdicts import saturation
from iolab.report.analysis_text import Table, format_text_table
from iolab.report.charts import Chart
from iolab.report.html import html_table
from iolab.report.markdown import md_table

Json = dict[str, Any]
NOTE = (
    "Each cell: the paper's value / the measured one, in the paper's unit. %CPU: share of the CPUs that side may "
    "run on (the paper: of its 16 cores); c/B: the process's CPU time x clock / bytes (the paper: %Privileged). "
    "The paper ran 1-16 threads; steps not run here show '-'."
)


def _num(v: Any) -> str:
    if v is None:
        return "-"
    a = abs(v)
    return f"{v:,.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}"


def tables(report: Json) -> list[Table]:
    out: list[Table] = []
    for t in report["tables"]:
        cols = list(dict.fromkeys((r["column"], r["unit"]) for r in t["rows"]))
        labels = list(dict.fromkeys(r["label"] for r in t["rows"]))
        cell = {(r["label"], r["column"]): r for r in t["rows"]}
        rows = [
            [lab] + [f"{_num(cell[lab, c]['paper'])} / {_num(cell[lab, c]['measured'])}" for c, _ in cols]
            for lab in labels
        ]
        header = ["threads (I/O)" if t["key"] != "table1" else "size"] + [f"{c} ({u})" for c, u in cols]
        out.append(Table(t["title"], header, rows, label_cols=1, notes=[] if out else [NOTE]))
    wire = wire_table(report)
    if wire is not None:
        out.append(wire)
    return out


def wire_table(report: Json) -> Table | None:
    """Figure 6 as a table: read wire latency (µs) at p10-p95 per size."""
    rows = []
    for p in report["points"].get("table1", []):
        w = p["directions"].get("read", {}).get("wire_ns")
        if p["rw"] != "randread" or not w:
            continue
        rows.append([f"{p['bs_bytes'] // 1024} KiB"] + [_num(w[f"p{q:g}"] / 1000) for q in WIRE_RANGE])
    if not rows:
        return None
    header = ["size"] + [f"p{q:g}" for q in WIRE_RANGE]
    note = (
        "each cell is the client's percentile less the server's (the paper's method): a difference of two "
        "distributions' percentiles, not a percentile of per-I/O wire times, so a row need not rise with the percentile"
    )
    return Table(
        "Figure 6 - read wire latency (client - server, us) at the 10th-95th percentiles", header, rows, 1, [note]
    )


def _head(report: Json) -> list[str]:
    mode = "quick, " if report["quick"] else ""
    return [
        f"Seed 000 (SMB Direct file server) against {report['target']}",
        f"({mode}{report['runtime_s']:g} s per step, threads {report['threads']}; client, server and wire "
        "latency as the paper measured them: the server's time is the storage's, the wire is client - server)",
    ]


def _claims(report: Json) -> list[tuple[str, str]]:
    return [(f"[{c['verdict']}] {c['statement']}", c["text"]) for c in report["claims"]]


def render_text(report: Json) -> str:
    lines = _head(report) + [f"  {n}" for n in report.get("notes", [])]
    for t in tables(report):
        lines += ["", format_text_table(t)]
    lines += ["", "Claims"]
    for q, a in _claims(report):
        lines += [f"  {q}", f"    {a}"]
    return "\n".join(lines) + "\n"


def render_markdown(report: Json) -> str:
    lines = ["# " + _head(report)[0], "", _head(report)[1], ""] + [f"- {n}" for n in report.get("notes", [])]
    for t in tables(report):
        lines += ["", md_table(t)]
    lines += ["", "## Claims", ""] + [f"- **{q}** {a}" for q, a in _claims(report)]
    return "\n".join(lines) + "\n"


def render_json(report: Json) -> str:
    return json.dumps(report, indent=2, allow_nan=False) + "\n"


def _layout(title: str, x: str, y: str, xlog: bool = False) -> Json:
    return {
        "title": {"text": title},
        "xaxis": {"title": {"text": x}, **({"type": "log"} if xlog else {})},
        "yaxis": {"title": {"text": y}},
    }


def charts(report: Json) -> list[Chart]:
    out: list[Chart] = []
    single = [p for p in report["points"].get("table1", []) if p["rw"] == "randread"]
    for p in single:
        d = p["directions"].get("read", {})
        data: list[Json] = []
        for side in ("client", "server"):
            pts = d.get(f"{side}_ns") or {}
            if pts:
                xs = [v / 1000 for v in pts.values()]
                ys = [float(k[1:]) for k in pts]
                data.append({"type": "scatter", "mode": "lines+markers", "name": side, "x": xs, "y": ys})
        if data:
            title = f"Figure 5 - {p['bs_bytes'] // 1024} KiB read latency CDF, client vs server"
            out.append(Chart(title, data, _layout(title, "latency (us), log scale", "percentile", xlog=True)))
    wire = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": f"{p['bs_bytes'] // 1024} KiB",
            "x": [q for q in WIRE_RANGE],
            "y": [p["directions"]["read"]["wire_ns"][f"p{q:g}"] / 1000 for q in WIRE_RANGE],
        }
        for p in single
        if p["directions"].get("read", {}).get("wire_ns")
    ]
    if wire:
        title = "Figure 6 - read wire latency at the 10th-95th percentiles"
        out.append(Chart(title, wire, _layout(title, "percentile", "wire latency (us)")))
    big: dict[int, Json] = {}
    for p in report["points"].get("table4", []):
        if p["threads"] >= big.get(p["bs_bytes"], {}).get("threads", 0):
            big[p["bs_bytes"]] = p
    data = []
    for bs, p in sorted(big.items()):
        pts = (p["directions"].get("read") or {}).get("client_ns") or {}
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"{bs // 1024} KiB, {p['outstanding']} I/O",
                "x": [v / 1000 for v in pts.values()],
                "y": [float(k[1:]) for k in pts],
            }
        )
    if data:
        title = "Figure 10 - large read latency CDF at the most outstanding I/Os (client)"
        out.append(Chart(title, data, _layout(title, "latency (us)", "percentile", xlog=True)))
    for key, unit, fig in (("table2", "IOPS", "7"), ("table3", "IOPS", "9"), ("table4", "GB/s", "11/12")):
        pts = report["points"].get(key, [])
        sizes = sorted({p["bs_bytes"] for p in pts})
        for metric, name in (("tp", unit), ("p90", "p90 latency (us)")):
            data = []
            for s in sizes:
                series = sorted((p for p in pts if p["bs_bytes"] == s), key=lambda p: p["outstanding"])
                ys = [
                    (p["iops"] if unit == "IOPS" else p["bw_bytes_per_s"] / 1e9)
                    if metric == "tp"
                    else (
                        (p["directions"].get("read") or p["directions"].get("write") or {})
                        .get("client_ns", {})
                        .get("p90", 0)
                        / 1000
                    )
                    for p in series
                ]
                line: Json = {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"{s // 1024} KiB",
                    "x": [p["outstanding"] for p in series],
                    "y": ys,
                }
                data.append(line)
                knee = saturation(series)
                if knee is not None:
                    data.append(
                        {
                            "type": "scatter",
                            "mode": "markers",
                            "marker": {"symbol": "x", "size": 14},
                            "name": f"{s // 1024} KiB saturated",
                            "x": [series[knee]["outstanding"]],
                            "y": [ys[knee]],
                        }
                    )
            if data:
                title = f"Figure {fig} ({key}) - {name} against outstanding I/Os"
                out.append(Chart(title, data, _layout(title, "outstanding I/Os", name, xlog=True)))
    return out


def render_html(report: Json) -> str:
    e = html.escape
    items = "".join(f"<li><b>{e(q)}</b> {e(a)}</li>" for q, a in _claims(report))
    notes = "".join(f"<li>{e(n)}</li>" for n in report.get("notes", []))
    body = f"""<ul>{notes}</ul>
<h2>Tables</h2>
{"".join(html_table(t) for t in tables(report))}
<h2>Claims</h2>
<ul class="findings">{items}</ul>"""
    return html_page("iolab lab wire", _head(report), charts(report), body)


RENDERERS = {"text": render_text, "md": render_markdown, "json": render_json, "html": render_html}
