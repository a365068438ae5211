"""Job options handled around the engine, wherever a job is accepted, and
errors that name the job file's line.

Truths: the error for an unknown option carries the file and line it was
written on (counted here, also through an ``include``); ``iolab.run()``
writes the fio logs a job asks for (their windows add up to the run's I/O
count) and drops note-only options; a caller that cannot apply an acting
option (the engine alone: ``prepare``/``run_jobs``) refuses it by name.
"""

from __future__ import annotations

from pathlib import Path

import iolab
import pytest
from iolab.errors import JobError
from iolab.jobs import parse_job_file
from iolab.run.local import native_jobs, prepare

JOB = """\
[global]
ioengine=null
size=16m

[a]
rw=read
bogus_opt=3
"""


def test_unknown_option_names_file_and_line() -> None:
    (spec,) = parse_job_file(JOB, source="job.fio")
    with pytest.raises(JobError) as e:
        prepare(spec)
    assert str(e.value) == "job.fio:7: unknown option 'bogus_opt': see `iolab options` for the options iolab knows"


def test_unknown_option_keeps_the_engines_hint(tmp_path: Path) -> None:
    (tmp_path / "inc.fio").write_text("[global]\n\niodpeth=4\n")
    main = tmp_path / "main.fio"
    main.write_text("include inc.fio\n[a]\nioengine=null\nsize=1m\n")
    (spec,) = parse_job_file(main.read_text(), source=str(main))
    with pytest.raises(JobError) as e:
        prepare(spec)
    assert str(e.value) == f"{tmp_path / 'inc.fio'}:3: unknown option 'iodpeth': did you mean 'iodepth'?"


def test_bad_value_names_the_line_too() -> None:
    (spec,) = parse_job_file(JOB.replace("bogus_opt=3", "bs=huge"), source="job.fio")
    with pytest.raises(JobError, match=r"^job\.fio:7: invalid value 'huge' for option 'bs'"):
        prepare(spec)


def test_api_job_errors_have_no_line() -> None:
    with pytest.raises(JobError) as e:
        prepare(iolab.Job("x", ioengine="null", size="1m", bogus_opt=1))
    assert str(e.value).startswith("unknown option 'bogus_opt'")


def test_note_only_options_are_dropped_for_every_caller() -> None:
    job = iolab.Job("x", ioengine="null", size="1m", gtod_reduce=True, disable_slat=1, random_generator="lfsr")
    assert prepare(job)["name"] == "x"
    ((_, options),) = native_jobs([job])
    assert [k for k, _ in options] == ["ioengine", "size"]


def test_acting_options_are_refused_by_name_where_not_applied() -> None:
    job = iolab.Job("x", ioengine="null", size="1m", write_bw_log="b", steadystate="iops:5%")
    # The message named `iolab run` and iolab.run() only; sweep points apply them too now (issue 22).
    with pytest.raises(JobError, match=r"steadystate, write_bw_log: applied by the run pipeline \(`iolab run`"):
        prepare(job)
    with pytest.raises(JobError, match="write_bw_log"):
        native_jobs([job])


def test_api_run_writes_the_fio_logs(tmp_path: Path) -> None:
    job = iolab.Job(
        "x",
        ioengine="null",
        size="16m",
        bs="4k",
        rw="randread",
        time_based=True,
        runtime="1s",
        write_iops_log="lg",
        log_avg_msec=250,
        gtod_reduce=True,
    )
    out = iolab.run(job, log_dir=tmp_path)
    assert out.observed["fio_logs"]["files"] == [str(tmp_path / "lg_iops.1.log")]
    rows = [[int(v) for v in line.split(", ")] for line in (tmp_path / "lg_iops.1.log").read_text().splitlines()]
    assert rows and rows[0][0] == 250  # windows of log_avg_msec
    read = out.summary["jobs"][0]["merged"]["read"]
    start, total = 0, 0.0
    for r in rows:  # IOPS over each window (the last may be short) → I/Os
        total += r[1] * (r[0] - start) / 1000
        start = r[0]
    # Each line is truncated to whole IOPS, and times to whole ms.
    assert abs(total - read["ios"]) <= len(rows) + read["iops"] * 0.001 * len(rows)


def test_api_run_refuses_a_window_that_disagrees(tmp_path: Path) -> None:
    job = iolab.Job("x", ioengine="null", size="1m", write_iops_log="lg", log_avg_msec=250)
    with pytest.raises(JobError, match="disagrees"):
        iolab.run(job, interval="1s", log_dir=tmp_path)


def test_io_submit_mode_inline_and_offload_reach_the_engine() -> None:
    job = iolab.Job("x", ioengine="null", size="1m", io_submit_mode="inline")
    assert prepare(job)["control"]["submit_mode"] == "inline"
    off = prepare(iolab.Job("x", ioengine="psync", size="1m", iodepth=4, io_submit_mode="offload"))
    assert off["control"]["submit_mode"] == "offload" and off["iodepth"] == 4
    with pytest.raises(JobError, match=r"io_submit_mode=offload with thinktime is not supported"):
        prepare(iolab.Job("x", ioengine="null", size="1m", thinktime=10, io_submit_mode="offload"))
