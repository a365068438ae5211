"""The fio-study report as text, Markdown, JSON or one self-contained HTML
page: the seed's latency tables (a "seed" row and an "iolab" row per
label, every figure in µs), its bandwidth tables (seed beside measured, in
IOPS and MiB/s), the consistency findings on the seed's own figures, the
seed's analysis beside iolab's with a verdict per statement, and (HTML)
the seed's charts: latency vs size, IOPS vs queue depth and vs mix."""

from __future__ import annotations

import html
import json
from typing import Any

from iolab.lab.fio_study.seed import LAT_GROUPS, STATS
from iolab.lab.render import html_page
from iolab.report.analysis_text import Table, format_text_table
from iolab.report.charts import Chart
from iolab.report.html import html_table
from iolab.report.markdown import md_table

Json = dict[str, Any]
_MARK = "*"


def _num(v: Any) -> str:
    """A figure as printed: whole numbers without decimals (the seed's
    ``7``), else two decimals below 100."""
    if v is None:
        return "n/a"
    return f"{v:,.2f}" if abs(v) < 100 and v != int(v) else f"{v:,.0f}"


def _seed_num(v: Any) -> str:
    """The seed's figure with the digits it printed (up to 3 decimals: 375 ns
    is 0.375 µs), none added."""
    if v is None:
        return "n/a"
    return f"{v:,.3f}".rstrip("0").rstrip(".")


def _bw_seed(r: Json) -> str:
    return _seed_num(r["seed_value"]) + (_MARK if r.get("seed_note") else "")


def _seed_cell(r: Json) -> str:
    """The seed's figure in µs as headed, marked where it is not consistent as headed."""
    text = _seed_num(r["seed_value"])
    if r["figure"] == "clat" and r["seed_value"] is not None and r["seed_reading"] != "as headed":
        return text + _MARK
    return text


def latency_tables(report: Json) -> list[Table]:
    out = []
    header_cells = [f"{n} {s}" for n in ("total", "submission", "completion") for s in STATS]
    for t in report["latency_tables"]:
        by_label: dict[str, list[Json]] = {}
        for r in t["rows"]:
            by_label.setdefault(r["label"], []).append(r)
        rows = []
        for label, cells in by_label.items():
            rows.append([label, "seed", *(_seed_cell(c) for c in cells)])
            rows.append(["", "iolab", *(_num(c["measured"]) for c in cells)])
        notes = [
            "all figures in µs; the seed's heads: " + ", ".join(f"{n} ({u})" for n, u, _ in LAT_GROUPS),
            f"{_MARK} completion figure inconsistent with its row as headed (ns): see 'The seed's own figures'",
        ]
        out.append(Table(t["title"], [t["heading"], "", *[f"{h} (µs)" for h in header_cells]], rows, 2, notes))
    return out


def bandwidth_tables(report: Json) -> list[Table]:
    out = []
    for t in report["bandwidth_tables"]:
        by_key: dict[tuple[str, str], dict[str, Json]] = {}
        for r in t["rows"]:
            by_key.setdefault((r["label"], r["unit"]), {})[r["column"].split()[0].lower()] = r
        rows = []
        for (label, unit), cells in by_key.items():
            rd, wr = cells["read"], cells["write"]
            rows.append([label, unit, _bw_seed(rd), _num(rd["measured"]), _bw_seed(wr), _num(wr["measured"])])
        header = ["", "unit", "read seed", "read iolab", "write seed", "write iolab"]
        notes = [report["consistency"]["mb_note"]]
        if any(r.get("seed_note") for r in t["rows"]):
            notes.append(f"{_MARK} inconsistent with the seed's own columns: see 'The seed's own figures'")
        out.append(Table(t["title"], header, rows, 2, notes))
    return out


def _head(report: Json) -> list[str]:
    shrink = report.get("shrink") or {}
    shrunk = ", ".join(f"{k}={v}" for k, v in shrink.items() if v) or "none (the seed's size=10G, runtime=60)"
    adds = ", ".join(f"{k}={v}" for k, v in report.get("additions") or []) or "none"
    return [
        f"Seed 002 (fio on one SSD) re-run on {report['target']}",
        f"{report['repeats']} repeat(s) per point; shrunk: {shrunk}; added to the seed's commands: {adds}",
    ]


def _commands(report: Json) -> list[str]:
    return [f"{s}: {c}" for s, c in report["commands"].items()]


def _consistency(report: Json) -> list[str]:
    c = report["consistency"]
    return [n["note"] for n in c["latency"]] + [n["note"] for n in c["bandwidth"]]


def _analysis_lines(report: Json) -> list[tuple[str, list[str]]]:
    """(section title, lines): the seed's statements with verdicts, then iolab's own reading."""
    out = []
    for a in report["analysis"]:
        lines = []
        for s in a["seed"]:
            fig = f" [figure: {s['figure']}]" if s["figure"] else ""
            lines.append(f"seed ({s['kind']}): {s['statement']}")
            lines.append(f"  -> {s['verdict'].upper()}: {s['evidence']}{fig}")
        lines += [f"iolab: {t}" for t in a["iolab"]] or ["iolab: not measured"]
        out.append((a["title"], lines))
    return out


def _counts(report: Json) -> str:
    return "Verdicts: " + ", ".join(f"{n} {v}" for v, n in report["verdict_counts"].items())


