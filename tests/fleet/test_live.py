"""The live cluster view's renderers, without MPI: a late host shows "-"
and is named, never counted in the total; the total's percentiles come from
the merged interval histograms; the page served by rank 0 redraws in
headless Chromium."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Callable

from iolab import _native
from iolab.fleet.comm import TAG_INTERVAL
from iolab.fleet.live import (
    ROWS_MAX,
    ClusterInterval,
    HostRow,
    host_row,
    prometheus_text,
    spread_of,
    terminal_table,
    total_of,
    view_json,
)
from iolab.fleet.parts import FleetConfig, Snapshotter
from iolab.fleet.serve import LiveServer
from iolab.fleet.spool import Spool, run_id
from iolab.fleet.watch import Watch

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


def _fleet_view(n: int, late: frozenset[int] | set[int] = frozenset()) -> tuple[ClusterInterval, list[int]]:
    """``n`` hosts, host i at 10,000 + i IOPS (every 97th a straggler at 100)
    with its own interval samples; also every sample of the hosts that reported."""
    rows, union = [], []
    for i in range(n):
        if i in late:
            rows.append(HostRow(f"h{i:04d}", i, late=True))
            continue
        values = [1_000 * (1 + i % 7) + 10 * k for k in range(20)]  # hosts differ: no average of percentiles fits
        union += values
        iops = 100.0 if i % 97 == 13 else 10_000.0 + i
        rows.append(host_row(f"h{i:04d}", i, _progress(iops, values), 5.0, ["j"]))
    return ClusterInterval(9, 9_000_000_000, tuple(rows), total_of(rows)), union


def _exact(samples: list[int], p: float) -> int:
    s = sorted(samples)
    return s[max(1, math.ceil(p / 100 * len(s))) - 1]


def test_thousand_hosts_live_total_is_the_union_of_their_samples() -> None:
    # Issue 29: the live total at 1,000 hosts merges every host's interval
    # histogram; its percentiles are the union's, its rate the sum.
    v, union = _fleet_view(1_000, late={5, 6})
    assert v.total.iops == sum(r.iops or 0.0 for r in v.rows if not r.late)
    assert v.total.lat_hist is not None
    st = _native.hist_stats(v.total.lat_hist, [50.0, 99.0])
    assert st["count"] == len(union)
    for p, got in ((50.0, v.total.lat_p50_ns), (99.0, v.total.lat_p99_ns)):
        exact = _exact(union, p)
        assert got is not None and abs(got - exact) <= exact * 1e-3 + 1, (p, got, exact)


def test_terminal_summarises_a_thousand_hosts_on_one_screen() -> None:
    v, _ = _fleet_view(1_000, late=set(range(500, 512)))
    text = terminal_table(v)
    lines = text.splitlines()
    assert len(lines) < 40, text  # not a row per host
    assert lines[0] == "interval 9 at 9 s: 1000 hosts, 988 reported"
    total = next(line for line in lines if line.startswith("total"))
    assert float(total.split()[1]) == round(v.total.iops / 1e3, 2)  # type: ignore[operator]
    sp = spread_of(v.rows)
    assert sp is not None and sp.reported == 988
    # stragglers: every 97th host at 100 IOPS, below 75 % of the median (~10,500)
    strag = [f"h{i:04d}" for i in range(13, 1_000, 97)]
    assert [r.host for r in sp.stragglers] == strag
    assert "stragglers (11, below 75% of the median host's kIOPS): h0013 0.10, h0110 0.10" in text, text
    assert next(line for line in lines if line.startswith("stragglers (")).endswith("and 1 more")
    slow = lines[lines.index("slowest 5:") + 1 : lines.index("slowest 5:") + 6]
    assert [x.split()[0] for x in slow] == strag[:5]
    fast = lines[lines.index("fastest 5:") + 1 : lines.index("fastest 5:") + 6]
    assert [x.split()[0] for x in fast] == ["h0999", "h0998", "h0997", "h0996", "h0995"]
    # the stragglers' own bin, then 8 over the other hosts
    assert sp.bins[0][2] == 11 and sum(c for _, _, c in sp.bins) == 988 and len(sp.bins) == 9
    assert sp.bins[1][0] == 10_000.0 and sp.bins[-1][1] == 10_999.0
    assert sp.quantiles["max"] == 10_999.0 and sp.quantiles["min"] == 100.0
    assert "no snapshot this interval from 12 hosts: h0500, h0501" in text and "and 2 more (not in the total)" in text


def test_terminal_keeps_a_row_per_host_up_to_24() -> None:
    v, _ = _fleet_view(ROWS_MAX)
    lines = terminal_table(v).splitlines()
    assert [x.split()[0] for x in lines[3 : 3 + ROWS_MAX]] == [f"h{i:04d}" for i in range(ROWS_MAX)]


def test_view_json_pages_the_hosts_and_carries_the_spread() -> None:
    v, _ = _fleet_view(250, late={3})
    first = view_json(v)
    assert (first["hosts"], first["page"], first["pages"]) == (250, 0, 3)
    assert [r["host"] for r in first["rows"]][:2] == ["h0000", "h0001"] and len(first["rows"]) == 100
    last = view_json(v, page=7)  # past the end: the last page
    assert last["page"] == 2 and [r["host"] for r in last["rows"]][-1] == "h0249" and len(last["rows"]) == 50
    assert set(first["rows"][0]) == {
        "host",
        "rank",
        "iops",
        "bw_bytes_per_s",
        "lat_p50_ns",
        "lat_p99_ns",
        "cpu_pct",
        "late",
        "lost",
    }
    sp = first["spread"]
    assert sp["reported"] == 249 and sum(b["hosts"] for b in sp["bins"]) == 249
    assert [r["host"] for r in sp["stragglers"]] == ["h0013", "h0110", "h0207"]
    assert first["late_hosts"] == ["h0003"]
    assert view_json(view())["spread"] is None and view_json(view())["pages"] == 1


def test_live_page_pages_a_large_fleet_in_chromium(tmp_path: Path) -> None:
    v, _ = _fleet_view(250)
    server = LiveServer("127.0.0.1:0", "big", 200)
    server.start()
    try:
        server.show(v)
        with urllib.request.urlopen(server.url + "view.json?page=2", timeout=10) as r:
            assert json.loads(r.read())["rows"][0]["host"] == "h0200"
        try:
            urllib.request.urlopen(server.url + "view.json?page=x", timeout=10)
            raise AssertionError("a bad page number is refused")
        except urllib.error.HTTPError as e:
            assert e.code == 400
        ran = _chromium(["--dump-dom", server.url], tmp_path)
        assert ran.returncode == 0, ran.stderr[-2000:]
        dom = ran.stdout
        assert "interval 9 at 9 s: 250 hosts" in dom, dom[-3000:]
        assert "hosts 1-100 of 250 (page 1 of 3)" in dom, dom[-3000:]
        assert "stragglers (3, below 75 % of the median host's kIOPS): h0013 0.10" in dom, dom[-3000:]
        assert dom.count('<span class="bar"') == 9  # the stragglers' bin and 8
        assert "<td>h0099</td>" in dom and "<td>h0100</td>" not in dom.split('id="view"')[1]
    finally:
        server.close()


def _runs_meanwhile(call: Callable[[], object]) -> tuple[int, float]:
    """How often a Python thread ran while ``call`` was inside native code:
    its timestamps more than 20 ms from either end of the call (a held GIL
    lets another thread run only around the call, for one switch interval,
    5 ms), and how long the call took."""
    stamps: list[float] = []
    stop = threading.Event()

    def ticker() -> None:
        while not stop.is_set():
            stamps.append(time.perf_counter())
            for _ in range(200):
                pass

    t = threading.Thread(target=ticker, daemon=True)
    t.start()
    try:
        while not stamps:
            time.sleep(0.001)
        t0 = time.perf_counter()
        call()
        t1 = time.perf_counter()
    finally:
        stop.set()
        t.join(timeout=10)
    return sum(1 for x in stamps if t0 + 0.02 < x < t1 - 0.02), t1 - t0


def test_metrics_of_many_hosts_leave_the_gil_to_rank_0s_loop() -> None:
    # /metrics of 1,000 hosts is tens of MB made on the live server's
    # thread, and the live total merges every host's histogram: both native
    # calls release the GIL, so rank 0's loop (here: a ticking thread) goes
    # on meanwhile. Were it held, no tick could fall inside the call.
    v, _ = _fleet_view(1_000)
    hists = [t["lat_ns"][0] for r in v.rows for t in r.totals]
    series = [([("host", f"h{i}"), ("direction", "read")], h) for i, h in enumerate(hists * 2)]
    out: list[str] = []
    ticks, took = _runs_meanwhile(lambda: out.append(_native.prom_latency("lat_seconds", "latency", series, False)))
    assert out[0].count("lat_seconds_count{") == 2_000
    assert took < 0.1 or ticks > 0, (ticks, took)
    ticks, took = _runs_meanwhile(lambda: out.append(_native.hist_merge(hists * 20)))
    assert _native.hist_stats(out[1], [50.0])["count"] == 20 * 2 * 20 * 1_000
    assert took < 0.1 or ticks > 0, (ticks, took)


class _Inbox:
    """Rank 0's World for simulated hosts: ``drain`` hands over what they sent."""

    def __init__(self, n: int) -> None:
        self.rank, self.size, self.host = 0, n, "h0000"
        self.sent: list[tuple[int, dict[str, object]]] = []

    def drain(self, tag: int, source: int | None = None) -> list[tuple[int, dict[str, object]]]:
        if tag != TAG_INTERVAL:
            return []
        got, self.sent = self.sent, []
        return got

    def post(self, value: object, dest: int, tag: int) -> None:
        pass


