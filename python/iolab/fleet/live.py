"""The live cluster view: one interval of every host, and its renderers.

:class:`ClusterInterval` is plain data — a row per host and a total — so
the three renderers are tested without MPI:

- :func:`terminal_table`: the table rank 0 redraws in place each interval;
- :func:`prometheus_text`: the same numbers for rank 0's ``/metrics``,
  one series per host label plus ``host="total"``;
- :func:`view_json` + :data:`PAGE_HTML`: the live page rank 0 serves; it
  fetches ``/view.json`` every interval and redraws.

Up to :data:`ROWS_MAX` hosts the views show one row per host. Above, a
fleet of hundreds or thousands, they summarise (:func:`spread_of`): the
total, the distribution of host IOPS (quantiles and a histogram), the
slowest and fastest hosts, and the stragglers and late hosts named; the
page shows the hosts' rows a page at a time (``view.json?page=K``).

A host whose snapshot missed the interval's deadline has ``late=True``:
it shows as ``-`` and is named under the table — it never stalls the view
and is never silently left out of a total that looks complete. The
total's p50/p99 come from the merged interval histograms
(:func:`total_of`), never from the hosts' percentiles.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from iolab import _native
from iolab.report.fleet_lines import (
    ENDS,
    ROWS_MAX,
    STRAGGLER_FRACTION,
    HostSpread,
    histogram_lines,
    host_spread,
    named,
    quantiles_line,
    stragglers_line,
)
from iolab.run.metrics import engine_metrics_text, label_value

DIRS = ("read", "write")
#: Host rows per page of ``view.json`` above :data:`ROWS_MAX` hosts.
PAGE_ROWS = 100


@dataclass(frozen=True)
class HostRow:
    """One host's last interval (both directions summed for rates)."""

    host: str
    rank: Optional[int]
    iops: Optional[float] = None
    bw_bytes_per_s: Optional[float] = None
    lat_p50_ns: Optional[int] = None
    lat_p99_ns: Optional[int] = None
    cpu_pct: Optional[float] = None
    #: The interval's total-latency histogram (V2 base64), both directions merged.
    lat_hist: Optional[str] = None
    #: No snapshot arrived for this interval before its deadline.
    late: bool = False
    #: Declared lost by the watchdog.
    lost: bool = False
    #: Every job's totals since the start (``Run.poll``'s ``totals``, each
    #: with its job's ``name``): the counters and histograms of /metrics.
    totals: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class ClusterInterval:
    """One interval of the cluster: a row per host and their total."""

    seq: int
    elapsed_ns: int
    rows: tuple[HostRow, ...]
    total: HostRow

    @property
    def late_hosts(self) -> list[str]:
        return [r.host for r in self.rows if r.late or r.lost]


def host_row(
    host: str, rank: int, progress: dict[str, Any], cpu_pct: Optional[float], job_names: Sequence[str] = ()
) -> HostRow:
    """A host's row from its engine progress (``Run.poll``); ``job_names``
    name the jobs of its totals (by index; unnamed ones are ``job<i>``)."""
    hists = [h for h in progress.get("lat_ns", []) if h]
    merged = _native.hist_merge(hists) if hists else None
    p50 = p99 = None
    if merged is not None:
        st = _native.hist_stats(merged, [50.0, 99.0])
        if st["count"]:
            p50, p99 = int(st["percentiles"][50.0]), int(st["percentiles"][99.0])
    return HostRow(
        host,
        rank,
        iops=float(sum(progress.get("iops", [0.0, 0.0]))),
        bw_bytes_per_s=float(sum(progress.get("bw_bytes_per_s", [0.0, 0.0]))),
        lat_p50_ns=p50,
        lat_p99_ns=p99,
        cpu_pct=cpu_pct,
        lat_hist=merged,
        totals=tuple(
            {**t, "name": job_names[t["job"]] if t["job"] < len(job_names) else f"job{t['job']}"}
            for t in progress.get("totals", [])
        ),
    )


