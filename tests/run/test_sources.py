"""Jobs from a command line: job files, fio options in both spellings, both together."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from iolab.errors import JobError
from iolab.jobs import JobSpec
from iolab.run.sources import jobs_from_command_line, single_dash_as_long, split_command_line

JOB_FILE = "[global]\nsize=16m\nruntime=60\n\n[a]\nrw=read\n\n[b]\nrw=write\nruntime=30\n"


def test_space_separated_values_are_joined_flags_are_not():
    files, options = split_command_line(["--name", "x", "--time_based", "job.fio", "--bs", "4k", "--rw=read"])
    assert files == ["job.fio"]
    assert options == ["--name=x", "--time_based", "--bs=4k", "--rw=read"]


def test_options_alone():
    jobs = jobs_from_command_line(["--size=1m", "--name=a", "--rw=read", "--name=b", "--rw", "write"])
    assert jobs == [
        JobSpec("a", (("size", "1m"), ("rw", "read"))),
        JobSpec("b", (("size", "1m"), ("rw", "write"))),
    ]


def test_job_file_options_win_over_nothing_and_command_line_wins_over_file(tmp_path):
    f = tmp_path / "two.fio"
    f.write_text(JOB_FILE)
    (a, b) = jobs_from_command_line([str(f), "--runtime=5"])
    assert a.options[-1] == ("runtime", "5") and b.options[-1] == ("runtime", "5")
    assert dict(a.options)["runtime"] == "5" and dict(b.options)["runtime"] == "5"
    assert (a.name, b.name) == ("a", "b")


def test_job_files_alone_in_order(tmp_path):
    f1, f2 = tmp_path / "1.fio", tmp_path / "2.fio"
    f1.write_text("[one]\nrw=read\n")
    f2.write_text("[two]\nrw=write\n")
    assert [j.name for j in jobs_from_command_line([str(f1), str(f2)])] == ["one", "two"]


def test_name_with_job_files_is_refused(tmp_path):
    f = tmp_path / "two.fio"
    f.write_text(JOB_FILE)
    with pytest.raises(JobError, match="--name"):
        jobs_from_command_line([str(f), "--name=c"])


def test_nothing_is_an_error():
    with pytest.raises(JobError, match="no job"):
        jobs_from_command_line([])


def test_missing_job_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        jobs_from_command_line([str(tmp_path / "nope.fio")])


#: As pasted from guides and scripts: fio reads these with getopt_long_only.
PASTED = "-filename=F -direct=1 -iodepth 1 -thread -rw=randrw -rwmixread=70 -ioengine=psync -bs=8k -size=1m"
PASTED += " -runtime=1 -group_reporting -name=mytest"


def test_single_dash_long_options_as_fio_reads_them():
    got = single_dash_as_long([*PASTED.split(), "-o", "out.json", "-h", "-output-format=json", "--bs=4k"])
    assert got[:7] == ["--filename=F", "--direct=1", "--iodepth", "1", "--thread", "--rw=randrw", "--rwmixread=70"]
    assert got[-5:] == ["-o", "out.json", "-h", "--output-format=json", "--bs=4k"]  # short options stay short
    # an option no one knows is a long option too, so the parser names it
    assert single_dash_as_long(["-nosuch=1", "-x", "-lockmem", "1G"]) == ["--nosuch=1", "-x", "--lockmem", "1G"]
    assert single_dash_as_long(["-results=r", "-offset", "-1", "-2k"]) == ["--results=r", "--offset=-1", "-2k"]


def test_a_pasted_single_dash_command_runs_as_its_double_dash_twin(tmp_path: Path):
    def iolab(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "iolab.cli.main", "run", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False)

    single = PASTED.split()
    double = ["-" + a if a.startswith("-") else a for a in single]
    shown = [iolab(*args, "--showcmd") for args in (single, double)]
    assert shown[0].returncode == 0, shown[0].stderr
    assert shown[0].stdout == shown[1].stdout and "--iodepth=1" in shown[0].stdout, shown[0].stdout
    ran = iolab(*single, "-output-format=json", "-o", "out.json")
    assert ran.returncode == 0, ran.stderr
    (job,) = json.loads((tmp_path / "out.json").read_text())["result"]["jobs"]
    spec = job["job"]
    assert (spec["name"], spec["iodepth"], spec["bs"][0], spec["rw"]) == (
        "mytest", 1, {"fixed": 8192}, {"pattern": "random", "read_pct": 70},
    )  # fmt: skip


def test_a_flag_takes_a_number_after_it_as_its_value():
    """fio's getopt gives its boolean options a required value, so
    ``--randrepeat 1`` (as pasted from guides) is randrepeat=1, not a job
    file named 1; a flag before anything else stays bare."""
    files, options = split_command_line(["--randrepeat", "1", "--thread", "--time_based", "job.fio", "--direct", "0"])
    assert files == ["job.fio"]
    assert options == ["--randrepeat=1", "--thread", "--time_based", "--direct=0"]
    (job,) = jobs_from_command_line(["--name=x", "--randrepeat", "0", "--rw=read"])
    assert job.options == (("randrepeat", "0"), ("rw", "read"))


def test_a_program_option_takes_the_next_word_and_is_named():
    # Not a job file "1": the error names the option, with what to do.
    files, options = split_command_line(["--name=x", "--status-interval", "1", "--eta-newline", "5s"])
    assert files == [] and options == ["--name=x", "--status-interval=1", "--eta-newline=5s"]
    with pytest.raises(JobError, match=r"--debug is an option of the fio program .*debug tracing is not offered"):
        jobs_from_command_line(["--name=x", "--debug", "io"])


def test_an_unknown_single_dash_option_is_named(tmp_path: Path):
    # -lockmem=1G (unknown then) was read as -l (an unknown short option)
    # with "ockmem=1G" after it; lockmem is an option now, -cgroup is not.
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", "-name=x", "-size=1m", "-cgroup=io", "--parse-only"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert r.returncode != 0 and "unknown option 'cgroup'" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_value_is_never_read_as_a_single_dash_option():
    # fio's getopt gives an option that takes a value the next word, whatever it looks like.
    got = single_dash_as_long(["--name", "-job", "-rw=read", "-description", "-x y", "--", "-bs=4k"])
    assert got == ["--name=-job", "--rw=read", "--description=-x y", "--", "-bs=4k"]
    # -o with its value attached stays short; the whole word a known option is long.
    own = frozenset({"o", "output", "output-format"})
    assert single_dash_as_long(["-oresults", "-output-format=json", "-o", "-out"], own) == [
        "-oresults", "--output-format=json", "-o", "-out",
    ]  # fmt: skip


def test_a_job_named_with_a_leading_dash_through_the_cli(tmp_path: Path):
    ran = subprocess.run(
        [sys.executable, "-m", "iolab.cli.main", "run", "--name", "-job", "--ioengine=null", "--size=1m", "--showcmd"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert ran.returncode == 0 and "--name=-job " in ran.stdout, ran.stdout + ran.stderr
    assert not list(tmp_path.iterdir()), "nothing written (-job once read as -j -o b)"
    assert [j.name for j in jobs_from_command_line(single_dash_as_long(["--name", "-job", "-rw=read"]))] == ["-job"]
