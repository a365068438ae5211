"""`iolab sweep`, `iolab ls`, `iolab show`: exit statuses and messages."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path

from iolab.results.catalog import Catalog
from iolab.units import fmt_num

from tests.waits import busy_workers, wait_until

PLAN = """
[plan]
name = "cli"
[base]
filename = "t.dat"
size = "1m"
rw = "randread"
ioengine = "null"
time_based = true
runtime = "50ms"
[axes]
bs = ["4k", "{second}"]
[quick]
runtime = "20ms"
"""


def _plan(workdir: Path, second: str = "8k") -> Path:
    path = workdir / "plan.toml"
    path.write_text(PLAN.format(second=second))
    return path


def test_sweep_then_ls_and_show(cli, workdir):
    r = cli("sweep", str(_plan(workdir)), "--results", "res")
    assert r.exit_code == 0, r.output
    # Issue 21 item 9: one last line says what ran, how many points, where the results are and what next.
    res = workdir / "res" / "cli"
    assert r.stdout.splitlines()[-1] == (
        "sweep cli: 2 points (bs=4k/8k) x 1 repeat(s) = 2 runs on t.dat (2 run now, 0 already done); "
        f"results in {Path('res') / 'cli'} (next: iolab report {Path('res') / 'cli'})"
    ), r.output
    assert res.is_dir()
    assert "[1/2 runs" in r.stderr, r.output
    again = cli("sweep", str(_plan(workdir)), "--results", "res")
    assert again.exit_code == 0, again.output
    assert "(0 run now, 2 already done)" in again.stdout, again.output
    listed = cli("ls", "--results", "res")
    assert listed.exit_code == 0, listed.output
    assert "cli" in listed.stdout and "sweep" in listed.stdout and "complete" in listed.stdout, listed.output
    shown = cli("show", "cli", "--results", "res")
    assert shown.exit_code == 0, shown.output
    assert "bs=8k" in shown.stdout and "files:" in shown.stdout, shown.output
    one = cli("show", str(workdir / "res" / "cli" / "points" / "p002-r1"))
    assert one.exit_code == 0, one.output
    assert "IOPS" in one.stdout, one.output


def test_show_and_ls_tables_have_one_unit_per_column(cli, workdir):
    # A fio user's first hour (session 12): `iolab show` printed "461 µs" above "1.65 ms" in
    # one column; every column now has its unit in its header, latency in µs as in every report.
    assert cli("sweep", str(_plan(workdir)), "--results", "res").exit_code == 0
    shown = cli("show", "cli", "--results", "res")
    lines = shown.stdout.splitlines()
    header = re.split(r"\s{2,}", lines[1])
    assert header[4:] == ["IOPS", "BW (MB/s)", "LAT MEAN (µs)", "LAT P99 (µs)"], shown.output
    figures = {(f["point"], f["dir"]): f for f in Catalog(workdir / "res").figures("cli")}
    rows = [re.split(r"\s{2,}", line) for line in lines[2:] if line.strip() and not line.startswith("files:")]
    assert len(rows) == len(figures) == 2, shown.output
    for row in rows:
        f = figures[(int(row[0]), row[3])]
        assert row[5] == fmt_num(f["bw_bytes_per_s"] / 1e6), shown.output
        assert row[6] == fmt_num(f["lat_mean_ns"] / 1e3), shown.output
        assert row[7] == fmt_num(f["lat_p99_ns"] / 1e3), shown.output
    listed = cli("ls", "--results", "res").stdout.splitlines()
    assert re.split(r"\s{2,}", listed[0])[-1] == "BEST BW (MB/s)", listed
    assert re.fullmatch(r"[0-9.]+", re.split(r"\s{2,}", listed[1])[-1]), listed


def test_invalid_point_is_reported_before_anything_runs(cli, workdir):
    r = cli("sweep", str(_plan(workdir, second="huge")), "--results", "res")
    assert r.exit_code == 2, r.output
    assert "iolab: point 2 (bs=huge): " in r.stderr, r.output
    assert not (workdir / "res" / "cli").exists(), r.output


def test_plan_error_names_the_key(cli, workdir):
    path = workdir / "bad.toml"
    path.write_text('[plan]\nname = "x"\nmode = "grid"\n[base]\nsize = "1m"\n')
    r = cli("sweep", str(path))
    assert r.exit_code == 2, r.output
    assert "plan.mode: 'grid' is not matrix or zip" in r.stderr, r.output


def test_changed_plan_exit_1_with_advice(cli, workdir):
    assert cli("sweep", str(_plan(workdir)), "--results", "res").exit_code == 0
    r = cli("sweep", str(_plan(workdir, second="16k")), "--results", "res")
    assert r.exit_code == 1, r.output
    assert "--restart" in r.stderr and "different plan" in r.stderr, r.output
    ok = cli("sweep", str(_plan(workdir, second="16k")), "--results", "res", "--restart")
    assert ok.exit_code == 0, ok.output


def test_a_sweep_that_finished_nothing_gives_way_to_the_corrected_one(cli, workdir):
    # Session 12, a fio user's first hour: `--target` in a missing directory stopped the sweep at
    # its first point, and the corrected command was then refused ("holds sweep 'cli' of a
    # different plan ... --restart") though the directory held no finished run.
    plan = _plan(workdir)
    plan.write_text(plan.read_text().replace('ioengine = "null"', 'ioengine = "psync"'))
    bad = cli("sweep", str(plan), "--results", "res", "--target", str(workdir / "nodir" / "f.dat"))
    assert bad.exit_code == 1 and "does not exist; create it first" in bad.stderr, bad.output
    ok = cli("sweep", str(plan), "--results", "res", "--target", str(workdir / "f.dat"))
    assert ok.exit_code == 0, ok.output
    assert "(2 run now, 0 already done)" in ok.stdout, ok.output
    assert json.loads((workdir / "res" / "cli" / "sweep.json").read_text())["target"] == str(workdir / "f.dat")
    # One finished run is worth keeping: a changed plan is refused again.
    plan.write_text(plan.read_text().replace('"8k"', '"16k"'))
    changed = cli("sweep", str(plan), "--results", "res", "--target", str(workdir / "f.dat"))
    assert changed.exit_code == 1 and "different plan" in changed.stderr, changed.output


def test_quick_and_target(cli, workdir):
    r = cli("sweep", str(_plan(workdir)), "--results", "res", "--quick", "--target", str(workdir / "other.dat"))
    assert r.exit_code == 0, r.output
    meta = json.loads((workdir / "res" / "cli" / "sweep.json").read_text())
    assert meta["target"] == str(workdir / "other.dat") and meta["quick"] is True, r.output
    run = json.loads((workdir / "res" / "cli" / "points" / "p001-r1" / "config.json").read_text())
    assert run["prepared"][0]["runtime_ns"] == 20_000_000, r.output


def test_ls_and_show_without_catalog(cli, workdir):
    r = cli("ls", "--results", "nowhere")
    assert r.exit_code == 1, r.output
    assert "no catalog.sqlite here" in r.stderr, r.output
    assert cli("sweep", str(_plan(workdir)), "--results", "res").exit_code == 0
    missing = cli("show", "nope", "--results", "res")
    assert missing.exit_code == 1, missing.output
    assert "nope: no such run or sweep" in missing.stderr, missing.output


def test_run_with_results_keeps_a_directory_and_stdout_unchanged(cli, workdir):
    args = ["run", "--name=j", "--filename=t.dat", "--size=1m", "--ioengine=null", "--time_based", "--runtime=50ms"]
    plain = cli(*args, "--output-format", "json")
    kept = cli(*args, "--output-format", "json", "--results", "res")
    assert kept.exit_code == 0, kept.output
    assert json.loads(kept.stdout)["schema"] == json.loads(plain.stdout)["schema"], kept.output
    assert "results: res/run-" in kept.stderr, kept.output
    (run_dir,) = [p for p in (workdir / "res").iterdir() if p.is_dir()]
    assert (run_dir / "run.json").is_file() and (run_dir / "timeseries.parquet").is_file(), kept.output
    listed = cli("ls", "--results", "res")
    assert run_dir.name in listed.stdout and " run " in listed.stdout, listed.output
    shown = cli("show", run_dir.name, "--results", "res")
    assert shown.exit_code == 0 and "IOPS" in shown.stdout, shown.output


def test_ctrl_c_stops_the_sweep_and_it_resumes(iolab_cmd, workdir):
    """A real SIGINT in the middle of the second point: exit 130, the first
    point kept, the second not; the same command then runs only the rest."""
    path = workdir / "plan.toml"
    path.write_text(PLAN.format(second="8k").replace('runtime = "50ms"', 'runtime = "2s"'))
    args = [*iolab_cmd, "sweep", str(path), "--results", "res"]
    p = subprocess.Popen(args, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    points = workdir / "res" / "cli" / "points"
    wait_until(lambda: (points / "p001-r1" / "run.json").exists(), 60, "the first point to be kept")
    # Inside the second point's run: the first run's workers were joined
    # before its run.json was written, so a worker now is the second's.
    wait_until(lambda: busy_workers(p.pid), 60, "the second point's run to measure")
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=30)
    out = f"stdout:\n{stdout}\nstderr:\n{stderr}"
    assert p.returncode == 130, out
    assert "finished points are kept" in stderr and "Traceback" not in stderr, out
    assert sorted(d.name for d in points.iterdir() if (d / "run.json").exists()) == ["p001-r1"], out
    again = subprocess.run(args, cwd=workdir, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert "(1 run now, 1 already done)" in again.stdout, again.stdout + again.stderr


def test_sweep_accepts_fio_logs_and_steady_state(cli, workdir):
    """Issue 22: `iolab sweep` takes the options `iolab run` takes around the
    engine (they were refused by name). The iops log's 250 ms windows add
    up to the point's I/Os; steady state ends the 60 s point early."""
    plan = workdir / "plan.toml"
    plan.write_text(
        PLAN.format(second="8k")
        .replace('runtime = "50ms"', 'runtime = "60s"\nss = "iops:10000%"\nss_dur = "500ms"\nss_interval = "250ms"')
        .replace("[axes]", 'write_iops_log = "io"\nwrite_lat_log = "lt"\nlog_avg_msec = 250\n[axes]')
    )
    r = cli("sweep", str(plan), "--results", "res")
    assert r.exit_code == 0, r.output
    for point in ("p001-r1", "p002-r1"):
        d = workdir / "res" / "cli" / "points" / point
        assert json.loads((d / "steadystate.json").read_text())["cli"]["steadystate"]["attained"] == 1
        read = json.loads((d / "result.json").read_text())["summary"]["jobs"][0]["merged"]["read"]
        assert read["bytes"] / read["bw_bytes_per_s"] < 30, read  # seconds: steady state ended it
        rows = [[int(v) for v in ln.split(", ")] for ln in (d / "io_iops.1.log").read_text().splitlines()]
        start, ios = 0, 0.0
        for row in rows:  # IOPS over each window → I/Os (lines truncated to whole IOPS and ms)
            ios += row[1] * (row[0] - start) / 1000
            start = row[0]
        assert abs(ios - read["ios"]) <= len(rows) + read["iops"] * 0.001 * len(rows), (ios, read["ios"])
        assert (d / "lt_lat.1.log").is_file()