def total_of(rows: Sequence[HostRow]) -> HostRow:
    """Rates summed over the hosts that reported; percentiles from the
    merged histograms (bucket sums). Late hosts are not in it — the view
    names them."""
    live = [r for r in rows if not (r.late or r.lost) and r.iops is not None]
    hists = [r.lat_hist for r in live if r.lat_hist]
    p50 = p99 = None
    merged = _native.hist_merge(hists) if hists else None
    if merged is not None:
        st = _native.hist_stats(merged, [50.0, 99.0])
        if st["count"]:
            p50, p99 = int(st["percentiles"][50.0]), int(st["percentiles"][99.0])
    cpus = [r.cpu_pct for r in live if r.cpu_pct is not None]
    return HostRow(
        "total",
        None,
        iops=sum(r.iops or 0.0 for r in live),
        bw_bytes_per_s=sum(r.bw_bytes_per_s or 0.0 for r in live),
        lat_p50_ns=p50,
        lat_p99_ns=p99,
        cpu_pct=sum(cpus) if cpus else None,
        lat_hist=merged,
    )


@dataclass(frozen=True)
class Spread:
    """How the hosts that reported this interval spread in IOPS (the
    summary shown above :data:`ROWS_MAX` hosts): the core figures
    (:class:`~iolab.report.fleet_lines.HostSpread`) with their rows."""

    spread: HostSpread
    slowest: tuple[HostRow, ...]
    fastest: tuple[HostRow, ...]
    #: Below :data:`STRAGGLER_FRACTION` of the median host's IOPS, slowest first.
    stragglers: tuple[HostRow, ...]

    @property
    def reported(self) -> int:
        return self.spread.hosts

    @property
    def quantiles(self) -> dict[str, float]:
        return self.spread.quantiles

    @property
    def bins(self) -> tuple[tuple[float, float, int], ...]:
        return self.spread.bins


def spread_of(rows: Sequence[HostRow]) -> Optional[Spread]:
    """The spread of host IOPS over the hosts that reported, or None when none did."""
    live = [r for r in rows if not (r.late or r.lost) and r.iops is not None]
    sp = host_spread([r.iops or 0.0 for r in live])
    if sp is None:
        return None
    ordered = [live[i] for i in sp.order]
    return Spread(sp, tuple(ordered[:ENDS]), tuple(reversed(ordered[-ENDS:])), tuple(ordered[: sp.stragglers]))


