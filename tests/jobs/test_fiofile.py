"""fio job files → JobSpec (iolab.jobs.fiofile), checked against how fio 3.33
reads the same files (``fio --showcmd``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from iolab.errors import JobError
from iolab.jobs import JobSpec, ParseError, parse_job_file

SEED_002 = """\
; The three sweeps of seed 002 as one job file: block size, mix, queue depth.
[global]
filename=testfile
size=10G
rw=randrw
time_based
runtime=60

[bs-64k]
rwmixread=50
bs=64k
iodepth=16

[mix-70]
stonewall
rwmixread=70
bs=4k
iodepth=16

[qd-32]
stonewall
rwmixread=50
bs=4k
iodepth=32
"""


def test_seed_002_as_a_job_file() -> None:
    jobs = parse_job_file(SEED_002)
    assert [j.name for j in jobs] == ["bs-64k", "mix-70", "qd-32"]
    common = (
        ("filename", "testfile"),
        ("size", "10G"),
        ("rw", "randrw"),
        ("time_based", None),
        ("runtime", "60"),
    )
    assert jobs[0] == JobSpec("bs-64k", (*common, ("rwmixread", "50"), ("bs", "64k"), ("iodepth", "16")))
    assert jobs[1].options[len(common)] == ("stonewall", None)
    assert dict(jobs[2].options)["iodepth"] == "32"


def test_later_global_reaches_only_later_jobs() -> None:
    # fio --showcmd on this file: j1 gets bs=4k; j2 gets bs=4k then bs=8k.
    text = "[global]\nioengine=null\nbs=4k\n[j1]\nrw=read\n[global]\nbs=8k\n[j2]\nrw=randread\n"
    j1, j2 = parse_job_file(text)
    assert j1.options == (("ioengine", "null"), ("bs", "4k"), ("rw", "read"))
    assert j2.options == (("ioengine", "null"), ("bs", "4k"), ("bs", "8k"), ("rw", "randread"))


def test_comments_blanks_and_bare_flags() -> None:
    text = (
        "; a comment\n# another\n\n"
        "[ spaced name ]\n"
        "  size = 1m   ; inline comment, as fio cuts at ';'\n"
        "\tbs=4k#cut here too\n"
        "group_reporting\r\n"
        "description=\n"
    )
    (job,) = parse_job_file(text)
    assert job == JobSpec("spaced name", (("size", "1m"), ("bs", "4k"), ("group_reporting", None), ("description", "")))


def test_environment_variables_and_keywords() -> None:
    text = "[${JOB}]\nsize=${SIZE}\nfilename=${DIR}/f\nnumjobs=$ncpus\nbs=$pagesize\n"
    (job,) = parse_job_file(text, env={"JOB": "ignored-in-headers", "SIZE": "2m", "DIR": "/mnt"})
    assert job.name == "${JOB}", "fio substitutes in options, not in section names"
    assert job.options == (
        ("size", "2m"),
        ("filename", "/mnt/f"),
        ("numjobs", str(os.cpu_count())),
        ("bs", str(os.sysconf("SC_PAGE_SIZE"))),
    )
    (job,) = parse_job_file("[j]\nsize=$mb_memory\n", env={})
    assert int(dict(job.options)["size"] or "0") > 0


def test_env_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IOLAB_TEST_SIZE", "3m")
    (job,) = parse_job_file("[j]\nsize=${IOLAB_TEST_SIZE}\n")
    assert job.options == (("size", "3m"),)


def test_include_inserts_a_file_in_place(tmp_path: Path) -> None:
    (tmp_path / "common.fio").write_text("[global]\nioengine=null\nsize=1m\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "opts.fio").write_text("bs=8k\n")
    main = tmp_path / "main.fio"
    main.write_text("include common.fio\n[j]\ninclude sub/opts.fio\nrw=read\n")
    (job,) = parse_job_file(main.read_text(), source=str(main))
    assert job.options == (("ioengine", "null"), ("size", "1m"), ("bs", "8k"), ("rw", "read"))


def test_include_errors(tmp_path: Path) -> None:
    loop = tmp_path / "loop.fio"
    loop.write_text("[j]\ninclude loop.fio\n")
    with pytest.raises(ParseError, match=r"loop.fio:2: include 'loop.fio' loops back on itself"):
        parse_job_file(loop.read_text(), source=str(loop))
    with pytest.raises(ParseError, match=r"x.fio:1: cannot include 'missing.fio': No such file"):
        parse_job_file("include missing.fio\n", source=str(tmp_path / "x.fio"))
    with pytest.raises(ParseError, match=r"<job file>:1: cannot include 'a.fio': this job text has no directory"):
        parse_job_file("include a.fio\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bs=4k\n[j]\n", "jobs.fio:1: option 'bs=4k' is outside of a section"),
        ("[j]\nsize=1m\n[broken\n", "jobs.fio:3: section header '[broken' has no closing ']'"),
        ("; x\n[ ]\n", "jobs.fio:2: empty section name '[]'"),
        ("[j]\n=4k\n", "jobs.fio:2: '=4k' has no option name before '='"),
        ("[j]\ntime based\n", "jobs.fio:2: option name 'time based' contains a blank"),
        ("[j]\n\nsize=${NOPE}\n", "jobs.fio:3: environment variable 'NOPE' is not set"),
        ("[j]\nsize=(2*__import__)\n", "jobs.fio:2: size=(2*__import__): only numbers and + - * / % ^"),
        ("[j]\nsize=(1/0)k\n", "jobs.fio:2: size=(1/0)k: division by zero"),
        ("[j]\ninclude\n", "jobs.fio:2: include needs a file name"),
        ("[global]\nbs=4k\n", "jobs.fio: no job in this file"),
        ("", "jobs.fio: no job in this file"),
    ],
)
def test_errors_name_file_and_line(text: str, message: str) -> None:
    with pytest.raises(ParseError) as e:
        parse_job_file(text, source="jobs.fio", env={})
    assert message in str(e.value)
    assert "\n" not in str(e.value)
    assert isinstance(e.value, JobError)


def test_parse_error_fields() -> None:
    with pytest.raises(ParseError) as e:
        parse_job_file("[j]\n[x\n", source="a.fio")
    assert (e.value.source, e.value.line) == ("a.fio", 2)
    assert e.value.message == "section header '[x' has no closing ']'"


def test_jobspec_is_immutable_and_converts() -> None:
    spec = JobSpec("x", [("bs", "4k"), ("time_based", None)])  # type: ignore[arg-type]
    assert spec.options == (("bs", "4k"), ("time_based", None))
    assert spec.to_native() == ("x", [("bs", "4k"), ("time_based", None)])
    assert spec.with_options(("bs", "8k")).options[-1] == ("bs", "8k")
    assert hash(spec) == hash(JobSpec("x", (("bs", "4k"), ("time_based", None))))
    with pytest.raises(AttributeError):
        spec.name = "y"  # type: ignore[misc]


def test_fio_arithmetic_is_evaluated() -> None:
    text = "[j]\nsize=(2*1024)k\nruntime=(2^20)\nramp_time=(3*1000)ms\nnumjobs=$ncpus/1\nbsrange=4k-64k\ncpus_allowed=0-1\n"
    (job,) = parse_job_file(text, source="jobs.fio", env={})
    opts = dict(job.options)
    assert opts["size"] == "2048k"
    assert opts["runtime"] == "1048576us"  # fio: a time expression is in microseconds
    assert opts["ramp_time"] == "3000ms"
    assert opts["numjobs"] == str(os.cpu_count())  # keyword math
    assert opts["bsrange"] == "4k-64k" and opts["cpus_allowed"] == "0-1"  # not arithmetic
