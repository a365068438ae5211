"""The charts of the HTML report, as plotly.js figure specs (``data`` and
``layout`` dicts, no network, no Python-side plotly objects: plain dicts
are many times faster to build than validated ``go.Figure`` s, which
matters for a 100-point sweep).

Each builder takes an :class:`Analysis` and returns :class:`Chart` s:

- :func:`latency_charts` — histogram and CDF per direction, log latency
  axis, from the repeats' merged HdrHistograms (``iolab._native``), re-binned
  to 20 bins per decade;
- :func:`load_charts` — per numeric axis (analysis/axes.py
  ``numeric_axes``, the one rule knees and trends use too): IOPS and MB/s
  with the knee marked, latency percentiles; without numeric axes, per point;
- :func:`curve_charts` — latency vs throughput;
- :func:`series_charts` — IOPS over time per point (first repeat);
- :func:`latency_time_charts` — latency over time per point (first
  repeat): the p50-p99 band with the max, and a heat map (time x latency
  bin, the share of each interval's I/Os) from the intervals' histograms
  merged exactly across workers;
- :func:`spread_charts` — per-repeat IOPS as boxes (when there are repeats).

Many points: latency and time-series charts draw at most
:data:`MAX_TRACES` points, evenly spaced, and say so in their title.

Every chart must draw something a reader sees: point labels go on a
category axis (plotly draws nothing for strings on a linear one), a trace
of a single point gets markers (a line through one point is invisible),
and confidence-interval bars stop at zero (no figure here is negative).
Latency kinds are named as fio does — lat is the *total* latency,
submission plus completion (:func:`lat_kind_title` says it once per title).
"""

from __future__ import annotations

import html
import math
from collections import defaultdict
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Optional

from iolab import _native
from iolab.analysis import samples
from iolab.analysis.axes import numeric_axes
from iolab.analysis.compare import point_label
from iolab.analysis.job_options import describe
from iolab.analysis.model import DIRS, Analysis, Interval, Json, Point, Row, metric_name
from iolab.report.analysis_text import headline_lat_kind, lat_kind_title, percentiles_of
from iolab.units import lat_unit_for

MAX_TRACES = 10
BINS_PER_DECADE = 20
_CURVE_PCTS = (50.0, 99.0, 99.9)


@dataclass
class Chart:
    title: str
    data: list[Json]
    layout: Json


def layout(title: str, x: str, y: str, *, xlog: bool = False, ylog: bool = False, xcat: bool = False) -> Json:
    xtype = "category" if xcat else ("log" if xlog else "linear")
    return {
        "title": {"text": title},
        "xaxis": {"title": {"text": x}, "type": xtype},
        "yaxis": {"title": {"text": y}, "type": "log" if ylog else "linear"},
        "margin": {"t": 50, "r": 20},
        "height": 420,
    }


def _mode(xs: list[Any], lines: str = "lines") -> str:
    """Markers as well when a trace has a single point: one point drawn as a line is invisible."""
    return f"{lines}+markers" if len(xs) == 1 else lines


def pick(points: list[Point], n: int = MAX_TRACES) -> list[Point]:
    """At most ``n`` points, evenly spaced, first and last included."""
    if len(points) <= n:
        return points
    step = (len(points) - 1) / (n - 1)
    return [points[round(i * step)] for i in range(n)]


def _shown(title: str, shown: int, total: int) -> str:
    return title if shown == total else f"{title} ({shown} of {total} points shown)"


def merged_hist(p: Point, d: str, kind: str) -> Optional[str]:
    """The point's histogram of ``kind`` latency in direction ``d``, repeats merged exactly."""
    lats = [getattr(s.dir(d), kind) for s in p.samples]
    return samples.merged_hist([ls.hist for ls in lats if ls is not None and ls.hist])


def log_bins(buckets: list[tuple[int, int]]) -> list[tuple[float, int, int]]:
    """``(centre_ns, count, highest_value_ns)`` per log bin (20 per decade) with I/Os in it."""
    bins: dict[int, list[int]] = {}
    for value, count in buckets:
        b = math.floor(math.log10(max(value, 1)) * BINS_PER_DECADE)
        acc = bins.setdefault(b, [0, 0])
        acc[0] += count
        acc[1] = max(acc[1], value)
    return [(10 ** ((b + 0.5) / BINS_PER_DECADE), c, hi) for b, (c, hi) in sorted(bins.items())]


