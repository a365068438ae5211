"""``iolab``: the commands. Each parses, calls one library function, renders.

Errors are mapped to messages and exit statuses in :mod:`iolab.cli.errors`.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Callable, Optional

import typer

from iolab import _native
from iolab.cli import catalog as catalog_commands
from iolab.cli import find as find_commands
from iolab.cli import fleet as fleet_commands
from iolab.cli import lab as lab_commands
from iolab.cli import lab_fleet as lab_fleet_commands
from iolab.cli import pts as pts_commands
from iolab.cli import render
from iolab.cli import report as report_commands
from iolab.cli import sweep as sweep_commands
from iolab.cli import target as target_commands
from iolab.cli.errors import EXIT_INTERRUPTED, IolabGroup
from iolab.cli.options import AllowOverwrite, MetricsAddress, MetricsSummaries, metrics_server
from iolab.errors import IolabError, JobError
from iolab.fleet.env import detect as fleet_launch
from iolab.jobs import check_max_jobs, command_line, select_sections
from iolab.report.quick import write_quick_report
from iolab.results.catalog import new_run_dir, save_run
from iolab.results.fio_logs import write_fio_logs
from iolab.results.intervals import HLOG_FILE
from iolab.run.local import RunOutput, StatusReports, partial_output
from iolab.run.pipeline import RunPipeline, RunSettings, parse_interval_ns
from iolab.run.progress import ETA_MODES, TerminalProgress, eta_terminal
from iolab.run.quick import QuickOutput, default_results_path, run_quick
from iolab.run.sources import jobs_from_command_line, single_dash_as_long
from iolab.run.wire import WIRE_FILE, wire_section

app = typer.Typer(
    cls=IolabGroup,
    name="iolab",
    help="iolab: a storage performance lab. Runs fio-style jobs and reports every figure with its unit.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _eta(value: str) -> str:
    if value not in ETA_MODES:
        raise typer.BadParameter(f"--eta={value}: give auto, always or never (fio's values)")
    return value


def _interval(value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    try:
        parse_interval_ns(value)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    return value


def _interval_or_zero(value: Optional[str]) -> Optional[str]:
    return None if value is None or value.strip() == "0" else _interval(value)


def _formats(value: str) -> str:
    try:
        render.output_formats(value)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    return value


def _terse_version(value: Optional[int]) -> Optional[int]:
    if value is not None and value != 3:
        raise typer.BadParameter(f"terse version {value} is not written; iolab writes fio's terse version 3")
    return value


def _output_path(value: Optional[Path]) -> Optional[Path]:
    # Checked before the run, so a typo does not cost the results of a long run.
    if value is not None and not value.parent.is_dir():
        raise typer.BadParameter(f"directory {value.parent} does not exist")
    return value


@contextmanager
def _partial_results_first(show: Callable[[RunOutput, BaseException], None]) -> Iterator[None]:
    """An error that ended the run early still shows (and writes) the results
    of the work done before it; the error's own line follows, from
    :mod:`iolab.cli.errors`."""
    try:
        yield
    except (IolabError, OSError) as e:
        partial = partial_output(e)
        if partial is not None:
            show(partial, e)
        raise


RUN_HELP = """Run fio-style jobs: job files, fio options, or both.

Examples:

  iolab run --name=test --filename=testfile --size=10G --rw=randrw --rwmixread=50 --bs=4k --iodepth=16 --time_based --runtime=60

  iolab run job.fio --runtime=5 --output result.json --output-format json

