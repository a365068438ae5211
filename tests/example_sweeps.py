"""Each example plan (examples/plans/*.toml) swept once per test session at
a tiny scale, shared by the tests that need a finished example sweep.

tests/plans/test_examples.py checks each sweep's directory and catalog,
tests/report/test_example_reports.py renders its report in Chromium: both
read the same sweep, so each plan runs once, not once per test. The tiny
scale is the plan's ``[quick]`` table with runtime, size and repeats shrunk
further: every point of the plan still runs (the same jobs, engines and
precondition), each for 40 ms — what the assertions need is that every
point ran and left a result, not how long it measured.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest
from iolab.plans import load_plan
from iolab.plans.progress import SweepProgress
from iolab.plans.sweep import SweepOptions, SweepOutcome, run_plan
from iolab.run.progress import Terminal

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples" / "plans").glob("*.toml"))
TINY = {"runtime": "40ms", "size": "2m", "repeats": 1}


@dataclasses.dataclass(frozen=True)
class ExampleSweep:
    """A finished tiny-scale sweep of one example plan, under ``root``."""

    path: Path
    root: Path
    outcome: SweepOutcome


class ExampleSweeps:
    """Runs each example plan at most once (on first use) and keeps the result."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._factory = factory
        self._done: dict[Path, ExampleSweep] = {}

    def __call__(self, path: Path) -> ExampleSweep:
        if path not in self._done:
            plan = load_plan(path)
            tiny = dataclasses.replace(plan, quick=tuple({**dict(plan.quick), **TINY}.items()))
            root = self._factory.mktemp(path.stem)
            progress = SweepProgress(Terminal(io.StringIO(), is_tty=False))
            opts = SweepOptions(quick=True, target=str(root / "target.dat"), progress=progress)
            outcome = run_plan(tiny, path.read_text(), root / "res", opts)
            self._done[path] = ExampleSweep(path, root, outcome)
        return self._done[path]
