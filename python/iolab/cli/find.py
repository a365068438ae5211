"""``iolab find --slo ... JOB|PLAN``: the highest load meeting an SLO (iolab.plans.find)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Optional, Union

import typer

from iolab.cli.errors import EXIT_INTERRUPTED
from iolab.cli.options import AllowOverwrite, TestTarget
from iolab.cli.sweep import DEFAULT_RESULTS
from iolab.errors import JobError
from iolab.fleet.env import detect as fleet_launch
from iolab.plans.find import SEARCH_AXES, FindOutcome, axis_space, statement
from iolab.plans.find_grid import GridOutcome, grid_axis, grid_statement
from iolab.plans.find_run import check_plan, plan_of_job, plan_toml, run_find
from iolab.plans.model import load_plan
from iolab.plans.slo import parse_slo
from iolab.plans.sweep import SweepInterrupted, SweepOptions
from iolab.run.sources import jobs_from_command_line

DEFAULT_REPEATS = 2

FIND_HELP = f"""Find the highest load along one axis that meets a latency SLO.

Examples:

  iolab find --slo 'p99<1ms' --axis iodepth --name=qd --filename=/dev/nvme0n1 --rw=randread --bs=4k --ioengine=io_uring --direct=1 --runtime=10 --time_based

  iolab find --slo 'read.p99.9<2ms and iops>50k' --axis rate_iops --start 10000 plan.toml

  iolab find --slo 'p99<1ms' --axis iodepth --axis numjobs=1,2,4,8 plan.toml

The axis ({", ".join(SEARCH_AXES)}) grows x --growth from --start while
the SLO holds, then narrows the bracket between the last value meeting
it and the first breaking it (where the latency-load curve fitted so far
crosses the SLO, or the middle) until they are --resolution apart. Each
value runs --repeats times; the two that give the answer run more (up to
--max-repeats) while the SLO threshold lies inside the 95 % interval of
their figure. A second --axis NAME=V1,V2,... makes a grid: the search
along the first axis for each value listed, the frontier row by row and
the best point (most IOPS) meeting the SLO.

SLO: clauses joined by 'and':
\\[read.|write.]\\[lat.|clat.]pPCT<DURATION (p50 … p99.99, the
percentiles iolab records; both directions together when none is named)
and \\[read.|write.]iops>N.

Every run is a point of RESULTS/<name>/, a sweep directory (`iolab
report` reads it), with the answer in find.json; the same command
resumes a stopped search and reuses what it measured. The job (JOB...)
is one job, as fio options or a job file, or a plan file (TOML, its
\\[base] job, without \\[axes]). On a fleet (`iolab fleet -n N find
...`) every run runs on every rank and the SLO must hold on each host
and on the exact total. See docs/plans.md.
"""


def find(
    ctx: typer.Context,
    slo: Annotated[str, typer.Option("--slo", help="The objective, e.g. 'p99<1ms' or 'p99<1ms and iops>10000'.")],
    axis: Annotated[
        Optional[list[str]],
        typer.Option(
            "--axis",
            help=f"The job option to search: {', '.join(SEARCH_AXES)} (default iodepth); "
            "a second --axis NAME=V1,V2,... makes a grid: the search along the first for each value.",
        ),
    ] = None,
    start: Annotated[
        Optional[str], typer.Option("--start", help="First value (default: 1; rate_iops 1000; bs 4k).")
    ] = None,
    limit: Annotated[
        Optional[str],
        typer.Option(
            "--limit", help="Highest value tried (default: iodepth 4096, numjobs 256, rate_iops 10M, bs 64M)."
        ),
    ] = None,
    resolution: Annotated[
        str,
        typer.Option("--resolution", help="Stop when the bracket is this close: a percentage (5%) or a step (4)."),
    ] = "5%",
    growth: Annotated[float, typer.Option("--growth", help="Factor the axis grows by while the SLO holds.")] = 2.0,
    repeats: Annotated[
        Optional[int], typer.Option("--repeats", help="Runs per value (default: the plan's repeats, else 2).")
    ] = None,
    max_repeats: Annotated[
        int, typer.Option("--max-repeats", help="Runs per value at most, spent where the decision is close.")
    ] = 5,
    name: Annotated[
        Optional[str], typer.Option("--search-name", help="The result directory's name (default: find-JOB-AXIS).")
    ] = None,
    results: Annotated[
        Path, typer.Option("--results", help="Results root (the search goes to RESULTS/<name>/).")
    ] = DEFAULT_RESULTS,
    target: TestTarget = None,
    restart: Annotated[
        bool, typer.Option("--restart", help="Discard the runs of an earlier search of this job and start over.")
    ] = False,
    allow_overwrite: AllowOverwrite = False,
) -> None:
    objective = parse_slo(slo)
    axes = axis or ["iodepth"]
    if len(axes) > 2:
        raise JobError(f"--axis given {len(axes)} times: find searches one axis, or a grid of two")
    space = axis_space(axes[0], start=start, limit=limit, resolution=resolution, growth=growth)
    grid = grid_axis(axes[1], axes[0]) if len(axes) == 2 else None
    names = [axes[0]] + ([] if grid is None else [grid.name])
    tokens = list(ctx.args)
    from_plan = len(tokens) == 1 and tokens[0].endswith(".toml")
    if from_plan:
        plan_path = Path(tokens[0])
        plan = load_plan(plan_path)
        check_plan(plan, names)
        text = plan_path.read_text(encoding="utf-8")
    else:
        jobs = jobs_from_command_line(tokens)
        if len(jobs) != 1:
            raise JobError(f"{len(jobs)} jobs given: find searches one job; give one job")
        plan = plan_of_job(jobs[0], f"find-{jobs[0].name}-{'-'.join(names)}", names)
    plan = replace(
        plan,
        name=name or plan.name,
        repeats=repeats if repeats is not None else plan.repeats if from_plan else DEFAULT_REPEATS,
    )
    if not from_plan:
        text = plan_toml(plan)
    opts = SweepOptions(target=target, restart=restart, allow_overwrite=allow_overwrite, where="a find")
    try:
        if fleet_launch():
            # Under `iolab fleet ... find`: every point on every rank; the SLO on each host and the total.
            from iolab.cli.fleet import plans_on_fleet
            from iolab.fleet.slo import fleet_repeat, judge_fleet

            def on_fleet(o: SweepOptions) -> tuple[Union[FindOutcome, GridOutcome], Path]:
                return run_find(plan, text, objective, space, results, o, max_repeats=max_repeats, grid=grid,
                                read=fleet_repeat, judge_fn=judge_fleet)  # fmt: skip

            done = plans_on_fleet(on_fleet, opts, "a fleet find")
            if done is None:
                return  # a fleet rank other than 0: rank 0 reports
            outcome, directory = done
        else:
            outcome, directory = run_find(plan, text, objective, space, results, opts, max_repeats=max_repeats,
                                          grid=grid)  # fmt: skip
    except SweepInterrupted as e:
        typer.echo(f"iolab: {e}", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    for line in grid_statement(outcome) if isinstance(outcome, GridOutcome) else statement(outcome):
        typer.echo(line)
    typer.echo(f"results in {directory} (next: iolab report {directory})")


def register(app: typer.Typer) -> None:
    app.command(
        help=FIND_HELP,
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        options_metavar="[OPTIONS] (PLAN.toml | JOB...)",
    )(find)