def test_rank_0_gathers_a_thousand_hosts_interval_and_its_total_is_the_union(tmp_path: Path) -> None:
    # Issue 29: the live path at 1,000 simulated hosts through rank 0's own
    # Watch: every host's snapshot (as its Snapshotter makes it) gathered,
    # ten hosts silent this interval (late, named, not in the total), one
    # host's next interval early (kept for the next view); the total's
    # percentiles those of the union of the reporting hosts' samples.
    n, silent = 1_000, set(range(500, 510))
    world = _Inbox(n)
    spool = Spool(tmp_path, 0)
    watch = Watch(world, None, FleetConfig(), Snapshotter(0, "h0000", time.monotonic(), 1.0), spool,  # type: ignore[arg-type]
                  [f"h{i:04d}" for i in range(n)])  # fmt: skip
    union: list[int] = []
    now = time.monotonic()
    for i in range(n):
        values = [1_000 * (1 + i % 7) + 10 * k for k in range(20)]
        snap = Snapshotter(i, f"h{i:04d}", now, 1.0, ["j"])
        first = snap.take(_progress(10_000.0 + i, values), now)
        if i not in silent:
            world.sent.append((i, first))
            union += values
        if i == 3:
            world.sent.append((i, snap.take(_progress(1.0, [5]), now)))  # interval 2, early
    watch.gather()
    v = watch.view(1)
    spool.close()
    assert [r.host for r in v.rows if r.late] == [f"h{i:04d}" for i in sorted(silent)] == v.late_hosts
    assert v.total.iops == sum(10_000.0 + i for i in range(n) if i not in silent)
    st = _native.hist_stats(v.total.lat_hist or "", [50.0, 99.0])
    assert st["count"] == len(union)
    for p, got in ((50.0, v.total.lat_p50_ns), (99.0, v.total.lat_p99_ns)):
        exact = _exact(union, p)
        assert got is not None and abs(got - exact) <= exact * 1e-3 + 1, (p, got, exact)
    assert list(watch.snapshots) == [2] and list(watch.snapshots[2]) == [3]
    assert "no snapshot this interval from 10 hosts: h0500, h0501" in terminal_table(v)


