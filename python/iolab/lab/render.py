"""The RAID lab report as text, Markdown, JSON or one self-contained HTML
page: every workbook table with the measured value beside the model's and
the workbook's, the client figures that are off the model's (and why),
then the lab questions answered, each naming the figure it used
(:mod:`iolab.lab.answers`). The HTML draws one chart per lab and unit."""

from __future__ import annotations

import html
import json
from typing import Any

from iolab.lab.answers import GAP_TOLERANCE, SOURCES
from iolab.lab.rtt import ROW_TOLERANCE
from iolab.lab.workbook import ROW_HEADINGS
from iolab.report.analysis_text import Table, format_text_table
from iolab.report.charts import Chart
from iolab.report.html import _BOOT, _CSS, _charts, html_table, plotly_js
from iolab.report.markdown import md_table
from iolab.units import fmt_ns

UNIT_NOTE = "The workbook's MB/s are MiB/s (6627 IOPS x 64 KiB = 414 MiB/s); iolab prints MiB/s."


def _num(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v:,.2f}" if abs(v) < 1000 else f"{v:,.0f}"


def _val(v: Any, unit: str) -> str:
    return "-" if v is None else f"{_num(v)} {unit}"


#: Marks a measured figure the host could not hold real time for.
UNRELIABLE = "!"
FIT_NOTE = (
    "model + RTT: the model again with the round trip the client measured in the same run (QD 1, same block "
    "size, against a null export holding the model's time); measured vs model + RTT: ok within "
    f"{ROW_TOLERANCE:.0%}, late where the host's lateness accounts for the difference (the target's late replies, "
    f"or a probe slowed more than the row), gap where nothing recorded does; {UNRELIABLE} beside a measured figure: "
    "not ok, or the host could not hold real time"
)


def _fidelity_notes(t: dict[str, Any]) -> list[str]:
    """Beside a table: the client's measured round trip and how late the
    target's replies went out for each test (its fidelity record; one line
    per test, which 1B shows in two rows), marked where the host was too
    busy to hold real time."""
    notes, seen = [], set()
    for r in t["rows"]:
        f = r.get("fidelity")
        if f is None or r["test"] in seen:
            continue
        seen.add(r["test"])
        mark = f"{UNRELIABLE} " if f["unreliable"] else ""
        rtt = "" if r.get("fit") is None else f"round trip {fmt_ns(r['fit']['rtt_ns'])}; "
        notes.append(f"{mark}{_bar_name(r)}: {rtt}{f['text']}")
    return notes


def _has_fit(report: dict[str, Any]) -> bool:
    return any(r.get("fit") for t in report["tables"] for r in t["rows"])


def _unreliable(r: dict[str, Any]) -> bool:
    """Whether a row's measured figure is marked: the host could not hold
    real time (the target's record), or the figure is off the model plus
    the measured round trip (its verdict is not ``ok``), so every row is
    either within the tolerance or marked, with its reason below."""
    f, fit = r.get("fidelity"), r.get("fit")
    return bool(f is not None and f["unreliable"]) or bool(fit is not None and fit["verdict"] != "ok")


def _fit_cell(r: dict[str, Any]) -> str:
    f = r.get("fit")
    return "-" if f is None else f"{f['verdict']} ({f['ratio'] - 1.0:+.0%})"


