"""A fleet's intervals streamed (issue 30, the fleet side), without MPI.

Each "host" is a real run's result streamed to its own interval log (as a
rank's engine does with ``--stream-intervals``); the ranks' logs are read
as they grow (:class:`LogTail`, cut mid-line) and merged by rank 0's
:class:`FleetLog`. What must hold:

- every interval of the fleet's log is the exact union of the hosts'
  intervals of that index: I/Os and bytes summed, histograms merged bucket
  for bucket (so its p99 is the p99 of the union);
- the summary from the streamed fleet log equals the summary of today's
  in-memory merge of the same hosts' results (every series and percentile);
- parts that overtake each other (MPI orders messages per tag) are applied
  in order; a host that started whole intervals late is merged into the
  intervals it overlaps; a lost host leaves a log read as interrupted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from iolab import _native
from iolab.fleet.streamlog import FleetLog
from iolab.fleet.tail import LogTail
from iolab.results.intervals import HLOG_FILE, read_window

INTERVAL_NS = 50_000_000


def _job(name: str, rw: str, runtime: str, *extra: tuple[str, str | None]) -> tuple[str, list[Any]]:
    opts: list[tuple[str, str | None]] = [("ioengine", "null"), ("rw", rw), ("bs", "4k"), ("size", "1g")]
    return (name, [*opts, ("time_based", None), ("runtime", runtime), *extra])


@pytest.fixture(scope="module")
def host_results() -> list[str]:
    """Three hosts' real results with embedded intervals: two groups, a mix,
    a job that ends while another goes on."""
    jobs = [
        _job("mix", "randrw", "500ms", ("numjobs", "2"), ("rate_iops", "20000")),
        _job("reader", "read", "300ms", ("rate_iops", "30000")),
        _job("writer", "write", "250ms", ("stonewall", None), ("numjobs", "2"), ("rate_iops", "10000")),
    ]
    out = []
    for rank in range(3):
        run = _native.Run(jobs, interval_ns=INTERVAL_NS, host=f"h{rank}", host_index=rank)
        run.start()
        while not run.finished():
            run.poll(0.05)
        out.append(run.wait())
    return out


def _rank_logs(tmp: Path, results: list[str], per_worker: bool = False) -> tuple[list[Path], list[str]]:
    logs, streamed = [], []
    for rank, r in enumerate(results):
        log = tmp / f"rank-{rank}.hlog"
        streamed.append(_native.stream_result(r, log, per_worker))
        logs.append(log)
    return logs, streamed


def _parts_in_chunks(log: Path, into: Path, chunk: int) -> list[dict[str, Any]]:
    """The tail's parts while the log is written ``chunk`` bytes at a time
    (lines cut anywhere, as an engine's buffered writes may leave them)."""
    data = log.read_bytes()
    tail, parts = LogTail(into), []
    with into.open("wb") as f:
        for at in range(0, len(data), chunk):
            f.write(data[at : at + chunk])
            f.flush()
            parts.append(tail.read())
    parts.append(tail.read())
    return parts


def _records(log: Path) -> dict[tuple[int, int], dict[str, Any]]:
    return {(e["job"], e["index"]): e for e in _native.IntervalLog(log) if "index" in e and e["worker"] is None}


def _same_start(logs: list[Path]) -> dict[int, int]:
    """Clock offsets that put the hosts' runs (made one after another) at one
    start on rank 0's clock, as if they had started together."""
    bases = []
    for log in logs:
        it = _native.IntervalLog(log)
        next(it)
        assert it.header is not None
        bases.append(it.header[0])
    return {r: b - bases[0] for r, b in enumerate(bases)}


def _fleet_log(tmp: Path, logs: list[Path], chunk: int = 997, shuffle: bool = False) -> Path:
    path = tmp / "fleet" / HLOG_FILE
    fleet = FleetLog(path, len(logs), _same_start(logs))
    per_rank = [_parts_in_chunks(log, tmp / f"live-{r}.hlog", chunk) for r, log in enumerate(logs)]
    # interleave the ranks' parts as snapshots arrive; the last of each goes with its final result
    for i in range(max(len(p) for p in per_rank)):
        for r, parts in enumerate(per_rank):
            if i < len(parts):
                order = parts[::-1] if shuffle and r == 1 else parts
                part = order[i]
                fleet.add(r, part, last=part is parts[-1])
    fleet.close()
    return path


def test_tail_cut_anywhere_gives_the_logs_records(host_results: list[str], tmp_path: Path) -> None:
    (log,), _ = _rank_logs(tmp_path, host_results[:1], per_worker=True)
    parts = _parts_in_chunks(log, tmp_path / "live.hlog", 311)
    got = [rec for p in parts for rec in p["records"]]
    want = _records(log)
    assert len(got) == len(want) >= 10
    for rec in got:
        e = want[(rec["job"], rec["i"])]
        assert (rec["ios"], rec["bytes"], rec["lat_ns"]) == (e["ios"], e["bytes"], e["lat_ns"])
        assert (rec["start_ns"], rec["end_ns"]) == (e["start_ns"], e["end_ns"])
    assert sorted(e["job"] for p in parts for e in p["ends"]) == [0, 1, 2]
    assert [p["part"] for p in parts] == list(range(len(parts)))
    assert sum("header" in p for p in parts) == 1


@pytest.mark.parametrize("shuffle", [False, True], ids=["in-order", "parts-overtaken"])
def test_every_fleet_interval_is_the_exact_union_of_the_hosts(
    host_results: list[str], tmp_path: Path, shuffle: bool
) -> None:
    logs, _ = _rank_logs(tmp_path, host_results, per_worker=True)
    fleet = _records(_fleet_log(tmp_path, logs, shuffle=shuffle))
    hosts = [_records(log) for log in logs]
    assert set(fleet) == set().union(*hosts) and len(fleet) >= 10
    for key, e in fleet.items():
        parts = [h[key] for h in hosts if key in h]
        for d in range(len(e["ios"])):
            assert e["ios"][d] == sum(p["ios"][d] for p in parts)
            assert e["bytes"][d] == sum(p["bytes"][d] for p in parts)
            union = _native.hist_merge([p["lat_ns"][d] for p in parts])
            assert _native.hist_buckets(e["lat_ns"][d]) == _native.hist_buckets(union)
            assert _native.hist_stats(e["lat_ns"][d], [99.0]) == _native.hist_stats(union, [99.0])
    rows, state = read_window(tmp_path / "fleet" / HLOG_FILE)
    assert not state.interrupted and {r.job for r in rows} == {"mix", "reader", "writer"}


def test_summary_from_the_streamed_fleet_log_equals_the_in_memory_merge(
    host_results: list[str], tmp_path: Path
) -> None:
    logs, streamed = _rank_logs(tmp_path, host_results)
    path = _fleet_log(tmp_path, logs)
    in_memory = json.loads(_native.summarize(_native.merge_results(host_results)))
    merged = json.loads(_native.merge_results(streamed))
    merged["interval_log"] = {"file": HLOG_FILE, "per_worker": False}
    from_log = json.loads(_native.summarize_with_log(json.dumps(merged), path))
    assert from_log["groups"] == in_memory["groups"]  # series, totals, percentiles: exactly
    for a, b in zip(from_log["jobs"], in_memory["jobs"]):
        assert a["merged"] == b["merged"] and a.get("series") == b.get("series")


def test_a_host_that_started_late_is_merged_into_the_intervals_it_overlaps(
    host_results: list[str], tmp_path: Path
) -> None:
    logs, _ = _rank_logs(tmp_path, host_results[:2])
    path = tmp_path / HLOG_FILE
    offsets = _same_start(logs)
    clock = {0: 0, 1: offsets[1] + 1000}  # rank 1's clock 1 µs further ahead
    late_ns = int(2.4 * INTERVAL_NS)  # rank 1 started 2.4 intervals after rank 0, on rank 0's clock
    fleet = FleetLog(path, 2, clock)
    bases = {}
    for r, log in enumerate(logs):
        part = LogTail(log).read()
        if r == 1:
            part["header"]["base_unix_ns"] += late_ns + 1000
        bases[r] = part["header"]["base_unix_ns"]
        fleet.add(r, part, last=True)
    fleet.close()
    got, hosts = _records(path), [_records(log) for log in logs]

    def on_zero(r: int, rec: dict[str, Any]) -> int:  # the job's start on rank 0's clock
        return bases[r] + rec["offset_ns"] - clock[r]

    for (job, i), e in got.items():
        joined = [(r, h[(job, k)]) for r, h, k in ((0, hosts[0], i), (1, hosts[1], i - 2)) if (job, k) in h]
        assert e["ios"] == [sum(x) for x in zip(*(rec["ios"] for _r, rec in joined))], (job, i)
        # the merged window is the union of the windows joined into it
        first = min(on_zero(r, hosts[r][(job, 0)]) for r in (0, 1))
        assert e["start_ns"] == min(on_zero(r, rec) + rec["start_ns"] for r, rec in joined) - first
        assert e["end_ns"] == max(on_zero(r, rec) + rec["end_ns"] for r, rec in joined) - first
    assert max(i for (_j, i) in got) == max(i for (_j, i) in hosts[1]) + 2


def test_a_lost_host_leaves_a_log_read_as_interrupted(host_results: list[str], tmp_path: Path) -> None:
    logs, _ = _rank_logs(tmp_path, host_results[:2])
    path = tmp_path / HLOG_FILE
    fleet = FleetLog(path, 2, _same_start(logs))
    fleet.add(0, LogTail(logs[0]).read(), last=True)
    fleet.add(1, {"part": 1, "records": [], "ends": []})  # overtook part 0, which never comes
    assert fleet.intervals_written == 0  # waits for rank 1's first interval
    fleet.rank_done(1)  # declared lost
    fleet.close()
    rows, state = read_window(path)
    assert state.interrupted, "no end line for jobs a lost host never ended"
    assert sum(r.ios for r in rows) == sum(sum(e["ios"]) for e in _records(logs[0]).values())
