"""Where `iolab quick` runs, which jobs it runs there, and the table it prints."""

from __future__ import annotations

import os
from pathlib import Path

from iolab.run.quick import (
    QUICK_JOBS,
    TEST_FILE_NAME,
    default_results_path,
    default_size,
    direct_io_supported,
    plan_target,
    quick_jobs,
)


def test_no_path_is_a_new_temporary_directory():
    t = plan_target(None, allow_overwrite=False)
    try:
        assert t.cleanup is not None and t.cleanup.is_dir()
        assert t.filename == t.cleanup / TEST_FILE_NAME
        assert t.include_writes
        assert str(t.cleanup) in t.notes[0]
    finally:
        os.rmdir(t.cleanup)


def test_directory_gets_a_new_file_removed_afterwards(tmp_path):
    t = plan_target(tmp_path, allow_overwrite=False)
    assert t.filename == tmp_path / TEST_FILE_NAME
    assert t.cleanup == t.filename
    assert t.include_writes


def test_existing_file_reads_only_unless_allowed(tmp_path):
    f = tmp_path / "data"
    f.write_bytes(b"\0" * 4096)
    ro = plan_target(f, allow_overwrite=False)
    assert ro.cleanup is None and not ro.include_writes
    assert any("--allow-overwrite" in n for n in ro.notes)
    rw = plan_target(f, allow_overwrite=True)
    assert rw.cleanup is None and rw.include_writes


def test_an_existing_target_smaller_than_the_default_size_is_used_whole(tmp_path):
    # Session 12: `iolab quick existing.dat` on a 16 MiB file stopped at its first job ("smaller
    # than offset+size = 1073741824 bytes ... pass --allow-overwrite to let iolab extend it").
    f = tmp_path / "data"
    f.write_bytes(b"\1" * (16 * 2**20 + 123))
    assert default_size(plan_target(f, allow_overwrite=False)) == str(16 * 2**20)  # whole MiB
    big = tmp_path / "big"
    with open(big, "wb") as fh:
        fh.truncate(3 * 2**30)  # sparse
    assert default_size(plan_target(big, allow_overwrite=False)) == str(2**30)
    assert default_size(plan_target(tmp_path, allow_overwrite=False)) == str(2**30)  # quick's own file


def test_jobs_in_order_all_stonewalled(tmp_path):
    t = plan_target(tmp_path, allow_overwrite=False)
    jobs = quick_jobs(t, size="16m", runtime="2s")
    assert [j.name for j in jobs] == [q[0] for q in QUICK_JOBS]
    for j in jobs:
        opts = dict(j.options)
        assert opts["filename"] == str(t.filename)
        assert opts["ioengine"] == ("psync" if opts["iodepth"] == "1" else "io_uring")
        assert opts["runtime"] == "2s" and "time_based" in opts and "stonewall" in opts
    mix = dict(jobs[-1].options)
    assert (mix["rw"], mix["rwmixread"], mix["iodepth"], mix["bs"]) == ("randrw", "70", "16", "4k")


def test_read_only_target_drops_every_job_that_writes(tmp_path):
    f = tmp_path / "data"
    f.write_bytes(b"\0" * 4096)
    jobs = quick_jobs(plan_target(f, allow_overwrite=False), size="16m", runtime="1s")
    assert {dict(j.options)["rw"] for j in jobs} == {"read", "randread"}


def test_direct_io_probe_cleans_up(tmp_path):
    assert isinstance(direct_io_supported(tmp_path), bool)
    assert list(tmp_path.iterdir()) == []


def test_default_results_path():
    from datetime import datetime

    assert default_results_path(datetime(2026, 1, 2, 3, 4, 5)) == Path("iolab-quick-20260102-030405.json")
