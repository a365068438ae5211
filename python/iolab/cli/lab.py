"""``iolab lab``: published studies re-run and printed beside their own
reference values (``iolab lab raid``: seed 003's RAID bootcamp labs)."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer

from iolab.cli.errors import EXIT_JOB
from iolab.lab.raid import LabSettings, run_lab
from iolab.lab.render import RENDERERS

lab_app = typer.Typer(help="Re-run a published study and print it beside its reference values.", no_args_is_help=True)


class LabFormat(str, enum.Enum):
    text = "text"
    md = "md"
    json = "json"
    html = "html"


def _usage(msg: str) -> NoReturn:
    typer.echo(f"iolab lab raid: {msg}", err=True)
    raise typer.Exit(EXIT_JOB)


@lab_app.command()
def raid(
    quick: Annotated[bool, typer.Option("--quick", help="1.5 s per test instead of the workbook's 10 s.")] = False,
    fmt: Annotated[
        Optional[LabFormat],
        typer.Option(
            "--format",
            help="Output format (default: from --output's suffix .txt/.md/.json/.html, else text).",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Optional[Path],
        typer.Option("--output", "-o", help="Write the report to this file (and say so on stderr) instead of stdout."),
    ] = None,
    runtime: Annotated[
        Optional[float], typer.Option("--runtime", help="Seconds per test (overrides --quick).", min=0.2)
    ] = None,
    device: Annotated[
        Optional[str],
        typer.Option(
            "--device", help="Run lab 1's read tests against this block device or file instead (never writes)."
        ),
    ] = None,
    uri: Annotated[
        Optional[str], typer.Option("--uri", help="Run lab 1's read tests against this NBD URI instead (never writes).")
    ] = None,
) -> None:
    """Seed 003's labs 1B, 1C, 1D, 2A, 2B against a simulated 6-drive RAID 5
    (or real storage), each table beside the workbook's reference values."""
    if device is not None and uri is not None:
        _usage("--device and --uri: give one of the two")
    if output is not None and not output.parent.is_dir():
        _usage(f"--output: directory {output.parent} does not exist")
    s = LabSettings(quick=quick, runtime_s=runtime, device=device, uri=uri)

    def progress(line: str) -> None:
        print(f"iolab lab raid: {line}", file=sys.stderr, flush=True)

    chosen = fmt or format_for(output)
    report = run_lab(s, progress)
    text = RENDERERS[chosen.value](report)
    if output is not None:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"report written to {output} ({chosen.value})", err=True)
    else:
        sys.stdout.write(text)


#: ``--output``'s suffix → the format written when ``--format`` is not given.
SUFFIX_FORMATS = {".txt": LabFormat.text, ".md": LabFormat.md, ".json": LabFormat.json, ".html": LabFormat.html}


def format_for(output: Optional[Path]) -> LabFormat:
    """The format ``--output``'s suffix names (``lab.html`` → html); text for
    stdout or another suffix."""
    return SUFFIX_FORMATS.get(output.suffix.lower(), LabFormat.text) if output is not None else LabFormat.text


def register(app: typer.Typer) -> None:
    app.add_typer(lab_app, name="lab")
