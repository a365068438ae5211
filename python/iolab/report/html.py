"""The HTML report of an analysis: ONE self-contained file that opens
without a network (``iolab report --format html``, ``iolab quick``).

Layout: title, source, host and tool; the findings and warnings (ranked),
knees and bottleneck; the interactive charts (:mod:`iolab.report.charts`);
the tables (:mod:`iolab.report.analysis_text`).

plotly.js is embedded once, inline (``plotly.offline.get_plotlyjs()``), and
the figures are plain JSON specs handed to ``Plotly.newPlot``. The page
records on ``<body>``: ``data-charts-expected`` (how many charts),
``data-charts-rendered`` (set once every ``newPlot`` promise resolved) and
``data-js-errors`` (any uncaught error), so a headless browser can check it.
"""

from __future__ import annotations

import html
import json
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Optional

from iolab import _native
from iolab.analysis.model import Analysis, Finding, Json
from iolab.report.analysis_text import Table, bottleneck_line, find_statement, knee_lines, summary_lines, tables
from iolab.report.charts import Chart, all_charts, fleet_charts
from iolab.report.find_chart import find_charts

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em 2em; color: #222; }
h1 { margin-bottom: 0.2em; } .meta { color: #555; margin: 0 0 1em 0; padding-left: 1.2em; }
.findings li { margin: 0.3em 0; } .warning { color: #8a5a00; } .error { color: #b00020; }
.chart { width: 100%; max-width: 1100px; min-height: 420px; margin: 1em 0; border: 1px solid #eee; }
.table-wrap { max-width: 100%; overflow-x: auto; margin: 0.5em 0 1.5em 0; }
table { border-collapse: collapse; font-size: 0.8em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.4em; } th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.note { color: #666; font-size: 0.85em; }
"""

# Runs after plotly.js: draws every chart and records the outcome on <body>.
_BOOT = """
(function () {
  var errors = [];
  function fail(msg) { errors.push(String(msg)); document.body.setAttribute('data-js-errors', errors.join(' | ')); }
  window.addEventListener('error', function (e) { fail(e.message); });
  window.addEventListener('unhandledrejection', function (e) { fail(e.reason); });
  var charts = JSON.parse(document.getElementById('iolab-charts').textContent);
  var config = {responsive: true, displaylogo: false};
  var done = charts.map(function (c) {
    return Plotly.newPlot(c.id, c.data, c.layout, config);
  });
  Promise.all(done).then(function () {
    document.body.setAttribute('data-charts-rendered', String(done.length));
  }, fail);
})();
"""


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.js as shipped with the plotly package (no CDN)."""
    from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]  # plotly ships no type information

    return str(get_plotlyjs())


def _e(text: Any) -> str:
    return html.escape(str(text))


def _script_json(value: Any) -> str:
    # "</" would end the <script> element early.
    return json.dumps(value, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")


def _finding_items(items: list[Finding]) -> str:
    if not items:
        return "<li>none</li>"
    return "\n".join(f'<li class="{_e(f.severity)}">{_e(f.text)}</li>' for f in items)


def _header(an: Analysis) -> str:
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    meta = [*summary_lines(an), f"report: iolab {_native.version()}, {now}"]
    return (
        f"<h1>iolab report: {_e(an.dataset.name)}</h1>\n<ul class='meta'>"
        + "".join(
            f"<li class='error'><strong>{_e(m)}</strong></li>" if m.startswith("STATUS:") else f"<li>{_e(m)}</li>"
            for m in meta
        )
        + "</ul>"
    )


def _findings(an: Analysis) -> str:
    parts = [
        "<h2>Findings</h2>",
        f"<ul class='findings'>{_finding_items(an.findings)}</ul>",
        "<h2>Warnings</h2>",
        f"<ul class='findings'>{_finding_items(an.warnings)}</ul>",
    ]
    if an.knees:
        parts.append("<h2>Knees</h2><ul>" + "".join(f"<li>{_e(k)}</li>" for k in knee_lines(an)) + "</ul>")
    parts.append(f"<h2>Bottleneck</h2><p>{_e(bottleneck_line(an))}</p>")
    found = find_statement(an)
    if found is not None:
        parts.append(f"<h2>{_e(found[0])}</h2><ul>" + "".join(f"<li>{_e(x)}</li>" for x in found[1]) + "</ul>")
    return "\n".join(parts)


def html_table(t: Table) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in t.header)
    body = []
    for r in t.rows:
        cells = "".join(
            f"<td>{_e(c)}</td>" if i < t.label_cols else f"<td class='num'>{_e(c)}</td>" for i, c in enumerate(r)
        )
        body.append(f"<tr>{cells}</tr>")
    notes = "".join(f"<p class='note'>{_e(n)}</p>" for n in t.notes)
    # A table wider than the window scrolls inside its box; the page never does.
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    return f"<h3>{_e(t.title)}</h3>\n<div class='table-wrap'>{table}</div>{notes}"


def _charts(charts: list[Chart]) -> tuple[str, str]:
    """The chart containers and the JSON the boot script reads."""
    divs = "\n".join(
        f'<div class="chart" id="chart-{i}" role="img" aria-label="{_e(c.title)}"></div>' for i, c in enumerate(charts)
    )
    specs = [{"id": f"chart-{i}", "data": c.data, "layout": c.layout} for i, c in enumerate(charts)]
    return divs, _script_json(specs)


def _fleet(fleet: Json) -> str:
    """The fleet section's text: start skew and clock offsets, the spread
    across hosts per group and direction (the bars are charts), faults."""
    from iolab.report.fleet_lines import (
        ROWS_MAX,
        by_group_dir,
        quantiles_line,
        rows_spread,
        skew_line,
        spread_line,
        spread_of_json,
        stragglers_line,
    )

    items = [skew_line(fleet)]
    for (group, d), sel in by_group_dir(fleet):
        if spread_line(sel):
            items.append(f"group {group} {d}: {spread_line(sel)}")
        sp = rows_spread(sel) if len(sel) > ROWS_MAX else None
        if sp is not None:
            items.append(f"group {group} {d}: {quantiles_line(spread_of_json(sp))}")
            strag = stragglers_line([(r["host"], r["iops"]) for r in sp["stragglers"]])
            if strag:
                items.append(f"group {group} {d}: {strag}")
    if fleet.get("incomplete"):
        items.append("INCOMPLETE: " + "; ".join(fleet.get("faults", [])))
    lis = "".join(f"<li>{_e(i)}</li>" for i in items)
    return f"<h2>Fleet: {len(fleet['hosts'])} hosts</h2><ul class='fleet'>{lis}</ul>"


def render_html(an: Analysis, fleet: Optional[Json] = None, fleet_sweep: str = "") -> str:
    """The whole report as one HTML document; ``fleet`` (a run directory's
    ``fleet.json``) adds the fleet section: per-host bars, spread and skew;
    ``fleet_sweep`` is a fleet sweep's per-host section, ready HTML
    (:func:`iolab.fleet.report.fleet_sweep_html`)."""
    fleet_part = ("" if fleet is None else _fleet(fleet)) + fleet_sweep
    charts = ([] if fleet is None else fleet_charts(fleet)) + find_charts(an) + all_charts(an)
    divs, specs = _charts(charts)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>iolab report: {_e(an.dataset.name)}</title>
<style>{_CSS}</style>
<script>{plotly_js()}</script>
</head>
<body data-charts-expected="{len(charts)}" data-js-errors="">
{_header(an)}
{_findings(an)}
{fleet_part}
<h2>Charts</h2>
{divs or "<p>No charts: the results hold no figures to draw.</p>"}
<h2>Tables</h2>
{"".join(html_table(t) for t in tables(an))}
<script type="application/json" id="iolab-charts">{specs}</script>
<script>{_BOOT}</script>
</body>
</html>
"""
