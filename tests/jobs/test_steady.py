"""fio's steady-state detection (iolab.run.steady).

Truths: the criteria are fio's HOWTO equations, checked on series whose
answer is known by hand (a flat series, a line of known slope, one
outlier); the run wrapper stops the engine exactly when the window holds
(a scripted engine, no clock); a real null job with a loose criterion ends
long before its runtime and reports fio's ``steadystate`` object.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest
from iolab import _native
from iolab.jobs import ParseError
from iolab.jobs.extras import JobExtras
from iolab.run.steady import Criterion, SteadyStateRun, check_placement, criterion, judge

S = 1_000_000_000


def _c(text: str, dur_s: int = 4) -> Criterion:
    e = JobExtras("j", {"steadystate": text, "steadystate_duration": dur_s * S})
    c = criterion(e, S)
    assert c is not None
    return c


def test_mean_deviation_criterion() -> None:
    c = _c("iops:10%")
    assert judge([100.0, 100.0, 100.0, 100.0], c)[:3] == (True, 0.0, 0.0)
    ok, value, max_dev, _slope = judge([100.0, 100.0, 100.0, 120.0], c)  # mean 105, worst 15 off
    assert not ok and max_dev == 15.0 and value == pytest.approx(15 / 105 * 100)
    assert judge([100.0, 100.0, 100.0, 120.0], _c("iops:15"))[0]  # absolute limit


def test_slope_criterion_is_the_least_squares_slope_per_second() -> None:
    ok, value, _dev, slope = judge([100.0, 102.0, 104.0, 106.0], _c("bw_slope:2%"))
    assert slope == pytest.approx(2.0) and value == pytest.approx(2 / 103 * 100) and ok
    assert not judge([100.0, 102.0, 104.0, 106.0], _c("bw_slope:1%"))[0]


def test_window_must_be_full_before_judging() -> None:
    assert not judge([100.0, 100.0], _c("iops:10%"))[0]


class _Engine:
    """A scripted engine: one progress dict per poll."""

    def __init__(self, iops: list[float]) -> None:
        self.iops = iops
        self.polls = 0
        self.stopped_at: int | None = None

    def poll(self, timeout_s: float) -> dict[str, Any]:
        v = self.iops[min(self.polls, len(self.iops) - 1)]
        self.polls += 1
        return {"phase": "running", "elapsed_ns": self.polls * S, "iops": [v, 0.0], "bw_bytes_per_s": [v * 4096, 0.0]}

    def stop(self) -> None:
        self.stopped_at = self.polls


def test_wrapper_stops_the_run_when_the_window_holds() -> None:
    engine = _Engine([500.0, 100.0, 300.0, 100.0, 101.0, 99.0, 100.0, 100.0, 100.0])
    run = SteadyStateRun(engine, _c("iops:5%"))
    for _ in range(9):
        run.poll(0.0)
    # Samples 4..7 (101, 99, 100, 100) are the first window of 4 within 5% of its mean.
    assert run.attained and engine.stopped_at == 7


class _LatEngine(_Engine):
    """Scripted: each interval's reads all took ``lat[i]`` ns, and as many writes took twice as long."""

    def poll(self, timeout_s: float) -> dict[str, Any]:
        p = super().poll(timeout_s)
        v = int(self.iops[min(self.polls - 1, len(self.iops) - 1)])
        p["lat_ns"] = [_native.hist_from_counts([(v, 10)]), _native.hist_from_counts([(2 * v, 10)])]
        return p


def test_latency_criterion_judges_each_intervals_mean_from_its_histograms() -> None:
    engine = _LatEngine([50_000.0, 10_000.0, 30_000.0, 10_000.0, 10_100.0, 9_900.0, 10_000.0, 10_000.0])
    run = SteadyStateRun(engine, _c("lat:5%"))
    for _ in range(8):
        run.poll(0.0)
    # Read and write merged: each interval's mean is 1.5 times its read latency (HDR precision: 0.1 %).
    assert run.lat_means_ns == pytest.approx([1.5 * v for v in engine.iops[:7]], rel=1e-3)
    assert run.attained and engine.stopped_at == 7
    assert criterion(JobExtras("j", {"steadystate": "lat_slope:1%", "steadystate_duration": S}), S) is not None


def test_missing_duration_and_unknown_criteria_are_refused() -> None:
    with pytest.raises(ParseError, match="expected iops:N"):
        criterion(JobExtras("j", {"steadystate": "clat:5%", "steadystate_duration": S}), S)
    with pytest.raises(ParseError, match="needs ss_dur"):
        criterion(JobExtras("j", {"steadystate": "iops:5%"}), S)


def test_any_job_can_end_early_but_a_criterion_names_a_job_of_the_run() -> None:
    c = _c("iops:5%")
    check_placement([("x", 0), ("j", 1)], [c])
    check_placement([("j", 0), ("x", 1)], [c])
    check_placement([("j", 0), ("x", 0)], [c])
    with pytest.raises(ParseError, match="no such job"):
        check_placement([("x", 0)], [c])


