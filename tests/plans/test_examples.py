"""Every plan under examples/plans runs end to end at a tiny scale (its
[quick] table shrunk further: tests/example_sweeps.py, one sweep per plan
and session, which tests/report/test_example_reports.py renders) and leaves
a complete directory and catalog."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import iolab
import pytest
from example_sweeps import EXAMPLES, ExampleSweep
from iolab.plans import expand, load_plan, resolve
from iolab.results.catalog import Catalog


def test_there_are_nine_example_plans() -> None:
    assert [p.stem for p in EXAMPLES] == [
        "seed000-table1",
        "seed000-table4",
        "seed000-threads",
        "seed002-bs",
        "seed002-qd",
        "seed002-rwmix",
        "seed003-lab1",
        "seed003-lab2",
        "seed004-qd",
    ]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs_at_tiny_scale(path: Path, example_sweeps: Callable[[Path], ExampleSweep]) -> None:
    plan = load_plan(path)
    assert dict(plan.quick).keys() >= {"runtime", "size"}, "every example says how --quick shrinks it"
    swept = example_sweeps(path)
    out = swept.outcome
    points = len(expand(resolve(plan)))
    assert out.points == points and out.runs_done_now == points
    assert (out.directory / "host.json").is_file() and (out.directory / "plan.toml").read_text() == path.read_text()
    entry = Catalog(swept.root / "res").find(plan.name)
    assert entry is not None and entry["status"] == "complete" and entry["runs"] == points
    frame = iolab.load(out.directory)
    assert len(frame) >= points and set(frame["point"]) == set(range(1, points + 1))