def render_text(report: Json) -> str:
    lines = [*_head(report), "", "The seed's commands (run as written, but for the options above):"]
    lines += [f"  {c}" for c in _commands(report)]
    lines += [""] + [f"Note: {n}" for n in report["notes"]]
    for t in latency_tables(report) + bandwidth_tables(report):
        lines += ["", format_text_table(t)]
    lines += ["", "The seed's own figures, checked against its columns"] + [f"  {n}" for n in _consistency(report)]
    lines += ["", "Analysis: the seed's statements, verdicted, beside iolab's reading", f"  {_counts(report)}"]
    for title, ls in _analysis_lines(report):
        lines += ["", f"  {title}"] + [f"    {x}" for x in ls]
    return "\n".join(lines) + "\n"


def render_markdown(report: Json) -> str:
    head = _head(report)
    lines = [f"# {head[0]}", "", head[1], "", "## The seed's commands", ""]
    lines += [f"- `{c}`" for c in _commands(report)] + [""] + [f"> {n}" for n in report["notes"]]
    for t in latency_tables(report) + bandwidth_tables(report):
        lines += ["", md_table(t)]
    lines += ["", "## The seed's own figures, checked against its columns", ""] + [
        f"- {n}" for n in _consistency(report)
    ]
    lines += ["", "## Analysis", "", _counts(report)]
    for title, ls in _analysis_lines(report):
        lines += ["", f"### {title}", ""] + [f"- {x}" for x in ls]
    return "\n".join(lines) + "\n"


def render_json(report: Json) -> str:
    return json.dumps(report, indent=2, allow_nan=False) + "\n"


def _series(points: list[Json], axis: str, key: str, bs: str = "") -> tuple[list[str], list[Any]]:
    pts = [p for p in points if not bs or str(p["params"].get("bs")) == bs]
    xs = [str(p["params"][axis]) for p in pts]
    ys = []
    for p in pts:
        if key == "iops":
            ys.append(sum((p[d] or {}).get("iops", 0.0) for d in ("read", "write")))
        else:
            d = p.get(key)
            ys.append(None if d is None or d["lat_us"] is None else d["lat_us"]["avg"])
    return xs, ys


def study_charts(report: Json) -> list[Chart]:
    """The seed's charts: mean total latency vs block size (per direction,
    seed and iolab), IOPS (read + write) vs queue depth and vs mix per block size."""
    m = report["measured"]
    out = []
    if m.get("bs"):
        data = []
        for t in (t for t in report["latency_tables"] if t["sweep"] == "bs"):
            rows = [r for r in t["rows"] if r["figure"] == "lat" and r["stat"] == "avg"]
            data.append({"type": "scatter", "mode": "lines+markers", "name": f"seed {t['direction']}",
                         "x": [r["label"] for r in rows], "y": [r["seed_value"] for r in rows]})  # fmt: skip
        for d in ("read", "write"):
            xs, ys = _series(m["bs"], "bs", d)
            data.append({"type": "scatter", "mode": "lines+markers", "name": f"iolab {d}", "x": xs, "y": ys})
        layout = {"title": {"text": "Latency vs data access size (mean total latency)"},
                  "xaxis": {"title": {"text": "Data Access Size"}, "type": "category"},
                  "yaxis": {"title": {"text": "µs"}}}  # fmt: skip
        out.append(Chart("Latency vs data access size", data, layout))
    for sweep, axis, title in (("qd", "iodepth", "I/O Queue Depth"), ("rwmix", "rwmixread", "Read share (%)")):
        pts = m.get(sweep) or []
        if not pts:
            continue
        data = []
        for bs in dict.fromkeys(str(p["params"]["bs"]) for p in pts):
            xs, ys = _series(pts, axis, "iops", bs)
            data.append({"type": "scatter", "mode": "lines+markers", "name": f"iolab {bs}", "x": xs, "y": ys})
        for t in (t for t in report["bandwidth_tables"] if t["sweep"] == sweep):
            for bs in dict.fromkeys(r["bs"] for r in t["rows"] if r["unit"] == "IOPS"):
                rows = [r for r in t["rows"] if r["bs"] == bs and r["unit"] == "IOPS"]
                labels = list(dict.fromkeys(r["label"].split()[1] for r in rows))
                ys = [sum(r["seed_value"] or 0.0 for r in rows if r["label"].split()[1] == lab) for lab in labels]
                xs = [lab.split("/")[0] for lab in labels]
                data.append({"type": "scatter", "mode": "markers", "name": f"seed {bs}", "x": xs, "y": ys})
        layout = {"title": {"text": f"IOPS (read + write) vs {title}"},
                  "xaxis": {"title": {"text": title}, "type": "category"},
                  "yaxis": {"title": {"text": "IOPS"}}}  # fmt: skip
        out.append(Chart(f"IOPS vs {title}", data, layout))
    return out


def render_html(report: Json) -> str:
    e = html.escape
    analysis = "".join(
        f"<h3>{e(title)}</h3><ul class='findings'>{''.join(f'<li>{e(x)}</li>' for x in ls)}</ul>"
        for title, ls in _analysis_lines(report)
    )
    body = f"""<ul>{"".join(f"<li><code>{e(c)}</code></li>" for c in _commands(report))}</ul>
<ul>{"".join(f"<li>{e(n)}</li>" for n in report["notes"])}</ul>
<h2>Tables</h2>
{"".join(html_table(t) for t in latency_tables(report) + bandwidth_tables(report))}
<h2>The seed's own figures, checked against its columns</h2>
<ul>{"".join(f"<li>{e(n)}</li>" for n in _consistency(report))}</ul>
<h2>Analysis</h2>
<p class="meta">{e(_counts(report))}</p>
{analysis}"""
    return html_page("iolab lab fio-study", _head(report), study_charts(report), body)


RENDERERS = {"text": render_text, "md": render_markdown, "json": render_json, "html": render_html}
