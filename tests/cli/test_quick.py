"""`iolab quick`: the seven standard jobs, a table on stdout, JSON results in a file."""

from __future__ import annotations

import json
import os
import signal
import subprocess

from iolab.run.quick import QUICK_JOBS

from tests.waits import busy_workers, wait_until


def test_quick_in_a_directory(cli, workdir):
    target = workdir / "target"
    target.mkdir()
    r = cli("quick", str(target), "--runtime-per-job", "1s", "--size", "16M", "--output", "q.json")
    assert r.exit_code == 0, r.output
    for name, *_ in QUICK_JOBS:
        assert name in r.stdout, r.output
    assert "IOPS" in r.stdout and "MB/s" in r.stdout and "lat p99" in r.stdout, r.output
    assert r.stdout.count("\n") >= len(QUICK_JOBS) + 2, r.output
    doc = json.loads((workdir / "q.json").read_text())
    assert [j["name"] for j in doc["summary"]["jobs"]] == [n for n, *_ in QUICK_JOBS]
    assert [j["group"] for j in doc["summary"]["jobs"]] == list(range(len(QUICK_JOBS)))
    assert "q.json" in r.stderr, r.output
    # quick removes the test file it created
    assert list(target.iterdir()) == [], list(target.iterdir())


def test_quick_default_results_name(cli, workdir):
    target = workdir / "t"
    target.mkdir()
    r = cli("quick", str(target), "--runtime-per-job", "1s", "--size", "8M")
    assert r.exit_code == 0, r.output
    written = list(workdir.glob("iolab-quick-*.json"))
    assert len(written) == 1, r.output
    assert written[0].name in r.stderr, r.output


def test_quick_on_existing_file_reads_only_and_keeps_data(cli, workdir):
    data = os.urandom(8 * 2**20)
    f = workdir / "existing.dat"
    f.write_bytes(data)
    r = cli("quick", str(f), "--runtime-per-job", "1s", "--size", "8M", "-o", "q.json")
    assert r.exit_code == 0, r.output
    assert "--allow-overwrite" in r.stderr, r.output
    names = [j["name"] for j in json.loads((workdir / "q.json").read_text())["summary"]["jobs"]]
    assert names == ["seq-read-1m-qd8", "rand-read-4k-qd1", "rand-read-4k-qd32"], names
    assert f.read_bytes() == data


def test_quick_on_a_small_existing_file_without_size_uses_it_whole(cli, workdir):
    f = workdir / "small.dat"
    f.write_bytes(os.urandom(4 * 2**20))
    r = cli("quick", str(f), "--runtime-per-job", "200ms", "-o", "q.json")
    assert r.exit_code == 0, r.output
    jobs = json.loads((workdir / "q.json").read_text())["summary"]["jobs"]
    assert {dict(j["config"]["options"])["size"] for j in jobs} == {str(4 * 2**20)}, jobs[0]["config"]
    assert f.stat().st_size == 4 * 2**20


def test_quick_missing_path(cli, workdir):
    r = cli("quick", "nowhere")
    assert r.exit_code == 1, r.output
    assert "nowhere" in r.stderr and "Traceback" not in r.output, r.output


def test_ctrl_c_lists_the_jobs_that_never_ran_as_not_run(iolab_cmd, workdir):
    """Issue 21: an interrupted quick listed the jobs that never ran as 0.000 IOPS."""
    target = workdir / "t"
    target.mkdir()
    args = [*iolab_cmd, "quick", str(target), "--runtime-per-job", "60s", "--size", "8M", "-o", "q.json"]
    p = subprocess.Popen(args, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The first job is measuring: its worker thread has run on a CPU.
    wait_until(lambda: busy_workers(p.pid) or p.poll() is not None, 60, "quick's first job to measure")
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    out = f"stdout:\n{stdout}\nstderr:\n{stderr}"
    assert p.returncode == 130, out
    first, *rest = [name for name, *_ in QUICK_JOBS]
    row = next(line for line in stdout.splitlines() if line.startswith(first))
    assert float(row.split()[1].replace(",", "")) > 0, out  # what ran, with its figures
    for name in rest:
        assert f"{name}: not run (interrupted before it started)" in stdout, out
        assert not any(line.startswith(name) and "0.000" in line for line in stdout.splitlines()), out
    doc = json.loads((workdir / "q.json").read_text())
    assert [j["name"] for j in doc["summary"]["jobs"]] == [first], doc["summary"]["jobs"]
    assert doc["quick"]["not_run"] == rest
    assert list(target.iterdir()) == []  # the test file is removed all the same
