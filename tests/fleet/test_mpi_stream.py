"""``iolab fleet ... run --stream-intervals`` on real MPI ranks (issue 30, the fleet side).

Each rank streams its intervals to its own log beside its spool; rank 0
streams the exact cross-host merge to the fleet run's ``intervals.hlog``
as intervals arrive. Checked: every interval of the fleet's log is the
union of the ranks' intervals of that index (I/Os summed, histograms
merged bucket for bucket, so the same p99); the result's totals equal the
log's; ``iolab report RUN --window`` works on the fleet run; and a kill -9
of rank 0 leaves every log readable and the fleet run reported as
interrupted. Needs the [fleet] extra (see test_mpi.py).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
from pathlib import Path
from typing import Any

from iolab import _native
from iolab.results.intervals import HLOG_FILE
from iolab.results.rundir import read_document

from tests.waits import wait_until

from .faults import RUN_LIMIT_S, rank_pid, run_with_fault
from .test_mpi import NULL_JOB, _require_mpi, iolab

#: 200 ms intervals: ranks start within a few ms, far from the half interval that would
#: shift one host's series by an interval on a loaded machine.
STREAM = ["--interval", "200ms", "--numjobs=2", "--rate_iops=4000", "--stream-intervals"]


def _records(log: Path) -> dict[tuple[int, int], dict[str, Any]]:
    return {(e["job"], e["index"]): e for e in _native.IntervalLog(log) if "index" in e and e["worker"] is None}


def _assert_union_of_ranks(fleet_log: Path, rank_logs: list[Path]) -> dict[tuple[int, int], dict[str, Any]]:
    fleet, ranks = _records(fleet_log), [_records(p) for p in rank_logs]
    for key, e in fleet.items():
        parts = [r[key] for r in ranks if key in r]
        assert parts, key
        for d in range(len(e["ios"])):
            assert e["ios"][d] == sum(p["ios"][d] for p in parts), (key, d)
            union = _native.hist_merge([p["lat_ns"][d] for p in parts])
            assert _native.hist_buckets(e["lat_ns"][d]) == _native.hist_buckets(union), (key, d)
            assert _native.hist_stats(e["lat_ns"][d], [99.0]) == _native.hist_stats(union, [99.0])
    return fleet


def test_fleet_log_is_the_exact_union_of_every_ranks_intervals(tmp_path: Path) -> None:
    _require_mpi()
    spool, results = tmp_path / "spool", tmp_path / "res"
    cmd = iolab("fleet", "-n", "3", "run", *NULL_JOB, "--runtime=3", *STREAM, "--results", str(results),
                f"--fleet-spool={spool}", "--output-format=json")  # fmt: skip
    ran = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_LIMIT_S, cwd=tmp_path, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    (run_dir,) = results.glob("run-*")
    rank_logs = sorted(spool.glob("*/rank-*.hlog"))
    assert len(rank_logs) == 3
    fleet = _assert_union_of_ranks(run_dir / HLOG_FILE, rank_logs)
    assert len(fleet) >= 14  # 3 s of 200 ms intervals
    ranks = [_records(p) for p in rank_logs]
    assert set(fleet) == set().union(*ranks)  # hosts that start within half an interval: no shift
    doc = json.loads((run_dir / "result.json").read_text())
    assert doc["result"]["interval_log"] == {"file": HLOG_FILE, "per_worker": False}
    total = doc["summary"]["jobs"][0]["merged"]["read"]["ios"]
    assert total == sum(e["ios"][0] for e in fleet.values()) == sum(e["ios"][0] for r in ranks for e in r.values())
    # The series live in timeseries.parquet beside the log (bounded memory), read on demand.
    assert doc["summary"]["groups"][0]["series"] == [] and "series_file" in doc["summary"]
    series = read_document(run_dir)["summary"]["groups"][0]["series"]
    assert len(series) == len(fleet)
    assert sum(s["read"]["ios"] for s in series) == total
    # each host's own log is named in fleet.json
    hosts = json.loads((run_dir / "fleet.json").read_text())["hosts"]
    assert sorted(Path(h["interval_log"]) for h in hosts) == rank_logs
    rep = subprocess.run(iolab("report", str(run_dir), "--window", "0.5s..1.5s", "--format", "json"),
                         capture_output=True, text=True, timeout=RUN_LIMIT_S, check=False)  # fmt: skip
    assert rep.returncode == 0, rep.stderr
    window = json.loads(rep.stdout)
    (row,) = [r for r in window["rows"] if r["dir"] == "read"]
    inside = [e for e in fleet.values() if e["start_ns"] >= 500_000_000 and e["end_ns"] <= 1_500_000_000]
    assert row["ios"] == sum(e["ios"][0] for e in inside) and window["interrupted"] is False


def test_kill_9_of_rank_0_leaves_readable_logs_and_an_interrupted_fleet_run(tmp_path: Path) -> None:
    _require_mpi()
    spool, results = tmp_path / "spool", tmp_path / "res"
    cmd = iolab("fleet", "-n", "2", "--deadline", "3s", "run", *NULL_JOB, "--runtime=60", *STREAM,
                "--results", str(results), f"--fleet-spool={spool}")  # fmt: skip
    want = random.Random().randint(3, 15)

    def kill_rank_0(_proc: subprocess.Popen[str]) -> None:
        logs = lambda: list(results.glob(f"run-*/{HLOG_FILE}"))  # noqa: E731
        wait_until(lambda: bool(logs()) and len(_records(logs()[0])) >= want, RUN_LIMIT_S, f"{want} fleet intervals")
        pid = rank_pid(0, spool)
        assert pid is not None
        os.kill(pid, signal.SIGKILL)

    ended = run_with_fault(cmd, spool, 0, kill_rank_0, cwd=tmp_path)
    assert ended.returncode != 0
    (run_dir,) = results.glob("run-*")
    assert not (run_dir / "run.json").exists()
    rank_logs = sorted(spool.glob("*/rank-*.hlog"))
    fleet = _assert_union_of_ranks(run_dir / HLOG_FILE, rank_logs)
    assert len(fleet) >= want
    assert [i for (_j, i) in sorted(fleet)] == list(range(len(fleet)))  # every interval up to the last merged one
    # rank 1 stopped on its own (rank 0 silent) and its log was ended: more intervals than the fleet's
    assert len(_records(rank_logs[1])) >= len(fleet)
    rep = subprocess.run(iolab("report", str(run_dir), "--format", "json"), capture_output=True, text=True,
                         timeout=RUN_LIMIT_S, check=False)  # fmt: skip
    assert rep.returncode == 0, rep.stderr
    doc = json.loads(rep.stdout)
    assert doc["interrupted"] is True
    (row,) = [r for r in doc["rows"] if r["dir"] == "read"]
    assert row["ios"] == sum(e["ios"][0] for e in fleet.values())
