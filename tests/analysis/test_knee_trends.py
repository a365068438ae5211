"""Knees and trend statements on series with known shapes."""

from __future__ import annotations

import pytest
from iolab.analysis import analyze
from iolab.analysis.trends import classify

from analysis.synth import dataset, point, qd_sweep, sample

DEPTHS = [1, 2, 4, 8, 16, 32, 64, 128]


def saturating(qd: int) -> float:
    """10k IOPS per outstanding I/O up to QD 32, then flat at 320k."""
    return 10_000.0 * min(qd, 32)


def test_known_knee_at_qd_32_with_linear_p99() -> None:
    an = analyze(qd_sweep(DEPTHS, saturating))
    knee = an.knees["iodepth"]
    assert knee is not None
    assert knee["value"] == 32 and knee["point"] == 6
    assert knee["throughput"] == pytest.approx(320_000)
    assert knee["flat_after_within_pct"] == pytest.approx(0.0)
    # p99 = 2 x mean = 2 x qd / IOPS: 200 µs at 32, 800 µs at 128 (+300%), on a straight line
    # (to the histogram's precision, 0.1%).
    assert knee["lat_at_knee_ns"] == pytest.approx(200_000, rel=1e-3)
    assert knee["lat_at_end_ns"] == pytest.approx(800_000, rel=1e-3)
    assert knee["lat_growth_after_pct"] == pytest.approx(300.0, rel=1e-2)
    assert knee["lat_linear_r2"] == pytest.approx(1.0, abs=1e-4)
    text = next(f.text for f in an.findings if f.kind == "knee")
    assert "read lat p99 grows linearly (r² 1.00) with iodepth above iodepth=32" in text
    assert "within 0.00% of 320k IOPS" in text and "+300%" in text and "saturated at iodepth=32" in text


def test_no_knee_when_throughput_keeps_growing() -> None:
    an = analyze(qd_sweep(DEPTHS, lambda qd: 10_000.0 * qd))
    assert an.knees == {"iodepth": None}
    trend = next(f for f in an.findings if f.kind == "trend" and f.figures["metric"] == "iops")
    assert trend.figures["trend"] == "rises" and trend.figures["linear"]
    assert (
        trend.text
        == "read IOPS rises linearly with iodepth: 10.0k IOPS at iodepth=1 → 1.28M IOPS at iodepth=128 (+12700%)"
    )


def test_flat_iops_trend_states_the_spread() -> None:
    an = analyze(qd_sweep([1, 2, 4], lambda qd: {1: 100_000.0, 2: 102_000.0, 4: 101_000.0}[qd]))
    trend = next(f for f in an.findings if f.kind == "trend" and f.figures["metric"] == "iops")
    assert trend.figures["trend"] == "flat"
    assert trend.text.startswith("read IOPS stays within 2.00% as iodepth varies")


def test_ambiguous_noisy_non_monotonic_data_say_so() -> None:
    values = {1: 100_000.0, 2: 150_000.0, 4: 90_000.0, 8: 160_000.0, 16: 95_000.0}
    an = analyze(qd_sweep(list(values), values.__getitem__))
    trend = next(f for f in an.findings if f.kind == "trend" and f.figures["metric"] == "iops")
    assert trend.figures["trend"] == "ambiguous"
    assert "no clear trend, it goes up and down by more than the noise" in trend.text and "+50.0%" in trend.text
    assert an.knees["iodepth"] is None


def test_steps_within_the_repeats_noise_are_not_a_trend() -> None:
    # +8% steps but each point's repeats vary by ~20%: not beyond the noise, and no drift overall
    got = classify([1, 2, 3], [100.0, 108.0, 100.0])
    assert got["trend"] == "ambiguous"
    noisy = classify([1, 2], [100.0, 108.0], [_cv(20.0), _cv(20.0)])
    assert noisy["trend"] == "flat"  # +8% where repeats vary by ~28%: within the noise
    assert classify([1, 2, 3, 4, 5], [100.0, 104.0, 108.0, 112.0, 116.0])["trend"] == "rises"  # small steps add up
    assert classify([1, 2, 3], [100.0, 90.0, 80.0])["trend"] == "falls"


def _cv(cv: float):  # type: ignore[no-untyped-def]
    from iolab.analysis.stats import describe

    st = describe([100 - cv, 100 + cv], "iops")
    return st


def test_series_split_by_other_axis_and_named_in_the_statement() -> None:
    pts = []
    for bs in (4096, 65536):
        for qd in (1, 4, 16):
            pts.append(point(len(pts) + 1, {"bs": bs, "iodepth": qd}, [sample(1000.0 * qd, bs=bs, iodepth=qd)] * 2))
    an = analyze(dataset(pts))
    texts = [f.text for f in an.findings if f.kind == "trend" and f.axis == "iodepth" and f.figures["metric"] == "iops"]
    assert len(texts) == 2 and any("(bs=4096)" in t for t in texts) and any("(bs=65536)" in t for t in texts)
