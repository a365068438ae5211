"""Repeats: spread of every figure, unstable points flagged, and
percentiles of a point from the repeats' merged histograms — never averaged."""

from __future__ import annotations

import math

import pytest
from iolab import _native
from iolab.analysis import analyze
from iolab.analysis.model import DirResult, Sample
from iolab.analysis.samples import lat_from_hist
from iolab.analysis.tables import build_rows

from analysis.synth import dataset, idle, point, sample


def test_cv_20_pct_is_unstable_and_ci_matches_hand_computation() -> None:
    # IOPS 80k, 100k, 120k: mean 100k, sd 20k, CV 20%; t(0.975, 2) = 4.303.
    ds = dataset(
        [point(1, {"iodepth": 8}, [sample(v, iodepth=8, lat_mean_ns=80_000) for v in (80_000.0, 100_000.0, 120_000.0)])]
    )
    an = analyze(ds)
    iops = an.rows[0].metrics["iops"]
    assert iops.value == pytest.approx(100_000) and iops.cv_pct == pytest.approx(20.0)
    half = 4.303 * 20_000 / math.sqrt(3)
    assert (iops.ci95_low, iops.ci95_high) == pytest.approx((100_000 - half, 100_000 + half), rel=1e-4)
    assert an.rows[0].unstable
    w = next(w for w in an.warnings if w.kind == "warn_repeats_disagree")
    assert w.points == [1] and "CV 20.0%" in w.text


def test_stable_repeats_are_not_flagged() -> None:
    ds = dataset([point(1, {"iodepth": 8}, [sample(v, iodepth=8) for v in (99_000.0, 100_000.0, 101_000.0)])])
    an = analyze(ds)
    assert not an.rows[0].unstable
    assert not [w for w in an.warnings if w.kind == "warn_repeats_disagree"]


def _repeat(counts: list[tuple[int, int]]) -> Sample:
    lat = lat_from_hist(_native.hist_from_counts(counts), [50.0, 97.0, 99.0])
    base = sample(1000.0)
    ios = lat.count
    read = DirResult(ios, ios * 4096, 0, 10**9, float(ios), ios * 4096.0, None, lat, lat)
    return Sample("r", base.config, read, idle(), 10**9, base.cpu)


def test_percentiles_of_repeats_come_from_the_merged_histogram() -> None:
    # Repeat A: 90 x 1 µs, 10 x 10 µs; repeat B: 100 x 1 µs. Merged: 190 x 1 µs, 10 x 10 µs.
    a, b = _repeat([(1000, 90), (10_000, 10)]), _repeat([(1000, 100)])
    row = build_rows(dataset([point(1, {"iodepth": 1}, [a, b])]))[0]
    p97 = row.metrics["lat_p97_ns"]
    # Merged p97 is rank 194 of 200: 10 µs (to the histogram's 0.1%); the per-repeat values
    # are 10 µs and 1 µs, whose mean (5.5 µs) is NOT the figure.
    assert p97.value == pytest.approx(10_000, rel=1e-3)
    assert p97.mean == pytest.approx((10_000 + 1000) / 2, rel=1e-3)
    merged = _native.hist_stats(_native.hist_from_counts([(1000, 190), (10_000, 10)]), [50.0, 97.0])
    assert p97.value == merged["percentiles"][97.0]
    assert row.metrics["lat_p50_ns"].value == merged["percentiles"][50.0]
    assert p97.n == 2 and p97.sd is not None


def test_one_repeat_uses_its_own_percentiles_without_decoding() -> None:
    s = _repeat([(1000, 90), (10_000, 10)])
    assert s.read.lat is not None
    s.read.lat.hist = "not a histogram"  # would fail if decoded
    row = build_rows(dataset([point(1, {"iodepth": 1}, [s])]))[0]
    assert row.metrics["lat_p99_ns"].value == s.read.lat.percentiles[99.0]


def test_percentiles_without_histograms_are_left_out_not_averaged() -> None:
    a, b = _repeat([(1000, 100)]), _repeat([(2000, 100)])
    for s in (a, b):
        assert s.read.lat is not None
        s.read.lat.hist = None
    row = build_rows(dataset([point(1, {"iodepth": 1}, [a, b])]))[0]
    assert "lat_p99_ns" not in row.metrics
    assert row.metrics["lat_mean_ns"].value == pytest.approx(1500, rel=1e-2)
