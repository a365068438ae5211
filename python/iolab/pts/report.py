"""A PTS test's report from its ``pts.json``, in the spec's layout: the
test's setup and verdict, the steady-state round plot (tracking variable
per round, the window's mean, the 20 % data-excursion and 10 % slope
bands, the least-squares line), the test's tables (IOPS: R/W mix x block
size; throughput: block size x direction; latency: mean, max and 99.99th
percentile per mix x block size; WSAT: IOPS per round against total
bytes written; DIRTH: IOPS and response time per threads x queue depth),
and the measured data per round. Text, Markdown, HTML (plotly charts).

Every latency comes from histograms merged over the measurement window
(procedure.py ``window_figures``); IOPS and bandwidth are I/Os over the
time they ran. Units: IOPS, MB/s (10^6 bytes per second), µs.
"""

from __future__ import annotations

import html
from typing import Any

from iolab import _native
from iolab.report.analysis_text import Table, format_text_table
from iolab.report.charts import Chart
from iolab.report.html import _BOOT, _CSS, _charts, html_table, plotly_js
from iolab.report.markdown import md_table

Json = dict[str, Any]
_METRIC = {"iops": ("IOPS", 1.0), "bw_bytes_per_s": ("MB/s", 1e6), "lat_mean_ns": ("mean latency µs", 1e3)}


def _num(x: float) -> str:
    ax = abs(x)
    return f"{x:.0f}" if ax >= 100 else f"{x:.1f}" if ax >= 10 else f"{x:.2f}"


def _metric(stage: Json) -> tuple[str, float]:
    return _METRIC[stage["metric"]]


def verdict_lines(doc: Json) -> list[str]:
    """Setup and verdict, one line each; a shrunk run says so first."""
    t = doc["target"]
    out = [f"SNIA PTS {doc['title']} ({doc['variant']}) on {t['kind']} {t['where']}"]
    out.append(f"capacity tested: {doc['capacity_bytes']} bytes; purge: {doc['purge']['how']}")
    out.append(f"preconditioning: {doc['preconditioning'] or 'none (from fresh out of the box)'}")
    out.append(f"rounds: {doc['round_time']} per cell, at most {doc['max_rounds']}")
    if doc["shrunk"]:
        out.append("SHRUNK, not a conforming PTS run: " + "; ".join(doc["shrunk"]))
    for st in doc["stages"]:
        name, scale = _metric(st)
        n = len(st["rounds"])
        w = st["window"]
        if st["until_written"]:
            fob = st["rounds"][0]["tracking"]
            fills, cap = doc.get("wsat_fills"), doc["capacity_bytes"]
            done = fills is not None and st["written_bytes"] >= fills * cap
            if done:
                ended = f"; ended at {fills:g}x the capacity written"
            elif n >= doc["max_rounds"]:
                ended = f"; ended at the {n}-round limit, before {fills:g}x"
            else:
                ended = ""
            head = (
                f"{st['name']}: {n} rounds, {st['written_bytes']} bytes written "
                f"({st['written_bytes'] / cap:.2f}x the capacity{ended}); fresh {_num(fob / scale)} {name}"
            )
            if w is None:
                out.append(f"{head}; fewer than {doc['rule']['rounds']} rounds: no window")
            else:
                state = "steady" if w["steady"] else "NOT steady"
                out.append(
                    f"{head}; last window (rounds {w['first_round']}-{w['last_round']}) {state}: "
                    f"mean {_num(w['mean'] / scale)} {name}"
                )
        elif st["steady"]:
            out.append(
                f"{st['name']}: steady state at round {st['steady_round']} (window rounds {w['first_round']}-"
                f"{w['last_round']}, tracking {st['tracking']} {name}: mean {_num(w['mean'] / scale)}, data excursion "
                f"{w['excursion_pct']:.1f} %, slope excursion {w['slope_excursion_pct']:.1f} %)"
            )
        else:
            why = _failures(w, doc["rule"]) if w else f"fewer than {doc['rule']['rounds']} rounds"
            out.append(f"{st['name']}: NOT steady after {n} rounds ({why}); figures are the last {min(n, 5)} rounds'")
    return out


def _failures(w: Json, rule: Json) -> str:
    out = []
    if not w["excursion_ok"]:
        out.append(f"data excursion {w['excursion_pct']:.1f} % > {rule['excursion_pct']:g} %")
    if not w["slope_ok"]:
        out.append(f"slope excursion {w['slope_excursion_pct']:.1f} % > {rule['slope_pct']:g} %")
    return "; ".join(out)


