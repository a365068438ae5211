"""The live cluster view: one interval of every host, and its renderers.

:class:`ClusterInterval` is plain data — a row per host and a total — so
the three renderers are tested without MPI:

- :func:`terminal_table`: the table rank 0 redraws in place each interval;
- :func:`prometheus_text`: the same numbers for rank 0's ``/metrics``,
  one series per host label plus ``host="total"``;
- :func:`view_json` + :data:`PAGE_HTML`: the live page rank 0 serves; it
  fetches ``/view.json`` every interval and redraws.

A host whose snapshot missed the interval's deadline has ``late=True``:
it shows as ``-`` and is named under the table — it never stalls the view
and is never silently left out of a total that looks complete. The
total's p50/p99 come from the merged interval histograms
(:func:`total_of`), never from the hosts' percentiles.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Optional

from iolab import _native
from iolab.run.metrics import engine_metrics_text, label_value

DIRS = ("read", "write")


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


def _f(v: Optional[float], fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def _us(ns: Optional[int]) -> str:
    return "-" if ns is None else f"{ns / 1e3:.1f}"


def terminal_table(view: ClusterInterval) -> str:
    """The table (no trailing newline); ``-`` for a late host."""
    head = f"{'host':<24} {'kIOPS':>9} {'MB/s':>9} {'Gb/s':>7} {'p50 µs':>9} {'p99 µs':>9} {'%CPU':>6}"
    lines = [f"interval {view.seq} at {view.elapsed_ns / 1e9:.0f} s", head, "-" * len(head)]
    for r in (*view.rows, view.total):
        if r is view.total:
            lines.append("-" * len(head))
        kiops = None if r.iops is None or r.late or r.lost else r.iops / 1e3
        mbs = None if r.bw_bytes_per_s is None or r.late or r.lost else r.bw_bytes_per_s / 1e6
        gbs = None if mbs is None else mbs * 8 / 1e3
        cells = [_f(kiops, ".2f"), _f(mbs, ".1f"), _f(gbs, ".2f")]
        p = (None, None) if r.late or r.lost else (r.lat_p50_ns, r.lat_p99_ns)
        cells += [_us(p[0]), _us(p[1]), _f(None if r.late or r.lost else r.cpu_pct, ".0f")]
        lines.append(
            f"{r.host[:24]:<24} {cells[0]:>9} {cells[1]:>9} {cells[2]:>7} {cells[3]:>9} {cells[4]:>9} {cells[5]:>6}"
        )
    late = view.late_hosts
    if late:
        lines.append(f"no snapshot this interval from: {', '.join(late)} (not in the total)")
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


def view_json(view: ClusterInterval) -> dict[str, Any]:
    """The page's data (histograms left out: the page shows percentiles)."""

    def strip(r: HostRow) -> dict[str, Any]:
        d = asdict(r)
        d.pop("lat_hist")
        return d

    return {
        "seq": view.seq,
        "elapsed_ns": view.elapsed_ns,
        "rows": [strip(r) for r in view.rows],
        "total": strip(view.total),
        "late_hosts": view.late_hosts,
    }


PAGE_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>iolab fleet: TITLE</title>
<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}
td:first-child,th:first-child{text-align:left}tr.total{font-weight:bold;border-top:1px solid #000}
tr.late{color:#a00}</style></head>
<body><h1>iolab fleet: TITLE</h1><p id="status">waiting for the first interval</p>
<table id="view"><thead><tr><th>host</th><th>kIOPS</th><th>MB/s</th><th>Gb/s</th>
<th>p50 µs</th><th>p99 µs</th><th>%CPU</th></tr></thead><tbody></tbody></table>
<p id="late"></p>
<script>
const fmt=(v,d)=>v===null||v===undefined?"-":v.toFixed(d);
function draw(v){
  const tb=document.querySelector("#view tbody");tb.innerHTML="";
  for(const r of [...v.rows,v.total]){
    const gone=r.late||r.lost;const tr=document.createElement("tr");
    tr.className=r.host==="total"?"total":(gone?"late":"");
    const c=[r.host,fmt(gone?null:r.iops/1e3,2),fmt(gone?null:r.bw_bytes_per_s/1e6,1),
      fmt(gone?null:r.bw_bytes_per_s*8/1e9,2),fmt(gone||r.lat_p50_ns===null?null:r.lat_p50_ns/1e3,1),
      fmt(gone||r.lat_p99_ns===null?null:r.lat_p99_ns/1e3,1),fmt(gone?null:r.cpu_pct,0)];
    for(const x of c){const td=document.createElement("td");td.textContent=x;tr.appendChild(td);}
    tb.appendChild(tr);}
  document.getElementById("status").textContent="interval "+v.seq+" at "+(v.elapsed_ns/1e9).toFixed(0)+" s";
  document.getElementById("late").textContent=v.late_hosts.length?"no snapshot this interval from: "+v.late_hosts.join(", "):"";
}
async function tick(){try{const r=await fetch("view.json",{cache:"no-store"});if(r.ok){const v=await r.json();if(v)draw(v);}}catch(e){}}
tick();setInterval(tick,INTERVAL_MS);
</script></body></html>
"""


def page_html(title: str, interval_ms: int) -> str:
    """The live page: redraws from ``view.json`` every ``interval_ms``."""
    return PAGE_HTML.replace("TITLE", html.escape(title)).replace("INTERVAL_MS", str(max(100, interval_ms)))


__all__ = [
    "ClusterInterval",
    "HostRow",
    "host_row",
    "page_html",
    "prometheus_text",
    "terminal_table",
    "total_of",
    "view_json",
]
