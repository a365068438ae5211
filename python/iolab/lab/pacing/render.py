"""The pacing lab's report as text, Markdown, JSON or one HTML page (BW vs
QD per test, seed beside measured as shares of each table's QD 32 value;
per-export bandwidth shares for tests 13-16)."""

from __future__ import annotations

import html
import json
from typing import Any, Optional

from iolab.lab.render import html_page
from iolab.report.analysis_text import Table, format_text_table
from iolab.report.charts import Chart
from iolab.report.html import html_table
from iolab.report.markdown import md_table

Json = dict[str, Any]


def _f(v: Optional[float], nd: int = 1) -> str:
    return "n/a" if v is None else f"{v:,.{nd}f}"


def _note(m: Optional[Json]) -> str:
    if m is None:
        return "not run"
    if m["starved"]:
        s = m["starved"]
        return f"STARVED: {len(s['waiting'])} waiting at the {s['deadline_s']:.1f} s deadline, groups {s['groups_starved']}"
    if m["error"]:
        return f"error: {m['error']}"
    bits = []
    if m.get("late_ms_p99") and m["late_ms_p99"] >= 1.0:
        bits.append(f"host late p99 {m['late_ms_p99']:.0f} ms")
    if m["pacing"]:
        bits.append(f"pool max {m['pacing']['in_use_max']}, wait p99 {m['pacing']['wait_us_p99'] / 1e3:.1f} ms")
    if m["slow_hold_share"]:
        bits.append(f"fast parts {m['fast_share']:.0%} of bytes, slow parts {m['slow_hold_share']:.0%} of buffer-time")
    return "; ".join(bits)


def tables(report: Json) -> list[Table]:
    out = []
    for t in report["tests"]:
        for tb in t["tables"]:
            x = "QD" if tb["axis"] == "qd" else "Num buffers"
            header = [
                x,
                "seed BW Gb/s",
                "seed WIRE Gb/s",
                "seed LAT us",
                "seed SD Gb/s",
                "seed rel",
                "BW MiB/s",
                "WIRE MiB/s",
                "LAT us",
                "BW SD MiB/s",
                "rel",
                "server c/B",
                "notes",
            ]
            rows = []
            for r in tb["rows"]:
                s, m = r["seed"] or {}, r["measured"]
                rows.append(
                    [
                        str(r["x"]),
                        _f(s.get("bw")),
                        _f(s.get("wire"), 2),
                        _f(s.get("lat")),
                        _f(s.get("sd")),
                        _f(r["seed_rel"], 3),
                        _f(m and m["bw_mib_s"]),
                        _f(m and m["wire_mib_s"]),
                        _f(m and m["lat_us"], 0),
                        _f(m and m["bw_sd_mib_s"], 2),
                        _f(r["measured_rel"], 3),
                        _f(m and m["cycles_per_byte"], 2),
                        "; ".join(x for x in (r.get("seed_note"), _note(m)) if x),
                    ]
                )
            pac = "none" if tb["pacing"] is None else f"{tb['pacing'][0]} buffers, cache {tb['pacing'][1]}"
            if tb["axis"] == "buffers":
                pac = "buffers as the row, cache as the seed's"
            title = f"Test {t['number']} — {t['disks']}, pacing {t['pacing']}: {t['description']}"
            if tb["variant"]:
                title += f" ({tb['variant']})"
            notes = [
                f"pacing: {pac}; target cores (cache groups): {tb['cores']}; 'rel': BW over the table's "
                + ("QD 32" if tb["axis"] == "qd" else "96 buffers")
                + " row"
            ]
            rows_h = _host_rows(tb)
            if rows_h:
                notes.append("test.sh layout at the deepest point:\n" + rows_h)
            out.append(Table(title, header, rows, 1, notes))
    return out


def _host_rows(tb: Json) -> str:
    last = next((r["measured"] for r in reversed(tb["rows"]) if r["measured"] and r["measured"]["hosts"]), None)
    if last is None:
        return ""
    lines = [f"{'Host':<10}| {'kIOPS':>8} | {'BW,MiB/s':>9} | {'AVG_LAT,us':>11} | {'Wire BW,MiB/s':>13}"]
    for h in last["hosts"]:
        lines.append(f"{h['host']:<10}| {h['kiops']:8.3f} | {h['bw_mib_s']:9.1f} | {_f(h['lat_us'], 0):>11} |")
    lines.append(
        f"{'Total':<10}| {last['kiops']:8.3f} | {last['bw_mib_s']:9.1f} | {'':>11} | {last['wire_mib_s']:13.2f}"
    )
    return "\n".join(lines)


