"""Every example plan's sweep (examples/plans/*.toml, run end to end at a
tiny scale once per session: tests/example_sweeps.py, whose directory and
catalog tests/plans/test_examples.py checks) renders as
`iolab report --format html` in headless Chromium, and as text."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
from chromium_check import check_rendered
from example_sweeps import EXAMPLES, ExampleSweep


def test_there_are_example_plans() -> None:
    assert len(EXAMPLES) >= 6


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_report_renders(
    path: Path, tmp_path: Path, cli, example_sweeps: Callable[[Path], ExampleSweep]
) -> None:
    out = example_sweeps(path).outcome
    r = cli("report", str(out.directory), "--format", "html")
    assert r.exit_code == 0, r.output
    page = out.directory / "report.html"
    assert r.stdout.strip() == str(page), r.output
    check_rendered(page, tmp_path, png_rows=800)
    text = cli("report", str(out.directory))
    assert text.exit_code == 0 and "Throughput and latency" in text.stdout, text.output
