"""An SLO on a fleet: per host and on the exact total, on recorded
multi-host points (tests/fleet/synth.py: hosts with known samples, written
as a fleet sweep writes a point directory)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from iolab import _native
from iolab.fleet.runner import FleetConfig, FleetOutcome, HostPart
from iolab.fleet.slo import fleet_repeat, judge_fleet
from iolab.fleet.sweep import merged_output
from iolab.plans.find import axis_space, outcome_json, search, statement
from iolab.plans.slo import judge, parse_slo
from iolab.results.rundir import observed_files, write_run_dir

from .synth import hosts


def _point(directory: Path, n: int, per_host: int, seed: int) -> list[int]:
    """A fleet point of ``n`` hosts written to ``directory``; every sample of every host."""
    per, union = hosts(n, per_host, seed=seed)
    parts = [HostPart(r, label, result_json=json.dumps(res)) for r, (label, res) in enumerate(per)]
    clock = {"ranks": [{"rank": r, "host": label, "offset_ns": 0, "round_trip_ns": 0} for r, (label, _) in enumerate(per)],
             "start_skew_ns": 0, "round_trip_median_ns": 0}  # fmt: skip
    out = merged_output(FleetOutcome(parts, clock, [], False, (), FleetConfig()))
    write_run_dir(directory, out.result_json, out.summary_json, run_meta={"id": directory.name}, config={}, host={},
                  extra=observed_files(out.observed))  # fmt: skip
    return union


def _pct(samples: list[int], p: float) -> float:
    from collections import Counter

    h = _native.hist_from_counts(sorted(Counter(samples).items()))
    return float(_native.hist_stats(h, [p])["percentiles"][p])


def test_each_host_and_the_exact_total(tmp_path: Path) -> None:
    # Three hosts whose latencies differ (exponential, mean 20, 40, 60 µs + 1 µs), two repeats.
    unions = [_point(tmp_path / f"p001-r{r}", 3, 2000, seed=r) for r in (1, 2)]
    reps = [fleet_repeat(tmp_path / f"p001-r{r}") for r in (1, 2)]
    assert sorted(reps[0].hosts) == ["h0", "h1", "h2"]
    slo = parse_slo("p99<250us")
    v = judge_fleet(slo, reps)
    by_scope = {c.clause.scope: c for c in v.clauses}
    assert set(by_scope) == {"", "host h0", "host h1", "host h2"}
    # The total's p99 is that of every sample of every host of both repeats (the exact merge),
    # not the mean of the hosts' p99s.
    everything = unions[0] + unions[1]
    assert by_scope[""].value == pytest.approx(_pct(everything, 99.0), rel=1e-3)
    host_p99 = [by_scope[f"host h{i}"].value for i in range(3)]
    assert abs(by_scope[""].value - sum(host_p99) / 3) > 0.05 * by_scope[""].value
    # Host h0 (mean 21 µs: p99 ~ 93 µs) meets 250 µs, h2 (mean 61 µs: p99 ~ 277 µs) breaks it: the fleet
    # breaks it, whatever the total says.
    assert by_scope["host h0"].holds and not by_scope["host h2"].holds
    assert not v.holds
    # The same clauses as judging each host's repeats alone.
    alone = judge(slo, [r.hosts["h2"] for r in reps]).clauses[0]
    assert (alone.value, alone.ci95) == (by_scope["host h2"].value, by_scope["host h2"].ci95)
    # IOPS: the total is every host's I/Os over the time they ran.
    iops = judge_fleet(parse_slo("iops>1"), reps).clauses[0]
    assert iops.value == pytest.approx(2 * 3 * 2000 / (2 * 1.000002), rel=1e-3)


def test_a_fleet_search_names_the_host_that_breaks_it(tmp_path: Path) -> None:
    # A model fleet: host "fast" answers 1000 I/Os in QD x 10 µs, "slow" 5 I/Os in 2 x QD x 10 µs.
    # Each I/O takes up to 1 % less. p99 < 1 ms: the total (their merge: the slow host's 5 are under
    # 1 % of it) holds up to QD 100, the slow host only to QD 50 (2 x 50 x 10 µs x 0.99 .. 0.998):
    # the fleet's answer is the slow host's, and the statement names it.
    from iolab.fleet.slo import FleetRepeat

    from tests.plans.test_find import _repeat

    def measure(qd: int, repeat: int) -> FleetRepeat:
        fast = [qd * 10_000.0 * (0.99 + 0.00001 * i) for i in range(1000)]
        slow = [qd * 20_000.0 * (0.99 + 0.002 * i) for i in range(5)]
        return FleetRepeat(_repeat(fast + slow, 1005), {"fast": _repeat(fast, 1000), "slow": _repeat(slow, 5)})

    out = search(measure, parse_slo("p99<1ms"), axis_space("iodepth", resolution="1"), repeats=1, max_repeats=1,
                 judge_fn=judge_fleet)  # fmt: skip
    assert out.best is not None and out.first_fail is not None
    assert (out.best.value, out.first_fail.value) == (50, 51), statement(out)
    assert next(c for c in out.first_fail.verdict.clauses if not c.clause.scope).holds  # the total meets it
    assert "host slow: p99" in statement(out)[1], statement(out)
    doc = outcome_json(out)
    scopes = [c["scope"] for c in doc["evaluations"][0]["clauses"]]  # type: ignore[index]
    assert scopes == ["total", "host fast", "host slow"]
    assert math.isfinite(doc["evaluations"][0]["clauses"][0]["threshold"])  # type: ignore[index]


def test_not_a_fleet_run_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    with pytest.raises(ValueError, match="not a fleet run"):
        fleet_repeat(tmp_path / "x")


def test_a_grid_on_a_model_fleet_takes_the_slow_host_per_row() -> None:
    # numjobs x QD in flight; the fast host answers in numjobs x QD x 10 µs, the slow one in twice
    # that: per row the slow host decides (QD 50 at one job, 25 at two), and the grid's best point
    # is the one with the most IOPS of the total (both hosts' I/Os over their time).
    from iolab.fleet.slo import FleetRepeat
    from iolab.plans.find_grid import grid_axis, search_grid

    from tests.plans.test_find import _repeat

    def measure(qd: int, jobs: int, repeat: int) -> FleetRepeat:
        fast = [jobs * qd * 10_000.0 * 0.99] * 100
        slow = [jobs * qd * 20_000.0 * 0.99] * 5
        return FleetRepeat(_repeat(fast + slow, 105 * qd), {"fast": _repeat(fast, 100), "slow": _repeat(slow, 5)})

    g = search_grid(measure, parse_slo("p99<1ms"), axis_space("iodepth", resolution="1"),
                    grid_axis("numjobs=1,2", "iodepth"), repeats=1, max_repeats=1, judge_fn=judge_fleet)  # fmt: skip
    assert [(v, o.best.value if o.best else None) for v, o in g.rows] == [(1, 50), (2, 25)]
    best = g.best
    assert best is not None and (best[0], best[1].value) == (1, 50)  # 105 x 50 I/Os beat 105 x 25
