"""fio-style command lines → JobSpec (iolab.jobs.cmdline)."""

from __future__ import annotations

import shlex

import pytest
from iolab.errors import JobError
from iolab.jobs import DEFAULT_JOB_NAME, JobSpec, ParseError, check_max_jobs, parse_fio_args
from iolab.jobs.cmdline import FIO_PROGRAM_OPTION_ADVICE, FIO_PROGRAM_OPTIONS

# The three commands of seed 002, as written there (line break included),
# with their [Variable] filled in.
SEED_002 = [
    "fio --filename=testfile --size=10G --rw=randrw --rwmixread=50 --bs=64k --iodepth=16  \n"
    "--time_based --runtime=60 --name=test",
    "fio --filename=testfile --size=10G --rw=randrw --rwmixread=70 --bs=4k --iodepth=16\n"
    "--time_based --runtime=60 --name=test",
    "fio --filename=testfile --size=10G --rw=randrw --rwmixread=50 --bs=4k --iodepth=32  \n"
    "--time_based --runtime=60 --name=test",
]


@pytest.mark.parametrize("command", SEED_002)
def test_seed_002_commands(command: str) -> None:
    argv = shlex.split(command)
    assert argv[0] == "fio"
    (job,) = parse_fio_args(argv[1:])
    assert job.name == "test"
    opts = dict(job.options)
    assert opts["filename"] == "testfile" and opts["size"] == "10G" and opts["rw"] == "randrw"
    assert opts["time_based"] is None, "a bare flag has no value"
    assert opts["runtime"] == "60"
    assert [k for k, _ in job.options] == [
        "filename",
        "size",
        "rw",
        "rwmixread",
        "bs",
        "iodepth",
        "time_based",
        "runtime",
    ]


def test_options_before_the_first_name_apply_to_every_job() -> None:
    jobs = parse_fio_args(["--size=1m", "--ioengine=null", "--name=a", "--rw=read", "--name=b", "--bs=8k"])
    assert jobs == [
        JobSpec("a", (("size", "1m"), ("ioengine", "null"), ("rw", "read"))),
        JobSpec("b", (("size", "1m"), ("ioengine", "null"), ("bs", "8k"))),
    ]


def test_name_global_starts_global_options_for_later_jobs() -> None:
    jobs = parse_fio_args(["--name=a", "--rw=read", "--name=global", "--bs=8k", "--name=b", "--stonewall"])
    assert jobs == [
        JobSpec("a", (("rw", "read"),)),
        JobSpec("b", (("bs", "8k"), ("stonewall", None))),
    ]


def test_options_without_name_make_one_job() -> None:
    (job,) = parse_fio_args(["--size=1m", "--time_based", "--runtime=1"])
    assert job == JobSpec(DEFAULT_JOB_NAME, (("size", "1m"), ("time_based", None), ("runtime", "1")))
    assert DEFAULT_JOB_NAME == "iolab"
    assert parse_fio_args([]) == []


def test_values_are_kept_as_written() -> None:
    args = ["--name=x", "--filename=/dev/a:/dev/b", "--bssplit=4k/50:8k/50,16k/100", "--rate="]
    (job,) = parse_fio_args(args)
    assert job.options == (("filename", "/dev/a:/dev/b"), ("bssplit", "4k/50:8k/50,16k/100"), ("rate", ""))


def test_same_name_twice_gives_two_jobs() -> None:
    assert [j.name for j in parse_fio_args(["--name=x", "--name=x"])] == ["x", "x"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["job.fio"], "command line: 'job.fio': expected a job option --option=value"),
        (["-b"], "'-b': expected a job option"),
        (["--"], "'--': expected a job option"),
        (["--=4k"], "'--=4k': no option name after '--'"),
        (["--name"], "'--name': --name needs a job name: --name=NAME"),
        (["--name="], "--name needs a job name"),
        (
            ["--output-format=json", "--name=x"],
            "--output-format is an option of the fio program, not of a job",
        ),
        (["--minimal"], "--minimal is an option of the fio program"),
        (["--name=x", "--debug=io"], "--debug is an option of the fio program that iolab run does not take: "),
        (["--name=x", "--bandwidth-log"], "iolab run does not take: give the jobs write_bw_log=NAME instead"),
        (["--name=global", "--bs=4k"], "only --name=global options, no job: add --name=JOB"),
    ],
)
def test_errors(args: list[str], message: str) -> None:
    with pytest.raises(ParseError) as e:
        parse_fio_args(args)
    assert message in str(e.value)
    assert "\n" not in str(e.value)
    assert isinstance(e.value, JobError) and isinstance(e.value, ValueError)


def test_fio_arithmetic_in_parentheses() -> None:
    (job,) = parse_fio_args(["--name=a", "--size=(4*256)k", "--startdelay=(500*2)"])
    assert dict(job.options) == {"size": "1024k", "startdelay": "1000us"}


def test_every_program_option_is_taken_or_refused_with_advice():
    """Each fio program option is an option of ``iolab run`` or has a line
    saying what to do instead: none is a bare 'not a job option'."""
    import typer
    from iolab.cli.main import app

    run = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    taken = {o[2:] for p in run.params for o in p.opts if o.startswith("--")}
    taken |= {"parse-only"}
    assert FIO_PROGRAM_OPTIONS - taken == set(FIO_PROGRAM_OPTION_ADVICE)


def test_max_jobs_counts_every_worker():
    jobs = parse_fio_args(["--numjobs=3", "--name=a", "--name=b", "--numjobs=2"])
    check_max_jobs(jobs, 5)
    with pytest.raises(ParseError, match=r"--max-jobs=4: the jobs have 5 workers \(numjobs summed\)"):
        check_max_jobs(jobs, 4)
