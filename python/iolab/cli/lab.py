"""``iolab lab``: published studies re-run and printed beside their own
reference values (``iolab lab raid``: seed 003's RAID bootcamp labs;
``iolab lab fio-study``: seed 002's fio study on one SSD)."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer

from iolab import _native
from iolab.cli.errors import EXIT_JOB
from iolab.lab.fio_study import StudySettings
from iolab.lab.fio_study import run_lab as run_fio_study
from iolab.lab.fio_study.render import RENDERERS as STUDY_RENDERERS
from iolab.lab.fio_study.run import SIM_CAPACITY, SWEEPS
from iolab.lab.raid import LabSettings, run_lab
from iolab.lab.render import RENDERERS
from iolab.plans.progress import SweepProgress

lab_app = typer.Typer(help="Re-run a published study and print it beside its reference values.", no_args_is_help=True)


class LabFormat(str, enum.Enum):
    text = "text"
    md = "md"
    json = "json"
    html = "html"


#: ``--format`` and ``--output``, the same for every lab.
FormatOption = Annotated[
    Optional[LabFormat],
    typer.Option(
        "--format",
        help="Output format (default: from --output's suffix .txt/.md/.json/.html, else text).",
        show_default=False,
    ),
]
OutputOption = Annotated[
    Optional[Path],
    typer.Option("--output", "-o", help="Write the report to this file (and say so on stderr) instead of stdout."),
]


def _usage(msg: str, lab: str = "raid") -> NoReturn:
    typer.echo(f"iolab lab {lab}: {msg}", err=True)
    raise typer.Exit(EXIT_JOB)


@lab_app.command()
def raid(
    quick: Annotated[bool, typer.Option("--quick", help="1.5 s per test instead of the workbook's 10 s.")] = False,
    fmt: FormatOption = None,
    output: OutputOption = None,
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
    realtime: Annotated[
        bool,
        typer.Option(
            "--realtime",
            help="The client's workers (realtime=1) and the simulated array's serving threads under SCHED_FIFO, "
            "so that other work on the host does not delay replies (needs CAP_SYS_NICE or ulimit -r >= 1).",
        ),
    ] = False,
) -> None:
    """Seed 003: labs 1B-2B on a simulated 6-drive RAID 5 (or real storage), beside the workbook's values.

    Labs 1B, 1C, 1D, 2A and 2B, each table beside the workbook's reference
    values."""
    if device is not None and uri is not None:
        _usage("--device and --uri: give one of the two")
    if output is not None and not output.parent.is_dir():
        _usage(f"--output: directory {output.parent} does not exist")
    s = LabSettings(quick=quick, runtime_s=runtime, device=device, uri=uri, realtime=realtime)

    def progress(line: str) -> None:
        print(f"iolab lab raid: {line}", file=sys.stderr, flush=True)

    chosen = fmt or format_for(output)
    report = run_lab(s, progress)
    _write(RENDERERS[chosen.value](report), output, chosen)


def _write(text: str, output: Optional[Path], chosen: LabFormat) -> None:
    if output is not None:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"report written to {output} ({chosen.value})", err=True)
    else:
        sys.stdout.write(text)


#: Options ``--ioengine`` may add to the seed's commands (the engines that queue).
STUDY_ENGINES = ("io_uring", "libaio")


@lab_app.command("fio-study")
def fio_study(
    quick: Annotated[
        bool, typer.Option("--quick", help="size=64m, runtime=1s per run instead of the seed's 10G and 60 s.")
    ] = False,
    fmt: FormatOption = None,
    output: OutputOption = None,
    directory: Annotated[
        Optional[Path],
        typer.Option(
            "--dir", help="Run on DIR/testfile (the seed's --filename=testfile); default: a temporary directory."
        ),
    ] = None,
    device: Annotated[
        Optional[str],
        typer.Option(
            "--device", help="Run on this block device or file instead (it is WRITTEN: needs --allow-overwrite)."
        ),
    ] = None,
    sim: Annotated[
        bool, typer.Option("--sim", help="Run on a simulated SSD (sim-ssd, 1 GiB) served by iolab's target over NBD.")
    ] = False,
    ioengine: Annotated[
        Optional[str],
        typer.Option("--ioengine", help="Add ioengine=io_uring|libaio to the seed's commands (they name none: psync)."),
    ] = None,
    runtime: Annotated[
        Optional[str],
        typer.Option(
            "--runtime", help="Each run's runtime (fio's syntax: 300ms, 5s), overriding the seed's or --quick's."
        ),
    ] = None,
    size: Annotated[
        Optional[str],
        typer.Option("--size", help="The file's size (fio's syntax: 64m), overriding the seed's or --quick's."),
    ] = None,
    repeats: Annotated[int, typer.Option("--repeats", help="Measured repeats of every point.", min=1)] = 3,
    sweep: Annotated[
        Optional[list[str]],
        typer.Option("--sweep", help="Run only this sweep: bs, rwmix or qd (repeatable; default: all three)."),
    ] = None,
    results: Annotated[
        Optional[Path],
        typer.Option("--results", help="Keep the three sweeps' result directories here (iolab report reads them)."),
    ] = None,
    allow_overwrite: Annotated[
        bool, typer.Option("--allow-overwrite", help="Allow writing to the existing file or device of --device.")
    ] = False,
    restart: Annotated[
        bool, typer.Option("--restart", help="Discard the sweeps already in --results and run them again.")
    ] = False,
) -> None:
    """Seed 002 (fio on one SSD): its three sweeps beside its tables, and a verdict on each statement.

    The block size, read/write mix and queue depth sweeps with its
    commands as written, its tables beside the measured figures, its own
    figures checked, and a verdict on each statement of its analysis."""
    if (directory is not None) + (device is not None) + sim > 1:
        _usage("--dir, --device and --sim: give one of the three", "fio-study")
    if directory is not None and not directory.is_dir():
        _usage(f"--dir: {directory} is not a directory", "fio-study")
    if device is not None and not allow_overwrite:
        _usage(f"--device {device}: the seed's jobs write (randrw); add --allow-overwrite to let them", "fio-study")
    if ioengine is not None and ioengine not in STUDY_ENGINES:
        _usage(f"--ioengine: '{ioengine}' is not one of {', '.join(STUDY_ENGINES)}", "fio-study")
    if sim and ioengine is not None:
        _usage("--ioengine: --sim runs with ioengine=nbd (iolab's NBD client); leave --ioengine out", "fio-study")
    if output is not None and not output.parent.is_dir():
        _usage(f"--output: directory {output.parent} does not exist", "fio-study")
    if sim and size is not None:
        try:
            too_big = _native.parse_size(size) > _native.parse_size(SIM_CAPACITY)
        except ValueError as e:
            _usage(f"--size: {e}", "fio-study")
        if too_big:
            _usage(
                f"--size {size}: larger than the simulated SSD ({SIM_CAPACITY}); give at most {SIM_CAPACITY}",
                "fio-study",
            )
    for name in sweep or []:
        if name not in SWEEPS:
            _usage(f"--sweep: '{name}' is not one of {', '.join(SWEEPS)}", "fio-study")
    s = StudySettings(
        sweeps=tuple(dict.fromkeys(sweep)) if sweep else SWEEPS,
        quick=quick,
        size=size,
        runtime=runtime,
        repeats=repeats,
        directory=directory,
        device=device,
        sim=sim,
        additions=(("ioengine", ioengine),) if ioengine else (),
        results=results,
        allow_overwrite=allow_overwrite,
        restart=restart,
        progress=SweepProgress(),
    )
    chosen = fmt or format_for(output)
    report = run_fio_study(s)
    _write(STUDY_RENDERERS[chosen.value](report), output, chosen)


#: ``--output``'s suffix → the format written when ``--format`` is not given.
SUFFIX_FORMATS = {".txt": LabFormat.text, ".md": LabFormat.md, ".json": LabFormat.json, ".html": LabFormat.html}


def format_for(output: Optional[Path]) -> LabFormat:
    """The format ``--output``'s suffix names (``lab.html`` → html); text for
    stdout or another suffix."""
    return SUFFIX_FORMATS.get(output.suffix.lower(), LabFormat.text) if output is not None else LabFormat.text


def register(app: typer.Typer) -> None:
    from iolab.cli import (
        lab_pacing,  # noqa: F401 - registers `lab pacing` on lab_app
        lab_wire,  # noqa: F401  (registers `iolab lab wire` on lab_app)
    )

    app.add_typer(lab_app, name="lab")
