"""Ctrl-C during a run: the workers stop, what was measured is reported,
and the exit status (130) says the run was cut short."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.waits import busy_workers, wait_until


def test_children_start_with_sigint_at_its_default_action():
    """The Ctrl-C tests' precondition, whatever launched the suite: a suite
    started with SIGINT ignored (``nohup ./dev.sh test &``) passes its
    children the default action (tests/conftest.py ``pytest_configure``)."""
    probe = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "True", ran.stderr


def test_ctrl_c_keeps_partial_results(iolab_cmd, tmp_path):
    args = [
        *iolab_cmd, "run", "--name=long", "--ioengine=null", "--rw=randread", "--bs=4k",
        "--size=1m", "--time_based", "--runtime=60", "--output-format=json",
    ]  # fmt: skip
    p = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Measuring: a worker thread has run on a CPU (the null engine never waits).
    wait_until(lambda: busy_workers(p.pid) or p.poll() is not None, 60, "the run to measure")
    began = time.monotonic()
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=30)
    out = f"stdout:\n{stdout}\nstderr:\n{stderr}"
    assert time.monotonic() - began < 10, out
    assert p.returncode == 130, out
    assert "interrupted" in stderr, out
    assert "Traceback" not in stderr, out
    job = json.loads(stdout)["summary"]["jobs"][0]
    runtime_s = job["merged"]["runtime_ns"] / 1e9
    assert 0 < runtime_s < 10, out
    assert job["merged"]["read"]["ios"] > 0, out


def test_ctrl_c_during_layout_returns_at_once(iolab_cmd, tmp_path):
    """Laying out a large file cannot be cut into steps; Ctrl-C still ends
    iolab at once (the layout thread is abandoned)."""
    args = [*iolab_cmd, "run", "--name=big", "--rw=read", "--size=3g", "--filename=big", "--runtime=1"]
    p = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Laying out: the file exists (the layout writes it before any worker starts).
    wait_until(lambda: (tmp_path / "big").exists() or p.poll() is not None, 60, "the layout to begin")
    began = time.monotonic()
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    out = f"stdout:\n{stdout}\nstderr:\n{stderr}"
    if "created" in stderr:
        pytest.skip("this machine laid out 3 GiB before the signal arrived: the signal came after the layout")
    assert time.monotonic() - began < 2, out
    assert p.returncode == 130, out
    assert stderr.strip() == "iolab: interrupted", out
