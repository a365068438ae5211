"""Interval logs (issue 30; issue 28 part 3): a run's intervals streamed to
an HdrHistogram ``.hlog`` beside its result.

- the figures from a streamed result equal those of the in-memory result of
  the same run (the run's embedded intervals replayed through the stream);
- the ``hdrhistogram`` package reads the log back with iolab's per-interval
  counts and p99;
- ``iolab report --window`` gives the p99 of the union of the window's
  samples (known samples, sorted here);
- a run killed with SIGKILL at a random point leaves every interval before
  its last flush readable, and ``iolab report`` says it was interrupted.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from iolab import _native
from iolab.errors import IolabError
from iolab.results.intervals import HLOG_FILE, parse_window, read_window
from iolab.run.series import SERIES_CSV, SERIES_FILE, SeriesView, attach_series, json_default, summarize_streamed

from tests.waits import wait_until

CLI = [sys.executable, "-m", "iolab.cli.main"]


def null_job(name: str, rw: str, runtime: str, *extra: tuple[str, str | None]) -> tuple[str, list[Any]]:
    opts: list[tuple[str, str | None]] = [("ioengine", "null"), ("rw", rw), ("bs", "4k"), ("size", "1g")]
    opts += [("time_based", None), ("runtime", runtime), *extra]
    return (name, opts)


@pytest.fixture(scope="module")
def in_memory_result() -> str:
    """A real run that kept its intervals in the result: two groups, a mix,
    uneven runtimes (a job ends while the other goes on), group_reporting."""
    jobs = [
        null_job("mix", "randrw", "600ms", ("numjobs", "3"), ("rate_iops", "20000")),
        null_job("reader", "read", "400ms", ("numjobs", "2"), ("rate_iops", "30000")),
        null_job("writer", "write", "300ms", ("stonewall", None), ("group_reporting", None), ("numjobs", "2")),
    ]
    run = _native.Run(jobs, interval_ns=50_000_000)
    run.start()
    while not run.finished():
        run.poll(0.05)
    return run.wait()


def _without_worker_intervals(summary: dict[str, Any]) -> dict[str, Any]:
    for job in summary["jobs"]:
        for w in job["workers"]:
            for d in ("read", "write", "trim"):
                if d in w["stats"]:
                    w["stats"][d]["intervals"] = None
    return summary


def test_streamed_figures_equal_the_in_memory_result(in_memory_result: str, tmp_path: Path) -> None:
    embedded = json.loads(_native.summarize(in_memory_result))
    assert len(embedded["groups"][0]["series"]) >= 8, "the run should have several intervals"
    log = tmp_path / HLOG_FILE
    streamed_result = json.loads(_native.stream_result(in_memory_result, log, True))
    assert streamed_result["interval_log"] == {"file": HLOG_FILE, "per_worker": True}
    assert all(w["series"] == [] for j in streamed_result["jobs"] for w in j["workers"])
    streamed = json.loads(_native.summarize_with_log(json.dumps(streamed_result), log))
    assert streamed == embedded  # every figure, series and percentile, exactly
    # Without per-worker detail: the same, but for each worker's own rate statistics.
    merged_only = _native.stream_result(in_memory_result, log, False)
    streamed = json.loads(_native.summarize_with_log(merged_only, log))
    assert _without_worker_intervals(streamed) == _without_worker_intervals(embedded)


def test_series_read_from_the_series_file_equal_the_in_memory_ones(in_memory_result: str, tmp_path: Path) -> None:
    """A streamed run's summary leaves its series in timeseries.parquet
    (issue 30): read back on demand, every job's and group's series equals
    the embedded summary's, exactly, and the rest of the summary too."""
    embedded = json.loads(_native.summarize(in_memory_result))
    log = tmp_path / HLOG_FILE
    streamed_result = _native.stream_result(in_memory_result, log, False)
    summary = json.loads(summarize_streamed(streamed_result, log))
    ref = summary["series_file"]
    assert ref["file"] == SERIES_FILE and not (tmp_path / SERIES_CSV).exists()
    assert ref["jobs"] == [len(j["series"]) for j in embedded["jobs"]]
    assert ref["groups"] == [len(g["series"]) for g in embedded["groups"]]
    assert all(j["series"] == [] for j in summary["jobs"]) and all(g["series"] == [] for g in summary["groups"])
    attach_series(summary, tmp_path)
    for mine, theirs in [*zip(summary["jobs"], embedded["jobs"]), *zip(summary["groups"], embedded["groups"])]:
        view = mine["series"]
        assert isinstance(view, SeriesView) and len(view) == len(theirs["series"])
        assert list(view) == theirs["series"]  # every row, direction and percentile, exactly
        assert view[-3:] == theirs["series"][-3:] and view[1] == theirs["series"][1]
        mine["series"] = theirs["series"]
    del summary["series_file"]
    assert _without_worker_intervals(summary) == _without_worker_intervals(embedded)
    again = attach_series(json.loads(summarize_streamed(streamed_result, log)), tmp_path)
    assert json.loads(json.dumps(again, default=json_default))["jobs"][0]["series"] == [], "written back: []"