def tables(report: dict[str, Any]) -> list[Table]:
    """One table per lab: label, column, measured, model (simulated array),
    model + RTT and its verdict (where the round trip was measured),
    workbook, measured/workbook; beside it, for a simulated array, the
    target's reply lateness per row, and a row whose replies the host could
    not send on time has its measured figure marked."""
    out = []
    with_model = report["simulated"]
    with_fit = _has_fit(report)
    for t in report["tables"]:
        rows = []
        for r in t["rows"]:
            cells = [r["label"], r["column"] if r["column"] not in ("IOPS", "MB/s") else ""]
            mark = f" {UNRELIABLE}" if _unreliable(r) else ""
            cells.append(_val(r["measured"], r["unit"]) + mark)
            if with_model:
                cells.append(_val(r.get("model"), r["unit"]))
            if with_fit:
                cells += [_val(r.get("model_rtt"), r["unit"]), _fit_cell(r)]
            cells.append(_val(r["reference"], r["unit"]))
            cells.append("-" if r["ratio"] is None else f"{r['ratio']:.2f}")
            rows.append(cells)
        header = [
            "",
            "",
            "measured",
            *(["model"] if with_model else []),
            *(["model + RTT", "measured vs model + RTT"] if with_fit else []),
            "workbook",
            "measured / workbook",
        ]
        notes = ["model: the simulated stack on a virtual clock (no socket, no scheduling noise)"] if with_model else []
        if with_fit:
            notes.append(FIT_NOTE)
        fid = _fidelity_notes(t)
        if fid:
            notes.append(
                f"target's reply lateness (its fidelity record; {UNRELIABLE}: the host could not hold real time):"
            )
            notes += fid
        out.append(Table(t["title"], header, rows, label_cols=2, notes=notes))
    return out


def _head(report: dict[str, Any]) -> list[str]:
    mode = "quick, " if report["quick"] else ""
    if report.get("realtime"):
        mode += "client and target under SCHED_FIFO, "
    return [
        f"Seed 003 RAID labs against {report['target']}",
        f"({mode}{report['runtime_s']:g} s per test, measured by iolab's client). {UNIT_NOTE}",
    ]


def _sources(report: dict[str, Any]) -> str:
    """Which figures the answers use, in words."""
    used = sorted({a.get("source", "client") for a in report["answers"]})
    return "Answers from the " + "; from the ".join(SOURCES[u] for u in used) + "."


def _answers(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f"Lab {a['lab']}: {a['question']}", a["answer"]) for a in report["answers"]]


def _gap_lines(report: dict[str, Any]) -> list[str]:
    """The measured-vs-model section: a line per gap, or that there is none."""
    if not report["simulated"]:
        return []
    gaps = report.get("gaps", [])
    within = f"every test's client figure is within {GAP_TOLERANCE:.0%} of the model"
    return [g["text"] for g in gaps] if gaps else [within]


FIT_HEADING = f"Measured vs model + measured round trip (within {ROW_TOLERANCE:.0%})"


def _fit_lines(report: dict[str, Any]) -> list[str]:
    """A line per row off the model with the measured round trip (its
    verdict and why), or that every row is within the tolerance."""
    if not _has_fit(report):
        return []
    off = [
        f"{t['lab']} {_bar_name(r)} ({r['unit']}): {r['fit']['verdict']}: {r['fit']['text']}"
        for t in report["tables"]
        for r in t["rows"]
        if r.get("fit") and r["fit"]["verdict"] != "ok"
    ]
    return off or [f"every row is within {ROW_TOLERANCE:.0%} of the model with the measured round trip"]


def render_text(report: dict[str, Any]) -> str:
    lines = _head(report)
    for t in tables(report):
        lines += ["", format_text_table(t)]
    fit_lines = _fit_lines(report)
    if fit_lines:
        lines += ["", FIT_HEADING] + [f"  {g}" for g in fit_lines]
    gap_lines = _gap_lines(report)
    if gap_lines:
        lines += ["", f"Measured vs model (beyond {GAP_TOLERANCE:.0%})"] + [f"  {g}" for g in gap_lines]
    lines += ["", "Questions", f"  {_sources(report)}"]
    for q, a in _answers(report):
        lines += [f"  {q}", f"    {a}"]
    return "\n".join(lines) + "\n"