Every fio job option is accepted as --OPTION=VALUE (see `iolab options`),
or with one dash as fio reads it (-bs=4k -iodepth 32 -thread);
--name starts a new job, as in fio. Options given next to job files apply
to every job in them, after the files' own options (so they win). Results
go to stdout in the chosen format; with --output the file gets that
format and stdout the text summary. Layout notes and live progress go to
stderr. Ctrl-C stops the run and still reports what was measured (exit
status 130); so does an I/O error, whose one-line message follows the
results (exit status 1).
"""


@app.command(
    help=RUN_HELP,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    options_metavar="[OPTIONS] [JOBFILE]... [--FIO_OPTION[=VALUE]]...",
)
def run(
    ctx: typer.Context,
    output: Annotated[
        Optional[Path],
        typer.Option(
            "--output",
            "-o",
            help="Write the results in --output-format to this file.",
            dir_okay=False,
            callback=_output_path,
        ),
    ] = None,
    output_format: Annotated[
        str,
        typer.Option(
            "--output-format",
            help="text (the summary; fio's name: normal), json (iolab.result/1), fio-json (fio's JSON), "
            "json+ (fio's JSON with latency bins) or terse (fio's terse v3); several separated by ','.",
            callback=_formats,
        ),
    ] = "text",
    minimal: Annotated[
        bool, typer.Option("--minimal", help="fio's terse v3 output (= --output-format=terse).")
    ] = False,
    terse_version: Annotated[
        Optional[int],
        typer.Option("--terse-version", help="fio's terse format version; only 3 is written.", callback=_terse_version),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            "--parse-only",
            help="Print each job as resolved (every option, with units); run nothing.",
        ),
    ] = False,
    showcmd: Annotated[
        bool, typer.Option("--showcmd", help="Print the jobs as one fio-style command line; run nothing.")
    ] = False,
    section: Annotated[
        Optional[list[str]],
        typer.Option("--section", help="Run only this job (section) of the job files; may be repeated."),
    ] = None,
    readonly: Annotated[
        bool, typer.Option("--readonly", help="fio's --readonly: refuse every job that writes, before anything runs.")
    ] = False,
    eta: Annotated[
        str,
        typer.Option(
            "--eta",
            help="fio's --eta: the live progress line on stderr — auto (on a terminal), always or never.",
            callback=_eta,
        ),
    ] = "auto",
    eta_interval: Annotated[
        Optional[str],
        typer.Option(
            "--eta-interval",
            help="fio's --eta-interval: redraw the live progress line at most this often (1s, 500ms; "
            "a bare number is seconds).",
            callback=_interval,
        ),
    ] = None,
    eta_newline: Annotated[
        Optional[str],
        typer.Option(
            "--eta-newline",
            help="fio's --eta-newline: keep the live progress line every this often (end it with a newline, "
            "start the next below it); 0 = never.",
            callback=_interval_or_zero,
        ),
    ] = None,
    status_interval: Annotated[
        Optional[str],
        typer.Option(
            "--status-interval",
            help="fio's --status-interval: every this often (1s, 500ms; a bare number is seconds) print the whole "
            "report in each --output-format, cumulative since the start, before the final one.",
            callback=_interval,
        ),
    ] = None,
    append_terse: Annotated[
        bool,
        typer.Option("--append-terse", help="fio's --append-terse: terse v3 output after the chosen format."),
    ] = False,
    max_jobs: Annotated[
        Optional[int],
        typer.Option(
            "--max-jobs",
            min=1,
            help="fio's --max-jobs: refuse, before anything runs, jobs whose workers (numjobs summed) exceed this.",
        ),
    ] = None,
    alloc_size: Annotated[
        Optional[str],
        typer.Option(
            "--alloc-size",
            help="fio's --alloc-size (its shared memory pool, KiB): accepted for pasted command lines and "
            "noted; iolab keeps no such pool, so it changes nothing.",
        ),
    ] = None,
    allow_overwrite: AllowOverwrite = False,
    interval: Annotated[
        Optional[str],
        typer.Option(
            "--interval",
            help="Time-series interval (e.g. 1s, 500ms); the jobs' log_avg_msec or steady-state interval "
            "sets it when given.",
            show_default="1s",
            callback=_interval,
        ),
    ] = None,
    results: Annotated[
        Optional[Path],
        typer.Option("--results", help="Also keep the run as a result directory under this root (see `iolab ls`)."),
    ] = None,
    target_stats: Annotated[
        Optional[str],
        typer.Option(
            "--target-stats",
            help="Stats URL of the iolab target the nbd jobs drive (its --stats-http): report client, server "
            "and wire latency, server CPU and wire bytes over the run's window.",
        ),
    ] = None,
    metrics: MetricsAddress = None,
    metrics_summaries: MetricsSummaries = False,
    stream_intervals: Annotated[
        bool,
        typer.Option(
            "--stream-intervals",
            help="Write the interval histograms to RUN/intervals.hlog (HdrHistogram interval log) as the run "
            "goes instead of keeping them in memory for the result: memory stays flat on long runs and a "
            "killed run keeps its intervals. Needs --results. On a fleet (iolab fleet, mpiexec): each rank streams "
            "to its own log beside its spool and rank 0 the exact merge of every host's intervals to RUN/intervals.hlog.",
        ),
    ] = False,
    per_worker_intervals: Annotated[
        bool,
        typer.Option(
            "--per-worker-intervals",
            help="With --stream-intervals: each worker's intervals too, not only each job's workers merged.",
        ),
    ] = False,
) -> None:
    if per_worker_intervals and not stream_intervals:
        raise JobError("--per-worker-intervals: give --stream-intervals too (per-worker intervals go to its log)")
    if stream_intervals and results is None:
        raise JobError("--stream-intervals: give --results ROOT (the interval log goes in the run's directory)")
    if fleet_launch() is not None:  # mpiexec/srun iolab run ...: every rank runs, rank 0 reports
        if dry_run:
            raise JobError("--dry-run under MPI: run `iolab run --dry-run ...` without mpiexec")
        unsupported = [
            name
            for name, given in (
                ("--minimal", minimal),
                ("--terse-version", terse_version is not None),
                ("--section", bool(section)),
                ("--showcmd", showcmd),
                ("--eta", eta != "auto"),
                ("--eta-interval", eta_interval is not None),
                ("--eta-newline", eta_newline is not None),
                ("--status-interval", status_interval is not None),
                ("--append-terse", append_terse),
                ("--max-jobs", max_jobs is not None),
                ("--alloc-size", alloc_size is not None),
                ("--readonly", readonly),
                ("--metrics (rank 0's --fleet-live-http serves the fleet's /metrics)", metrics is not None),
                ("--metrics-summaries", metrics_summaries),
            )
            if given
        ]
        formats_given = render.output_formats(output_format)
        if len(formats_given) != 1 or formats_given[0] not in ("text", "json", "fio-json", "json+"):
            unsupported.append(f"--output-format={output_format}")
        if unsupported:
            raise JobError(
                f"{', '.join(unsupported)}: not supported on a fleet run (one of --output-format text, json, fio-json or json+)"
            )
        fleet_commands.run_on_fleet(
            ctx.args, output, formats_given[0], allow_overwrite, interval or "1s", results, target_stats,
            streaming=(stream_intervals, per_worker_intervals),
        )  # fmt: skip
        return
    jobs = jobs_from_command_line(ctx.args)
    if section:
        jobs = select_sections(jobs, section)
    if showcmd:
        typer.echo(command_line(jobs))
        return
    if max_jobs is not None:
        check_max_jobs(jobs, max_jobs)
    formats = render.output_formats("terse" if minimal else output_format)
    if append_terse and "terse" not in formats:
        formats = [*formats, "terse"]
    say = _stderr_line
    if alloc_size is not None:
        say(
            f"note: --alloc-size={alloc_size}: iolab keeps no shared memory pool (fio's smalloc), so it changes nothing"
        )
    settings = RunSettings(
        allow_overwrite=allow_overwrite,
        interval=interval,
        target_stats=target_stats,
        target_stats_option="--target-stats",
        diskstats=results is not None,  # → diskstats.json
        readonly=readonly,
        check_files=not dry_run,
        write_logs=write_fio_logs,
    )
    run_dir = None
    if stream_intervals and results is not None:
        run_dir = new_run_dir(results, create=False)
        settings = replace(settings, interval_log=run_dir / HLOG_FILE, per_worker_intervals=per_worker_intervals)
    pipeline = RunPipeline(jobs, settings, say)
    if dry_run:
        typer.echo(render.prepared_jobs(list(pipeline.prepared), pipeline.extras))
        return
    if run_dir is not None:
        run_dir.mkdir(parents=True)  # the interval log goes there as the run goes

    interim_shown = 0

    def show_status(out: RunOutput, number: int) -> None:
        nonlocal interim_shown
        render.status_report(out, number, formats, output)
        interim_shown = number

    if status_interval is not None:
        settings = replace(settings, status=StatusReports(parse_interval_ns(status_interval), show_status))

    def report(out: RunOutput, error: Optional[BaseException]) -> None:
        render.run_output(out, formats, output, out.observed.get("steadystate"), append=interim_shown > 0)
        steady = pipeline.steady_line(out)
        if steady is not None:
            say(steady)
        if results is not None:
            wire = wire_section(out)
            extra = {WIRE_FILE: wire} if wire is not None else None
            error_text = None if error is None else str(error)
            saved = save_run(results, pipeline.jobs, out, extra=extra, error=error_text, directory=run_dir)
            say(f"results: {saved}")
        for path in out.observed.get("fio_logs", {}).get("files", []):
            say(f"fio log: {path}")

    with metrics_server(metrics, metrics_summaries) as server:
        pipeline.settings = replace(settings, metrics=server)
        progress = TerminalProgress(
            eta_terminal(eta),
            every_ns=0 if eta_interval is None else parse_interval_ns(eta_interval),
            newline_ns=None if eta_newline is None else parse_interval_ns(eta_newline),
        )
        out = pipeline.execute(progress, report=report)
    if out.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)


def _stderr_line(line: str) -> None:
    typer.echo(line, err=True)


QUICK_HELP = """Characterise storage in about a minute.

