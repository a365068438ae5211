"""Trend statements agree with their own numbers (issue #13): each kind of
statement (flat, rises/falls on monotone steps, rises/falls on a rank test,
no clear trend) is produced by a series that supports it and NOT by a
counterexample, and carries its evidence in the finding's JSON."""

from __future__ import annotations

import json

import pytest
from iolab.analysis import analyze
from iolab.analysis.trends import classify

from analysis.synth import qd_sweep

#: seed 004's QD sweep after `iolab sweep examples/plans/seed004-qd.toml --quick`:
#: the report said "read IOPS rises with iodepth (+78.9%)" over these steps.
SEED004_STEPS_PCT = [3, 32, 20, -40, 97, -14, -8, -31, 8, 7, 47]
SEED004_DEPTHS = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128]


def _from_steps(steps_pct: list[float], start: float = 100_000.0) -> list[float]:
    ys = [start]
    for s in steps_pct:
        ys.append(ys[-1] * (1 + s / 100))
    return ys


def _iops_trend(depths: list[int], ys: list[float]):  # type: ignore[no-untyped-def]
    values = dict(zip(depths, ys))
    an = analyze(qd_sweep(depths, values.__getitem__))
    return next(f for f in an.findings if f.kind == "trend" and f.figures["metric"] == "iops")


def test_seed004_steps_state_no_rise() -> None:
    ys = _from_steps(SEED004_STEPS_PCT)
    c = classify(SEED004_DEPTHS, ys)
    assert c["trend"] == "ambiguous" and c["basis"] is None
    assert c["r2"] < 0.2 and c["kendall_p"] > 0.05
    f = _iops_trend(SEED004_DEPTHS, ys)
    assert "rises" not in f.text and "no clear trend" in f.text, f.text
    assert "+97.0%" in f.text and "-40.0%" in f.text  # the steps are shown


def test_clean_monotone_series_rises() -> None:
    depths = [1, 2, 4, 8, 16, 32]
    f = _iops_trend(depths, [10_000.0 * (1 + i) for i in range(len(depths))])
    assert f.figures["trend"] == "rises" and f.figures["basis"] == "monotone"
    assert f.text.startswith("read IOPS rises with iodepth"), f.text
    assert f.figures["kendall_tau"] == pytest.approx(1.0)


def test_falls_and_its_counterexample() -> None:
    assert classify([1, 2, 3, 4], [100.0, 90.0, 80.0, 70.0])["trend"] == "falls"
    # down, then up by more than the noise: no "falls"
    got = classify([1, 2, 3, 4], [100.0, 90.0, 80.0, 95.0])
    assert got["trend"] == "ambiguous", got


def test_rank_test_rise_over_a_dip_and_its_counterexample() -> None:
    # 12 points rising overall with one dip beyond the noise: not monotone, but
    # Kendall's tau (p < 0.05) and a line (r² >= 0.5) agree it rises.
    ys = [100.0, 110.0, 121.0, 133.0, 110.0, 146.0, 160.0, 176.0, 194.0, 213.0, 234.0, 258.0]
    xs = list(range(1, len(ys) + 1))
    c = classify(xs, ys)
    assert c["trend"] == "rises" and c["basis"] == "rank test", c
    assert c["kendall_p"] < 0.05 and c["r2"] >= 0.5
    # the same number of points, tau barely positive: no statement of a rise
    zigzag = [100.0, 150.0, 95.0, 160.0, 90.0, 170.0, 85.0, 175.0, 92.0, 165.0, 99.0, 180.0]
    assert classify(xs, zigzag)["trend"] == "ambiguous"


def test_rank_test_statement_shows_its_steps() -> None:
    depths = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128]
    ys = [100.0, 110.0, 121.0, 133.0, 110.0, 146.0, 160.0, 176.0, 194.0, 213.0, 234.0, 258.0]
    f = _iops_trend(depths, [y * 1000 for y in ys])
    assert f.figures["basis"] == "rank test"
    assert "not steadily" in f.text and "Kendall tau" in f.text and "-17.3%" in f.text, f.text


def test_flat_and_its_counterexample() -> None:
    assert classify([1, 2, 4], [100.0, 102.0, 101.0])["trend"] == "flat"
    # within the noise at each step, but the steps add up beyond it: a rise, not "flat"
    got = classify([1, 2, 3, 4, 5], [100.0, 104.0, 108.0, 112.0, 116.0])
    assert got["trend"] == "rises" and got["basis"] == "monotone"


def test_ambiguous_and_its_counterexample() -> None:
    assert classify([1, 2, 4, 8], [100.0, 150.0, 90.0, 160.0])["trend"] == "ambiguous"
    assert classify([1, 2, 4, 8], [100.0, 150.0, 160.0, 170.0])["trend"] == "rises"


def test_evidence_is_in_the_json() -> None:
    f = _iops_trend(SEED004_DEPTHS, _from_steps(SEED004_STEPS_PCT))
    doc = json.loads(json.dumps(f.figures))
    for key in ("steps_pct", "noise_pct", "change_pct", "kendall_tau", "kendall_p", "slope", "r2", "trend", "basis"):
        assert key in doc, key
    assert [round(s) for s in doc["steps_pct"]] == SEED004_STEPS_PCT
    assert doc["xs"] == SEED004_DEPTHS
