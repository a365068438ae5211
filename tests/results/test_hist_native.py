"""The native histogram helpers Python analysis relies on: exact merges,
bins → histogram, buckets, stats and their errors."""

from __future__ import annotations

import pytest
from iolab import _native
from iolab.errors import IolabError


def test_merge_is_the_histogram_of_the_union() -> None:
    a = _native.hist_from_counts([(1_000, 90), (5_000, 10)])
    b = _native.hist_from_counts([(2_000, 50), (9_000, 50)])
    union = _native.hist_from_counts([(1_000, 90), (5_000, 10), (2_000, 50), (9_000, 50)])
    merged = _native.hist_merge([a, b])
    assert _native.hist_buckets(merged) == _native.hist_buckets(union)
    stats = _native.hist_stats(merged, [50.0, 90.0, 99.0])
    assert stats["count"] == 200
    # 200 samples: rank 100 is the last 2 µs sample, rank 180 a 9 µs one.
    assert stats["percentiles"] == {50.0: 2_000, 90.0: 9_007, 99.0: 9_007}
    assert stats["min_ns"] == 1_000
    assert stats["max_ns"] == 9_007


def test_percentiles_of_a_merge_are_not_the_mean_of_percentiles() -> None:
    fast = _native.hist_from_counts([(100, 1_000)])
    slow = _native.hist_from_counts([(10_000, 20)])
    p99_each = [_native.hist_stats(h, [99.0])["percentiles"][99.0] for h in (fast, slow)]
    merged = _native.hist_stats(_native.hist_merge([fast, slow]), [99.0])["percentiles"][99.0]
    assert merged == 10_007  # 20 slow of 1020 (2 %): the 99th percentile is a slow one
    assert merged != sum(p99_each) / 2


def test_stats_of_an_empty_histogram_are_zero() -> None:
    empty = _native.hist_from_counts([])
    stats = _native.hist_stats(empty, [50.0])
    assert stats["count"] == 0
    assert stats["mean_ns"] == 0.0
    assert stats["percentiles"] == {50.0: 0}
    assert _native.hist_buckets(empty) == []


def test_a_percentile_outside_0_100_is_refused() -> None:
    h = _native.hist_from_counts([(1_000, 1)])
    with pytest.raises(ValueError, match="percentile 150"):
        _native.hist_stats(h, [150.0])


def test_a_string_that_is_not_a_histogram_is_refused() -> None:
    with pytest.raises(IolabError, match=r"not base64|not an HdrHistogram"):
        _native.hist_stats("not a histogram!", [50.0])