def _f(v: Optional[float], fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def _us(ns: Optional[int]) -> str:
    return "-" if ns is None else f"{ns / 1e3:.1f}"


_HEAD = f"{'host':<24} {'kIOPS':>9} {'MB/s':>9} {'Gb/s':>7} {'p50 µs':>9} {'p99 µs':>9} {'%CPU':>6}"


def _line(r: HostRow) -> str:
    gone = r.late or r.lost
    kiops = None if r.iops is None or gone else r.iops / 1e3
    mbs = None if r.bw_bytes_per_s is None or gone else r.bw_bytes_per_s / 1e6
    gbs = None if mbs is None else mbs * 8 / 1e3
    cells = [_f(kiops, ".2f"), _f(mbs, ".1f"), _f(gbs, ".2f")]
    p = (None, None) if gone else (r.lat_p50_ns, r.lat_p99_ns)
    cells += [_us(p[0]), _us(p[1]), _f(None if gone else r.cpu_pct, ".0f")]
    return f"{r.host[:24]:<24} {cells[0]:>9} {cells[1]:>9} {cells[2]:>7} {cells[3]:>9} {cells[4]:>9} {cells[5]:>6}"


def terminal_table(view: ClusterInterval) -> str:
    """The table (no trailing newline); ``-`` for a late host. Above
    :data:`ROWS_MAX` hosts, the summary instead of a row per host
    (:func:`terminal_summary`)."""
    if len(view.rows) > ROWS_MAX:
        return terminal_summary(view)
    sep = "-" * len(_HEAD)
    lines = [f"interval {view.seq} at {view.elapsed_ns / 1e9:.0f} s", _HEAD, sep]
    lines += [_line(r) for r in view.rows]
    lines += [sep, _line(view.total)]
    late = view.late_hosts
    if late:
        lines.append(f"no snapshot this interval from: {', '.join(late)} (not in the total)")
    return "\n".join(lines)


def terminal_summary(view: ClusterInterval) -> str:
    """Many hosts on one screen: the total, the distribution of host kIOPS
    (quantiles and a histogram), the slowest and fastest hosts, the
    stragglers and the late hosts named (at most :data:`NAMES_MAX` each)."""
    sp = spread_of(view.rows)
    sep = "-" * len(_HEAD)
    reported = 0 if sp is None else sp.reported
    lines = [f"interval {view.seq} at {view.elapsed_ns / 1e9:.0f} s: {len(view.rows)} hosts, {reported} reported"]
    lines += [_HEAD, sep, _line(view.total), sep]
    if sp is not None:
        lines.append(quantiles_line(sp.spread))
        lines += histogram_lines(sp.spread)
        lines.append(f"slowest {len(sp.slowest)}:")
        lines += [_line(r) for r in sp.slowest]
        lines.append(f"fastest {len(sp.fastest)}:")
        lines += [_line(r) for r in sp.fastest]
        if sp.stragglers:
            lines.append(stragglers_line([(r.host, r.iops or 0.0) for r in sp.stragglers]))
    late = view.late_hosts
    if late:
        lines.append(f"no snapshot this interval from {len(late)} hosts: {named(late)} (not in the total)")
    return "\n".join(lines)


#: (metric name, HostRow attribute, help); units in the names.
_METRICS = (
    ("iolab_fleet_iops", "iops", "I/Os per second over the last interval"),
    ("iolab_fleet_bw_bytes_per_s", "bw_bytes_per_s", "bytes per second over the last interval"),
    ("iolab_fleet_cpu_pct", "cpu_pct", "CPU of the iolab process, percent of one core"),
)
#: The last interval's percentiles as gauges: not mergeable, only with
#: ``--metrics-summaries``.
_QUANTILE_GAUGES = (
    ("iolab_fleet_lat_p50_ns", "lat_p50_ns", "median total latency of the last interval, ns"),
    ("iolab_fleet_lat_p99_ns", "lat_p99_ns", "99th percentile total latency of the last interval, ns"),
)


def prometheus_text(view: ClusterInterval, summaries: bool = False) -> str:
    """Prometheus exposition text: the interval's rates, one series per host
    (``host`` label) and ``host="total"`` (a late host's are left out this
    interval and ``iolab_fleet_host_late`` says which); every host's
    counters and latency histograms since the start
    (:func:`~iolab.run.metrics.engine_metrics_text`, ``iolab_fleet_*``,
    labels host, job, direction: ``sum by (le)`` is the fleet's histogram);
    with ``summaries`` also the interval's p50/p99 gauges and quantiles."""
    out = []
    rows = (*view.rows, view.total)
    for name, attr, help_text in _METRICS + (_QUANTILE_GAUGES if summaries else ()):
        out += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
        for r in rows:
            v = getattr(r, attr)
            if v is not None and not (r.late or r.lost):
                out.append(f'{name}{{host="{label_value(r.host)}"}} {float(v)}')
    out += [
        "# HELP iolab_fleet_host_late 1 when the host's snapshot missed the interval",
        "# TYPE iolab_fleet_host_late gauge",
    ]
    out += [f'iolab_fleet_host_late{{host="{label_value(r.host)}"}} {int(r.late or r.lost)}' for r in view.rows]
    out.append(f"iolab_fleet_interval {view.seq}")
    counted = [(r.host, t["name"], t) for r in view.rows if not (r.late or r.lost) for t in r.totals]
    return "\n".join(out) + "\n" + engine_metrics_text(counted, summaries=summaries, prefix="iolab_fleet")


#: A row's fields on the page (histograms and totals stay on rank 0: the page shows rates and percentiles).
_PAGE_FIELDS = ("host", "rank", "iops", "bw_bytes_per_s", "lat_p50_ns", "lat_p99_ns", "cpu_pct", "late", "lost")


def _page_row(r: HostRow) -> dict[str, Any]:
    return {k: getattr(r, k) for k in _PAGE_FIELDS}


def view_json(view: ClusterInterval, page: int = 0) -> dict[str, Any]:
    """The page's data: the total and the hosts' rows (rates and
    percentiles; no histogram). Up to :data:`ROWS_MAX` hosts every row;
    above, page ``page`` of :data:`PAGE_ROWS` rows (by rank) and ``spread``,
    the summary the terminal shows (:func:`spread_of`)."""
    n = len(view.rows)
    paged = n > ROWS_MAX
    pages = max(1, math.ceil(n / PAGE_ROWS)) if paged else 1
    page = min(max(page, 0), pages - 1)
    shown = view.rows[page * PAGE_ROWS : (page + 1) * PAGE_ROWS] if paged else view.rows
    spread = None
    if paged and (sp := spread_of(view.rows)) is not None:
        spread = {
            "reported": sp.reported,
            "quantiles_iops": sp.quantiles,
            "cv_pct": sp.spread.cv_pct,
            "bins": [{"low_iops": lo, "high_iops": hi, "hosts": c} for lo, hi, c in sp.bins],
            "slowest": [_page_row(r) for r in sp.slowest],
            "fastest": [_page_row(r) for r in sp.fastest],
            "stragglers": [_page_row(r) for r in sp.stragglers],
            "straggler_fraction": STRAGGLER_FRACTION,
        }
    return {
        "seq": view.seq,
        "elapsed_ns": view.elapsed_ns,
        "hosts": n,
        "page": page,
        "pages": pages,
        "rows": [_page_row(r) for r in shown],
        "total": _page_row(view.total),
        "late_hosts": view.late_hosts,
        "spread": spread,
    }


PAGE_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>iolab fleet: TITLE</title>
<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}
td:first-child,th:first-child{text-align:left}tr.total{font-weight:bold;border-top:1px solid #000}
tr.late{color:#a00}.bar{display:inline-block;height:0.8em;background:#47a}#spread[hidden],#pager[hidden]{display:none}</style></head>
<body><h1>iolab fleet: TITLE</h1><p id="status">waiting for the first interval</p>
<div id="spread" hidden><p id="quantiles"></p><table id="bins"><thead><tr><th>host kIOPS</th><th>hosts</th><th></th></tr></thead><tbody></tbody></table>
<h3>slowest hosts</h3><table id="slowest" class="hosts"><tbody></tbody></table>
<h3>fastest hosts</h3><table id="fastest" class="hosts"><tbody></tbody></table>
<p id="stragglers"></p><h3>every host</h3></div>
<p id="pager" hidden><button id="prev">previous</button> <span id="pageno"></span> <button id="next">next</button></p>
<table id="view"><thead><tr><th>host</th><th>kIOPS</th><th>MB/s</th><th>Gb/s</th>
<th>p50 µs</th><th>p99 µs</th><th>%CPU</th></tr></thead><tbody></tbody></table>
<p id="late"></p>
<script>
const fmt=(v,d)=>v===null||v===undefined?"-":v.toFixed(d);
let page=0,pages=1;
function rowOf(r){
  const gone=r.late||r.lost;const tr=document.createElement("tr");
  tr.className=r.host==="total"?"total":(gone?"late":"");
  const c=[r.host,fmt(gone?null:r.iops/1e3,2),fmt(gone?null:r.bw_bytes_per_s/1e6,1),
    fmt(gone?null:r.bw_bytes_per_s*8/1e9,2),fmt(gone||r.lat_p50_ns===null?null:r.lat_p50_ns/1e3,1),
    fmt(gone||r.lat_p99_ns===null?null:r.lat_p99_ns/1e3,1),fmt(gone?null:r.cpu_pct,0)];
  for(const x of c){const td=document.createElement("td");td.textContent=x;tr.appendChild(td);}
  return tr;}
function fill(sel,rows){const tb=document.querySelector(sel+" tbody");tb.innerHTML="";for(const r of rows)tb.appendChild(rowOf(r));}
function names(rs,f){const n=rs.slice(0,10).map(f).join(", ");return rs.length>10?n+" and "+(rs.length-10)+" more":n;}
function drawSpread(s){
  const box=document.getElementById("spread");box.hidden=!s;if(!s)return;
  const q=s.quantiles_iops,k=x=>(x/1e3).toFixed(2);
  document.getElementById("quantiles").textContent="host kIOPS ("+s.reported+" reported): min "+k(q.min)+", p10 "+k(q.p10)+
    ", median "+k(q.p50)+", p90 "+k(q.p90)+", max "+k(q.max)+" (CV "+s.cv_pct.toFixed(1)+" %)";
  const tb=document.querySelector("#bins tbody");tb.innerHTML="";const top=Math.max(...s.bins.map(b=>b.hosts));
  for(const b of s.bins){const tr=document.createElement("tr");
    for(const x of [k(b.low_iops)+" - "+k(b.high_iops),String(b.hosts)]){const td=document.createElement("td");td.textContent=x;tr.appendChild(td);}
    const td=document.createElement("td");const bar=document.createElement("span");bar.className="bar";
    bar.style.width=(top?Math.round(300*b.hosts/top):0)+"px";td.appendChild(bar);tr.appendChild(td);tb.appendChild(tr);}
  fill("#slowest",s.slowest);fill("#fastest",s.fastest);
  document.getElementById("stragglers").textContent=s.stragglers.length?"stragglers ("+s.stragglers.length+", below "+
    Math.round(100*s.straggler_fraction)+" % of the median host's kIOPS): "+names(s.stragglers,r=>r.host+" "+k(r.iops)):"";}
function draw(v){
  pages=v.pages;page=v.page;
  fill("#view",[...v.rows,v.total]);drawSpread(v.spread);
  document.getElementById("pager").hidden=v.pages<=1;
  document.getElementById("pageno").textContent="hosts "+(v.page*PAGE_ROWS+1)+"-"+(v.page*PAGE_ROWS+v.rows.length)+
    " of "+v.hosts+" (page "+(v.page+1)+" of "+v.pages+")";
  document.getElementById("status").textContent="interval "+v.seq+" at "+(v.elapsed_ns/1e9).toFixed(0)+" s"+(v.spread?": "+v.hosts+" hosts":"");
  document.getElementById("late").textContent=v.late_hosts.length?"no snapshot this interval from: "+names(v.late_hosts,h=>h):"";
}
async function tick(){try{const r=await fetch("view.json?page="+page,{cache:"no-store"});if(r.ok){const v=await r.json();if(v)draw(v);}}catch(e){}}
document.getElementById("prev").onclick=()=>{if(page>0){page--;tick();}};
document.getElementById("next").onclick=()=>{if(page<pages-1){page++;tick();}};
tick();setInterval(tick,INTERVAL_MS);
</script></body></html>
"""


def page_html(title: str, interval_ms: int) -> str:
    """The live page: redraws from ``view.json`` every ``interval_ms``."""
    page = PAGE_HTML.replace("TITLE", html.escape(title)).replace("PAGE_ROWS", str(PAGE_ROWS))
    return page.replace("INTERVAL_MS", str(max(100, interval_ms)))


__all__ = [
    "ROWS_MAX",
    "ClusterInterval",
    "HostRow",
    "Spread",
    "host_row",
    "page_html",
    "prometheus_text",
    "spread_of",
    "terminal_summary",
    "terminal_table",
    "total_of",
    "view_json",
]