def test_views_slower_than_half_the_interval_are_noted_once(tmp_path: Path) -> None:
    world = _Inbox(30)
    notes: list[str] = []
    spool = Spool(tmp_path, 0)
    watch = Watch(world, None, FleetConfig(), Snapshotter(0, "h0000", time.monotonic(), 1.0), spool,  # type: ignore[arg-type]
                  [f"h{i:04d}" for i in range(30)], on_view=lambda _v: None, note=notes.append)  # fmt: skip
    # views taking 0.6, 0.6 (a stall), 0.2, then 0.6, 0.7, 1.3 and 0.6 s
    took = [0.6, 0.6, 0.2, 0.6, 0.7, 1.3, 0.6]
    ticks = iter([t for x in took for t in (0.0, x)])
    watch.clock = lambda: next(ticks)
    for seq, _ in enumerate(took[:5], 1):
        watch.draw(seq)
    assert notes == []  # two slow views, a fast one, two slow ones
    watch.draw(6)
    watch.draw(7)
    spool.close()
    assert notes == [
        "iolab: the live view of 30 hosts took 1.30 s of the 1 s interval; --interval 3s or more keeps it within"
    ]


def test_two_fleet_launches_in_the_same_second_spool_apart() -> None:
    """Spools are appended to and share one root on a machine: a fleet sweep's
    were named by the second alone, so two sweeps started together mixed theirs."""
    at = 1_800_000_000.0
    other = subprocess.run(
        [sys.executable, "-c", f"from iolab.fleet.spool import run_id; print(run_id('fleet-sweep', {at}))"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout.strip()  # fmt: skip
    mine = run_id("fleet-sweep", at)
    assert mine != other and mine.rsplit("-", 2)[0] == other.rsplit("-", 2)[0], (mine, other)
    assert mine.startswith("fleet-sweep-20") and f"-{os.getpid()}-" in mine
    # The same PID in another container (a PID namespace, /tmp shared): apart too.
    assert len({run_id("fleet-sweep", at) for _ in range(8)}) > 1
