"""Purge of a real block device: a loop device over a file (root only)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from iolab.errors import RefusedError
from iolab.pts import purge as purging


@contextmanager
def loop_device(backing: Path) -> Iterator[str]:
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        pytest.skip("needs root and losetup")
    made = subprocess.run(["losetup", "--find", "--show", str(backing)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"no loop device: {made.stderr.strip()}")
    dev = made.stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=True)


def test_blkdiscard_purges_a_loop_device(tmp_path: Path) -> None:
    backing = tmp_path / "disk.img"
    backing.write_bytes(b"\xa5" * (8 << 20))
    with loop_device(backing) as dev:
        assert purging.in_use(dev) is None
        with pytest.raises(RefusedError, match="confirm with --purge-device"):
            purging.check_device_purge(dev, None, True)
        purging.check_device_purge(dev, dev, True)
        assert purging.device_size(dev) == 8 << 20
        assert purging.purge_device(dev) == purging.Purged("BLKDISCARD", 8 << 20)
        with open(dev, "rb") as f:
            assert f.read(1 << 20) == bytes(1 << 20)
    assert backing.read_bytes() == bytes(8 << 20)  # the loop driver punched the file's blocks out
