"""A long group series is decimated for charts keeping every extreme
(issue 30: a 24-hour run has 86,400 intervals): each run of consecutive
intervals keeps its lowest and highest IOPS and highest p99, in time order."""

from __future__ import annotations

from typing import Any

from iolab.analysis.samples import MAX_SERIES_INTERVALS, _series


def _row(i: int, iops: float, p99: int) -> dict[str, Any]:
    total = {"ios": 10, "bytes": 40960, "iops": iops, "bw_bytes_per_s": iops * 4096}
    total |= {"lat_p50_ns": 1000, "lat_p99_ns": p99, "lat_max_ns": p99 * 2}
    return {"t_start_ns": i * 10**9, "t_end_ns": (i + 1) * 10**9, "total": total}


def _group(n: int, dip: int, peak: int, spike: int) -> dict[str, Any]:
    rows = []
    for i in range(n):
        iops = 10.0 if i == dip else 5000.0 if i == peak else 1000.0 + i % 7
        rows.append(_row(i, iops, 10**9 if i == spike else 2000 + i % 5))
    return {"series": rows}


def test_a_long_series_keeps_every_dip_peak_and_spike() -> None:
    n = 86_400
    got = _series(_group(n, 4321, 77_777, 123), [])
    assert len(got) <= MAX_SERIES_INTERVALS
    starts = [iv.t_start_ns // 10**9 for iv in got]
    assert starts == sorted(set(starts)), "each interval once, in time order"
    assert {4321, 77_777, 123} <= set(starts)
    assert min(iv.iops for iv in got) == 10.0 and max(iv.iops for iv in got) == 5000.0
    assert max(iv.lat_p99_ns or 0 for iv in got) == 10**9


def test_a_short_series_is_drawn_whole() -> None:
    group = _group(MAX_SERIES_INTERVALS, 5, 6, 7)
    got = _series(group, [])
    assert [iv.t_start_ns for iv in got] == [r["t_start_ns"] for r in group["series"]]
