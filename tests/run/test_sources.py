"""Jobs from a command line: job files, fio options in both spellings, both together."""

from __future__ import annotations

import pytest
from iolab.errors import JobError
from iolab.jobs import JobSpec
from iolab.run.sources import jobs_from_command_line, split_command_line

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
