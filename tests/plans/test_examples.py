"""Every plan under examples/plans runs end to end at a tiny scale (its
[quick] table shrunk further) and leaves a complete directory and catalog."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import iolab
import pytest
from iolab.plans import expand, load_plan, resolve
from iolab.plans.progress import SweepProgress
from iolab.plans.sweep import SweepOptions, run_plan
from iolab.results.catalog import Catalog
from iolab.run.progress import Terminal

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "plans").glob("*.toml"))
TINY = {"runtime": "40ms", "size": "2m", "repeats": 1}


def test_there_are_seven_example_plans() -> None:
    assert [p.stem for p in EXAMPLES] == [
        "seed000-threads",
        "seed002-bs",
        "seed002-qd",
        "seed002-rwmix",
        "seed003-lab1",
        "seed003-lab2",
        "seed004-qd",
    ]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs_at_tiny_scale(path: Path, tmp_path: Path) -> None:
    plan = load_plan(path)
    assert dict(plan.quick).keys() >= {"runtime", "size"}, "every example says how --quick shrinks it"
    tiny = dataclasses.replace(plan, quick=tuple({**dict(plan.quick), **TINY}.items()))
    target = str(tmp_path / "target.dat")
    opts = SweepOptions(quick=True, target=target, progress=SweepProgress(Terminal(io.StringIO(), is_tty=False)))
    out = run_plan(tiny, path.read_text(), tmp_path / "res", opts)
    points = len(expand(resolve(plan)))
    assert out.points == points and out.runs_done_now == points
    assert (out.directory / "host.json").is_file() and (out.directory / "plan.toml").read_text() == path.read_text()
    entry = Catalog(tmp_path / "res").find(plan.name)
    assert entry is not None and entry["status"] == "complete" and entry["runs"] == points
    frame = iolab.load(out.directory)
    assert len(frame) >= points and set(frame["point"]) == set(range(1, points + 1))