def _head(report: Json) -> list[str]:
    st = report["stack"]
    return [
        "iolab lab pacing — seed 004 (SPDK NVMe-oF target, IO pacing, two initiators)",
        f"{'quick' if report['quick'] else 'full'} run; runtime {report['runtime_s']} s per point (longer at deep QD), "
        f"test 6 repeats {report['repeats6']}; initiators: {report['initiators']}",
        f"simulated NVMe: {st['nvme']} (16 drives, ceiling {st['ceiling_mib_s']} MiB/s); "
        f"delay {st['delay']} (the seed's 1 ms x {st['time_scale']}); null exports share one "
        f"{st['null_rate_mib_s']} MiB/s link in the target (the seed's wire); pacing retry rule: {st['retry']}",
    ]


def _verdict_lines(report: Json) -> list[str]:
    return [f"[{v['verdict']}] {v['statement']} — {v['evidence']}" for v in report["verdicts"]]


def _starvation_lines(report: Json) -> list[str]:
    out = []
    for p in report["points"]:
        s = p.get("starved")
        if not s:
            continue
        out.append(f"{p['point']['key']}: ended at its {s['deadline_s']:.1f} s deadline; pool free {s['pool_free']}")
        for w in s["waiting"]:
            out.append(
                f"  connection {w['conn']} (group {w['group']}, export {w['export']}) waited {w['waited_ms']:.0f} ms "
                f"for {w['buffers']} buffer(s); its group caches {w['group_cached']}, holds {w['group_in_use']}"
            )
    return out


def render_text(report: Json) -> str:
    parts = ["\n".join(_head(report)), ""]
    for t in tables(report):
        plain = Table(t.title, t.header, t.rows, t.label_cols, [n for n in t.notes if "\n" not in n])
        parts.append(format_text_table(plain))
        parts += [n for n in t.notes if "\n" in n]
        parts.append("")
    parts.append("Verdicts")
    parts += _verdict_lines(report)
    st = _starvation_lines(report)
    if st:
        parts += ["", "Starvation (the target's record at each deadline)", *st]
    return "\n".join(parts) + "\n"


def render_markdown(report: Json) -> str:
    parts = [f"# {_head(report)[0]}", "", *[f"- {h}" for h in _head(report)[1:]], ""]
    for t in tables(report):
        t2 = Table(t.title, t.header, t.rows, t.label_cols, [n for n in t.notes if "\n" not in n])
        parts.append(md_table(t2, "###"))
        hosts = [n for n in t.notes if "\n" in n]
        if hosts:
            parts += ["", "```", hosts[0], "```"]
        parts.append("")
    parts += ["## Verdicts", "", *[f"- {v}" for v in _verdict_lines(report)]]
    st = _starvation_lines(report)
    if st:
        parts += ["", "## Starvation", "", "```", *st, "```"]
    return "\n".join(parts) + "\n"


def render_json(report: Json) -> str:
    return json.dumps(report, indent=2, default=str) + "\n"


def charts(report: Json) -> list[Chart]:
    out = []
    for t in report["tests"]:
        data = []
        axis = "QD"
        for tb in t["tables"]:
            axis = "QD" if tb["axis"] == "qd" else "buffers"
            name = tb["variant"] or f"test {t['number']}"
            xs = [r["x"] for r in tb["rows"]]
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"seed {name}",
                    "x": xs,
                    "y": [r["seed_rel"] for r in tb["rows"]],
                    "line": {"dash": "dot"},
                }
            )
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"iolab {name}",
                    "x": xs,
                    "y": [r["measured_rel"] for r in tb["rows"]],
                }
            )
        layout = {
            "title": {"text": f"Test {t['number']}: BW vs {axis} (share of the table's reference row)"},
            "xaxis": {"title": {"text": axis}, "type": "log"},
            "yaxis": {"title": {"text": "BW / reference"}},
        }
        out.append(Chart(f"Test {t['number']} BW", data, layout))
        if t["number"] >= 11:
            for tb in t["tables"]:
                last = next((r for r in reversed(tb["rows"]) if r["measured"] and r["measured"]["export_share"]), None)
                if last is None:
                    continue
                sh = last["measured"]["export_share"]
                names = sorted(sh, key=lambda n: (n.rsplit("p", 1)[-1], n))
                data = [{"type": "bar", "x": names, "y": [sh[n] for n in names], "name": "share of bytes"}]
                layout = {
                    "title": {"text": f"Test {t['number']}: per-export share of bandwidth at QD {last['x']}"},
                    "yaxis": {"title": {"text": "share"}},
                }
                out.append(Chart(f"Test {t['number']} shares", data, layout))
    return out


def render_html(report: Json) -> str:
    e = html.escape
    body = "".join(html_table(t) for t in tables(report))
    body += "<h2>Verdicts</h2><ul>" + "".join(f"<li>{e(v)}</li>" for v in _verdict_lines(report)) + "</ul>"
    st = _starvation_lines(report)
    if st:
        body += "<h2>Starvation</h2><pre>" + e("\n".join(st)) + "</pre>"
    return html_page("iolab lab pacing", _head(report), charts(report), body)


RENDERERS = {"text": render_text, "md": render_markdown, "json": render_json, "html": render_html}