def test_a_streamed_result_needs_its_log(in_memory_result: str, tmp_path: Path) -> None:
    streamed = _native.stream_result(in_memory_result, tmp_path / HLOG_FILE, False)
    with pytest.raises(IolabError, match=r"streamed its intervals to intervals\.hlog"):
        _native.summarize(streamed)


def test_the_log_has_every_interval_of_every_job(in_memory_result: str, tmp_path: Path) -> None:
    log = tmp_path / HLOG_FILE
    _native.stream_result(in_memory_result, log, False)
    result = json.loads(in_memory_result)
    records = [r for r in _native.IntervalLog(log) if "job" in r]
    for j, job in enumerate(result["jobs"]):
        mine = [r for r in records if r["job"] == j]
        longest = max(len(w["series"]) for w in job["workers"])
        assert [r["index"] for r in mine] == list(range(longest))
        for d, name in enumerate(("read", "write")):
            in_result = sum(s["dirs"][d]["ios"] for w in job["workers"] for s in w["series"])
            assert sum(r["ios"][d] for r in mine) == in_result, (job["name"], name)


def test_hdrhistogram_package_reads_the_log(in_memory_result: str, tmp_path: Path) -> None:
    hdrh_log = pytest.importorskip("hdrh.log", reason="the hdrhistogram package (./dev.sh setup installs it)")
    from hdrh.histogram import HdrHistogram

    log = tmp_path / HLOG_FILE
    streamed = _native.stream_result(in_memory_result, log, False)
    summary = json.loads(_native.summarize_with_log(streamed, log))
    ours = [r for r in _native.IntervalLog(log) if "job" in r and r["worker"] is None]
    reader = hdrh_log.HistogramLogReader(str(log), HdrHistogram(1, 60_000_000_000, 3))
    theirs = []
    while (h := reader.get_next_interval_histogram()) is not None:
        theirs.append(h)
    assert len(theirs) == 3 * len(ours)  # one line per direction: read, write, trim
    names = [j["name"] for j in summary["jobs"]]
    for k, rec in enumerate(ours):
        job = summary["jobs"][rec["job"]]
        row = job["series"][rec["index"]]
        for d, dname in enumerate(("read", "write", "trim")):
            h = theirs[3 * k + d]
            assert h.get_tag() == f"job={names[rec['job']]};host={_host(streamed)};dir={dname}"
            assert h.get_total_count() == rec["ios"][d] == row[dname]["ios"]
            if rec["ios"][d]:
                assert _p99(h) == row[dname]["lat_p99_ns"], (k, dname)


def _p99(h: Any) -> int:
    """p99 of a histogram the hdrhistogram package decoded, by iolab's rank (the
    smallest value with at least 99 % of the samples at or below it; the
    package's own ``get_value_at_percentile`` rounds the rank to the nearest
    count instead, which moves it a bucket on small intervals)."""
    rank = max(1, math.ceil(0.99 * h.get_total_count()))
    for v in h.get_recorded_iterator():
        if v.total_count_to_this_value >= rank:
            return int(h.get_highest_equivalent_value(v.value_iterated_to))
    raise AssertionError("rank past the histogram's count")


