"""Series of every host on rank 0's clock: synthetic hosts whose clock
offsets and real starts are known, so every aligned instant is known."""

from __future__ import annotations

import json
from typing import Any

from iolab import _native
from iolab.fleet.align import align, plan
from iolab.fleet.output import build
from iolab.fleet.runner import FleetConfig, FleetOutcome, HostPart

from .synth import hosts

S = 1_000_000_000
T0 = 1_800_000_000 * S  # rank 0's clock at the first host's start


def _with_series(r: dict[str, Any], start_unix_ns: int, ios: list[int]) -> dict[str, Any]:
    """``r`` started at ``start_unix_ns`` (own clock) with one 1 s interval per entry of ``ios``."""
    r["start_unix_ns"] = start_unix_ns
    r["interval_ns"] = S
    h = _native.hist_from_counts([(10_000, 1)])
    empty = _native.hist_from_counts([])
    w = r["jobs"][0]["workers"][0]
    w["series"] = [
        {
            "start_ns": k * S,
            "end_ns": (k + 1) * S,
            "dirs": [
                {"ios": n, "bytes": n * 4096, "lat_ns": h if n else empty},
                {"ios": 0, "bytes": 0, "lat_ns": empty},
            ],
        }
        for k, n in enumerate(ios)
    ]
    return r


def _fleet() -> tuple[dict[int, dict[str, Any]], dict[int, int]]:
    """Three ranks: rank 1's clock is 5 s ahead and it really started 3 ms
    after rank 0; rank 2's clock is 2 s behind and it started 1.4 s late
    (so its interval 0 overlaps rank 0's interval 1 most)."""
    per_host, _ = hosts(3, 50)
    offsets = {0: 0, 1: 5 * S, 2: -2 * S}
    starts_on_zero = {0: T0, 1: T0 + 3_000_000, 2: T0 + 1_400_000_000}
    ios = {0: [100, 200, 300], 1: [10, 20, 30], 2: [1, 2]}
    results = {
        rank: _with_series(per_host[rank][1], starts_on_zero[rank] + offsets[rank], ios[rank]) for rank in range(3)
    }
    return results, offsets


def test_plan_maps_each_start_onto_rank_0s_clock() -> None:
    results, offsets = _fleet()
    how = {a.rank: a for a in plan(results, offsets)}
    assert [how[r].start_on_zero_ns - T0 for r in range(3)] == [0, 3_000_000, 1_400_000_000]
    assert [how[r].start_after_first_ns for r in range(3)] == [0, 3_000_000, 1_400_000_000]
    assert [how[r].shift_intervals for r in range(3)] == [0, 0, 1]
    assert [how[r].offset_ns for r in range(3)] == [0, 5 * S, -2 * S]


def test_aligned_series_are_on_one_clock_and_late_hosts_padded() -> None:
    results, offsets = _fleet()
    on_zero, _ = align(results, offsets)
    assert {r["start_unix_ns"] for r in on_zero.values()} == {T0, T0 + 3_000_000, T0 + 1_400_000_000}
    s1 = on_zero[1]["jobs"][0]["workers"][0]["series"]
    assert [(s["start_ns"], s["end_ns"]) for s in s1] == [
        (k * S + 3_000_000, (k + 1) * S + 3_000_000) for k in range(3)
    ]
    s2 = on_zero[2]["jobs"][0]["workers"][0]["series"]
    assert [s["dirs"][0]["ios"] for s in s2] == [0, 1, 2]  # one empty interval in front
    assert [(s["start_ns"], s["end_ns"]) for s in s2] == [
        (0, S),
        (1_400_000_000, 2_400_000_000),
        (2_400_000_000, 3_400_000_000),
    ]
    # The originals are untouched (per-host documents keep their own clock).
    assert results[2]["jobs"][0]["workers"][0]["series"][0]["start_ns"] == 0


def test_fleet_total_merges_the_intervals_that_overlap() -> None:
    results, offsets = _fleet()
    clock = {
        "ranks": [{"rank": r, "offset_ns": offsets[r]} for r in range(3)],
        "start_skew_ns": 0,
        "round_trip_median_ns": 0,
    }
    parts = [HostPart(r, f"h{r}", result_json=json.dumps(results[r])) for r in range(3)]
    res = build(FleetOutcome(parts, clock, [], False, (), FleetConfig()))
    assert res.total is not None
    merged = res.total.result
    assert merged["start_unix_ns"] == T0  # rank 0's clock, not rank 1's (5 s ahead)
    workers = merged["jobs"][0]["workers"]
    series = [w["series"] for w in workers]
    # Per interval index k, rank 0's k, rank 1's k and rank 2's k - 1 are joined.
    per_k = [sum(s[k]["dirs"][0]["ios"] for s in series if k < len(s)) for k in range(3)]
    assert per_k == [100 + 10 + 0, 200 + 20 + 1, 300 + 30 + 2]
    assert res.alignment is not None
    rank2 = res.alignment["ranks"][2]
    assert rank2["series_shift_intervals"] == 1 and rank2["start_after_first_ns"] == 1_400_000_000
    assert rank2["offset_ns"] == -2 * S and "rank 0's clock" in res.alignment["method"]
    # The core merges the workers' series by index: the job's merged series holds the joined intervals.
    summary = json.loads(_native.summarize(res.total.result_json))
    assert summary["jobs"][0]["merged"]["read"]["ios"] == sum(
        results[r]["jobs"][0]["workers"][0]["dirs"][0]["ios"] for r in range(3)
    )


def test_a_host_without_a_measured_start_is_left_alone_and_padding_is_bounded() -> None:
    results, offsets = _fleet()
    results[1]["start_unix_ns"] = 0  # stopped before its measured window opened
    results[2]["start_unix_ns"] = T0 + 3_600 * S + offsets[2]  # an hour late: pad at most the longest series
    how = {a.rank: a for a in plan(results, offsets)}
    assert how[1].start_after_first_ns == 0 and how[1].shift_intervals == 0 and how[1].start_on_zero_ns == 0
    assert how[2].start_after_first_ns == 3_600 * S and how[2].shift_intervals == 3
    on_zero, _ = align(results, offsets)
    assert on_zero[1] == results[1]
    assert len(on_zero[2]["jobs"][0]["workers"][0]["series"]) == 3 + 2


def test_aligning_leaves_the_hosts_own_result_as_it_was() -> None:
    # aligned() copies only what it changes (jobs, workers, series): the
    # host's own document, kept in hosts/rank-R.json, keeps its own clock.
    results, offsets = _fleet()
    before = json.dumps(results, sort_keys=True)
    on_zero, how = align(results, offsets)
    assert json.dumps(results, sort_keys=True) == before
    assert how[2].shift_intervals == 1
    assert len(on_zero[2]["jobs"][0]["workers"][0]["series"]) == 3
    assert len(results[2]["jobs"][0]["workers"][0]["series"]) == 2
