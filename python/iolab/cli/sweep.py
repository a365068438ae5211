"""``iolab sweep PLAN``: run a plan (iolab.plans) into a results directory."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from iolab.cli.errors import EXIT_INTERRUPTED
from iolab.cli.fleet import sweep_on_fleet
from iolab.cli.options import AllowOverwrite, MetricsAddress, MetricsSummaries, TestTarget, metrics_server
from iolab.errors import JobError
from iolab.fleet.env import detect as fleet_launch
from iolab.plans.sweep import SweepInterrupted, SweepOptions, SweepOutcome, run_sweep

DEFAULT_RESULTS = Path("iolab-results")

SWEEP_HELP = """Run a sweep plan (TOML): every point x repeat, resumable.

Example:

  iolab sweep examples/plans/seed002-bs.toml --quick

Every point's job is checked before the first one runs. Each finished
point is written at once to RESULTS/<plan name>/points/; running the same
command again resumes after the last finished point (the plan must be
unchanged: --restart discards the old points). Progress (runs done/total,
ETA) goes to stderr; Ctrl-C stops cleanly (exit status 130) and keeps
what finished. See docs/plans.md.
"""


def sweep(
    plan: Annotated[Path, typer.Argument(help="The plan file (TOML).", exists=True, dir_okay=False)],
    quick: Annotated[bool, typer.Option("--quick", help="Shrink the plan as its \\[quick] table says.")] = False,
    results: Annotated[
        Path, typer.Option("--results", help="Results root (the sweep goes to RESULTS/<plan name>/).")
    ] = DEFAULT_RESULTS,
    target: TestTarget = None,
    restart: Annotated[
        bool, typer.Option("--restart", help="Discard the finished points of this plan in RESULTS and start over.")
    ] = False,
    allow_overwrite: AllowOverwrite = False,
    metrics: MetricsAddress = None,
    metrics_summaries: MetricsSummaries = False,
) -> None:
    opts = SweepOptions(quick=quick, target=target, restart=restart, allow_overwrite=allow_overwrite)
    try:
        if fleet_launch():
            if metrics is not None or metrics_summaries:
                raise JobError("--metrics: not on a fleet sweep (rank 0's --fleet-live-http serves its /metrics)")
            out = sweep_on_fleet(plan, results, opts)
        else:
            with metrics_server(metrics, metrics_summaries) as server:
                out = run_sweep(plan, results, replace(opts, metrics=server))
        if out is None:
            return  # a fleet rank other than 0: rank 0 reports
    except SweepInterrupted as e:
        typer.echo(f"iolab: {e}", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    typer.echo(summary_line(out))


def summary_line(out: SweepOutcome) -> str:
    """The sweep's last line: what ran (points along which axes, repeats, on
    what), how much of it now, where the results are and what to do next."""
    plan = _json(out.directory / "plan.json")
    meta = _json(out.directory / "sweep.json")
    axes = ", ".join(f"{a['name']}={'/'.join(str(v) for v in a.get('values', []))}" for a in plan.get("axes", []))
    repeats = int(plan.get("repeats") or meta.get("repeats") or 1)
    target = f" on {meta['target']}" if meta.get("target") else ""
    timed_out = sum(bool(_json(r).get("timed_out")) for r in sorted((out.directory / "points").glob("*/run.json")))
    late = f"; {timed_out} run(s) stopped at the per-point timeout" if timed_out else ""
    return (
        f"sweep {out.sweep_id}: {out.points} points{f' ({axes})' if axes else ''} x {repeats} repeat(s) = "
        f"{out.runs_total} runs{target} ({out.runs_done_now} run now, {out.runs_done_before} already done){late}; "
        f"results in {out.directory} (next: iolab report {out.directory})"
    )


def _json(path: Path) -> dict[str, Any]:
    """A small JSON file of the sweep directory; {} when absent (a fleet rank's view, an old sweep)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def register(app: typer.Typer) -> None:
    app.command(help=SWEEP_HELP)(sweep)
