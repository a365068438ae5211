"""The native module matches its typed stub (python/iolab/_native.pyi)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_stubtest():
    pytest.importorskip("mypy")
    r = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "iolab._native"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_errors_are_iolab_errors():
    from iolab import _native, errors

    with pytest.raises(errors.JobError) as e:
        _native.prepare_job("x", [("no_such_option", "1")])
    assert isinstance(e.value, ValueError)
    assert "no_such_option" in str(e.value)