def _host(result_json: str) -> str:
    host: str = json.loads(result_json)["hosts"][0]["hostname"]
    return host


def test_window_p99_is_the_p99_of_the_union_of_its_samples(in_memory_result: str, tmp_path: Path) -> None:
    """Known samples: every interval of the first job gets its own drawn
    latencies; the window's p99 must be that of their union, sorted here
    (to the histogram's 3 significant digits)."""
    result = json.loads(in_memory_result)
    rng = random.Random(30)
    drawn: dict[int, list[int]] = {}
    job = result["jobs"][0]
    for w in job["workers"]:
        for i, s in enumerate(w["series"]):
            values = [int(rng.lognormvariate(11, 1.2)) + 1 for _ in range(rng.randint(50, 400))]
            drawn.setdefault(i, []).extend(values)
            counts: dict[int, int] = {}
            for v in values:
                counts[v] = counts.get(v, 0) + 1
            s["dirs"][0]["lat_ns"] = _native.hist_from_counts(sorted(counts.items()))
            s["dirs"][0]["ios"] = len(values)
    log = tmp_path / HLOG_FILE
    _native.stream_result(json.dumps(result), log, False)
    interval_ns = result["interval_ns"]
    start, end = 2 * interval_ns, 8 * interval_ns
    rows, state = read_window(log, start, end)
    assert not state.interrupted
    row = next(r for r in rows if r.job == job["name"] and r.dir == "read")
    assert row.intervals == 6 and (row.start_ns, row.end_ns) == (start, end)
    union = sorted(v for i in range(2, 8) for v in drawn[i])
    assert row.ios == len(union)
    got = _native.hist_stats(row.lat_ns, [99.0])["percentiles"][99.0]
    rank = -(-99 * len(union) // 100)  # the smallest value with 99 % of the samples at or below it
    truth = union[rank - 1]
    assert abs(got - truth) <= truth / 1000 + 1, (got, truth)


def test_an_interval_that_ends_a_few_us_past_the_grid_is_in_its_window(in_memory_result: str, tmp_path: Path) -> None:
    """A fleet's merged interval spans every host's on rank 0's clock: its end
    can lie a few µs past the grid's (a host's clock offset). A window of
    whole intervals takes it by its place on the grid (found on a fleet
    run: ``--window 1s..2s`` over 1 s intervals gave none)."""
    result = json.loads(in_memory_result)
    interval_ns = result["interval_ns"]
    for w in result["jobs"][0]["workers"]:
        for s in w["series"]:
            if s["end_ns"] - s["start_ns"] == interval_ns:  # whole intervals: late by 1.9 µs
                s["end_ns"] += 1_889
    log = tmp_path / HLOG_FILE
    _native.stream_result(json.dumps(result), log, False)
    start, end = 2 * interval_ns, 4 * interval_ns
    rows, _ = read_window(log, start, end)
    row = next(r for r in rows if r.job == result["jobs"][0]["name"] and r.dir == "read")
    assert row.intervals == 2 and row.start_ns == start and row.end_ns == end + 1_889
    # Still whole intervals only: a window that cuts the third interval leaves it out.
    rows, _ = read_window(log, start, end + interval_ns // 2)
    assert next(r for r in rows if r.job == result["jobs"][0]["name"] and r.dir == "read").intervals == 2


def test_parse_window() -> None:
    assert parse_window("10s..40s") == (10_000_000_000, 40_000_000_000)
    assert parse_window("..500ms") == (0, 500_000_000)
    assert parse_window("1m..")[0] == 60_000_000_000
    for bad in ("10s", "40s..10s", "x..1s"):
        with pytest.raises(ValueError, match="window"):
            parse_window(bad)


def _records(log: Path) -> list[dict[str, Any]]:
    if not log.is_file():
        return []
    return [r for r in _native.IntervalLog(log) if "job" in r]


def test_kill_9_keeps_the_intervals_written_and_reports_an_interrupted_run(tmp_path: Path) -> None:
    results = tmp_path / "results"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [*CLI, "run", "--name=soak", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g", "--time_based",
                 "--runtime=120s", "--rate_iops=20000", "--numjobs=2", "--interval", "20ms", "--results", str(results),
                 "--stream-intervals"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        logs = lambda: list(results.glob(f"run-*/{HLOG_FILE}"))  # noqa: E731
        wait_until(lambda: bool(logs()), 60, "the interval log to appear", proc)
        log = logs()[0]
        want = random.Random().randint(3, 40)
        wait_until(lambda: len(_records(log)) >= want, 60, f"{want} intervals in the log", proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    records = _records(log)
    assert len(records) >= want
    assert [r["index"] for r in records] == list(range(len(records)))  # every interval up to the last whole one
    assert sum(r["ios"][0] for r in records) > 0
    assert not (log.parent / "run.json").exists()
    out = subprocess.run([*CLI, "report", str(log.parent), "--format", "json"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["interrupted"] is True
    (row,) = [r for r in doc["rows"] if r["dir"] == "read"]
    assert row["intervals"] >= len(records)
    assert row["ios"] >= sum(r["ios"][0] for r in records)
    text = subprocess.run([*CLI, "report", str(log.parent)], env=env, capture_output=True, text=True)
    assert "interrupted run" in text.stdout, text.stdout + text.stderr


def test_window_needs_an_interval_log(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{}")
    out = subprocess.run([*CLI, "report", str(tmp_path / "run"), "--window", "1s..2s"], capture_output=True, text=True)
    assert out.returncode != 0
    assert "has no interval log" in out.stderr


def test_a_streamed_run_logs_every_io_and_ends_each_job(tmp_path: Path) -> None:
    """The engine's own stream (not a replay): the log's intervals add up to
    the result's I/Os, each job has its end line, the workers keep no series."""
    log = tmp_path / HLOG_FILE
    jobs = [
        null_job("a", "randrw", "400ms", ("numjobs", "3")),
        null_job("b", "read", "250ms", ("numjobs", "2")),
        null_job("c", "randtrim", "250ms"),  # the third direction has its own lines
    ]
    run = _native.Run(jobs, interval_ns=50_000_000, interval_log=log)
    run.start()
    while not run.finished():
        run.poll(0.05)
    result = json.loads(run.wait())
    assert result["interval_log"] == {"file": HLOG_FILE, "per_worker": False}
    assert all(w["series"] == [] for j in result["jobs"] for w in j["workers"])
    rows, state = read_window(log)
    assert not state.interrupted
    assert [j["name"] for j in state.jobs] == ["a", "b", "c"]
    for job in result["jobs"]:
        for d, name in enumerate(("read", "write", "trim")):
            done = sum(w["dirs"][d]["ios"] if d < len(w["dirs"]) else 0 for w in job["workers"])
            (row,) = [r for r in rows if r.job == job["name"] and r.dir == name]
            assert row.ios == done, (job["name"], name)
    assert [r.ios > 0 for r in rows if r.job == "c"] == [False, False, True]
    summary = json.loads(_native.summarize_with_log(json.dumps(result), log))
    assert sum(s["total"]["ios"] for s in summary["groups"][0]["series"]) == summary["groups"][0]["total"]["ios"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--per-worker-intervals"], "give --stream-intervals too"),
        (["--stream-intervals"], "give --results ROOT"),
    ],
)
def test_streaming_options_need_their_companions(args: list[str], says: str) -> None:
    cmd = [*CLI, "run", "--name=x", "--ioengine=null", "--rw=read", "--size=1m", *args]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode != 0
    assert says in out.stderr, out.stderr


def test_latency_target_is_not_streamed(tmp_path: Path) -> None:
    """Its search restarts the measured window: streamed intervals could not be taken back."""
    job = null_job("lt", "randread", "1s", ("latency_target", "1ms"), ("latency_window", "100ms"))
    with pytest.raises(IolabError, match=r"job lt: latency_target .* without --stream-intervals"):
        _native.Run([job], interval_log=tmp_path / HLOG_FILE)