def _hist_traces(label: str, bins: list[tuple[float, int, int]], scale: float) -> tuple[Json, Json]:
    """The histogram and CDF traces of one point's log bins."""
    total = sum(c for _, c, _ in bins) or 1
    hist = {"type": "scatter", "mode": _mode(bins), "line": {"shape": "hvh"}, "name": label,
            "x": [v / scale for v, _, _ in bins], "y": [c / total * 100 for _, c, _ in bins]}  # fmt: skip
    cum = [c / total * 100 for c in accumulate(c for _, c, _ in bins)]
    cdf = {"type": "scatter", "mode": _mode(bins), "name": label, "x": [hi / scale for _, _, hi in bins], "y": cum}
    return hist, cdf


def _percentile_cdf(an: Analysis, d: str, kind: str, shown: list[Point]) -> Optional[Chart]:
    """Without histograms (fio's plain json): the CDF through the percentiles the source printed."""
    wanted = {p.index for p in shown}
    pcts = percentiles_of(an.rows, kind)
    rows = [r for r in an.rows if r.dir == d and r.point in wanted]
    curves = [
        (r, [(r.metrics[metric_name(kind, p)].value, p) for p in pcts if metric_name(kind, p) in r.metrics])
        for r in rows
    ]
    curves = [(r, c) for r, c in curves if c]
    if not curves:
        return None
    unit, scale = lat_unit_for(v for _, c in curves for v, _ in c)
    data = [{"type": "scatter", "mode": "lines+markers", "name": point_label(an, r.point),
             "x": [v / scale for v, _ in c], "y": [p for _, p in c]} for r, c in curves]  # fmt: skip
    name = lat_kind_title(kind)
    t = _shown(f"{d}: {name} CDF (through the source's percentiles)", len(shown), len(an.dataset.points))
    return Chart(t, data, layout(t, f"{name} ({unit})", "I/Os at or below (%)", xlog=True))


def _chart_lat_kind(an: Analysis) -> Optional[str]:
    """The kind the histograms are of: lat, else clat (fio's json+ bins), else the headline kind."""
    for kind in ("lat", "clat", "slat"):
        for p in an.dataset.points:
            if any((ls := getattr(s.dir(d), kind)) is not None and ls.hist for s in p.samples for d in DIRS):
                return kind
    return headline_lat_kind(an.rows)


def latency_charts(an: Analysis) -> list[Chart]:
    kind = _chart_lat_kind(an)
    if kind is None:
        return []
    shown = pick(an.dataset.points)
    out = []
    for d in DIRS:
        curves = [(point_label(an, p.index), h) for p in shown if (h := merged_hist(p, d, kind))]
        if not curves:
            fallback = _percentile_cdf(an, d, kind, shown)
            out += [fallback] if fallback else []
            continue
        binned = [(label, log_bins(_native.hist_buckets(h))) for label, h in curves]
        unit, scale = lat_unit_for(v for _, bins in binned for v, _, _ in bins)
        traces = [_hist_traces(label, bins, scale) for label, bins in binned]
        n, total, name = len(shown), len(an.dataset.points), lat_kind_title(kind)
        t = _shown(f"{d}: {name} histogram", n, total)
        out.append(Chart(t, [h for h, _ in traces], layout(t, f"{name} ({unit})", "I/Os in bin (%)", xlog=True)))
        t = _shown(f"{d}: {name} CDF", n, total)
        out.append(Chart(t, [c for _, c in traces], layout(t, f"{name} ({unit})", "I/Os at or below (%)", xlog=True)))
    return out


def _groups(an: Analysis, axis: str, d: str) -> dict[str, list[tuple[float, Row]]]:
    """Rows of direction ``d`` along ``axis``, one group per value of the other axes."""
    values = {p.index: p.values for p in an.dataset.points}
    groups: dict[str, list[tuple[float, Row]]] = defaultdict(list)
    for r in an.rows:
        if r.dir == d and r.point in values:
            others = " ".join(f"{k}={v}" for k, v in r.params.items() if k != axis)
            groups[f"{d} {others}".strip()].append((values[r.point][axis], r))
    return {k: sorted(v, key=lambda t: t[0]) for k, v in groups.items()}