Seven jobs, one after another: sequential 1 MiB read and write (QD 8),
random 4 KiB read and write at QD 1 and QD 32, and a 70/30 random mix at
QD 16; psync at QD 1, io_uring above, O_DIRECT where the filesystem allows
it. Prints a table and its three most important findings, and writes the
full results (JSON) and an HTML report (charts, findings, tables; NAME.html
beside NAME.json) to files. The device under the test file is watched
during each job (/proc/diskstats): when something else used it, the first
finding says so, with its I/Os and bytes. Ctrl-C keeps what ran and lists
the jobs that did not as "not run".

PATH: none = a new temporary directory; a directory = a new test file in
it; both are removed afterwards. An existing file or block device is used
in place: only the read jobs run unless --allow-overwrite is given.
"""


def _quick_report(out: QuickOutput, json_path: Path) -> None:
    """The HTML report beside the results (named on stderr), and the three
    most important findings on stdout after the table."""
    html_path, top = write_quick_report(out, json_path)
    typer.echo(f"report written to {html_path}", err=True)
    if top:
        typer.echo("\nTop findings:")
        for f in top:
            typer.echo(f"  {'!' if f.severity != 'info' else '*'} {f.text}")


@app.command(help=QUICK_HELP)
def quick(
    path: Annotated[Optional[Path], typer.Argument(help="Directory, file or block device to test.")] = None,
    runtime_per_job: Annotated[str, typer.Option("--runtime-per-job", help="Measured time of each job.")] = "8s",
    size: Annotated[
        Optional[str],
        typer.Option(
            "--size",
            help="Size of the test file (or of the region of a device); an existing file or device smaller "
            "than 1G is used whole.",
            show_default="1G",
        ),
    ] = None,
    output: Annotated[
        Optional[Path],
        typer.Option(
            "--output",
            "-o",
            help="JSON results file.",
            show_default="./iolab-quick-YYYYmmdd-HHMMSS.json",
            dir_okay=False,
            callback=_output_path,
        ),
    ] = None,
    allow_overwrite: Annotated[
        bool, typer.Option("--allow-overwrite", help="Also run the write jobs on an existing file or device.")
    ] = False,
) -> None:
    with _partial_results_first(lambda partial, _e: render.quick_output(partial, output)):
        out = run_quick(
            path,
            size=size,
            runtime_per_job=runtime_per_job,
            allow_overwrite=allow_overwrite,
            progress=TerminalProgress(),
        )
    # Named here (not inside quick_output) so the HTML report lands beside the JSON.
    output = output or default_results_path()
    render.quick_output(out.run, output, out.not_run, out.device)
    _quick_report(out, output)
    if out.run.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)


@app.command()
def options(
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the tables as Markdown (as in docs/options.md).")
    ] = False,
) -> None:
    """List every job option iolab accepts: name, type, default, help — the
    engine's, then those iolab handles around the engine (logs, steady state, exec_*…)."""
    from iolab.jobs.compat import EXTRAS_HEADING, extras_section
    from iolab.jobs.extras import extra_rows

    if markdown:
        typer.echo(_native.options_markdown() + extras_section(), nl=False)
    else:
        typer.echo(render.option_table(_native.option_table()))
        typer.echo(f"\n{EXTRAS_HEADING} (python/iolab/jobs/extras.py):\n")
        typer.echo(render.option_table(extra_rows()))


