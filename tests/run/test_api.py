"""The Python API (`iolab.Job`, `iolab.prepare`, `iolab.run`) and its
agreement with the command line and job files."""

from __future__ import annotations

import time

import iolab
import pytest
from iolab.jobs import parse_fio_args, parse_job_file
from iolab.run.api import parse_interval_ns
from iolab.run.api import run as api_run


def test_job_keywords_become_fio_options():
    job = iolab.Job("x", rw="randread", bs="4k", iodepth=32, time_based=True, direct=False)
    assert job.name == "x"
    assert list(job.options) == [
        ("rw", "randread"),
        ("bs", "4k"),
        ("iodepth", "32"),
        ("time_based", None),
        ("direct", "0"),
    ]


def test_job_rejects_other_value_types():
    with pytest.raises(TypeError, match="iodepth"):
        iolab.Job("x", iodepth=[1, 2])  # type: ignore[arg-type]


def test_prepare_resolves_units():
    p = iolab.prepare(iolab.Job("x", ioengine="io_uring", rw="randread", bs="4k", size="1g", runtime="1m", iodepth=8))
    assert p["size"] == 2**30
    assert p["runtime_ns"] == 60 * 10**9
    assert p["iodepth"] == 8
    assert p["rw"] == {"pattern": "random", "read_pct": 100}


def test_prepare_errors_name_the_option():
    with pytest.raises(iolab.JobError, match="rwmixread") as e:
        iolab.prepare(iolab.Job("x", rw="randrw", rwmixread=101))
    assert isinstance(e.value, ValueError) and isinstance(e.value, iolab.IolabError)


def test_three_sources_prepare_to_the_same_job():
    """CLI options, a job file and the Python API: one PreparedJob."""
    from_api = iolab.Job(
        "test", filename="testfile", size="10G", rw="randrw", rwmixread=50, bs="4k",
        iodepth=16, time_based=True, runtime=60,
    )  # fmt: skip
    (from_cli,) = parse_fio_args(
        [
            "--filename=testfile", "--size=10G", "--rw=randrw", "--rwmixread=50", "--bs=4k",
            "--iodepth=16", "--time_based", "--runtime=60", "--name=test",
        ]
    )  # fmt: skip
    text = (
        "[global]\nfilename=testfile\nsize=10G\nrw=randrw\nrwmixread=50\nbs=4k\n"
        "iodepth=16\ntime_based\nruntime=60\n\n[test]\n"
    )
    (from_file,) = parse_job_file(text, source="seed002.fio")
    prepared = [iolab.prepare(j) for j in (from_api, from_cli, from_file)]
    # The record of what was written ("spec") may order options differently;
    # everything resolved must be identical.
    for p in prepared:
        p.pop("spec")
    assert prepared[0] == prepared[1] == prepared[2]


def test_run_null_engine():
    job = iolab.Job("n", ioengine="null", rw="randrw", bs="4k", size="1m", time_based=True, runtime="1s")
    t0 = time.monotonic_ns()
    out = iolab.run(job, interval="250ms")
    wall_ns = time.monotonic_ns() - t0
    assert not out.interrupted
    merged = out.summary["jobs"][0]["merged"]
    assert merged["read"]["ios"] > 0 and merged["write"]["ios"] > 0
    assert out.result["interval_ns"] == 250_000_000
    # How far past 1 s the worker saw its end depends on the scheduler (a
    # loaded 2-core machine deschedules it for 100 ms and more): the bound
    # above is the wall clock of the whole call.
    assert 0.9e9 < merged["runtime_ns"] < wall_ns


def test_run_missing_directory_is_an_os_or_engine_error(tmp_path):
    job = iolab.Job("x", filename=str(tmp_path / "no" / "f"), size="1m", rw="read", runtime="1s")
    with pytest.raises((OSError, iolab.EngineError), match="no"):
        iolab.run(job)


@pytest.mark.parametrize(
    ("text", "ns"),
    [("1s", 10**9), ("500ms", 5 * 10**8), ("2", 2 * 10**9), ("1.5s", 15 * 10**8), ("250us", 250_000)],
)
def test_parse_interval(text, ns):
    assert parse_interval_ns(text) == ns


@pytest.mark.parametrize("text", ["", "soon", "0s", "-1s", "1 parsec"])
def test_parse_interval_rejects(text):
    with pytest.raises(ValueError, match="interval"):
        parse_interval_ns(text)


def test_iolab_run_is_the_package_and_callable(tmp_path):
    """Issue 22: ``import iolab.run as r`` gave the function ``iolab.run``
    (which shadowed the package); it is the package now, and calling it runs."""
    import types

    import iolab.run as r
    from iolab.run import api, pipeline

    assert isinstance(r, types.ModuleType) and r is iolab.run
    assert r.api is api and r.pipeline is pipeline
    out = r(iolab.Job("x", ioengine="null", size="1m", rw="read"), log_dir=tmp_path)
    assert out.summary["jobs"][0]["merged"]["read"]["bytes"] == 2**20


def test_run_api_without_a_log_writer_refuses_logs_by_name():
    job = iolab.Job("x", ioengine="null", size="1m", write_bw_log="b", write_lat_log="l")
    with pytest.raises(iolab.JobError, match=r"^write_bw_log, write_lat_log: iolab.run.api.run without write_logs"):
        api_run(job)
