"""Every example plan (examples/plans/*.toml) runs end to end at its quick
scale (`iolab sweep PLAN --quick`, as a user would: about 2.5 minutes for
all six on a 2-core VM, docs/plans.md), and `iolab report --format html`
of the sweep renders in headless Chromium.
(tests/plans/test_examples.py checks the plans' structure at a tinier scale.)"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from chromium_check import check_rendered
from iolab.plans import load_plan
from iolab.plans.progress import SweepProgress
from iolab.plans.sweep import SweepOptions, run_plan
from iolab.run.progress import Terminal

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "plans").glob("*.toml"))


def test_there_are_example_plans() -> None:
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_report_renders(path: Path, tmp_path: Path, cli) -> None:
    plan = load_plan(path)
    opts = SweepOptions(
        quick=True,
        target=str(tmp_path / "target.dat"),
        progress=SweepProgress(Terminal(io.StringIO(), is_tty=False)),
    )
    out = run_plan(plan, path.read_text(), tmp_path / "res", opts)
    r = cli("report", str(out.directory), "--format", "html")
    assert r.exit_code == 0, r.output
    page = out.directory / "report.html"
    assert r.stdout.strip() == str(page), r.output
    check_rendered(page, tmp_path, png_rows=800)
    text = cli("report", str(out.directory))
    assert text.exit_code == 0 and "Throughput and latency" in text.stdout, text.output
