"""``iolab lab pacing``: seed 004 (IO pacing in an NVMe-oF target, tests
1-16) against iolab targets built to match each test (docs/labs.md)."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from iolab.cli.lab import FormatOption, OutputOption, _usage, _write, format_for, lab_app
from iolab.lab.pacing import Settings, run_lab
from iolab.lab.pacing.render import RENDERERS

ALL_TESTS = tuple(range(1, 17))


def parse_tests(text: Optional[str]) -> tuple[int, ...]:
    """``--test 5,8`` → (5, 8); None → all 16. Raises ValueError naming the bad item."""
    if text is None:
        return ALL_TESTS
    out: list[int] = []
    for item in text.split(","):
        item = item.strip()
        if not item.isdigit() or int(item) not in ALL_TESTS:
            raise ValueError(f"'{item}' is not a test number 1-16 (e.g. --test 5,8)")
        out.append(int(item))
    return tuple(dict.fromkeys(out))


@lab_app.command()
def pacing(
    quick: Annotated[
        bool,
        typer.Option("--quick", help="QD 8/32/256, fewer variants, 3 repeats in test 6, 1.2 s per point (≤ 5 min)."),
    ] = False,
    fmt: FormatOption = None,
    output: OutputOption = None,
    test: Annotated[
        Optional[str], typer.Option("--test", help="Run only these tests, e.g. 5,8 (default: all 16).")
    ] = None,
    runtime: Annotated[
        Optional[float],
        typer.Option(
            "--runtime", help="Seconds per point (longer where the QD needs it; default 2, quick 1.2).", min=0.2
        ),
    ] = None,
    repeats: Annotated[
        Optional[int], typer.Option("--repeats", help="Test 6's repeats per QD (default 10, quick 3).", min=2)
    ] = None,
) -> None:
    """Seed 004 (IO pacing in an NVMe-oF target): tests 1-16 beside its tables, and a verdict on each finding.

    IO pacing is a shared buffer pool with per-thread caches; two
    initiators; simulated NVMe, null, split and delayed stacks; the seed's
    tables beside the measured ones and a verdict on each finding."""
    try:
        tests = parse_tests(test)
    except ValueError as e:
        _usage(f"--test: {e}", "pacing")
    if output is not None and not output.parent.is_dir():
        _usage(f"--output: directory {output.parent} does not exist", "pacing")
    s = Settings(quick=quick, tests=tests, runtime_s=runtime, repeats=repeats)

    def progress(line: str) -> None:
        print(f"iolab lab pacing: {line}", file=sys.stderr, flush=True)

    chosen = fmt or format_for(output)
    report = run_lab(s, progress)
    _write(RENDERERS[chosen.value](report), output, chosen)


__all__ = ["pacing", "parse_tests"]