def _error(rows: list[Row], metric: str, scale: float) -> Optional[Json]:
    """The 95% interval of the mean as error bars around the plotted value,
    clipped at zero: IOPS, bandwidth and latency are never negative, and a
    bar reaching below zero (two repeats give a wide t interval) says
    nothing true."""
    up, down = [], []
    for r in rows:
        s = r.metrics[metric]
        if s.n >= 2 and s.ci95_low is not None and s.ci95_high is not None:
            half = (s.ci95_high - s.ci95_low) / 2 / scale
            up.append(half)
            down.append(min(half, max(s.value / scale, 0.0)))
        else:
            up.append(0.0)
            down.append(0.0)
    if not any(up):
        return None
    return {"type": "data", "symmetric": False, "array": up, "arrayminus": down, "visible": True}


def _trace(name: str, xs: list[Any], rows: list[Row], metric: str, scale: float) -> Json:
    t: Json = {
        "type": "scatter",
        "mode": "lines+markers",
        "name": name,
        "x": xs,
        "y": [r.metrics[metric].value / scale for r in rows],
    }
    err = _error(rows, metric, scale)
    if err:
        t["error_y"] = err
    return t


def wide(xs: list[float]) -> bool:
    pos = [x for x in xs if x > 0]
    return len(pos) == len(xs) and len(pos) > 1 and max(pos) / min(pos) >= 8


def _knee_trace(data: list[Json], knee: Optional[Json], axis: str) -> None:
    """A dashed vertical line at the knee, spanning the traces' y values: a
    trace rather than a layout shape, so it is in data units on a log axis too."""
    if not knee or knee.get("value") is None:
        return
    ys = [y for t in data for y in t["y"]]
    x = float(knee["value"])
    data.append(
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"knee: {axis}={x:g}",
            "x": [x, x],
            "y": [min(ys), max(ys)],
            "line": {"dash": "dash", "color": "#c0392b", "width": 2},
        }
    )


def _axis_charts(an: Analysis, axis: str) -> list[Chart]:
    out = []
    kind = headline_lat_kind(an.rows)
    groups = {k: v for d in DIRS for k, v in _groups(an, axis, d).items()}
    xs_all = [x for g in groups.values() for x, _ in g]
    xlog = wide(xs_all)
    for metric, ytitle, scale in (("iops", "IOPS", 1.0), ("bw_bytes_per_s", "bandwidth (MB/s)", 1e6)):
        data = [
            _trace(k, [x for x, _ in g], [r for _, r in g], metric, scale)
            for k, g in groups.items()
            if all(metric in r.metrics for _, r in g)
        ]
        if data:
            title = f"{ytitle} vs {axis}"
            _knee_trace(data, an.knees.get(axis), axis)
            out.append(Chart(title, data, layout(title, axis, ytitle, xlog=xlog)))
    if kind:
        pct_ms = [metric_name(kind, p) for p in percentiles_of(an.rows, kind) if p in _CURVE_PCTS or p >= 99.99]
        all_vals = [r.metrics[m].value for g in groups.values() for _, r in g for m in pct_ms if m in r.metrics]
        unit, scale = lat_unit_for(all_vals)
        data = [
            _trace(f"{k} p{m.split('_p')[1][:-3]}", [x for x, _ in g], [r for _, r in g], m, scale)
            for m in pct_ms
            for k, g in groups.items()
            if all(m in r.metrics for _, r in g)
        ]
        if data:
            name = lat_kind_title(kind)
            title = f"{name} percentiles vs {axis}"
            out.append(Chart(title, data, layout(title, axis, f"{name} ({unit})", xlog=xlog, ylog=wide(all_vals))))
    return out


def _per_point_charts(an: Analysis) -> list[Chart]:
    out = []
    for metric, ytitle, scale in (("iops", "IOPS", 1.0), ("bw_bytes_per_s", "bandwidth (MB/s)", 1e6)):
        data = []
        for d in DIRS:
            rows = [r for r in an.rows if r.dir == d and metric in r.metrics]
            if rows:
                tr = _trace(d, [point_label(an, r.point) for r in rows], rows, metric, scale)
                data.append({**tr, "type": "bar"})
        if data:
            title = f"{ytitle} per point"
            out.append(Chart(title, data, {**layout(title, "point", ytitle, xcat=True), "barmode": "group"}))
    return out


