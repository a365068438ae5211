"""The fleet lab's report as text, Markdown, JSON or one self-contained
HTML page: the post's figures beside the scaled and measured ones, a row
per VM and per node, the claims with their verdicts and numbers. The HTML
draws each VM's bandwidth against its limit and each VM's and node's read
latency against the bound."""

from __future__ import annotations

import html
import json
from typing import Any, Optional

from iolab.lab.render import html_page
from iolab.report.analysis_text import Table, format_text_table
from iolab.report.charts import Chart
from iolab.report.html import html_table
from iolab.report.markdown import md_table


def _num(v: Optional[float], digits: int = 4) -> str:
    if v is None:
        return "-"
    return f"{v:,.{digits}g}" if abs(v) < 1000 else f"{v:,.0f}"


def _fixed(v: Optional[float], fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def post_table(report: dict[str, Any]) -> Table:
    t = report["tables"][0]
    rows = []
    for r in t["rows"]:
        post = "-" if r["value"] is None else f"{r['relation']} {_num(r['value'])}".strip()
        scaled = "-" if r["scaled"] is None else f"{r['relation']} {_num(r['scaled'])}".strip()
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        rows.append([r["label"], r["unit"], post, scaled, _num(r["measured"]), ratio])
    header = ["", "unit", "post", "post scaled", "measured", "measured / scaled"]
    return Table(t["title"], header, rows, label_cols=2, notes=[f"scaled: {report['scale']['text']}"])


def vm_table(report: dict[str, Any]) -> Table:
    rows = [
        [
            v["vm"],
            v["node"],
            _fixed(v["limit_iops"], "d"),
            _fixed(v["iops"], ".2f"),
            _fixed(None if v["limit_deviation"] is None else v["limit_deviation"] * 100, "+.2f"),
            _fixed(v["mb_per_s"], ".2f"),
            _fixed(v["lat_mean_ms"], ".3f"),
            _fixed(v["lat_p99_ms"], ".3f"),
            _fixed(v.get("device_ms"), ".3f"),
            _fixed(v["outstanding"], ".2f"),
        ]
        for v in report["vms"]
    ]
    header = ["VM", "node", "limit IOPS", "IOPS", "vs limit %", "MB/s", "avg read ms", "p99 read ms", "target ms"]
    header.append("in flight")
    notes = [
        "IOPS and MB/s over the time each VM's I/Os ran; in flight: IOPS x average latency (Little's law; QD 3 at most)",
        "target ms: the target's own service time per read (its hold less its reply timer's lateness; "
        "- where iolab did not serve)",
    ]
    return Table("Per VM", header, rows, label_cols=2, notes=notes)


def node_table(report: dict[str, Any]) -> Table:
    rows = [
        [
            n["node"],
            str(n["vms"]),
            _fixed(n["iops"], ".2f"),
            _fixed(n["mb_per_s"], ".2f"),
            _fixed(n["lat_mean_ms"], ".3f"),
            _fixed(n["lat_p99_ms"], ".3f"),
            _fixed(n.get("device_ms"), ".3f"),
        ]
        for n in report["nodes"]
    ]
    header = ["node", "VMs", "IOPS", "MB/s", "avg read ms", "p99 read ms", "target ms"]
    return Table("Per node", header, rows, label_cols=2, notes=["latency from the node's VMs' histograms merged"])


def tables(report: dict[str, Any]) -> list[Table]:
    return [post_table(report), vm_table(report), node_table(report)]


def _head(report: dict[str, Any]) -> list[str]:
    mode = {"local": "local ranks", "netns": "network namespaces", "real": "real server"}[report["mode"]]
    quick = "quick, " if report["quick"] else ""
    where = "; ".join(report["served_by"][:1]) + (
        f" (+{len(report['served_by']) - 1} more)" if len(report["served_by"]) > 1 else ""
    )
    return [
        f"Seed 001 VM Fleet: {report['vm_count']} VMs on {report['node_count']} nodes ({mode})",
        f"({quick}{report['runtime_s']:g} s of 512 KiB random read at QD 3 per VM; served by {where})",
    ]


def _consistency(report: dict[str, Any]) -> str:
    c = report["post_consistency"]
    return (
        "The post's own figures are one statement at QD 3 (Little's law): 3 x 512 KiB over 1.5 ms is "
        f"{c['per_vm_bytes_per_s_from_latency'] / 1e9:.3f} GB/s per VM; 83 GB/s over 80 VMs is "
        f"{c['per_vm_bytes_per_s_from_aggregate'] / 1e9:.4f} GB/s."
    )


def _claims(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f"{c['statement']}: {c['verdict'].upper()}", c["text"]) for c in report["claims"]]


