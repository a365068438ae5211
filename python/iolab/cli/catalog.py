"""``iolab ls`` and ``iolab show RUN``: the catalog of a results root."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from iolab.cli.sweep import DEFAULT_RESULTS
from iolab.errors import IolabError
from iolab.report import format_text
from iolab.results.catalog import CATALOG_FILE, Catalog
from iolab.results.rundir import read_document
from iolab.units import fmt_num

ResultsOption = Annotated[Path, typer.Option("--results", help="Results root holding catalog.sqlite.")]


def _when(ns: int) -> str:
    return datetime.datetime.fromtimestamp(ns / 1e9).strftime("%Y-%m-%d %H:%M")


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows])


def _catalog(results: Path) -> Catalog:
    if not (results / CATALOG_FILE).exists():
        raise IolabError(f"{results}: no {CATALOG_FILE} here (run `iolab sweep` or `iolab run --results` first)")
    return Catalog(results)


def _entry_row(e: dict[str, Any]) -> list[str]:
    iops = f"{e['iops']:.0f}" if e["iops"] else "-"
    bw = fmt_num(e["bw_bytes_per_s"] / 1e6) if e["bw_bytes_per_s"] else "-"
    return [e["id"], e["kind"], e["status"], _when(e["started_unix_ns"]), e["host"] or "", str(e["runs"]), iops, bw]


def ls(results: ResultsOption = DEFAULT_RESULTS) -> None:
    """List the runs and sweeps under a results root (best IOPS and bandwidth:
    the highest run's, its stonewall groups' totals added)."""
    rows = [_entry_row(e) for e in _catalog(results).entries()]
    header = ["ID", "KIND", "STATUS", "STARTED", "HOST", "RUNS", "BEST IOPS", "BEST BW (MB/s)"]
    typer.echo(_table(header, rows) if rows else f"{results}: no runs yet")


def _figure_row(f: dict[str, Any]) -> list[str]:
    params = ", ".join(f"{k}={v}" for k, v in json.loads(f["params"]).items())
    lat = [fmt_num(f["lat_mean_ns"] / 1e3), fmt_num(f["lat_p99_ns"] / 1e3) if f["lat_p99_ns"] else "-"]
    return [
        str(f["point"]),
        str(f["repeat"]),
        params,
        f["dir"],
        f"{f['iops']:.0f}",
        fmt_num(f["bw_bytes_per_s"] / 1e6),
        *lat,
    ]


#: One unit per column, in its header; latency in µs as in every report table.
SWEEP_HEADER = ["POINT", "REPEAT", "PARAMS", "DIR", "IOPS", "BW (MB/s)", "LAT MEAN (µs)", "LAT P99 (µs)"]


def _sweep_table(figures: list[dict[str, Any]]) -> str:
    return _table(SWEEP_HEADER, [_figure_row(f) for f in figures])


def show(
    run: Annotated[str, typer.Argument(help="A run or sweep id (see `iolab ls`), or its directory.")],
    results: ResultsOption = DEFAULT_RESULTS,
) -> None:
    """Show a run's summary (or a sweep's points) and where its files are."""
    if Path(run, "result.json").is_file():
        typer.echo(format_text(read_document(Path(run))))
        typer.echo(f"\nfiles: {Path(run).resolve()}")
        return
    catalog = _catalog(results)
    entry = catalog.find(run)
    if entry is None:
        raise IolabError(f"{run}: no such run or sweep in {results} (see `iolab ls --results {results}`)")
    directory = results / entry["path"]
    if entry["kind"] == "run":
        typer.echo(format_text(read_document(directory)))
    else:
        typer.echo(f"sweep {entry['id']} ({entry['status']}), plan hash {entry['plan_hash'][:12]}")
        typer.echo(_sweep_table(catalog.figures(run)))
    typer.echo(f"\nfiles: {directory.resolve()}")


def register(app: typer.Typer) -> None:
    app.command(name="ls")(ls)
    app.command()(show)
