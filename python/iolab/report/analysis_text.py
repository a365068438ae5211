"""Tables of an analysis, in one place for every report format.

- :func:`tables` builds :class:`Table` s (header cells carry the unit; each
  cell is a string already): the main table (IOPS, MB/s, latency mean and
  percentiles, CPU, c/B per point and direction) and one latency table per
  kind (slat/clat/lat: min, mean, max, percentiles).
- :func:`fmt_stat`: a figure over repeats reads ``value ± h`` where ``h`` is
  the half-width of the 95 % confidence interval of the per-repeat mean;
  a single repeat reads ``value``.
- :func:`comparison_table` / :func:`format_comparison_text`: ``iolab
  compare`` — per matched row the headline metrics of A and B, the
  difference in % and the verdict of the Welch test.
- :func:`format_analysis_text`: the terminal report — what was analysed,
  findings, warnings, knees and bottleneck, then the tables, plain aligned
  text (Markdown and HTML render the same :class:`Table` s).

Each column has ONE unit, and every latency column of every table the
same one, :data:`TABLE_LAT_UNIT` (µs, four significant digits: 0.450 is
450 ns, whole ns are kept): chosen from the values, p90 in ns beside p95 in
µs, or a p99 column in ms in one run and µs in the next, would not compare
by eye. A value is never written with a k/M suffix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Optional

from iolab.analysis import wording as w
from iolab.analysis.compare import ALPHA, CORRECTION, Comparison, MetricDiff, point_label
from iolab.analysis.job_options import describe
from iolab.analysis.model import LAT_KINDS, Analysis, Finding, Json, Row, Stat, metric_name
from iolab.units import fmt_bytes, fmt_num

PLUS_MINUS_NOTE = (
    "value ± half-width of the 95% confidence interval over repeats; ! = unstable (CV above the threshold)"
)
MAIN_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)
_PCT_RE = re.compile(r"^(slat|clat|lat)_p([0-9.]+)_ns$")
#: The unit of every latency column of every table (name, ns per unit): fixed, so tables compare by eye.
TABLE_LAT_UNIT = ("µs", 1e3)


@dataclass
class Column:
    metric: str
    title: str  # with its unit, e.g. "lat p99 (µs)"
    scale: float  # value / scale is what is printed


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    #: how many leading columns are labels (left-aligned); the rest are figures
    label_cols: int
    notes: list[str] = field(default_factory=list)


def fmt_stat(s: Stat, scale: float = 1.0) -> str:
    """``value`` or ``value ± half-width of the 95% CI`` in the unit of ``scale``
    (whole nanoseconds: a histogram's value has no fraction of a ns)."""
    fmt = (lambda x: f"{x:.0f}") if s.unit == "ns" and scale == 1.0 else fmt_num
    text = fmt(s.value / scale)
    if s.n >= 2 and s.ci95_low is not None and s.ci95_high is not None:
        text += f" ± {fmt((s.ci95_high - s.ci95_low) / 2 / scale)}"
    return text


def percentiles_of(rows: Iterable[Row], kind: str) -> list[float]:
    """The percentiles present for ``kind`` in any row, ascending."""
    found = set()
    for r in rows:
        for m in r.metrics:
            hit = _PCT_RE.match(m)
            if hit and hit.group(1) == kind:
                found.add(float(hit.group(2)))
    return sorted(found)


_KIND_TITLES = {
    "lat": "total latency (lat)",
    "clat": "completion latency (clat)",
    "slat": "submission latency (slat)",
}


def lat_kind_title(kind: str) -> str:
    """``"lat"`` → ``"total latency (lat)"``: what a latency kind measures, in
    fio's words (lat = submission + completion, from issue to completion)."""
    return _KIND_TITLES.get(kind, f"{kind} latency")


def headline_lat_kind(rows: list[Row]) -> Optional[str]:
    """``lat`` (issue to completion), else ``clat``, else ``slat``: the first
    with percentiles (fio's json has them for clat only), else the first measured."""
    kinds = [k for k in ("lat", "clat", "slat") if any(f"{k}_mean_ns" in r.metrics for r in rows)]
    with_pcts = [k for k in kinds if percentiles_of(rows, k)]
    chosen = with_pcts or kinds
    return chosen[0] if chosen else None


def _column(rows: list[Row], metric: str, title: str) -> Optional[Column]:
    if not any(metric in r.metrics for r in rows):
        return None
    if metric.endswith("_ns"):
        unit, scale = TABLE_LAT_UNIT
        return Column(metric, f"{title} ({unit})", scale)
    if metric == "bw_bytes_per_s":
        return Column(metric, f"{title} (MB/s)", 1e6)
    return Column(metric, title, 1.0)


def _label_header(an: Analysis) -> list[str]:
    return [*an.dataset.axes, "dir"] if an.dataset.axes else ["point", "dir"]


def _labels(an: Analysis, r: Row) -> list[str]:
    if an.dataset.axes:
        return [str(r.params.get(a, "")) for a in an.dataset.axes] + [r.dir]
    return [point_label(an, r.point), r.dir]


def _table(an: Analysis, title: str, specs: list[tuple[str, str]], notes: list[str]) -> Optional[Table]:
    cols = [c for c in (_column(an.rows, m, t) for m, t in specs) if c is not None]
    if not cols:
        return None
    flag = any(r.unstable for r in an.rows)
    out = []
    for r in an.rows:
        cells = [fmt_stat(r.metrics[c.metric], c.scale) if c.metric in r.metrics else "-" for c in cols]
        out.append([*_labels(an, r), *cells, *(["!" if r.unstable else ""] if flag else [])])
    header = [*_label_header(an), *(c.title for c in cols), *(["unstable"] if flag else [])]
    return Table(title, header, out, len(_label_header(an)), notes)


def main_table(an: Analysis) -> Optional[Table]:
    kind = headline_lat_kind(an.rows)
    specs = [("iops", "IOPS"), ("bw_bytes_per_s", "bandwidth")]
    if kind:
        specs.append((f"{kind}_mean_ns", f"{kind} mean"))
        pcts = percentiles_of(an.rows, kind)
        # The headline percentiles; every one is in the latency tables.
        pcts = [p for p in pcts if p in MAIN_PERCENTILES] or pcts
        specs += [(metric_name(kind, p), f"{kind} p{p:g}") for p in pcts]
    specs += [("usr_cpu_pct", "usr CPU (%)"), ("sys_cpu_pct", "sys CPU (%)"), ("cycles_per_byte", "c/B (cycles/B)")]
    notes = [PLUS_MINUS_NOTE]
    if kind:
        notes.append(
            f"{kind} = {lat_kind_title(kind).split(' (')[0]}"
            + (" (submission + completion, as in fio)" if kind == "lat" else "")
        )
    if any("usr_cpu_pct" in r.metrics for r in an.rows):
        notes.append(CPU_NOTE if any("cycles_per_byte" in r.metrics for r in an.rows) else CPU_NOTE.split("; c/B")[0])
    return _table(an, "Throughput and latency", specs, notes)


#: What the CPU columns measure: the worker threads' CPU, the whole machine's privileged cycles.
CPU_NOTE = (
    "usr/sys CPU = % of one CPU per worker thread; c/B = privileged (sys+irq+softirq) cycles of all CPUs per byte moved"
)


def latency_table(an: Analysis, kind: str) -> Optional[Table]:
    specs = [(f"{kind}_min_ns", "min"), (f"{kind}_mean_ns", "mean"), (f"{kind}_max_ns", "max")]
    pcts = percentiles_of(an.rows, kind)
    specs += [(metric_name(kind, p), f"p{p:g}") for p in pcts]
    notes = (
        ["percentiles: of the repeats' merged histogram; ± from the repeats' own percentiles (95% bootstrap interval)"]
        if pcts
        else []
    )
    return _table(an, f"{lat_kind_title(kind)}, per point and direction", specs, notes)


def tables(an: Analysis) -> list[Table]:
    """Every table of the report, main table first."""
    out = [main_table(an), *(latency_table(an, k) for k in LAT_KINDS)]
    return [t for t in out if t is not None]


def host_line(host: Json) -> str:
    """One line of host facts, from what the source recorded."""
    cpu = host.get("cpu") or {}
    storage = host.get("storage") or {}
    parts = [
        host.get("hostname"),
        cpu.get("model"),
        f"{cpu['logical_cores']} CPUs" if cpu.get("logical_cores") else None,
        fmt_bytes(host["memory_bytes"]) + " RAM" if host.get("memory_bytes") else None,
        f"kernel {host['kernel']}" if host.get("kernel") else None,
        " ".join(str(storage[k]) for k in ("fstype", "device") if storage.get(k)) or None,
        f"in {virt}" if (virt := w.virtualization((host.get("virtualization") or {}).get("kind"))) else None,
    ]
    return ", ".join(str(p) for p in parts if p) or "not recorded"


def knee_lines(an: Analysis) -> list[str]:
    """One line per axis and series with a knee: where, and the figures that show it."""
    out = []
    for axis, knee in an.knees.items():
        if knee is None:
            out.append(f"{axis}: no knee (throughput still grows, or the data do not show one)")
            continue
        for k in [knee, *(knee.get("all") or [])]:  # the strongest first, then the others
            out.append(f"{axis}: {_knee_text(axis, k)}")
    return out


def _knee_text(axis: str, k: Json) -> str:
    """``knee at iodepth=32 (read): 9.89k IOPS → 41.9k IOPS (+324%), then within 7.74%; lat p99 …``."""
    at = k.get("label") or f"{axis}={_fig(k.get('value'))}"
    series = ", ".join(f"{a}={v}" for a, v in (k.get("series") or {}).items())
    where = ", ".join(x for x in (k.get("dir"), series) if x)
    text = f"knee at {at}" + (f" ({where})" if where else "")
    fmt = w.iops if k.get("throughput_metric") == "iops" else w.bytes_per_s
    if k.get("throughput_first") is not None and k.get("throughput") is not None:
        text += f": {fmt(k['throughput_first'])} → {fmt(k['throughput'])}"
        if k.get("rise_to_knee_pct") is not None:
            text += f" ({w.signed_pct(k['rise_to_knee_pct'])})"
    elif k.get("iops") is not None:
        text += f": {w.iops(k['iops'])} at the knee"
    if k.get("flat_after_within_pct") is not None:
        text += f", then within {w.pct(k['flat_after_within_pct'])}"
    if k.get("lat_at_knee_ns") is not None and k.get("lat_at_end_ns") is not None:
        metric = str(k.get("latency_metric", "lat")).removesuffix("_ns").replace("_", " ")
        text += f"; {metric} {w.ns(k['lat_at_knee_ns'])} → {w.ns(k['lat_at_end_ns'])}"
        if k.get("lat_growth_after_pct") is not None:
            text += f" ({w.signed_pct(k['lat_growth_after_pct'])})"
        if k.get("end_label"):
            text += f" at {k['end_label']}"
    return text


def _flat(figures: Json, prefix: str = "") -> list[str]:
    """``k=v`` for every figure, nested ones as ``outer.inner=v``; unknown (None) ones left out."""
    out = []
    for k, v in figures.items():
        if isinstance(v, dict):
            out += _flat(v, f"{prefix}{k}.")
        elif v is not None:
            out.append(f"{prefix}{k}={_fig(v)}")
    return out


def bottleneck_line(an: Analysis) -> str:
    verdict = str(an.bottleneck.get("verdict", "not determined")).replace("_", " ")
    figures = ", ".join(_flat(an.bottleneck.get("evidence") or {}))
    return f"{verdict}{' (' + figures + ')' if figures else ''}"


def _fig(v: object) -> str:
    """A figure of a finding's evidence: whole numbers whole, others ~4 digits."""
    if isinstance(v, float):
        return f"{v:.0f}" if v.is_integer() else fmt_num(v)
    return str(v)


def hosts_line(counts: list[int]) -> str:
    """How many hosts ran the points: "1", or a fleet's "2 (a fleet: ...)"."""
    n = "/".join(str(c) for c in counts)
    return n if counts == [1] else f"{n} (a fleet: each host ran the whole job; figures are the hosts' sum)"


def summary_lines(an: Analysis) -> list[str]:
    """What was analysed: source, tool, host, points and repeats."""
    ds = an.dataset
    repeats = sorted({len(p.samples) for p in ds.points})
    rep = "/".join(str(r) for r in repeats) or "0"
    status = [f"STATUS: {f.text}" for f in an.warnings if f.kind == "incomplete"]
    return [
        *status,
        f"source: {ds.source} {ds.path}",
        f"measured by: {ds.tool}",
        f"host: {host_line(ds.host)}",
        f"hosts: {hosts_line(ds.hosts)}",
        f"points: {len(ds.points)}, axes: {', '.join(ds.axes) or 'none'}, repeats per point: {rep}",
        *([f"job (every point): {describe(ds.job)}"] if ds.job else []),
    ]


def _finding(f: Finding, mark: str) -> str:
    return f"  {mark} {f.text}"


def format_text_table(t: Table) -> str:
    widths = [max(len(r[i]) for r in [t.header, *t.rows]) for i in range(len(t.header))]

    def line(cells: list[str]) -> str:
        out = (c.ljust(w) if i < t.label_cols else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
        return "  ".join(out).rstrip()

    return "\n".join([t.title, line(t.header), *(line(r) for r in t.rows), *(f"({n})" for n in t.notes)])


def format_analysis_text(an: Analysis) -> str:
    """The whole terminal report."""
    out = [f"iolab analysis: {an.dataset.name}", *summary_lines(an), ""]
    out += ["Findings:", *(_finding(f, "*") for f in an.findings)] if an.findings else ["Findings: none"]
    out += ["Warnings:", *(_finding(f, "!") for f in an.warnings)] if an.warnings else ["Warnings: none"]
    if an.knees:
        out += ["Knees:", *(f"  {k}" for k in knee_lines(an))]
    out += [f"Bottleneck: {bottleneck_line(an)}", ""]
    out += find_lines(an)
    out += [format_text_table(t) + "\n" for t in tables(an)]
    return "\n".join(out).rstrip() + "\n"


def find_statement(an: Analysis) -> Optional[tuple[str, list[str]]]:
    """An ``iolab find`` directory's answer: a title and the statement's
    lines as the search printed them (find.json); None for any other source."""
    found = an.dataset.plan.get("find")
    if not isinstance(found, dict):
        return None
    return f"SLO search (iolab find, '{found.get('slo')}')", [str(x) for x in found.get("statement") or []]


def find_lines(an: Analysis) -> list[str]:
    """:func:`find_statement` as the terminal report's lines."""
    got = find_statement(an)
    return [] if got is None else [f"{got[0]}:", *(f"  {line}" for line in got[1]), ""]


#: Percentiles ``iolab compare`` shows without ``--all``.
HEADLINE_PCTS = (50.0, 99.0)


def _headline_metrics(c: Comparison, everything: bool = False) -> list[str]:
    """The metrics a comparison shows: IOPS, MB/s, p50, p99 and CPU; with
    ``everything``, the mean, every percentile and c/B as well."""
    present = {m for r in c.rows for m in r.metrics}
    kinds = [k for k in ("lat", "clat", "slat") if f"{k}_mean_ns" in present]
    kind = kinds[0] if kinds else "lat"
    pcts = sorted({float(h.group(2)) for m in present if (h := _PCT_RE.match(m)) and h.group(1) == kind})
    if not everything:
        return [m for m in ("iops", "bw_bytes_per_s", *(metric_name(kind, p) for p in HEADLINE_PCTS),
                            "usr_cpu_pct", "sys_cpu_pct") if m in present]  # fmt: skip
    wanted = ["iops", "bw_bytes_per_s", f"{kind}_mean_ns", *(metric_name(kind, p) for p in pcts)]
    wanted += ["usr_cpu_pct", "sys_cpu_pct", "cycles_per_byte"]
    return [m for m in wanted if m in present]


def _metric_title(metric: str, diffs: list[MetricDiff]) -> tuple[str, float]:
    if metric.endswith("_ns"):
        unit, scale = TABLE_LAT_UNIT
        name = metric[: -len("_ns")].replace("_p", " p").replace("_mean", " mean")
        return f"{name} ({unit})", scale
    if metric == "bw_bytes_per_s":
        return "bandwidth (MB/s)", 1e6
    return {"iops": "IOPS", "usr_cpu_pct": "usr CPU (%)", "sys_cpu_pct": "sys CPU (%)"}.get(
        metric, "c/B (cycles/B)" if metric == "cycles_per_byte" else metric
    ), 1.0


def comparison_table(c: Comparison, everything: bool = False) -> Table:
    """One line per matched row x headline metric (every metric with ``everything``)."""
    out = []
    for metric in _headline_metrics(c, everything):
        diffs = [r.metrics[metric] for r in c.rows if metric in r.metrics]
        title, scale = _metric_title(metric, diffs)
        for r in c.rows:
            d = r.metrics.get(metric)
            if d is None:
                continue
            pct = "-" if d.diff_pct is None else f"{d.diff_pct:+.1f}"
            p = "-" if d.test is None else f"{d.test.p_value:.3f}"
            adj = "-" if d.p_adjusted is None else f"{d.p_adjusted:.3f}"
            out.append([r.key, r.dir, title, fmt_stat(d.a, scale), fmt_stat(d.b, scale), pct, p, adj, d.verdict])
    header = ["point", "dir", "metric", "A", "B", "B vs A (%)", "p (Welch)", f"p ({CORRECTION})", "verdict"]
    notes = [PLUS_MINUS_NOTE.split(";")[0], significance_note(c)]
    return Table("Differences", header, out, 3, notes)


def significance_note(c: Comparison) -> str:
    """What "significant" means here: the test, and the correction over the comparison's tests."""
    n = c.correction.get("tests", 0)
    return (
        f"significant: p < {ALPHA:g} in Welch's t-test on the per-repeat values, adjusted by {CORRECTION}'s "
        f"method for all {n} tests of this comparison (every metric of every matched row, shown or not), so "
        f"the chance of any false 'significant' stays at {ALPHA:.0%}"
    )


def comparison_header(c: Comparison) -> list[str]:
    """What is compared: A and B by path (and name), the base-job differences first."""
    lines = []
    if c.differences:
        lines.append("DIFFERENT JOBS (compared with --force): " + "; ".join(d.text() for d in c.differences))
    lines += [f"A: {c.a_path or c.a_name} ({c.a_name})", f"B: {c.b_path or c.b_name} ({c.b_name})"]
    lines.append(f"matched rows: {len(c.rows)} (same axis values and direction)")
    if c.correction.get("tests"):
        lines.append(
            f"multiple comparisons: {c.correction['tests']} Welch tests, each p adjusted by {CORRECTION}'s method "
            f"(any false 'significant' at most {ALPHA:.0%} likely)"
        )
    if c.only_a:
        lines.append(f"only in A: {', '.join(c.only_a)}")
    if c.only_b:
        lines.append(f"only in B: {', '.join(c.only_b)}")
    return lines


def format_comparison_text(c: Comparison, everything: bool = False) -> str:
    """The terminal report of ``iolab compare`` (``--all``: ``everything``)."""
    return (
        "\n".join(
            [
                "iolab compare: B vs A",
                *comparison_header(c),
                "",
                format_text_table(comparison_table(c, everything)),
            ]
        )
        + "\n"
    )