@app.command()
def version() -> None:
    """Print iolab's version."""
    typer.echo(f"iolab {_native.version()}")


@app.command(hidden=True)
def docs(
    directory: Annotated[Path, typer.Argument(help="Where cli.md and options.md go.")] = Path("docs"),
    check: Annotated[
        bool, typer.Option("--check", help="Fail if the files differ from what would be written.")
    ] = False,
) -> None:
    """Regenerate docs/cli.md and docs/options.md from the commands and the option table."""
    from iolab.cli.docs import write_docs

    stale = write_docs(typer.main.get_command(app), directory, check=check)
    if stale:
        typer.echo("out of date: " + ", ".join(str(p) for p in stale), err=True)
        raise typer.Exit(1)


# Plans, sweeps and the results catalog live in their own command modules.
sweep_commands.register(app)
find_commands.register(app)
catalog_commands.register(app)
target_commands.register(app)
lab_commands.register(app)
pts_commands.register(app)
lab_fleet_commands.register(lab_commands.lab_app)
report_commands.register(app)
fleet_commands.register(app)


def _one_line_summaries(typer_app: typer.Typer) -> None:
    """`iolab --help` lists each command by the first paragraph of its help
    joined into one line: click keeps a docstring's own line breaks, which
    cut its sentences in the middle."""
    for info in typer_app.registered_commands:
        text = info.help or (inspect.getdoc(info.callback) if info.callback else None) or ""
        if info.short_help is None and text:
            info.short_help = " ".join(text.split("\n\n")[0].split())


_one_line_summaries(app)


def main() -> None:
    """Console entry point. ``iolab run`` reads fio's single-dash long
    options (``-name=x -iodepth 1 -thread``) as fio does
    (:func:`iolab.run.sources.single_dash_as_long`)."""
    args = sys.argv[1:]
    if args[:1] == ["run"]:
        params = typer.main.get_command(app).commands["run"].params  # type: ignore[attr-defined]
        own = frozenset(o.lstrip("-") for p in params if not getattr(p, "is_flag", False) for o in p.opts)
        args = ["run", *single_dash_as_long(args[1:], own)]
    app(args=args, prog_name="iolab")


__all__ = ["app", "main"]


if __name__ == "__main__":
    main()
