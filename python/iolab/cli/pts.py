"""``iolab pts TEST DEVICE|FILE|--uri URI``: the SNIA PTS procedure (iolab.pts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from iolab.cli.options import AllowOverwrite
from iolab.cli.sweep import DEFAULT_RESULTS
from iolab.errors import JobError
from iolab.pts.matrix import TESTS, VARIANTS
from iolab.pts.procedure import PTS_FILE, run_pts
from iolab.pts.report import format_pts_html, format_pts_markdown, format_pts_text
from iolab.pts.settings import PtsSettings, parse_percentiles

FORMATS = ("text", "md", "json", "html")

PTS_HELP = f"""Run a SNIA Solid State Storage PTS test: {", ".join(TESTS)}.

Examples:

  iolab pts wsat --uri 'nbd+unix:///ssd?socket=/tmp/t.sock' --quick

  iolab pts iops /dev/nvme1n1 --purge-device /dev/nvme1n1 --allow-overwrite

  iolab pts report results/pts-iops --format html

Purge (NBD TRIM/WRITE_ZEROES; a block device: BLKDISCARD, only with
--purge-device naming it again and --allow-overwrite, never a mounted
device; a file: removed and laid out anew), preconditioning (2x capacity
of 128 KiB sequential writes; not for WSAT), then rounds of the test's
matrix until the tracking variable's 5-round window is steady (data
excursion ≤ 20 % and slope excursion ≤ 10 % of the window's mean; at most
25 rounds). Each cell of each round is a run kept in RESULTS/<name>/
(a sweep directory); pts.json, pts.md and pts.html beside them. Shrink
with --round-time, --max-rounds, --capacity or --quick: the verdict says
what was shrunk. See docs/pts.md.
"""


def render(doc: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"
    if fmt == "md":
        return format_pts_markdown(doc)
    if fmt == "html":
        return format_pts_html(doc)
    return format_pts_text(doc)


def pts(
    test: Annotated[str, typer.Argument(help=f"The test: {', '.join(TESTS)}; or 'report' and a result directory.")],
    target: Annotated[Optional[str], typer.Argument(help="The block device or file to test.")] = None,
    uri: Annotated[
        Optional[str], typer.Option("--uri", help="Test an NBD export instead: nbd://HOST[:PORT]/NAME.")
    ] = None,
    variant: Annotated[str, typer.Option("--variant", help=f"{' or '.join(VARIANTS)} (PTS-E / PTS-C).")] = "enterprise",
    round_time: Annotated[
        Optional[str], typer.Option("--round-time", help="Each cell's run per round (the spec: 60s).")
    ] = None,
    max_rounds: Annotated[
        Optional[int], typer.Option("--max-rounds", help="Rounds at most (the spec: 25; WSAT 360).")
    ] = None,
    capacity: Annotated[
        Optional[str], typer.Option("--capacity", help="Test and precondition only this much (a file: its size).")
    ] = None,
    wsat_fills: Annotated[
        Optional[float], typer.Option("--wsat-fills", help="WSAT: stop once this many capacities are written (4).")
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="Shrink: 2s rounds, at most 10, 1 GiB, smaller matrices.")
    ] = False,
    no_purge: Annotated[bool, typer.Option("--no-purge", help="Skip the purge (the verdict says so).")] = False,
    purge_device: Annotated[
        Optional[str], typer.Option("--purge-device", help="Confirm purging a block device: name it again.")
    ] = None,
    ioengine: Annotated[
        Optional[str], typer.Option("--ioengine", help="Engine for a device or file (io_uring).")
    ] = None,
    direct: Annotated[bool, typer.Option("--direct/--buffered", help="O_DIRECT for a device or file.")] = True,
    name: Annotated[Optional[str], typer.Option("--name", help="Result directory name (pts-TEST).")] = None,
    results: Annotated[Path, typer.Option("--results", help="Results root.")] = DEFAULT_RESULTS,
    restart: Annotated[bool, typer.Option("--restart", help="Discard an earlier run of this name.")] = False,
    percentiles: Annotated[
        Optional[str],
        typer.Option("--percentiles", help="Latency percentiles reported (50,99,99.9,99.99,99.999)."),
    ] = None,
    output_format: Annotated[str, typer.Option("--format", help=f"Stdout: {', '.join(FORMATS)}.")] = "text",
    allow_overwrite: AllowOverwrite = False,
) -> None:
    if output_format not in FORMATS:
        raise JobError(f"--format {output_format}: choose one of {', '.join(FORMATS)}")
    if test == "report":
        if target is None:
            raise JobError("iolab pts report DIR: give the result directory of a PTS test")
        path = Path(target) / PTS_FILE
        if not path.is_file():
            raise JobError(f"{target}: no {PTS_FILE}: not the result directory of a finished PTS test")
        typer.echo(render(json.loads(path.read_text(encoding="utf-8")), output_format), nl=False)
        return
    settings = PtsSettings(
        test=test,
        variant=variant,
        round_time=round_time,
        max_rounds=max_rounds,
        capacity=capacity,
        wsat_fills=wsat_fills,
        quick=quick,
        purge=not no_purge,
        purge_device=purge_device,
        allow_overwrite=allow_overwrite,
        ioengine=ioengine,
        direct=direct,
        name=name,
        restart=restart,
        **({"percentiles": parse_percentiles(percentiles)} if percentiles is not None else {}),
    )
    outcome = run_pts(settings, target, uri, results, say=lambda line: typer.echo(f"iolab: {line}", err=True))
    doc = outcome.doc
    (outcome.directory / "pts.md").write_text(format_pts_markdown(doc), encoding="utf-8")
    (outcome.directory / "pts.html").write_text(format_pts_html(doc), encoding="utf-8")
    typer.echo(render(doc, output_format), nl=False)
    typer.echo(f"results in {outcome.directory} (pts.json, pts.md, pts.html)", err=True)


def register(app: typer.Typer) -> None:
    app.command(help=PTS_HELP)(pts)
