"""``./dev.sh iolab ...`` behaves as ``.venv/bin/iolab`` in the caller's directory.

Issue 21 (item 7): dev.sh used to change to the checkout first, so a
relative path given from another directory was not found and results
landed in the checkout (and in ``git status``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEV_SH = ROOT / "dev.sh"


def _checkout_status() -> str:
    """The checkout's ``git status`` (untracked files included), or "" outside git."""
    r = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=False,
    )
    return r.stdout if r.returncode == 0 else ""


def _need_venv() -> None:
    if (ROOT / ".venv" / "bin" / "iolab").exists():
        return
    msg = f"{ROOT / '.venv'} has no iolab: run ./dev.sh setup"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg + " (CI=true: the suite runs through ./dev.sh test, which builds it)")
    pytest.skip(msg)


def _dev_sh_iolab(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DEV_SH), "iolab", *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_dev_sh_iolab_runs_in_the_callers_directory(tmp_path: Path) -> None:
    _need_venv()
    before = _checkout_status()
    sub = tmp_path / "study"
    sub.mkdir()
    job = [
        "--name=d",
        "--ioengine=null",
        "--rw=randread",
        "--bs=4k",
        "--size=1m",
        "--number_ios=64",
    ]
    ran = _dev_sh_iolab(sub, "run", *job, "--output", "r.json", "--output-format", "json")
    assert ran.returncode == 0, ran.stderr
    assert (sub / "r.json").is_file(), ran.stderr
    # A relative path given from the caller's directory resolves there.
    rep = _dev_sh_iolab(sub, "report", "r.json")
    assert rep.returncode == 0, rep.stderr
    assert _checkout_status() == before, "dev.sh iolab wrote into the checkout"
