"""Buffered reads measure the device each pass, as fio's do.

fio drops a file's cached pages when a job opens it and again whenever a
pass over it begins (``invalidate=1``, its default; a time_based run
wrapping around, each of ``loops``), and advises the kernel of the job's
pattern (``fadvise_hint=1``: ``POSIX_FADV_RANDOM`` for a random job, no
read-ahead). iolab dropped them at open only: a buffered time_based random
read of a 64 MiB file gave 757k IOPS (the page cache after the first pass)
where fio gave 18k (the disk). Truth here: the bytes this process read from
the storage layer (``/proc/self/io`` ``read_bytes``), counted by the kernel.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from iolab.errors import JobError
from iolab.jobs import JobSpec
from iolab.run.local import run_jobs

SIZE = 4 << 20


def _device_read_bytes() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("read_bytes:"):
            return int(line.split()[1])
    raise AssertionError("/proc/self/io has no read_bytes")


def _read_from_device(path: Path, *extra: tuple[str, str]) -> int:
    options = (("filename", str(path)), ("rw", "randread"), ("bs", "4k"), ("size", "4m"), ("ioengine", "psync"))
    before = _device_read_bytes()
    out = run_jobs([JobSpec("p", (*options, *extra))])
    assert out.result_json, "the run gave no result"
    return _device_read_bytes() - before


def test_each_pass_of_a_buffered_read_comes_from_the_device(tmp_path: Path) -> None:
    path = tmp_path / "data"
    first = _read_from_device(path)  # lays the file out, drops it, reads it once
    if first == 0:
        pytest.skip(f"{tmp_path} is not on a block device (tmpfs?): no storage reads to count")
    # Three passes, each from the device: 3 x 4 MiB (a pass reads every block once).
    # Dropped at open only, the second and third came from the page cache: 4 MiB.
    three = _read_from_device(path, ("loops", "3"))
    assert three >= 2.5 * SIZE, f"{three} bytes from the device for three passes of {SIZE}"
    # invalidate=0 keeps what the last run cached: nothing, or next to nothing, from the device.
    kept = _read_from_device(path, ("loops", "3"), ("invalidate", "0"))
    assert kept <= 0.5 * SIZE, f"{kept} bytes from the device with invalidate=0"


def _drop(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def test_pre_read_caches_the_region_before_the_run(tmp_path: Path) -> None:
    """pre_read=1 (fio's): the worker reads its region into the page cache
    before the run, and invalidate is off, so the passes read the cache."""
    path = tmp_path / "data"
    if _read_from_device(path) == 0:  # lays the file out
        pytest.skip(f"{tmp_path} is not on a block device (tmpfs?): no storage reads to count")
    _drop(path)
    # One 4 KiB I/O, but the whole 4 MiB read from the device first.
    one = _read_from_device(path, ("number_ios", "1"), ("pre_read", "1"))
    assert one >= 0.9 * SIZE, f"{one} bytes from the device for a pre-read of {SIZE}"
    _drop(path)
    alone = _read_from_device(path, ("number_ios", "1"))
    assert alone <= 0.25 * SIZE, f"{alone} bytes from the device for one 4 KiB read"
    # Three passes after the pre-read: from the cache (invalidate is off), not 3 x 4 MiB.
    _drop(path)
    three = _read_from_device(path, ("loops", "3"), ("pre_read", "1"))
    assert 0.9 * SIZE <= three <= 1.5 * SIZE, f"{three} bytes from the device: pre-read, then three cached passes"


def test_pre_read_is_refused_with_direct(tmp_path: Path) -> None:
    spec = JobSpec("p", (("filename", str(tmp_path / "d")), ("size", "1m"), ("pre_read", "1"), ("direct", "1")))
    with pytest.raises(JobError, match="pre_read=1 reads the files into the page cache, which direct=1 bypasses"):
        run_jobs([spec])