def load_charts(an: Analysis) -> list[Chart]:
    """Throughput (knee marked) and percentiles along each numeric axis; per point without one."""
    axes = numeric_axes(an.dataset)
    if not axes:
        return _per_point_charts(an)
    return [c for a in axes for c in _axis_charts(an, a)]


def curve_charts(an: Analysis) -> list[Chart]:
    """Latency against IOPS, per direction, in the points' order."""
    kind = headline_lat_kind(an.rows)
    if kind is None:
        return []
    metrics = [m for m in (f"{kind}_mean_ns", metric_name(kind, 99.0)) if any(m in r.metrics for r in an.rows)]
    vals = [r.metrics[m].value for r in an.rows for m in metrics if m in r.metrics]
    unit, scale = lat_unit_for(vals)
    data = []
    for d in DIRS:
        rows = [r for r in an.rows if r.dir == d and "iops" in r.metrics]
        for m in metrics:
            rs = [r for r in rows if m in r.metrics]
            if rs:
                name = f"{d} {m[len(kind) + 1 : -3].replace('_', ' ')}"
                data.append(
                    {
                        "type": "scatter",
                        "mode": "lines+markers",
                        "name": name,
                        "x": [r.metrics["iops"].value for r in rs],
                        "y": [r.metrics[m].value / scale for r in rs],
                        "text": [point_label(an, r.point) for r in rs],
                    }
                )
    name = lat_kind_title(kind)
    title = f"{name} vs throughput"
    return [Chart(title, data, layout(title, "IOPS", f"{name} ({unit})"))] if data else []


def series_charts(an: Analysis) -> list[Chart]:
    """IOPS per interval over time, first repeat of each shown point."""
    shown = pick([p for p in an.dataset.points if p.samples and p.samples[0].series])
    data = []
    for p in shown:
        series = p.samples[0].series
        t0 = series[0].t_start_ns
        # As the summary's interval statistics: a final interval shorter than
        # half the longest is a partial one (workers stopping), not a rate.
        longest_ns = max(iv.t_end_ns - iv.t_start_ns for iv in series)
        series = [iv for iv in series if 2 * (iv.t_end_ns - iv.t_start_ns) >= longest_ns]
        xs = [(iv.t_end_ns - t0) / 1e9 for iv in series]
        data.append(
            {
                "type": "scatter",
                "mode": _mode(xs),
                "name": point_label(an, p.index),
                "x": xs,
                "y": [iv.iops for iv in series],
            }
        )
    title = _shown("IOPS over time (first repeat)", len(shown), len(an.dataset.points))
    return [Chart(title, data, layout(title, "time since start (s)", "IOPS"))] if data else []


#: Latency over time draws the first repeat of at most this many points
#: (a heat map per point).
MAX_TIME_POINTS = 4
#: A heat map has at most this many columns: adjacent intervals are merged
#: (their histograms exactly) when a run has more.
MAX_HEAT_COLUMNS = 120


def _full(series: list[Interval]) -> list[Interval]:
    """The intervals that are not a partial last one (as ``series_charts``)."""
    longest_ns = max(iv.t_end_ns - iv.t_start_ns for iv in series)
    return [iv for iv in series if 2 * (iv.t_end_ns - iv.t_start_ns) >= longest_ns]


def _bands_chart(label: str, series: list[Interval]) -> Optional[Chart]:
    """p50, p99 and max of every I/O of each interval (the summary's exact
    figures), p50-p99 filled: a percentile band over time."""
    ivs = [iv for iv in _full(series) if iv.lat_p99_ns is not None and iv.lat_p50_ns is not None]
    if not ivs:
        return None
    t0 = series[0].t_start_ns
    xs = [(iv.t_end_ns - t0) / 1e9 for iv in ivs]
    unit, scale = lat_unit_for(v for iv in ivs for v in (iv.lat_p50_ns, iv.lat_p99_ns, iv.lat_max_ns) if v)
    mode = _mode(xs)
    p50 = [(iv.lat_p50_ns or 0) / scale for iv in ivs]  # (None filtered out above)
    p99 = [(iv.lat_p99_ns or 0) / scale for iv in ivs]
    data: list[Json] = [
        {"type": "scatter", "mode": mode, "name": "p50", "x": xs, "y": p50},
        {"type": "scatter", "mode": mode, "name": "p99", "x": xs, "y": p99, "fill": "tonexty"},
    ]
    maxes = [iv.lat_max_ns for iv in ivs]
    if all(m is not None for m in maxes):
        y = [(m or 0) / scale for m in maxes]
        data.append({"type": "scatter", "mode": mode, "name": "max", "x": xs, "y": y, "line": {"dash": "dot"}})
    title = f"latency (lat) percentiles over time, {label}"
    return Chart(title, data, layout(title, "time since start (s)", f"latency ({unit})", ylog=True))