class _TwoJobEngine:
    """Scripted: two jobs in the running group; job 1 is flat, job 0 never settles."""

    def __init__(self) -> None:
        self.polls = 0
        self.stopped_jobs: list[tuple[int, int]] = []
        self.stopped = False

    def poll(self, timeout_s: float) -> dict[str, Any]:
        self.polls += 1
        wild = 100.0 * (1 + self.polls % 2)
        jobs = [
            {"job": 0, "iops": [wild, 0.0], "bw_bytes_per_s": [wild * 4096, 0.0], "lat_ns": []},
            {"job": 1, "iops": [100.0, 0.0], "bw_bytes_per_s": [409600.0, 0.0], "lat_ns": []},
        ]
        return {"phase": "running", "elapsed_ns": self.polls * S, "iops": [0.0, 0.0], "jobs": jobs}

    def stop_job(self, job: int) -> None:
        self.stopped_jobs.append((job, self.polls))

    def stop(self) -> None:
        self.stopped = True


def test_each_steady_job_is_ended_alone_when_its_own_window_holds() -> None:
    from dataclasses import replace

    engine = _TwoJobEngine()
    run = SteadyStateRun(
        engine, [replace(_c("iops:5%"), job="a", job_index=0), replace(_c("iops:5%"), job="b", job_index=1)]
    )
    for _ in range(8):
        run.poll(0.0)
    # Job 1's first full window of 4 flat samples ends it (and only it); job 0 never settles.
    assert engine.stopped_jobs == [(1, 4)] and not engine.stopped
    assert [w.attained for w in run.watches] == [False, True]


def test_a_steady_job_beside_another_ends_while_the_other_runs_on(cli: Callable[..., Any], tmp_path: Any) -> None:
    job = tmp_path / "two.fio"
    job.write_text(
        "[global]\nioengine=null\nsize=1g\nrw=read\ntime_based\n"
        "[steady]\nruntime=60s\nss=iops:10000%\nss_dur=1s\nss_interval=250ms\n"
        "[other]\nruntime=3s\n"
        "[later]\nstonewall\nruntime=1s\nss=bw:10000%\nss_dur=500ms\nss_interval=250ms\n"
    )
    r = cli("run", str(job), "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    entries = {e["jobname"]: e for e in json.loads(r.stdout)["jobs"]}
    # steady ended at its steady state (~1 s), long before its 60 s; other ran its 3 s.
    assert entries["steady"]["steadystate"]["attained"] == 1
    assert entries["steady"]["read"]["runtime"] < 2_900
    assert entries["other"]["read"]["runtime"] >= 2_900
    assert "steadystate" not in entries["other"]
    # A steady job of a later group is watched too.
    assert entries["later"]["steadystate"]["ss"] == "bw:10000%"
    assert r.stderr.count("steadystate: attained=") == 2


def test_real_run_ends_at_steady_state_and_reports_it(cli: Callable[..., Any]) -> None:
    args = ["--name=s", "--ioengine=null", "--size=1g", "--rw=read", "--time_based", "--runtime=60s"]
    r = cli("run", *args, "--ss=iops:10000%", "--ss_dur=1s", "--ss_interval=250ms", "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    (entry,) = json.loads(r.stdout)["jobs"]
    ss = entry["steadystate"]
    assert ss["attained"] == 1 and ss["ss"] == "iops:10000%" and ss["duration"] == 1
    # The report is judged again on the full intervals of the result: the
    # window of 4 (1 s of 250 ms), or 3 when the stop cut the 4th short.
    assert len(ss["data"]["iops"]) in (3, 4) and ss["data"]["iops_mean"] > 0
    assert entry["read"]["runtime"] < 30_000  # ended at steady state, not at runtime=60s
    assert "steadystate: attained=yes" in r.stderr


def test_real_run_ends_at_latency_steady_state(cli: Callable[..., Any]) -> None:
    args = ["--name=s", "--ioengine=null", "--size=1g", "--rw=read", "--time_based", "--runtime=60s"]
    r = cli("run", *args, "--ss=lat:10000%", "--ss_dur=1s", "--ss_interval=250ms", "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    (entry,) = json.loads(r.stdout)["jobs"]
    ss = entry["steadystate"]
    assert ss["attained"] == 1 and ss["ss"] == "lat:10000%"
    lat = ss["data"]["lat_ns"]
    assert len(lat) == 4 and all(v > 0 for v in lat)
    # Every interval's mean lies within the run's whole latency range.
    assert entry["read"]["lat_ns"]["min"] <= min(lat) and max(lat) <= entry["read"]["lat_ns"]["max"]
    assert entry["read"]["runtime"] < 30_000
    assert "steadystate: attained=yes" in r.stderr and "lat=" in r.stderr
