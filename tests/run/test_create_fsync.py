"""``create_fsync`` (fio's default 1): a laid-out file's data is flushed
before its cached pages are dropped, so the run starts with none of it in
the page cache; with 0 the pages stay dirty, and cached (the drop cannot
take dirty pages). Truth: the kernel's page-cache residency of the file
after the run (mincore(2)), on a job that touches one block of it and
keeps its cache (``invalidate=0``)."""

from __future__ import annotations

import ctypes
import mmap
import os
from pathlib import Path

import pytest
from iolab.jobs import JobSpec
from iolab.run.local import run_jobs

SIZE = 8 << 20
PAGE = mmap.PAGESIZE


def _resident_bytes(path: Path) -> int:
    """Bytes of the file's first SIZE in the page cache (mincore(2) on a
    shared read-only mapping: mapping it reads nothing in)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, SIZE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap")
        try:
            vec = (ctypes.c_ubyte * (SIZE // PAGE))()
            if libc.mincore(addr, SIZE, vec) != 0:
                raise OSError(ctypes.get_errno(), "mincore")
        finally:
            libc.munmap(addr, SIZE)
    finally:
        os.close(fd)
    return sum(v & 1 for v in vec) * PAGE


@pytest.mark.parametrize("create_fsync", ["1", "0"])
def test_create_fsync_flushes_the_layout_before_dropping_it(tmp_path: Path, create_fsync: str) -> None:
    path = tmp_path / "data"
    options = (("filename", str(path)), ("rw", "write"), ("bs", "4k"), ("size", "8m"), ("ioengine", "psync"))
    options += (("number_ios", "1"), ("invalidate", "0"), ("create_fsync", create_fsync))
    out = run_jobs([JobSpec("c", options)])
    assert out.result_json, "the run gave no result"
    resident = _resident_bytes(path)
    if create_fsync == "1":
        if resident == SIZE:
            pytest.skip(f"{tmp_path} keeps every page cached (tmpfs?): nothing to tell apart")
        assert resident <= SIZE // 4, f"{resident} bytes of {SIZE} cached after a flushed layout"
    else:
        assert resident >= SIZE // 2, f"{resident} bytes of {SIZE} cached after an unflushed layout"
    os.unlink(path)