def _columns(series: list[Interval]) -> list[tuple[float, str]]:
    """(end time s, histogram) per heat-map column: the intervals with a
    histogram, adjacent ones merged exactly down to MAX_HEAT_COLUMNS."""
    t0 = series[0].t_start_ns
    ivs = [iv for iv in _full(series) if iv.lat_hist]
    per = max(1, math.ceil(len(ivs) / MAX_HEAT_COLUMNS))
    cols = []
    for i in range(0, len(ivs), per):
        chunk = ivs[i : i + per]
        h = samples.merged_hist([iv.lat_hist for iv in chunk if iv.lat_hist])
        if h:
            cols.append(((chunk[-1].t_end_ns - t0) / 1e9, h))
    return cols


def _heat_chart(label: str, series: list[Interval]) -> Optional[Chart]:
    """Time x latency: each column one interval's I/Os (every worker and
    direction merged exactly) in log bins, 20 per decade; the colour is the
    share of the column's I/Os in the bin. Drawn as square markers, one per
    non-empty cell."""
    cols = _columns(series)
    if not cols:
        return None
    binned = [(t, log_bins(_native.hist_buckets(h))) for t, h in cols]
    unit, scale = lat_unit_for(v for _, bins in binned for v, _, _ in bins)
    xs, ys, zs = [], [], []
    for t, bins in binned:
        total = sum(c for _, c, _ in bins) or 1
        for centre, count, _hi in bins:
            xs.append(t)
            ys.append(centre / scale)
            zs.append(round(count / total * 100, 3))
    trace = {
        "type": "scatter",
        "mode": "markers",
        "name": "I/Os in bin (%)",
        "x": xs,
        "y": ys,
        "marker": {"symbol": "square", "size": 7, "color": zs, "colorscale": "Viridis", "showscale": True,
                   "colorbar": {"title": {"text": "% of the interval's I/Os"}}},
        "hovertemplate": "%{x} s, %{y} " + unit + ": %{marker.color}%<extra></extra>",
    }  # fmt: skip
    title = f"latency (lat) heat map over time, {label}"
    return Chart(title, [trace], layout(title, "time since start (s)", f"latency ({unit})", ylog=True))


def latency_time_charts(an: Analysis) -> list[Chart]:
    """Latency over time, first repeat of each shown point: the percentile
    bands and, where the intervals' histograms are known, the heat map."""
    shown = pick([p for p in an.dataset.points if p.samples and len(p.samples[0].series) > 1], MAX_TIME_POINTS)
    out = []
    for p in shown:
        label = point_label(an, p.index)
        series = p.samples[0].series
        out += [c for c in (_bands_chart(label, series), _heat_chart(label, series)) if c is not None]
    return out


def spread_charts(an: Analysis) -> list[Chart]:
    """Per-repeat IOPS of every point as boxes, per direction; none without repeats."""
    if all(len(p.samples) < 2 for p in an.dataset.points):
        return []
    data = []
    for d in DIRS:
        xs, ys = [], []
        for p in an.dataset.points:
            for s in p.samples:
                if s.dir(d).ios:
                    xs.append(point_label(an, p.index))
                    ys.append(s.dir(d).iops)
        if ys:
            data.append({"type": "box", "name": d, "x": xs, "y": ys, "boxpoints": "all"})
    title = "IOPS across repeats"
    spec = {**layout(title, "point", "IOPS", xcat=True), "boxmode": "group"}
    return [Chart(title, data, spec)] if data else []


