"""fio options handled around the engine (iolab.jobs.extras/effects/percent)
and their effects, one test each: what iolab does, or the note that says why
it already behaves as asked."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest
from iolab.jobs import JobSpec, ParseError
from iolab.jobs.effects import plan_extras
from iolab.jobs.extras import EXTRA_OPTIONS, split_extras
from iolab.jobs.percent import resolve_percentages

NULL = ["--name=a", "--ioengine=null", "--size=4m", "--bs=4k", "--rw=randread"]


def _fio_run(cli: Callable[..., Any], *args: str) -> tuple[dict[str, Any], str]:
    r = cli("run", *args, "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    return dict(json.loads(r.stdout)), r.stderr


def test_split_takes_extras_out_and_types_them() -> None:
    spec = JobSpec(
        "j", (("bs", "4k"), ("gtod_reduce", "1"), ("write_bw_log", None), ("ss_dur", "30s"), ("ss", "iops:5%"))
    )
    native, e = split_extras(spec)
    assert native.options == (("bs", "4k"),)
    assert e.values == {
        "gtod_reduce": True,
        "write_bw_log": "j",
        "steadystate_duration": 30 * 10**9,
        "steadystate": "iops:5%",
    }


def test_every_extra_is_in_the_docs_table() -> None:
    from iolab.jobs.extras import extras_markdown

    table = extras_markdown()
    assert all(f"`{d.name}`" in table for d in EXTRA_OPTIONS)


@pytest.mark.parametrize(
    ("option", "note"),
    [
        ("--gtod_reduce=1", "gtod_reduce=1: iolab measures slat, clat and lat of every I/O anyway"),
        ("--disable_clat=1", "disable_clat=1: iolab measures"),
        ("--disable_lat=1", "disable_lat=1: iolab measures"),
        ("--disable_slat=1", "disable_slat=1: iolab measures"),
        ("--disable_bw_measurement=1", "disable_bw_measurement=1: iolab measures bandwidth and IOPS"),
        ("--random_generator=lfsr", "random_generator=lfsr: iolab draws offsets with its own generator"),
        ("--clocksource=cpu", "clocksource=cpu: iolab times I/O with clock_gettime(CLOCK_MONOTONIC)"),
        ("--iodepth_low=4", "iodepth_low=4: iolab refills the queue as soon as an I/O completes"),
        ("--verify_async=2", "verify_async=2: iolab verifies each block inline as its read completes"),
    ],
)
def test_options_iolab_already_honours_say_so_and_latencies_stay_measured(
    cli: Callable[..., Any], option: str, note: str
) -> None:
    doc, stderr = _fio_run(cli, *NULL, option)
    assert f"note: {note}" in stderr
    read = doc["jobs"][0]["read"]
    # Still measured: every I/O has its slat, clat and lat.
    assert read["total_ios"] == 1024
    assert read["slat_ns"]["N"] == read["clat_ns"]["N"] == read["lat_ns"]["N"] == 1024


def test_thread_and_percentile_switches_are_silent(cli: Callable[..., Any]) -> None:
    doc, stderr = _fio_run(cli, *NULL, "--thread", "--lat_percentiles=1", "--clat_percentiles=0")
    assert "note:" not in stderr
    assert "percentile" in doc["jobs"][0]["read"]["lat_ns"]


def test_notes_are_shown_once_per_run(cli: Callable[..., Any]) -> None:
    _doc, stderr = _fio_run(cli, "--gtod_reduce=1", "--ioengine=null", "--size=1m", "--name=a", "--name=b")
    assert stderr.count("gtod_reduce=1") == 1


def test_allow_file_create_0_refuses_a_missing_file_before_any_io(cli: Callable[..., Any], workdir: Path) -> None:
    r = cli("run", "--name=a", "--filename=missing.dat", "--size=1m", "--rw=write", "--allow_file_create=0")
    assert r.exit_code == 2 and "allow_file_create=0 and missing.dat does not exist" in r.stderr, r.output
    assert not (workdir / "missing.dat").exists()
    (workdir / "there.dat").write_bytes(b"\0" * 65536)
    doc, _ = _fio_run(cli, "--name=a", "--filename=there.dat", "--rw=read", "--allow_file_create=0")
    assert doc["jobs"][0]["read"]["io_bytes"] == 65536


def test_wait_for_starts_a_new_group_after_the_named_job(cli: Callable[..., Any]) -> None:
    doc, _ = _fio_run(cli, *NULL, "--name=b", "--wait_for=a", "--ioengine=null", "--size=4m")
    assert [(j["jobname"], j["groupid"]) for j in doc["jobs"]] == [("a", 0), ("b", 1)]
    r = cli("run", *NULL, "--wait_for=nobody")
    assert r.exit_code == 2 and "wait_for=nobody: no earlier job has that name" in r.stderr, r.output


def test_new_group_unit_base_and_bad_values(cli: Callable[..., Any]) -> None:
    doc, err = _fio_run(cli, *NULL, "--new_group", "--unit_base=1")
    assert doc["jobs"][0]["read"]["total_ios"] == 1024
    assert "unit_base=1: fio would print rates in bits; iolab prints them in bytes per second" in err
    doc, err = _fio_run(cli, *NULL, "--unit_base=8")  # fio's byte-based reporting, iolab's own
    assert doc["jobs"][0]["read"]["bw_bytes"] > 0 and "unit_base" not in err
    r = cli("run", *NULL, "--unit_base=2")
    assert r.exit_code == 2 and "unit_base=2: expected one of 0, 8, 1" in r.stderr, r.output
    doc, _ = _fio_run(cli, *NULL, "--mem=malloc")
    assert doc["jobs"][0]["read"]["total_ios"] == 1024
    r = cli("run", *NULL, "--iomem=mmaphuge")
    assert r.exit_code == 2 and "iomem=mmaphuge: expected one of malloc" in r.stderr, r.output
    r = cli("run", *NULL, "--gtod_reduce=maybe")
    assert r.exit_code == 2 and "gtod_reduce=maybe: expected 0 or 1" in r.stderr, r.output


def test_size_and_offset_percentages_of_an_existing_file(tmp_path: Path) -> None:
    f = tmp_path / "f.dat"
    f.write_bytes(b"\0" * (1 << 20))
    spec = JobSpec("p", (("filename", str(f)), ("size", "50%"), ("offset", "30%")))
    resolved = dict(resolve_percentages(spec).options)
    assert resolved["size"] == str(1 << 19)
    assert resolved["offset"] == str(int((1 << 20) * 0.3) // 4096 * 4096)  # aligned down to 4 KiB


def test_percentage_run_moves_that_share(cli: Callable[..., Any], workdir: Path) -> None:
    (workdir / "f.dat").write_bytes(b"\0" * (1 << 20))
    doc, _ = _fio_run(cli, "--name=p", "--filename=f.dat", "--rw=read", "--size=25%", "--offset=50%")
    assert doc["jobs"][0]["read"]["io_bytes"] == 1 << 18


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ((("size", "50%"),), "a percentage needs filename="),
        ((("filename", "/nonexistent/x"), ("size", "50%")), "cannot size /nonexistent/x"),
        ((("filename", "/dev/null"), ("size", "150%")), "a percentage from 0 (excluded) to 100"),
    ],
)
def test_percentage_errors_name_the_problem(options: tuple[tuple[str, str], ...], message: str) -> None:
    with pytest.raises(ParseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        resolve_percentages(JobSpec("p", options))


def test_block_device_size_is_its_capacity(tmp_path: Path) -> None:
    # /dev/zero has no end; a regular file stands in, and lseek(SEEK_END) is what sizes both.
    f = tmp_path / "dev.img"
    with open(f, "wb") as fh:
        fh.truncate(8 << 20)
    assert dict(resolve_percentages(JobSpec("p", (("filename", str(f)), ("size", "100%")))).options)["size"] == str(
        8 << 20
    )
    assert os.path.getsize(f) == 8 << 20


def test_plan_sets_the_interval_from_the_log_window() -> None:
    plan = plan_extras([JobSpec("a", (("write_bw_log", "x"), ("log_avg_msec", "250")))])
    assert plan.interval_ns == 250_000_000 and plan.jobs[0].options == ()
    plan = plan_extras([JobSpec("a", (("write_iops_log", "x"),))], check_files=False)
    assert plan.interval_ns is None  # log_avg_msec=0: one line per I/O, recorded by the engine
    assert plan.jobs[0].options[0][0] == "per_io_log"


def test_extra_options_take_a_separate_value_like_engine_options(cli: Callable[..., Any], workdir: Path) -> None:
    r = cli("run", *NULL, "--write_iops_log", "sep", "--log_avg_msec", "200", "--thread", "--output-format=terse")
    assert r.exit_code == 0, r.output
    assert (workdir / "sep_iops.1.log").exists()


def test_fadvise_hint_is_an_engine_option_with_fios_values(cli: Callable[..., Any]) -> None:
    for value in ("0", "1", "random", "sequential", "noreuse"):
        r = cli("run", "--dry-run", *NULL, f"--fadvise_hint={value}")
        assert r.exit_code == 0 and "fadvise_hint" not in r.stderr, r.output  # taken, no note
    r = cli("run", "--dry-run", *NULL, "--fadvise_hint=later")
    assert r.exit_code == 2 and "expected 0, 1 (by the job's pattern), random, sequential or noreuse" in r.output


@pytest.mark.parametrize(
    ("asked", "note", "fios_default"),
    [
        ("--overwrite=0", "note: overwrite=0: iolab lays out the files before the run", "--overwrite=1"),
        (
            "--create_on_open=1",
            "note: create_on_open=1: iolab creates and lays out the files before the run",
            "--create_on_open=0",
        ),
    ],
)
def test_a_write_job_is_told_its_files_are_laid_out_first(
    cli: Callable[..., Any], tmp_path: Path, asked: str, note: str, fios_default: str
) -> None:
    job = ["--name=w", f"--directory={tmp_path}", "--size=1m", "--bs=4k", "--rw=write"]
    doc, stderr = _fio_run(cli, *job, asked)
    assert note in stderr
    assert doc["jobs"][0]["write"]["io_bytes"] == 1 << 20
    # The file was laid out whole before the writes (what overwrite=1 asks).
    assert (tmp_path / "w.0.0").stat().st_size == 1 << 20
    _, stderr = _fio_run(cli, *job, fios_default, "--allow-overwrite")
    assert note.split(":")[1] not in stderr
    # A read job has nothing to overwrite: no note.
    _, stderr = _fio_run(cli, *NULL, "--overwrite=0")
    assert "overwrite=" not in stderr


def test_disk_util_and_significant_figures_are_noted_and_change_nothing(cli: Callable[..., Any]) -> None:
    plain = cli("run", *NULL, "--output-format=terse")
    assert plain.exit_code == 0, plain.output
    r = cli("run", *NULL, "--disk_util=1", "--significant_figures=6", "--output-format=terse")
    assert r.exit_code == 0, r.output
    assert "note: disk_util=1: iolab's outputs have no disk utilisation section" in r.stderr
    assert "note: significant_figures=6: no effect" in r.stderr
    # Same job, same terse fields up to the timed ones (the read KiB is fixed by size).
    assert plain.stdout.split(";")[:6] == r.stdout.split(";")[:6]
    doc, err = _fio_run(cli, *NULL, "--disk_util=0")
    assert doc["disk_util"] == [] and "disk_util" not in err
    r = cli("run", *NULL, "--significant_figures=11")
    assert r.exit_code == 2 and "significant_figures=11: expected one of 1, 2" in r.stderr, r.output


def test_openfiles_at_least_the_files_runs_and_fewer_is_refused(cli: Callable[..., Any], tmp_path: Path) -> None:
    job = ["--name=o", f"--directory={tmp_path}", "--size=64k", "--bs=4k", "--rw=write", "--nrfiles=4"]
    doc, _ = _fio_run(cli, *job, "--openfiles=4")
    assert doc["jobs"][0]["write"]["io_bytes"] == 64 * 1024
    assert len(list(tmp_path.glob("o.0.*"))) == 4
    r = cli("run", *job, "--openfiles=2", "--parse-only")
    assert r.exit_code == 2 and "openfiles=2: each worker has 4 file(s)" in r.stderr, r.output
    r = cli("run", "--name=f", f"--filename={tmp_path}/a:{tmp_path}/b", "--size=8k", "--openfiles=1", "--parse-only")
    assert r.exit_code == 2 and "openfiles=1: each worker has 2 file(s)" in r.stderr, r.output
    # nrfiles=1 beside two names uses the first (fio's rule): one file, openfiles=1 is enough.
    two = f"--filename={tmp_path}/a:{tmp_path}/b"
    r = cli("run", "--name=f", two, "--nrfiles=1", "--size=8k", "--openfiles=1", "--parse-only")
    assert r.exit_code == 0, r.output


def test_extras_read_booleans_numbers_and_times_as_the_engine_does(cli: Callable[..., Any]) -> None:
    # One grammar (issue 22): an option of the Python-side table accepts and
    # refuses exactly what an engine option of the same type does.
    for value in ("1", "0", "true", "FALSE", "yes", "on", "2", ""):
        engine = cli("run", "--dry-run", *NULL, f"--direct={value}")
        extra = cli("run", "--dry-run", *NULL, f"--gtod_reduce={value}")
        assert (engine.exit_code == 0) == (extra.exit_code == 0), (value, engine.output, extra.output)
    for value in ("30", "250ms", "2m", "1h"):  # fio's times; a bare number is seconds
        assert cli("run", "--dry-run", *NULL, f"--ss_dur={value}", "--ss=iops:10%").exit_code == 0
    r = cli("run", "--dry-run", *NULL, "--ss_dur=1.5s", "--ss=iops:10%")
    assert r.exit_code == 2 and "ss_dur=1.5s" in r.stderr, r.output
    assert cli("run", "--dry-run", *NULL, "--log_avg_msec=0x10").exit_code == 0  # hex, as fio's check_int
