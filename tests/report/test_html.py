"""The HTML report without a browser: one self-contained file, plotly.js
embedded once, and chart specs whose numbers come from the analysis."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from analysis_fixtures import single_run, sweep
from iolab import _native
from iolab.report.charts import MAX_TRACES, log_bins, pick
from iolab.report.html import plotly_js, render_html


def charts_of(page: str) -> list[dict[str, Any]]:
    spec = re.search(r'<script type="application/json" id="iolab-charts">(.*?)</script>', page, re.S)
    assert spec is not None
    charts: list[dict[str, Any]] = json.loads(spec.group(1))
    return charts


def by_title(page: str) -> dict[str, dict[str, Any]]:
    """Charts by title, without the subtitle naming what every point ran (``<br><sub>rw=…</sub>``)."""
    return {c["layout"]["title"]["text"].split("<br>")[0]: c for c in charts_of(page)}


def test_self_contained_with_plotly_once() -> None:
    page = render_html(sweep())
    assert page.count(plotly_js()) == 1
    assert not re.search(r"<script[^>]*\ssrc=", page, re.I)
    assert not re.search(r"<link[^>]*\shref=[\"']?https?:", page, re.I)
    assert not re.search(r"<(img|iframe)[^>]*\ssrc=[\"']?https?:", page, re.I)
    assert page.count('class="chart"') == len(charts_of(page))
    assert f'data-charts-expected="{len(charts_of(page))}"' in page


def test_header_findings_first_then_charts_then_tables() -> None:
    page = render_html(sweep())
    assert "<title>iolab report: qd-sweep</title>" in page
    assert f"report: iolab {_native.version()}" in page and "host: box" in page
    order = [page.index(s) for s in ("<h2>Findings", "<h2>Warnings", "<h2>Charts", "<h2>Tables")]
    assert order == sorted(order)
    assert "read IOPS stop growing at iodepth=8" in page and "device busy" in page


def test_sweep_charts_and_their_numbers() -> None:
    an = sweep(repeats=3)
    charts = by_title(render_html(an))
    assert set(charts) >= {
        "read: total latency (lat) histogram",
        "read: total latency (lat) CDF",
        "IOPS vs iodepth",
        "bandwidth (MB/s) vs iodepth",
        "total latency (lat) percentiles vs iodepth",
        "total latency (lat) vs throughput",
        "IOPS over time (first repeat)",
        "IOPS across repeats",
    }
    hist = charts["read: total latency (lat) histogram"]
    assert hist["layout"]["xaxis"]["type"] == "log"
    for trace in hist["data"]:
        assert sum(trace["y"]) == pytest.approx(100.0)
    for trace in charts["read: total latency (lat) CDF"]["data"]:
        assert trace["y"][-1] == pytest.approx(100.0) and trace["y"] == sorted(trace["y"])
    iops = charts["IOPS vs iodepth"]["data"]
    assert iops[0]["x"] == [1, 2, 4, 8, 16, 32, 64] and iops[0]["y"][3] == pytest.approx(80000.0)
    assert iops[0]["error_y"]["array"][3] > 0
    knee = [t for t in iops if t["name"].startswith("knee")]
    assert len(knee) == 1 and knee[0]["x"] == [8.0, 8.0] and knee[0]["name"] == "knee: iodepth=8"
    boxes = charts["IOPS across repeats"]["data"]
    assert len(boxes) == 1 and len(boxes[0]["y"]) == 7 * 3


def test_single_run_charts_per_point_and_no_spread() -> None:
    charts = by_title(render_html(single_run()))
    assert "IOPS per point" in charts and "IOPS across repeats" not in charts
    bars = charts["IOPS per point"]["data"]
    assert [(t["name"], t["x"], t["y"]) for t in bars] == [
        ("read", ["rand-read-4k-qd1"], [9000.0]),
        ("write", ["rand-write-4k-qd1"], [7000.0]),
    ]
    assert "write: total latency (lat) CDF" in charts and not any("knee" in t["name"] for t in bars)


def test_log_bins_and_pick() -> None:
    h = _native.hist_from_counts([(100_000, 90), (200_000, 9), (1_000_000, 1)])
    bins = log_bins(_native.hist_buckets(h))
    assert [c for _, c, _ in bins] == [90, 9, 1]
    assert all(abs(centre / hi - 1) < 0.07 for centre, _, hi in bins)
    many = sweep().dataset.points * 3
    shown = pick(many)
    assert len(shown) == MAX_TRACES and shown[0] is many[0] and shown[-1] is many[-1]


def test_without_histograms_the_cdf_goes_through_the_printed_percentiles() -> None:
    from iolab.analysis import analyze, load_dataset

    an = analyze(load_dataset(Path(__file__).parents[1] / "analysis" / "data" / "fio" / "single.json"))
    charts = by_title(render_html(an))
    assert not any("histogram" in t for t in charts), list(charts)
    (trace,) = charts["read: completion latency (clat) CDF (through the source's percentiles)"]["data"]
    row = an.rows[0]
    pcts = sorted(float(m[len("clat_p") : -3]) for m in row.metrics if m.startswith("clat_p"))
    assert trace["y"] == pcts
    assert trace["x"] == [row.metrics[f"clat_p{p:g}_ns"].value / 1e3 for p in pcts]  # µs


def test_error_bars_stop_at_zero_and_single_points_get_markers() -> None:
    # Two repeats far apart: the t interval of the mean reaches below zero; the bar must not.
    an = sweep(repeats=2, noise=1.5)
    chart = by_title(render_html(an))["IOPS vs iodepth"]
    for trace in chart["data"]:
        err = trace.get("error_y")
        if err:
            assert err["symmetric"] is False
            assert all(y - down >= 0 for y, down in zip(trace["y"], err["arrayminus"])), trace
    one = by_title(render_html(single_run(intervals=1)))
    assert all(t["mode"] == "lines+markers" for t in one["IOPS over time (first repeat)"]["data"])
    assert one["IOPS per point"]["layout"]["xaxis"]["type"] == "category"
