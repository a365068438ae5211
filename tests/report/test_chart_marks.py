"""No chart of the HTML report can be blank unnoticed (issue #13): each
report below is opened in headless Chromium and every chart's plot area
must hold marks plotly actually drew (:func:`chromium_check.chart_marks`
counts them in the rendered SVG; an attribute the page sets itself would
not see a trace plotly could not place).

The cases are the ones that drew blank charts: a run without axes (points
named by job: categories), a sweep with repeats (per-repeat boxes), 1 s
jobs (one interval per time series), fio imports (json and json+); and a
real ``iolab run --results`` directory. Together they draw every chart
kind the report has (:data:`KINDS`), which the last test checks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import pytest
from analysis_fixtures import single_run, sweep
from chromium_check import chart_marks, check_rendered
from iolab import _native
from iolab.analysis import analyze, load_dataset
from iolab.analysis.model import Analysis
from iolab.report.charts import all_charts, fleet_charts
from iolab.report.html import render_html

FIO_DATA = Path(__file__).parents[1] / "analysis" / "data" / "fio"

#: Every chart kind the report draws, by its title.
KINDS = {
    "latency histogram": r"latency \((s|c|)lat\) histogram",
    "latency CDF": r"latency \((s|c|)lat\) CDF(?! \(through)",
    "CDF through the source's percentiles": r"CDF \(through the source's percentiles\)",
    "IOPS along an axis": r"^IOPS vs ",
    "bandwidth along an axis": r"^bandwidth \(MB/s\) vs ",
    "percentiles along an axis": r"percentiles vs ",
    "latency vs throughput": r"latency \((s|c|)lat\) vs throughput",
    "IOPS per point": r"^IOPS per point",
    "bandwidth per point": r"^bandwidth \(MB/s\) per point",
    "IOPS over time": r"^IOPS over time",
    "latency percentiles over time": r"^latency \(lat\) percentiles over time",
    "latency heat map": r"^latency \(lat\) heat map over time",
    "IOPS across repeats": r"^IOPS across repeats",
    "IOPS per host": r"^IOPS per host \(fleet\)",
    "bandwidth per host": r"^bandwidth \(MB/s\) per host \(fleet\)",
    "p99 latency per host": r"^p99 latency \(lat\) per host \(fleet\)",
    "hosts by kIOPS": r"^hosts by kIOPS \(fleet, \d+ hosts\)",
    "slowest hosts": r"^the \d+ slowest hosts \(fleet\)",
}

CASES: dict[str, Callable[[], Analysis]] = {
    "run without axes": single_run,
    "sweep with repeats": lambda: sweep(repeats=2),
    "1 s jobs": lambda: single_run(intervals=1),
    "fio json": lambda: analyze(load_dataset(FIO_DATA / "groups.json")),
    "fio json+": lambda: analyze(load_dataset(FIO_DATA / "groups_plus.json")),
}


def _row(host: str, d: str, iops: float, p99_ns: int | None) -> dict[str, object]:
    return {"host": host, "group": 0, "dir": d, "iops": iops, "bw_bytes_per_s": iops * 4096, "lat_p99_ns": p99_ns}


#: A fleet run's fleet.json (what the report reads): three hosts, reads and writes, and the total.
FLEET = {
    "hosts": [{"rank": r, "host": f"node{r}"} for r in range(3)],
    "clock": {
        "ranks": [{"rank": 0, "offset_ns": 0}, {"rank": 1, "offset_ns": 41_000}, {"rank": 2, "offset_ns": -7_000}],
        "start_skew_ns": 2_400_000,
        "round_trip_median_ns": 60_000,
    },
    "table": [
        *[_row(f"node{r}", "read", 10_000.0 * (r + 1), 90_000 * (r + 1)) for r in range(3)],
        _row("Total", "read", 60_000.0, 250_000),
        *[_row(f"node{r}", "write", 5_000.0 * (r + 1), 300_000) for r in range(3)],
        _row("Total", "write", 30_000.0, 300_000),
    ],
}


def test_fleet_report_draws_a_bar_per_host(tmp_path: Path) -> None:
    page = tmp_path / "fleet.html"
    html = render_html(single_run(), FLEET)
    page.write_text(html, encoding="utf-8")
    opened = check_rendered(page, tmp_path, png_rows=800)
    marks = chart_marks(opened.dom)
    # The three fleet charts come first: one bar per host and direction (3 hosts x 2 directions).
    assert [marks[i] for i in range(3)] == [6, 6, 6], marks
    assert "Fleet: 3 hosts" in html and "start skew 2.400 ms" in html
    assert "max/min 3.000" in html  # node2 does 3x node0's IOPS


#: A fleet of 100 hosts (over the 24 drawn a bar each): host i at 10,000 + 10 i IOPS, node7 a straggler.
FLEET_MANY = {
    **FLEET,
    "hosts": [{"rank": r, "host": f"node{r}"} for r in range(100)],
    "table": [
        *[_row(f"node{r}", "read", 3_000.0 if r == 7 else 10_000.0 + 10 * r, 90_000 + r) for r in range(100)],
        _row("Total", "read", 1_000_000.0, 95_000),
    ],
}


def test_fleet_report_of_many_hosts_draws_their_spread(tmp_path: Path) -> None:
    # Above 24 hosts: the histogram of host kIOPS and the slowest hosts, not 100 bars.
    page = tmp_path / "fleet.html"
    html = render_html(single_run(), FLEET_MANY)
    page.write_text(html, encoding="utf-8")
    titles = [c.title for c in fleet_charts(FLEET_MANY)]
    assert titles == ["hosts by kIOPS (fleet, 100 hosts), group 0 read", "the 10 slowest hosts (fleet), group 0 read"]
    opened = check_rendered(page, tmp_path, png_rows=800)
    marks = chart_marks(opened.dom)
    assert marks[0] == 9, marks  # the stragglers' bin and 8 over the others
    assert marks[1] >= 10, marks  # a bar per slow host (and its p99 marker)
    assert (
        "Fleet: 100 hosts" in html and "stragglers (1, below 75% of the median host&#x27;s kIOPS): node7 3.00" in html
    )
    assert "median 10.49" in html  # nearest rank: the 50th of 100


def kind_of(title: str) -> str:
    kinds = [k for k, pattern in KINDS.items() if re.search(pattern, title)]
    assert len(kinds) == 1, f"chart {title!r} is of kinds {kinds}: update KINDS"
    return kinds[0]


@pytest.mark.parametrize("case", CASES)
def test_every_chart_has_drawn_marks(case: str, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(CASES[case]()), encoding="utf-8")
    check_rendered(page, tmp_path, png_rows=800)  # fails naming the blank charts


def test_run_results_directory_charts_have_marks(tmp_path: Path, cli) -> None:
    target = tmp_path / "data.bin"
    res = tmp_path / "res"
    r = cli("run", "--name", "rr", "--filename", str(target), "--rw", "randread", "--bs", "4k", "--size", "1m",
            "--runtime", "1", "--time_based", "--ioengine", "psync", "--results", str(res))  # fmt: skip
    assert r.exit_code == 0, r.output
    (run_dir,) = [p for p in res.iterdir() if p.is_dir()]
    html = cli("report", str(run_dir), "--format", "html")
    assert html.exit_code == 0, html.output
    check_rendered(Path(html.stdout.strip()), tmp_path, png_rows=800)


def test_the_cases_draw_every_chart_kind() -> None:
    seen = {kind_of(c.title) for make in CASES.values() for c in all_charts(make())}
    seen |= {kind_of(c.title) for fleet in (FLEET, FLEET_MANY) for c in fleet_charts(fleet)}
    assert seen == set(KINDS), set(KINDS) - seen


def test_a_blank_chart_is_seen(tmp_path: Path) -> None:
    # The check can fail: strings on an axis forced to linear draw nothing.
    an = single_run()
    html = render_html(an).replace('"type":"category"', '"type":"linear"')
    html = html.replace('"mode":"lines+markers"', '"mode":"lines"')
    page = tmp_path / "blank.html"
    page.write_text(html, encoding="utf-8")
    from chromium_check import open_report

    marks = chart_marks(open_report(page, tmp_path).dom)
    assert 0 in marks.values(), marks


def test_tables_fit_a_1400px_window(tmp_path: Path) -> None:
    # A fio json+ import has the widest tables (17 percentiles per latency kind).
    from chromium_check import body_attrs, open_report

    html = render_html(CASES["fio json+"]())
    # The test's own probe, not the page's: the width the document needs at 1400 px.
    probe = (
        "<script>window.addEventListener('load', function () { document.body.setAttribute("
        "'data-test-scroll-width', String(document.documentElement.scrollWidth)); });</script></body>"
    )
    page = tmp_path / "wide.html"
    page.write_text(html.replace("</body>", probe), encoding="utf-8")
    width = int(body_attrs(open_report(page, tmp_path, width_px=1400).dom)["data-test-scroll-width"])
    assert width <= 1400, width


def test_charts_draw_the_numeric_axes_knees_and_trends_read() -> None:
    # Issue 22 (a second definition): the charts had their own numeric-axis rule (a number at every point),
    # the analysis another (and two distinct numbers). bs written "4k" at some points and "4096" at others
    # differs as text but sits at one number: the old chart rule drew "IOPS vs bs" as a vertical line of
    # points, an axis knees and trends rightly ignore.
    from analysis_fixtures import sweep
    from iolab.analysis.axes import numeric_axes
    from iolab.report.charts import load_charts

    an = sweep(repeats=1)
    an.dataset.axes = ["iodepth", "bs"]
    for i, p in enumerate(an.dataset.points):
        p.params["bs"] = "4k" if i % 2 else "4096"
        p.values["bs"] = 4096.0
    assert numeric_axes(an.dataset) == ["iodepth"]
    titles = [c.title for c in load_charts(an)]
    assert "IOPS vs iodepth" in titles and not any(t.endswith("vs bs") for t in titles), titles


def test_the_heat_map_is_each_intervals_histogram() -> None:
    """Each column holds one interval's I/Os: the cells' shares add to 100 %,
    the bins are the interval histogram's log bins, and the band's p99 is
    the interval's own figure."""
    from iolab.report.charts import latency_time_charts, log_bins

    an = single_run(intervals=5)
    charts: dict[str, Any] = {}
    for c in latency_time_charts(an):  # the first point's charts come first
        charts.setdefault(c.title.split(",")[0], c)
    heat = charts["latency (lat) heat map over time"].data[0]
    series = an.dataset.points[0].samples[0].series
    by_column: dict[float, float] = {}
    for x, share in zip(heat["x"], heat["marker"]["color"]):
        by_column[x] = by_column.get(x, 0.0) + share
    assert len(by_column) == 5 and all(abs(v - 100.0) < 0.01 for v in by_column.values())
    first = [c for x, c in zip(heat["x"], heat["marker"]["color"]) if x == heat["x"][0]]
    assert len(first) == len(log_bins(_native.hist_buckets(series[0].lat_hist)))
    bands = charts["latency (lat) percentiles over time"].data
    assert [t["name"] for t in bands] == ["p50", "p99", "max"]
    ratios = [y / iv.lat_p99_ns for y, iv in zip(bands[1]["y"], series)]  # one unit's scale for all
    assert len(ratios) == 5 and max(ratios) - min(ratios) < 1e-12


def test_a_run_keeps_each_intervals_merged_histogram(tmp_path: Path, cli) -> None:
    """From a real run: an interval's histogram is the exact merge of its
    workers' (two workers here), its count the interval's I/Os."""
    import json

    cli("run", "--name=h", "--ioengine=null", "--rw=randread", "--size=1m", "--numjobs=2", "--rate_iops=2000",
        "--time_based", "--runtime=1s", "--interval=250ms", f"--results={tmp_path}")  # fmt: skip
    run = next(tmp_path.glob("run-*"))
    ds = load_dataset(run)
    series = ds.points[0].samples[0].series
    doc = json.loads((run / "result.json").read_text())
    workers = doc["result"]["jobs"][0]["workers"]
    assert sum(iv.lat_hist is not None for iv in series) >= 3
    for iv in (iv for iv in series if iv.lat_p99_ns is not None):
        hists = [d["lat_ns"] for w in workers for s in w["series"] if s["start_ns"] == iv.t_start_ns
                 for d in s["dirs"] if d["ios"]]  # fmt: skip
        assert iv.lat_hist is not None and len(hists) == 2
        assert _native.hist_stats(iv.lat_hist, [])["count"] == sum(_native.hist_stats(h, [])["count"] for h in hists)