def steady_table(st: Json) -> Table:
    name, scale = _metric(st)
    rows = []
    for r in st["rounds"]:
        w = r["window"]
        extra = (
            ["", "", "", ""]
            if w is None
            else [
                _num(w["mean"] / scale),
                f"{w['excursion_pct']:.1f}",
                f"{w['slope_excursion_pct']:.1f}",
                "yes" if w["steady"] else "no",
            ]
        )
        rows.append([str(r["round"]), _num(r["tracking"] / scale), *extra])
    header = [
        "round",
        f"{st['tracking']} {name}",
        f"window mean {name}",
        "data excursion %",
        "slope excursion %",
        "steady",
    ]
    return Table(f"{st['name']}: steady-state rounds (tracking {st['tracking']})", header, rows, 1)


def per_round_table(st: Json) -> Table:
    """The measured data per round: every cell's figure in every round."""
    name, scale = _metric(st)
    header = ["cell", *(f"r{r['round']}" for r in st["rounds"])]
    rows = [
        [c["label"], *(_num(r["cells"][c["label"]][st["metric"]] / scale) for r in st["rounds"])] for c in st["cells"]
    ]
    return Table(f"{st['name']}: measured {name} per round", header, rows, 1)


def _us(ns: float) -> str:
    return _num(ns / 1e3)


def _grid(st: Json, title: str, row_key: str, col_key: str, value: Any) -> Table:
    """A cells table: rows and columns from two of the cells' params."""
    rows_v: list[Any] = []
    cols_v: list[Any] = []
    by: dict[tuple[Any, Any], str] = {}
    for c in st["cells"]:
        rv, cv = c["params"][row_key], c["params"][col_key]
        rows_v += [rv] if rv not in rows_v else []
        cols_v += [cv] if cv not in cols_v else []
        by[(rv, cv)] = value(st["measurement"][c["label"]])
    fmt_row = (lambda v: f"{v}/{100 - v}") if row_key == "rwmixread" else str
    head = {"rwmixread": "R/W mix %", "numjobs": "threads", "bs": "block size"}[row_key]
    col_head = {"bs": "", "iodepth": "QD "}[col_key]
    rows = [[fmt_row(rv), *(by.get((rv, cv), "") for cv in cols_v)] for rv in rows_v]
    return Table(title, [head, *(f"{col_head}{cv}" for cv in cols_v)], rows, 1)


def _lat(m: Json, key: str) -> str:
    lat = m.get("lat_total")
    if lat is None:
        return ""
    return _us(lat["mean_ns"] if key == "mean" else lat["max_ns"] if key == "max" else lat["percentiles_ns"][key])


def test_tables(doc: Json) -> list[Table]:
    """The spec's tables of each test, over the measurement window."""
    test, out = doc["test"], []
    top = f"{max(doc['percentiles']):g}"
    for st in doc["stages"]:
        if test == "iops":
            out.append(_grid(st, "IOPS (R/W mix x block size)", "rwmixread", "bs", lambda m: _num(m["iops"])))
        elif test == "latency":
            for key, what in (("mean", "mean"), ("max", "maximum"), (top, f"{top}th percentile")):
                out.append(_grid(st, f"Latency, {what} µs", "rwmixread", "bs", lambda m, k=key: _lat(m, k)))
        elif test == "dirth":
            out.append(_grid(st, "DIRTH: IOPS (threads x QD)", "numjobs", "iodepth", lambda m: _num(m["iops"])))
            out.append(_grid(st, "DIRTH: mean response time µs", "numjobs", "iodepth", lambda m: _lat(m, "mean")))
            out.append(_grid(st, f"DIRTH: {top}th percentile µs", "numjobs", "iodepth", lambda m: _lat(m, top)))
    if test == "throughput":
        rows = [
            [st["name"], _num(next(iter(st["measurement"].values()))["bw_bytes_per_s"] / 1e6)] for st in doc["stages"]
        ]
        out.append(Table("Throughput, MB/s", ["block size, direction", "MB/s"], rows, 1))
    if test == "wsat":
        st = doc["stages"][0]
        written, rows = 0, []
        for r in st["rounds"]:
            c = next(iter(r["cells"].values()))
            written += c["bytes"]["write"]
            rows.append([str(r["round"]), _num(c["iops"]), f"{written / 1e9:.3f}", _us(c["lat_mean_ns"])])
        out.append(Table("WSAT: IOPS against total written", ["round", "IOPS", "TGBW GB", "mean latency µs"], rows, 1))
    out += latency_percentile_tables(doc)
    return out