def _live_lines(report: dict[str, Any]) -> list[str]:
    live = report.get("live")
    if not live:
        return []
    named = [r["name"] for r in live["rows"]]
    return [
        f"Live view, last interval every VM reported ({live['seq']}): {len(named)} rows ({', '.join(named)}) and the total"
    ]


def render_text(report: dict[str, Any]) -> str:
    lines = _head(report)
    for t in tables(report):
        lines += ["", format_text_table(t)]
    lines += ["", _consistency(report), "", "Claims"]
    for q, a in _claims(report):
        lines += [f"  {q}", f"    {a}"]
    live = _live_lines(report)
    return "\n".join(lines + (["", *live] if live else [])) + "\n"


def render_markdown(report: dict[str, Any]) -> str:
    head = _head(report)
    lines = ["# " + head[0], "", head[1]]
    for t in tables(report):
        lines += ["", md_table(t)]
    lines += ["", _consistency(report), "", "## Claims", ""]
    lines += [f"- **{q}** {a}" for q, a in _claims(report)]
    live = _live_lines(report)
    return "\n".join(lines + (["", *live] if live else [])) + "\n"


def render_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, allow_nan=False) + "\n"


def fleet_charts(report: dict[str, Any]) -> list[Chart]:
    """Each VM's MB/s beside its limit; each VM's and node's average and p99 read latency beside the bound."""
    vms = report["vms"]
    names = [v["vm"] for v in vms]
    bs_mb = int(report["measured"]["bs_bytes"]) / 1e6
    bw = Chart(
        "Per-VM bandwidth against its QoS limit",
        [
            {"type": "bar", "name": "measured", "x": names, "y": [v["mb_per_s"] for v in vms]},
            {
                "type": "bar",
                "name": "limit",
                "x": names,
                "y": [None if v["limit_iops"] is None else v["limit_iops"] * bs_mb for v in vms],
            },
        ],
        {
            "title": {"text": "Per-VM bandwidth against its QoS limit"},
            "barmode": "group",
            "xaxis": {"title": {"text": "VM"}, "type": "category"},
            "yaxis": {"title": {"text": "MB/s"}},
        },
    )
    bound = next(c["numbers"]["bound_ns"] for c in report["claims"] if c["key"] == "latency") / 1e6
    rows = [*vms, *report["nodes"]]
    labels = [r.get("vm") or r["node"] for r in rows]
    lat = Chart(
        "Read latency per VM and per node",
        [
            {"type": "bar", "name": "average", "x": labels, "y": [r["lat_mean_ms"] for r in rows]},
            {"type": "bar", "name": "p99", "x": labels, "y": [r["lat_p99_ms"] for r in rows]},
            {
                "type": "scatter",
                "mode": "lines",
                "name": "post's bound scaled",
                "x": labels,
                "y": [bound] * len(labels),
            },
        ],
        {
            "title": {"text": "Read latency per VM and per node"},
            "barmode": "group",
            "xaxis": {"title": {"text": "VM or node"}, "type": "category"},
            "yaxis": {"title": {"text": "ms"}},
        },
    )
    series = report.get("node_series") or {}
    if not series:
        return [bw, lat]
    over_time = Chart(
        "Read bandwidth per node over time (Watch-Cluster)",
        [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": node,
                "x": [t for t, _ in pts],
                "y": [mb for _, mb in pts],
            }
            for node, pts in series.items()
        ],
        {
            "title": {"text": "Read bandwidth per node over time (Watch-Cluster)"},
            "xaxis": {"title": {"text": "s"}},
            "yaxis": {"title": {"text": "MB/s"}, "rangemode": "tozero"},
        },
    )
    return [bw, lat, over_time]


def render_html(report: dict[str, Any]) -> str:
    e = html.escape
    claims = "".join(f"<li><b>{e(q)}</b> {e(a)}</li>" for q, a in _claims(report))
    live = "".join(f"<p class='meta'>{e(x)}</p>" for x in _live_lines(report))
    body = f"""<h2>Tables</h2>
{"".join(html_table(t) for t in tables(report))}
<p>{e(_consistency(report))}</p>
<h2>Claims</h2>
<ul class="findings">{claims}</ul>
{live}"""
    return html_page("iolab lab fleet", _head(report), fleet_charts(report), body)


RENDERERS = {"text": render_text, "md": render_markdown, "json": render_json, "html": render_html}
