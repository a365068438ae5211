"""``iolab report`` and ``iolab compare``: the analysis of results, rendered.

Both read what :func:`iolab.analysis.load_dataset` reads (an iolab run or
sweep directory, a fio JSON output), analyse it and render: terminal text,
Markdown, JSON (``iolab.analysis/1``, ``iolab.compare/1``) or, for one
analysis, a self-contained HTML file.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from iolab.analysis.model import Analysis

Source = Annotated[
    Path,
    typer.Argument(help="An iolab run or sweep directory, or a fio JSON output (json or json+).", exists=True),
]


class ReportFormat(str, enum.Enum):
    text = "text"
    md = "md"
    html = "html"
    json = "json"


class CompareFormat(str, enum.Enum):
    text = "text"
    md = "md"
    json = "json"


def analyse(source: Path) -> Analysis:
    """Load and analyse one source (errors name the path)."""
    from iolab.analysis import analyze, load_dataset

    return analyze(load_dataset(source))


def default_html_path(source: Path) -> Path:
    """``RUN/report.html`` for a directory; ``NAME.report.html`` beside a file."""
    if source.is_dir():
        return source / "report.html"
    return source.with_name(source.stem + ".report.html")


#: ``--output``'s suffix → the format, when ``--format`` is not given.
_SUFFIX_FORMATS = {
    ".html": ReportFormat.html,
    ".htm": ReportFormat.html,
    ".md": ReportFormat.md,
    ".json": ReportFormat.json,
}


def _emit(text: str, output: Optional[Path]) -> None:
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"report written to {output}", err=True)


def _output_dir_exists(value: Optional[Path]) -> Optional[Path]:
    if value is not None and not value.parent.is_dir():
        raise typer.BadParameter(f"directory {value.parent} does not exist")
    return value


Output = Annotated[
    Optional[Path],
    typer.Option("--output", "-o", help="Write the report to this file.", dir_okay=False, callback=_output_dir_exists),
]


def report(
    source: Source,
    fmt: Annotated[
        Optional[ReportFormat],
        typer.Option(
            "--format",
            "-f",
            help="text (terminal tables), md (Markdown), json (iolab.analysis/1) or html (one self-contained file); "
            "default: from --output's suffix (.html, .md, .json), else text.",
        ),
    ] = None,
    output: Output = None,
    window: Annotated[
        Optional[str],
        typer.Option(
            "--window",
            help="Report only this time window of a run's interval log (e.g. 10s..40s, from each job's measured "
            "start; either end may be left out): IOPS, MB/s and percentiles of the whole intervals in it, "
            "merged exactly. Needs a run made with --stream-intervals (or its intervals.hlog).",
        ),
    ] = None,
) -> None:
    """Analyse results and report them: findings, warnings, knees, bottleneck
    and the tables (IOPS, MB/s, latency percentiles, CPU per point and
    direction, mean ± 95% confidence interval over repeats).

    text, md and json go to stdout unless --output is given. html goes to a
    file — by default RUN/report.html (or NAME.report.html next to a fio JSON
    file) — whose path is printed; it opens without a network.

    A run directory whose run was killed (an interval log and no result) is
    reported from its interval log, marked as interrupted."""
    if fmt is None:
        fmt = _SUFFIX_FORMATS.get(output.suffix.lower(), ReportFormat.text) if output is not None else ReportFormat.text
    log = _interval_log_source(source, window)
    if log is not None:
        _emit(_window_report(log, window or "..", fmt), output)
        return
    an = analyse(source)
    if fmt is ReportFormat.html:
        from iolab.report.html import render_html

        path = output or default_html_path(source)
        from iolab.fleet.report import fleet_sweep_html
        from iolab.fleet.rundir import read_fleet

        fleet = read_fleet(source) if source.is_dir() else None  # a fleet run: per-host bars, spread, skew
        path.write_text(render_html(an, fleet, fleet_sweep_html(source)), encoding="utf-8")
        typer.echo(str(path))
        return
    from iolab.fleet.report import fleet_json, fleet_section

    # a fleet run or sweep: per host (bars), the spread and the start skew
    text = render_analysis(an, fmt, fleet_json(source)) if fmt is ReportFormat.json else render_analysis(an, fmt)
    if fmt is not ReportFormat.json:
        text += fleet_section(source)
    _emit(text, output)


def _interval_log_source(source: Path, window: Optional[str]) -> Optional[Path]:
    """The interval log to report from: with --window, the source's (a
    run directory's or an .hlog file); without, only a run directory whose
    run did not finish (no run.json) but left one."""
    from iolab.results.intervals import HLOG_FILE, interval_log_of
    from iolab.results.rundir import RESULT_FILE, RUN_FILE

    if source.is_file() and source.suffix == ".hlog":
        return source
    if not source.is_dir():
        if window is not None:
            raise typer.BadParameter(f"--window: {source} is not a run directory or an .hlog file")
        return None
    finished = (source / RUN_FILE).is_file()
    if window is None and finished:
        return None
    result = None
    if not (source / HLOG_FILE).is_file() and (source / RESULT_FILE).is_file():
        # only when the log is not where iolab puts it: a long run's result is large
        result = json.loads((source / RESULT_FILE).read_text(encoding="utf-8")).get("result")
    log = interval_log_of(source, result)
    if log is None and window is not None:
        raise typer.BadParameter(
            f"--window: {source} has no interval log: its run kept its intervals in the result "
            "(run with --stream-intervals to report windows)"
        )
    return log


def _window_report(log: Path, window: str, fmt: ReportFormat) -> str:
    from iolab.report.intervals import format_window, window_json
    from iolab.results.intervals import parse_window, read_window

    if fmt not in (ReportFormat.text, ReportFormat.json):
        raise typer.BadParameter(f"--format {fmt.value}: a window report is text or json")
    try:
        bounds = parse_window(window)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    rows, state = read_window(log, *bounds)
    return format_window(window_json(rows, state, bounds), fmt is ReportFormat.json)


def render_analysis(an: Analysis, fmt: ReportFormat, fleet: Optional[dict[str, Any]] = None) -> str:
    """One analysis as text, Markdown or JSON; ``fleet``: the JSON's ``fleet``
    object (:func:`iolab.fleet.report.fleet_json`)."""
    if fmt is ReportFormat.json:
        doc = an.to_json()
        if fleet is not None:
            doc["fleet"] = fleet
        return json.dumps(doc, indent=2) + "\n"
    if fmt is ReportFormat.md:
        from iolab.report.markdown import format_analysis_markdown

        return format_analysis_markdown(an)
    from iolab.report.analysis_text import format_analysis_text

    return format_analysis_text(an)


def compare(
    a: Annotated[Path, typer.Argument(help="The baseline: run or sweep directory, or fio JSON.", exists=True)],
    b: Annotated[Path, typer.Argument(help="Compared with A: run or sweep directory, or fio JSON.", exists=True)],
    fmt: Annotated[
        CompareFormat,
        typer.Option("--format", "-f", help="text, md (Markdown) or json (iolab.compare/1)."),
    ] = CompareFormat.text,
    everything: Annotated[
        bool, typer.Option("--all", help="Every latency percentile, the mean and c/B, not only the headline figures.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Compare even when A and B ran different jobs (the differences are listed).")
    ] = False,
    output: Output = None,
) -> None:
    """Compare two runs or sweeps: the rows they share (same parameters and
    direction), each metric's difference B vs A in %, and whether it is
    significant (Welch's t-test on the per-repeat values, p < 0.05 after
    Holm's correction for all the comparison's tests), within the noise
    between repeats, or cannot be told (fewer than 2 repeats).

    A and B must have run the same job apart from their axes (rw, bs,
    rwmixread, ioengine, size, direct, iodepth, numjobs, rate): otherwise it
    lists the differences and stops, unless --force. It prints IOPS, MB/s,
    p50, p99 and CPU; --all prints every percentile."""
    from iolab.analysis.compare import compare as compare_analyses

    c = compare_analyses(analyse(a), analyse(b), force=force)
    if fmt is CompareFormat.json:
        text = json.dumps(c.to_json(), indent=2) + "\n"
    elif fmt is CompareFormat.md:
        from iolab.report.markdown import format_comparison_markdown

        text = format_comparison_markdown(c, everything)
    else:
        from iolab.report.analysis_text import format_comparison_text

        text = format_comparison_text(c, everything)
    _emit(text, output)


def register(app: typer.Typer) -> None:
    app.command(short_help="Analyse results (run, sweep, results JSON, fio JSON): findings, tables, charts.")(report)
    app.command(short_help="Compare two runs or sweeps of the same job: B vs A, significant or within noise.")(compare)