def fleet_charts(fleet: Json) -> list[Chart]:
    """A fleet run (its ``fleet.json``): per-host bars of IOPS, MB/s and p99
    latency — each host's figures from its own histograms, never an average
    of percentiles — one bar trace per group and direction, hosts on a
    category axis (the table's rows minus the Total). Above
    :data:`~iolab.report.fleet_lines.ROWS_MAX` hosts, their spread instead
    (:func:`fleet_spread_charts`)."""
    from iolab.report.fleet_lines import ROWS_MAX, by_group_dir

    if any(len(sel) > ROWS_MAX for _, sel in by_group_dir(fleet)):
        return fleet_spread_charts(fleet)
    rows = [r for r in fleet.get("table", []) if r["host"] != "Total"]
    keys = sorted({(r["group"], r["dir"]) for r in rows})
    multi = len({g for g, _ in keys}) > 1
    p99 = [r["lat_p99_ns"] for r in rows if r["lat_p99_ns"] is not None]
    unit, scale = lat_unit_for(p99)
    charts = []
    for title, y, metric, k in (
        ("IOPS per host (fleet)", "IOPS", "iops", 1.0),
        ("bandwidth (MB/s) per host (fleet)", "MB/s", "bw_bytes_per_s", 1e6),
        (f"p99 latency (lat) per host (fleet), {unit}", f"p99 lat ({unit})", "lat_p99_ns", scale),
    ):
        data = []
        for g, d in keys:
            sel = [r for r in rows if (r["group"], r["dir"]) == (g, d) and r[metric] is not None]
            if sel:
                name = f"g{g} {d}" if multi else d
                data.append(
                    {"type": "bar", "name": name, "x": [r["host"] for r in sel], "y": [r[metric] / k for r in sel]}
                )
        if data:
            charts.append(Chart(title, data, {**layout(title, "host", y, xcat=True), "barmode": "group"}))
    return charts


def fleet_spread_charts(fleet: Json) -> list[Chart]:
    """Many hosts: per group and direction, how many hosts ran at each IOPS
    (the histogram of host IOPS, the stragglers' bin first) and the slowest
    hosts' IOPS with their p99 latency (each host's from its own histograms)."""
    from iolab.report.fleet_lines import by_group_dir, rows_spread

    charts = []
    for (g, d), sel in by_group_dir(fleet):
        sp = rows_spread(sel)
        if sp is None:
            continue
        name = f"group {g} {d}"
        x = [f"{b['low_iops'] / 1e3:.2f}-{b['high_iops'] / 1e3:.2f}" for b in sp["bins"]]
        data = [{"type": "bar", "name": d, "x": x, "y": [b["hosts"] for b in sp["bins"]]}]
        title = f"hosts by kIOPS (fleet, {sp['hosts']} hosts), {name}"
        charts.append(Chart(title, data, layout(title, "kIOPS of the host", "hosts", xcat=True)))
        slow = sp["slowest"]
        p99 = [r["lat_p99_ns"] for r in slow if r["lat_p99_ns"] is not None]
        unit, scale = lat_unit_for(p99)
        hosts = [r["host"] for r in slow]
        data = [
            {"type": "bar", "name": "IOPS", "x": hosts, "y": [r["iops"] for r in slow]},
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"p99 lat ({unit})",
                "x": hosts,
                "y": [None if r["lat_p99_ns"] is None else r["lat_p99_ns"] / scale for r in slow],
                "yaxis": "y2",
            },
        ]
        title = f"the {len(slow)} slowest hosts (fleet), {name}"
        lay = {
            **layout(title, "host", "IOPS", xcat=True),
            "yaxis2": {"title": {"text": f"p99 lat ({unit})"}, "overlaying": "y", "side": "right"},
            "margin": {"t": 50, "r": 60},
        }
        charts.append(Chart(title, data, lay))
    return charts


def all_charts(an: Analysis) -> list[Chart]:
    """Every chart of the report; with a subtitle naming what every point ran
    (``rw=randrw rwmixread=70 bssplit=4k/50:64k/50 rate_iops=500``) when
    that is not in the points' own labels."""
    charts = [
        *latency_charts(an),
        *load_charts(an),
        *curve_charts(an),
        *series_charts(an),
        *latency_time_charts(an),
        *spread_charts(an),
    ]
    if an.dataset.job:
        sub = f"<br><sub>{html.escape(describe(an.dataset.job))}</sub>"
        for c in charts:
            c.layout["title"]["text"] += sub
    return charts
