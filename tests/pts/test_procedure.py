"""The procedure's figures: a cell over the measurement window (rates over
the time the I/Os ran, latency from histograms merged exactly), what
--quick and the shrinking options say, the percentiles a report may ask for."""

from __future__ import annotations

import pytest
from iolab import _native
from iolab.errors import JobError
from iolab.pts.procedure import CellRound, window_figures
from iolab.pts.settings import PtsSettings, Target, parse_percentiles, resolve


def _round(n: int, counts: list[tuple[int, int]], runtime_ns: int) -> CellRound:
    ios = sum(c for _, c in counts)
    h = _native.hist_from_counts(counts)
    return CellRound(n, f"points/p001-r{n}", 0.0, 0.0, 0.0, runtime_ns, {"read": ios, "write": 0},
                     {"read": ios * 8192, "write": 0}, {"read": h})  # fmt: skip


def test_window_merges_the_rounds_histograms_exactly() -> None:
    a = [(10_000, 900), (50_000, 90), (2_000_000, 10)]
    b = [(10_000, 950), (60_000, 49), (9_000_000, 1)]
    fig = window_figures([_round(1, a, 1_000_000_000), _round(2, b, 1_000_000_000)], (50.0, 99.0, 99.9))
    assert fig["iops"] == pytest.approx(2000 / 2.0)  # 2000 I/Os over the 2 s they ran
    assert fig["bw_bytes_per_s"] == pytest.approx(2000 * 8192 / 2.0)
    whole = _native.hist_stats(_native.hist_from_counts(a + b), [50.0, 99.0, 99.9])
    lat = fig["lat_read"]
    assert lat["count"] == 2000 and lat["max_ns"] == whole["max_ns"]
    assert lat["percentiles_ns"] == {"50": whole["percentiles"][50.0], "99": whole["percentiles"][99.0],
                                     "99.9": whole["percentiles"][99.9]}  # fmt: skip
    # p99 of the merge (the 1980th of 2000) lies in b's 60 us bucket; neither round's own p99 is it
    assert lat["percentiles_ns"]["99"] != _native.hist_stats(_native.hist_from_counts(a), [99.0])["percentiles"][99.0]
    assert _native.hist_buckets(lat["hist"]) == _native.hist_buckets(_native.hist_from_counts(a + b))
    assert fig["lat_total"]["count"] == 2000 and "lat_write" not in fig


def test_what_was_shrunk_is_said() -> None:
    target = Target("nbd", "nbd://x/y", 64 << 20)
    full = resolve(PtsSettings("iops"), target)
    assert (full.round_time, full.max_rounds, full.capacity_bytes, full.shrunk) == ("60s", 25, 64 << 20, [])
    quick = resolve(PtsSettings("iops", quick=True, capacity="16m"), target)
    assert quick.shrunk == [
        "rounds of 2s per cell (the spec: 60s)",
        "at most 10 rounds (the spec: 25)",
        f"{16 << 20} of {64 << 20} bytes tested and preconditioned (--capacity)",
        "the matrix shrunk (--quick)",
    ]
    wsat = resolve(PtsSettings("wsat", wsat_fills=2), target)
    assert wsat.max_rounds == 360 and wsat.shrunk == ["WSAT until 2x capacity written (the spec: 4x)"]
    with pytest.raises(JobError, match="--capacity 1g: larger than nbd://x/y"):
        resolve(PtsSettings("iops", capacity="1g"), target)
    with pytest.raises(JobError, match="--max-rounds 3: a steady-state window needs 5 rounds"):
        resolve(PtsSettings("iops", max_rounds=3), target)
    with pytest.raises(JobError, match="the file does not exist: give its size with --capacity"):
        resolve(PtsSettings("iops"), Target("file", "/nowhere/f", None))


def test_percentiles_a_report_can_give() -> None:
    assert parse_percentiles("99,p99.9,99.999") == (99.0, 99.9, 99.999)
    with pytest.raises(JobError, match=r"'99.42' is not a percentile iolab records \(one of: 50 60"):
        parse_percentiles("99,99.42")
