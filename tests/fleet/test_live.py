"""The live cluster view's renderers, without MPI: a late host shows "-"
and is named, never counted in the total; the total's percentiles come from
the merged interval histograms; the page served by rank 0 redraws in
headless Chromium."""

from __future__ import annotations

import json
import sys
import urllib.request
from collections import Counter
from pathlib import Path

from iolab import _native
from iolab.fleet.live import ClusterInterval, HostRow, host_row, prometheus_text, terminal_table, total_of
from iolab.fleet.serve import LiveServer

sys.path.insert(0, str(Path(__file__).parents[1] / "report"))
from chromium_check import _chromium


def _hist(values: list[int]) -> str:
    return _native.hist_from_counts(sorted(Counter(values).items()))


def _progress(iops: float, values: list[int]) -> dict[str, object]:
    # The totals since the start: this interval's samples twice over.
    totals = {
        "job": 0,
        "ios": [2 * len(values), 0],
        "bytes": [8192 * len(values), 0],
        "lat_ns": [_hist(values * 2), _hist([])],
    }
    return {
        "iops": [iops, 0.0],
        "bw_bytes_per_s": [iops * 4096, 0.0],
        "lat_ns": [_hist(values), _hist([])],
        "totals": [totals],
    }


def view() -> ClusterInterval:
    a = host_row("a", 0, _progress(1000.0, [10_000] * 99 + [900_000]), 12.0, ["j"])
    b = host_row("b", 1, _progress(3000.0, [50_000] * 100), 30.0, ["j"])
    late = HostRow("c", 2, late=True)
    rows = (a, b, late)
    return ClusterInterval(3, 3_000_000_000, rows, total_of(rows))


def test_total_sums_rates_and_merges_histograms() -> None:
    v = view()
    assert v.total.iops == 4000.0
    assert v.total.bw_bytes_per_s == 4000.0 * 4096
    # union: 99 of 10 µs, 100 of 50 µs, 1 of 900 µs → p50 = 50 µs, p99 = 50 µs
    assert v.total.lat_p50_ns is not None and abs(v.total.lat_p50_ns - 50_000) <= 50
    assert v.total.lat_p99_ns is not None and abs(v.total.lat_p99_ns - 50_000) <= 50
    # averaging the hosts' p99 (~900 µs and 50 µs) would say ~475 µs
    assert v.late_hosts == ["c"]


def test_terminal_table_shows_a_late_host_as_dash_and_names_it() -> None:
    text = terminal_table(view())
    line_c = next(line for line in text.splitlines() if line.startswith("c "))
    assert set(line_c.split()[1:]) == {"-"}
    assert "no snapshot this interval from: c (not in the total)" in text
    total = next(line for line in text.splitlines() if line.startswith("total"))
    assert total.split()[1] == "4.00"  # kIOPS


def test_prometheus_has_a_host_label_and_marks_the_late_host() -> None:
    text = prometheus_text(view())
    assert 'iolab_fleet_iops{host="a"} 1000.0' in text
    assert 'iolab_fleet_iops{host="total"} 4000.0' in text
    assert 'iolab_fleet_iops{host="c"}' not in text
    assert 'iolab_fleet_host_late{host="c"} 1' in text
    # Counters and histograms since the start, per host: Prometheus sums them.
    assert 'iolab_fleet_ios_total{job="j",direction="read",host="a"} 200' in text
    assert 'iolab_fleet_latency_seconds_count{job="j",direction="read",host="b"} 200' in text
    assert 'iolab_fleet_latency_seconds_bucket{job="j",direction="read",host="b",le="+Inf"} 200' in text
    # The interval's percentile gauges only when asked: they cannot be merged.
    assert "iolab_fleet_lat_p99_ns" not in text and "quantile=" not in text
    with_summaries = prometheus_text(view(), summaries=True)
    assert "# TYPE iolab_fleet_lat_p99_ns gauge" in with_summaries
    assert "# TYPE iolab_fleet_latency_summary_seconds summary" in with_summaries


def test_live_page_redraws_in_chromium(tmp_path: Path) -> None:
    server = LiveServer("127.0.0.1:0", "test", 200)
    server.start()
    try:
        first = view()
        later = ClusterInterval(4, 4_000_000_000, first.rows, first.total)
        served: list[int] = []

        def next_view() -> ClusterInterval:
            # the page's first fetch gets interval 3, every later one interval 4
            served.append(1)
            return first if len(served) <= 3 else later

        server.view = next_view  # type: ignore[method-assign]
        with urllib.request.urlopen(server.url + "view.json", timeout=10) as r:
            data = json.loads(r.read())
        assert [row["host"] for row in data["rows"]] == ["a", "b", "c"]
        with urllib.request.urlopen(server.url + "metrics", timeout=10) as r:
            assert b'host="total"' in r.read()
        ran = _chromium(["--dump-dom", server.url], tmp_path)
        assert ran.returncode == 0, ran.stderr[-2000:]
        dom = ran.stdout
        assert len(served) >= 5, "the page fetches the view again every interval"
        assert "interval 4 at 4 s" in dom, dom[-3000:]
        assert '<tr class="late"><td>c</td><td>-</td>' in dom, dom[-3000:]
        assert '<tr class="total"><td>total</td><td>4.00</td>' in dom, dom[-3000:]
        assert "no snapshot this interval from: c" in dom
    finally:
        server.close()
