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

from pathlib import Path

import pytest
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
