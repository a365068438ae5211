"""Shared fixtures: running the CLI in-process and as a real process.

- ``cli``: invoke the typer app in-process (click's CliRunner) and get a
  :class:`Ran` with stdout and stderr kept apart, so tests can check that
  nothing but the results reaches stdout.
- ``iolab_cmd``: the argv prefix to run iolab as a separate process (for
  signals, TTYs and other users).
- ``workdir``: a fresh directory that is also the current directory.
- ``example_sweeps``: each example plan swept once per session at a tiny
  scale, shared by the tests of the plans and of their reports.

The suite's children start with SIGINT's default action (see
``pytest_configure``), however the suite itself was launched.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
from typer.testing import CliRunner


def pytest_configure(config: pytest.Config) -> None:
    """Restore SIGINT's default action when the suite inherited it ignored.

    A shell without job control starts a background command (``cmd &`` in a
    script, ``nohup cmd &``, some CI runners) with SIGINT ignored, and an
    ignored signal stays ignored across exec: every iolab the tests start
    would then, as POSIX programs should, keep ignoring SIGINT, and the
    Ctrl-C tests would wait on a run that never stops. A Python handler
    (unlike SIG_IGN) is reset to the default action in an exec'd child.
    """
    del config
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@dataclass(frozen=True)
class Ran:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """Everything the user saw, for assertion messages."""
        return f"--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"


def _runner() -> CliRunner:
    try:  # click < 8.2 mixes stderr into stdout unless told not to
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


@pytest.fixture
def cli() -> Callable[..., Ran]:
    from iolab.cli.main import app

    runner = _runner()

    def invoke(*args: str) -> Ran:
        r = runner.invoke(app, list(args), catch_exceptions=False)
        return Ran(r.exit_code, r.stdout, r.stderr)

    return invoke


@pytest.fixture
def iolab_cmd() -> list[str]:
    return [sys.executable, "-m", "iolab.cli.main"]


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)


@pytest.fixture(scope="session")
def example_sweeps(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], Any]:
    """``example_sweeps(path)``: the example plan at ``path`` swept once per
    session at a tiny scale (tests/example_sweeps.py)."""
    from example_sweeps import ExampleSweeps

    return ExampleSweeps(tmp_path_factory)
