"""`iolab run`: seed 002's command line as written (shrunk), job files,
output formats and where each output goes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.waits import wait_until

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
    # Every top-level size carries its unit (session 12: `offset_increment: 0`, `rw_seq_add_bytes: 0` had none).
    sized = cli("run", *SEED002, "--offset_increment=64k", "--rw=read:8k", "--dry-run").stdout
    assert "  offset_increment: 65536 bytes (64.00 KiB)\n" in sized, sized
    assert "  rw_seq_add_bytes: 8192 bytes (8.000 KiB)\n" in sized, sized


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


def _wait_until_open(pid: int, path: Path, timeout_s: float = 30.0) -> None:
    """Until process ``pid`` holds ``path`` open (iolab opens a job's files
    once layout has checked them)."""

    def holds_open() -> bool:
        for fd in Path(f"/proc/{pid}/fd").glob("*"):
            try:
                if Path(os.readlink(fd)) == path:
                    return True
            except OSError:
                continue  # closed meanwhile
        return False

    wait_until(holds_open, timeout_s, f"process {pid} to open {path}")


def test_io_error_prints_and_writes_the_partial_results_then_the_error(iolab_cmd, workdir):
    """A file that shrinks under the run to 1 MiB + 1000 bytes: the read at
    1 MiB comes back short and its rest finds the end of the file. What was
    done before (256 reads) is still reported, then the error's one line."""
    path = workdir / "data"
    path.write_bytes(os.urandom(4 * 2**20))  # not iolab's: read in place, never written
    cmd = [
        *iolab_cmd, "run", "--name=t", f"--filename={path}", "--size=4m", "--rw=read",
        "--ioengine=psync", "--startdelay=2", "--output", "out.json", "--output-format", "json",
        "--results", "res",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # startdelay holds the workers back while the file shrinks.
        _wait_until_open(proc.pid, path)
        os.truncate(path, 2**20 + 1000)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    output = f"--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
    assert proc.returncode == 1, output
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"iolab: I/O error on {path} at offset 1048576 (4096 bytes, read)"), output
    assert "ended early on an error" in stderr, output
    doc = json.loads((workdir / "out.json").read_text())
    read = doc["summary"]["jobs"][0]["merged"]["read"]
    assert (read["ios"], read["errors"]) == (256, 1), read
    assert "IOPS" in stdout, output  # the text summary of the partial results
    # --results keeps the partial run too, marked with its error.
    (run_dir,) = [d for d in (workdir / "res").iterdir() if d.is_dir()]
    meta = json.loads((run_dir / "run.json").read_text())
    assert "I/O error" in meta["error"], meta
    kept = json.loads((run_dir / "result.json").read_text())["summary"]["jobs"][0]["merged"]["read"]
    assert kept["ios"] == 256, kept


def test_readonly_refuses_jobs_that_write_before_anything_runs(cli, workdir):
    write = ["--name=w", "--ioengine=psync", "--rw=randrw", "--bs=4k", "--size=64k", "--filename=ro.dat"]
    for extra in ([], ["--parse-only"]):
        r = cli("run", *write, "--readonly", *extra)
        assert r.exit_code == 2, r.output
        assert "--readonly: job w writes (50% of its I/O)" in r.stderr
    assert not (workdir / "ro.dat").exists(), "nothing ran"
    (workdir / "ro.dat").write_bytes(bytes(64 * 1024))
    trim = ["--name=t", "--rw=randtrim", "--bs=4k", "--size=64k", "--filename=ro.dat", "--readonly"]
    r = cli("run", *trim)
    assert r.exit_code == 2 and "--readonly: job t trims (discards data)" in r.stderr, r.output
    log = workdir / "trims.log"
    log.write_text("fio version 3 iolog\n0 ro.dat add\n1 ro.dat trim 0 4096\n")
    r = cli("run", "--name=r", f"--read_iolog={log}", "--readonly")
    assert r.exit_code == 2 and "--readonly: job r trims" in r.stderr, r.output
    # rwmixread=100 makes the mix a read job, as in fio.
    r = cli("run", *write, "--rwmixread=100", "--readonly", "--output-format=terse")
    assert r.exit_code == 0, r.output
    assert (workdir / "ro.dat").read_bytes() == bytes(64 * 1024)


def test_dry_run_names_the_files_the_engine_then_creates(cli, workdir):
    # Issue 21 item 9: without --filename a dry run showed `filenames: []`.
    job = ["--name=w", "--rw=write", "--bs=4k", "--size=64k", "--numjobs=2", "--nrfiles=2", "--directory=d"]
    (workdir / "d").mkdir()
    r = cli("run", *job, "--dry-run")
    assert r.exit_code == 0, r.output
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("  file names: ")]
    workers = line.split("): ", 1)[1].split("; ")  # "worker 0: d/w.0.0, d/w.0.1", "worker 1: ..."
    named = {Path(p.strip()) for w in workers for p in w.split(": ", 1)[1].split(",")}
    assert named == {Path("d") / f"w.{j}.{f}" for j in (0, 1) for f in (0, 1)}, line
    assert "filenames: []" not in r.stdout and not any((workdir / "d").iterdir())
    ran = cli("run", *job, "--output-format=json")
    assert ran.exit_code == 0, ran.output
    assert {p.relative_to(workdir) for p in (workdir / "d").iterdir() if not p.name.startswith(".")} == named
    shared = cli("run", "--name=s", "--filename=a.dat:b.dat", "--size=64k", "--dry-run")
    assert "  file names: a.dat, b.dat (every worker)" in shared.stdout, shared.output


NULL_JOB = ["--name=n", "--ioengine=null", "--size=1m", "--bs=4k", "--numjobs=2"]


def test_fio_program_options_scripts_paste(cli, workdir):
    """--append-terse adds terse v3 after the text; --max-jobs refuses more
    workers than it allows before anything runs; --alloc-size is noted."""
    r = cli("run", *NULL_JOB, "--append-terse")
    assert r.exit_code == 0, r.output
    text, terse = r.stdout.rstrip("\n").rsplit("\n", 1)
    assert "IOPS" in text and terse.startswith("3;") and terse.count(";") > 100, r.stdout
    r = cli("run", *NULL_JOB, "--max-jobs", "1")
    assert r.exit_code != 0 and "--max-jobs=1: the jobs have 2 workers" in r.output, r.output
    assert cli("run", *NULL_JOB, "--max-jobs=2", "--output-format=terse").exit_code == 0
    r = cli("run", *NULL_JOB, "--alloc-size=1048576", "--output-format=terse")
    assert r.exit_code == 0 and "note: --alloc-size=1048576: iolab keeps no shared memory pool" in r.stderr, r.output


def test_mmap_on_dev_zero_maps_the_jobs_region(cli, workdir):
    """fio maps /dev/zero (no size of its own) over the job's region; iolab
    mapped nothing and failed the first I/O with EINVAL (a kernel MGLRU
    test's `fio --ioengine=mmap --filename=/dev/zero --rw=randrw`)."""
    job = ["--name=z", "--ioengine=mmap", "--filename=/dev/zero", "--size=1m", "--bs=4k", "--rw=randrw"]
    r = cli("run", *job, "--output-format=json")
    assert r.exit_code == 0, r.output
    merged = json.loads(r.stdout)["summary"]["jobs"][0]["merged"]
    assert merged["read"]["ios"] + merged["write"]["ios"] == 256, merged
    assert merged["read"]["ios"] > 0 and merged["write"]["ios"] > 0, merged