def latency_percentile_tables(doc: Json) -> list[Table]:
    """Every cell's latency over the window from the merged histograms (the
    PTS reports averages and maxima; iolab keeps the whole distribution)."""
    out = []
    for st in doc["stages"]:
        rows = []
        for c in st["cells"]:
            lat = st["measurement"][c["label"]].get("lat_total")
            if lat:
                p = lat["percentiles_ns"]
                rows.append(
                    [
                        c["label"],
                        str(lat["count"]),
                        _us(lat["mean_ns"]),
                        *(_us(p[k]) for k in ("50", "99", "99.9", "99.99", "99.999")),
                        _us(lat["max_ns"]),
                    ]
                )
        head = ["cell", "I/Os", "mean µs", "p50 µs", "p99 µs", "p99.9 µs", "p99.99 µs", "p99.999 µs", "max µs"]
        out.append(Table(f"{st['name']}: latency over the measurement window", head, rows, 1))
    return out


def all_tables(doc: Json) -> list[Table]:
    out = test_tables(doc)
    for st in doc["stages"]:
        out += [steady_table(st), per_round_table(st)]
    return out


def format_pts_text(doc: Json) -> str:
    return "\n\n".join(["\n".join(verdict_lines(doc)), *(format_text_table(t) for t in all_tables(doc))]) + "\n"


def format_pts_markdown(doc: Json) -> str:
    head = [f"# SNIA PTS {doc['title']}", "", *(f"- {line}" for line in verdict_lines(doc))]
    return "\n\n".join(["\n".join(head), *(md_table(t) for t in all_tables(doc))]) + "\n"


def steady_charts(doc: Json) -> list[Chart]:
    """Per stage: the tracking variable per round with the last window's
    mean, its 20 % and 10 % bands and least-squares line."""
    out = []
    for st in doc["stages"]:
        name, scale = _metric(st)
        xs = [r["round"] for r in st["rounds"]]
        data: list[Json] = [
            {
                "x": xs,
                "y": [r["tracking"] / scale for r in st["rounds"]],
                "name": st["tracking"],
                "mode": "lines+markers",
            }
        ]
        w = st["window"]
        if w is not None:
            wx = list(range(w["first_round"], w["last_round"] + 1))
            b = w["bands"]
            for key, label, dash in (
                ("mean", "window mean", "solid"),
                ("data_high", "+10 % (data excursion 20 %)", "dash"),
                ("data_low", "-10 %", "dash"),
                ("slope_high", "+5 % (slope 10 %)", "dot"),
                ("slope_low", "-5 %", "dot"),
            ):
                data.append(
                    {"x": wx, "y": [b[key] / scale] * len(wx), "name": label, "mode": "lines", "line": {"dash": dash}}
                )
            line = [(w["intercept"] + w["slope_per_round"] * i) / scale for i in range(len(wx))]
            data.append({"x": wx, "y": line, "name": "least-squares line", "mode": "lines"})
        layout = {
            "title": {"text": f"{st['name']}: steady state ({st['tracking']})"},
            "xaxis": {"title": {"text": "round"}},
            "yaxis": {"title": {"text": name}},
        }
        out.append(Chart(f"{st['name']} steady state", data, layout))
    return out


def histogram_charts(doc: Json) -> list[Chart]:
    """DIRTH's response-time histograms per outstanding I/O (merged over the window)."""
    if doc["test"] != "dirth":
        return []
    st = doc["stages"][0]
    data = []
    for c in st["cells"]:
        lat = st["measurement"][c["label"]].get("lat_total")
        if not lat:
            continue
        buckets = [(v, n) for v, n in _native.hist_buckets(lat["hist"]) if n]
        data.append(
            {
                "x": [v / 1e3 for v, _ in buckets],
                "y": [n for _, n in buckets],
                "name": c["label"],
                "mode": "lines+markers",
            }  # a one-bucket histogram is a point
        )
    layout = {
        "title": {"text": "DIRTH: response-time histograms"},
        "xaxis": {"title": {"text": "µs"}, "type": "log"},
        "yaxis": {"title": {"text": "I/Os"}, "type": "log"},
    }
    return [Chart("DIRTH histograms", data, layout)]


def format_pts_html(doc: Json) -> str:
    """One self-contained page (plotly.js inline), as the other HTML reports."""
    charts = steady_charts(doc) + histogram_charts(doc)
    divs, specs = _charts(charts)
    items = "".join(f"<li>{html.escape(line)}</li>" for line in verdict_lines(doc))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>iolab pts: {html.escape(doc["title"])}</title>
<style>{_CSS}</style><script>{plotly_js()}</script></head>
<body data-charts-expected="{len(charts)}" data-js-errors="">
<h1>SNIA PTS {html.escape(doc["title"])}</h1><ul class="meta">{items}</ul>
{divs}
{"".join(html_table(t) for t in all_tables(doc))}
<script type="application/json" id="iolab-charts">{specs}</script>
<script>{_BOOT}</script>
</body></html>
"""