def render_markdown(report: dict[str, Any]) -> str:
    lines = ["# " + _head(report)[0], "", _head(report)[1]]
    for t in tables(report):
        lines += ["", md_table(t)]
    fit_lines = _fit_lines(report)
    if fit_lines:
        lines += ["", f"## {FIT_HEADING}", ""] + [f"- {g}" for g in fit_lines]
    gap_lines = _gap_lines(report)
    if gap_lines:
        lines += ["", f"## Measured vs model (beyond {GAP_TOLERANCE:.0%})", ""] + [f"- {g}" for g in gap_lines]
    lines += ["", "## Questions", "", _sources(report), ""]
    for q, a in _answers(report):
        lines += [f"- **{q}** {a}"]
    return "\n".join(lines) + "\n"


def render_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, allow_nan=False) + "\n"


def _bar_name(r: dict[str, Any]) -> str:
    """A bar's label: the row's, and its column where the column is a setting
    ("Write Through, Disk Cache Disabled"), not the unit ("IOPS", "MB/s")."""
    return r["label"] if r["column"] in ("IOPS", "MB/s") else f"{r['label']}, {r['column']}"


def lab_charts(report: dict[str, Any]) -> list[Chart]:
    """One bar chart per lab and unit: a table measured in IOPS and MiB/s
    (1B) gets two, so neither's bars are drawn on the other's scale."""
    out = []
    for t in report["tables"]:
        for unit in dict.fromkeys(r["unit"] for r in t["rows"]):
            rows = [r for r in t["rows"] if r["unit"] == unit]
            names = [_bar_name(r) for r in rows]
            data = [
                {"type": "bar", "name": "measured", "x": names, "y": [r["measured"] for r in rows]},
                {"type": "bar", "name": "model", "x": names, "y": [r.get("model") for r in rows]},
                {"type": "bar", "name": "workbook", "x": names, "y": [r["reference"] for r in rows]},
            ]
            title = t["title"] if len({r["unit"] for r in t["rows"]}) == 1 else f"{t['title']}: {unit}"
            layout = {
                "title": {"text": title},
                "barmode": "group",
                "xaxis": {"title": {"text": ROW_HEADINGS.get(t["lab"], "")}, "type": "category"},
                "yaxis": {"title": {"text": unit}},
            }
            out.append(Chart(title, data, layout))
    return out


def render_html(report: dict[str, Any]) -> str:
    charts = lab_charts(report)
    e = html.escape
    qa = "".join(f"<li><b>{e(q)}</b> {e(a)}</li>" for q, a in _answers(report))
    gap_lines = _gap_lines(report)
    fit_lines = _fit_lines(report)
    fit_html = (
        f"<h2>{e(FIT_HEADING)}</h2>\n<ul>{''.join(f'<li>{e(g)}</li>' for g in fit_lines)}</ul>" if fit_lines else ""
    )
    gap_html = fit_html + (
        f"<h2>Measured vs model (beyond {GAP_TOLERANCE:.0%})</h2>\n<ul>{''.join(f'<li>{e(g)}</li>' for g in gap_lines)}</ul>"
        if gap_lines
        else ""
    )
    body = f"""<h2>Tables</h2>
{"".join(html_table(t) for t in tables(report))}
{gap_html}
<h2>Questions</h2>
<p class="meta">{e(_sources(report))}</p>
<ul class="findings">{qa}</ul>"""
    return html_page("iolab lab raid", _head(report), charts, body)


def html_page(title: str, head: list[str], charts: list[Chart], body: str) -> str:
    """A lab's self-contained page: ``head`` (heading, then a meta line),
    the charts, then ``body`` (HTML), with plotly inlined."""
    divs, specs = _charts(charts)
    e = html.escape
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{e(title)}</title>
<style>{_CSS}</style>
<script>{plotly_js()}</script>
</head>
<body data-charts-expected="{len(charts)}" data-js-errors="">
<h1>{e(head[0])}</h1>
<p class="meta">{e(head[1])}</p>
{divs}
{body}
<script type="application/json" id="iolab-charts">{specs}</script>
<script>{_BOOT}</script>
</body>
</html>
"""


RENDERERS = {"text": render_text, "md": render_markdown, "json": render_json, "html": render_html}
