"""`iolab run`: seed 002's command line as written (shrunk), job files,
output formats and where each output goes."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Seed 002's command, with size and runtime shrunk so the test takes ~1 s.
SEED002 = [
    "--filename=testfile",
    "--size=16M",
    "--rw=randrw",
    "--rwmixread=50",
    "--bs=4k",
    "--iodepth=16",
    "--time_based",
    "--runtime=1",
    "--name=test",
]


def test_seed002_command_as_written(cli, workdir):
    r = cli("run", *SEED002)
    assert r.exit_code == 0, r.output
    assert "test" in r.stdout, r.output
    assert "IOPS" in r.stdout, r.output
    # Layout says what it did, on stderr.
    assert "testfile" in r.stderr, r.output
    assert (workdir / "testfile").stat().st_size == 16 * 2**20


def test_json_to_stdout_is_only_json(cli, workdir):
    r = cli("run", *SEED002, "--output-format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # nothing else on stdout
    assert doc["schema"] == "iolab.result/1"
    job = doc["summary"]["jobs"][0]
    assert job["name"] == "test"
    assert job["merged"]["read"]["ios"] > 0 and job["merged"]["write"]["ios"] > 0


def test_fio_json_to_stdout(cli, workdir):
    r = cli("run", *SEED002, "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["jobs"][0]["jobname"] == "test"
    assert doc["jobs"][0]["read"]["io_bytes"] > 0


def test_output_file_gets_format_stdout_gets_text(cli, workdir):
    r = cli("run", *SEED002, "--output", "out.json", "--output-format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads((workdir / "out.json").read_text())
    assert doc["summary"]["jobs"][0]["name"] == "test"
    assert "IOPS" in r.stdout and not r.stdout.lstrip().startswith("{"), r.output
    assert "out.json" in r.stderr, r.output


def test_job_file_with_command_line_overrides(cli, workdir):
    jobfile = ROOT / "examples" / "fio" / "seed002-randrw.fio"
    r = cli("run", str(jobfile), "--size=16m", "--runtime=1", "--output-format=json")
    assert r.exit_code == 0, r.output
    job = json.loads(r.stdout)["summary"]["jobs"][0]
    assert job["name"] == "test"
    assert job["config"]["runtime_limit_ns"] == 1_000_000_000, job["config"]
    assert (workdir / "testfile").stat().st_size == 16 * 2**20


def test_job_file_and_name_jobs_do_not_mix(cli, workdir):
    jobfile = ROOT / "examples" / "fio" / "seed002-randrw.fio"
    r = cli("run", str(jobfile), "--name=extra", "--rw=read")
    assert r.exit_code == 2, r.output
    assert "--name" in r.stderr, r.output


def test_stonewall_groups_run_in_order(cli, workdir):
    r = cli(
        "run",
        "--ioengine=null", "--size=1m", "--bs=4k", "--time_based", "--runtime=1",
        "--name=a", "--rw=randread",
        "--name=b", "--rw=randwrite", "--stonewall",
        "--output-format=json",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    jobs = json.loads(r.stdout)["summary"]["jobs"]
    assert [(j["name"], j["group"]) for j in jobs] == [("a", 0), ("b", 1)]


def test_dry_run_prints_resolved_jobs_and_touches_nothing(cli, workdir):
    r = cli("run", *SEED002, "--dry-run")
    assert r.exit_code == 0, r.output
    assert "job test" in r.stdout, r.output
    assert "16777216 bytes (16.00 MiB)" in r.stdout, r.output
    assert "1000000000 ns" in r.stdout, r.output  # runtime=1 resolved to ns
    assert not (workdir / "testfile").exists()


def test_no_job_is_a_usage_error(cli, workdir):
    r = cli("run")
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output


def test_bad_interval(cli, workdir):
    r = cli("run", *SEED002, "--interval", "soon")
    assert r.exit_code == 2, r.output
    assert "interval" in r.stderr, r.output


def test_output_into_a_missing_directory_is_refused_before_running(cli, workdir):
    r = cli("run", *SEED002, "--output", "no/such/dir/out.json")
    assert r.exit_code == 2, r.output
    assert "no/such/dir" in r.stderr, r.output
    assert not (workdir / "testfile").exists()
