"""``iolab lab wire``: seed 000 (SMB Direct file server: client, server
and wire latency; scaling; c/B; the bottleneck) as one command. Registered
on ``iolab lab`` by :func:`iolab.cli.lab.register`."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Optional

import typer

from iolab import _native
from iolab.cli.lab import FormatOption, OutputOption, _usage, _write, format_for, lab_app
from iolab.errors import IolabError
from iolab.lab.wire import Link, WireSettings, run_lab
from iolab.lab.wire.render import RENDERERS
from iolab.lab.wire.run import TABLE_KEYS
from iolab.run.api import Job, run
from iolab.run.wire import TargetStats


def _cpus(text: str, option: str) -> tuple[int, ...]:
    try:
        out: set[int] = set()
        for part in text.split(","):
            a, _, b = part.partition("-")
            out.update(range(int(a), int(b or a) + 1))
    except ValueError:
        _usage(f"{option} '{text}': expected CPU numbers like 0 or 0-1 or 0,2", "wire")
    mine = os.sched_getaffinity(0)
    if not out or not out <= mine:
        _usage(f"{option} '{text}': this process may run on CPUs {sorted(mine)} only", "wire")
    return tuple(sorted(out))


def _check_uri(uri: str, target_stats: Optional[str]) -> None:
    """Fail early, in one line, on a URI or stats URL that does not answer
    (one 4 KiB read)."""
    try:
        run(Job("probe", ioengine="nbd", uri=uri, rw="read", bs="4k", size="4k"))
    except (IolabError, OSError, ValueError) as e:
        _usage(f"--uri {uri}: {e}", "wire")
    if target_stats is not None:
        try:
            TargetStats(target_stats, option="--target-stats").check()
        except IolabError as e:
            _usage(str(e), "wire")


@lab_app.command("wire")
def wire(
    quick: Annotated[
        bool, typer.Option("--quick", help="1 s per step and 1, 2, 4 threads (about a minute) instead of 60 s and 1-8.")
    ] = False,
    fmt: FormatOption = None,
    output: OutputOption = None,
    runtime: Annotated[
        Optional[float], typer.Option("--runtime", help="Seconds per step (overrides --quick's 1 s).", min=0.2)
    ] = None,
    threads: Annotated[
        Optional[str], typer.Option("--threads", help="Thread steps of Tables 2-4, e.g. 1,2,4 (20 I/Os per thread).")
    ] = None,
    table: Annotated[
        Optional[list[str]], typer.Option("--table", help="Run only this table: table1..table4 (repeatable).")
    ] = None,
    bw: Annotated[
        str, typer.Option("--bw", help="The simulated link's bandwidth per second (size syntax: 1g = 1 GiB/s).")
    ] = "2g",
    lat: Annotated[str, typer.Option("--lat", help="Latency the simulated link adds to every request.")] = "50us",
    server_cpus: Annotated[
        Optional[str], typer.Option("--server-cpus", help="Pin the simulated server to these CPUs (e.g. 0).")
    ] = None,
    client_cpus: Annotated[
        Optional[list[str]],
        typer.Option(
            "--client-cpus", help="cpus_allowed of each client instance (give it twice; default: one CPU each)."
        ),
    ] = None,
    uri: Annotated[
        Optional[str],
        typer.Option("--uri", help="Run against this NBD server (one export) instead of the simulated one."),
    ] = None,
    target_stats: Annotated[
        Optional[str],
        typer.Option(
            "--target-stats", help="With --uri: the iolab target's stats URL (its --stats-http), for server figures."
        ),
    ] = None,
) -> None:
    """Seed 000 (SMB Direct file server): Tables 1-4 beside the measured ones, and a verdict on each claim.

    Client, server and wire latency; scaling; c/B; %CPU; and a verdict on
    each of the paper's claims."""
    if output is not None and not output.parent.is_dir():
        _usage(f"--output: directory {output.parent} does not exist", "wire")
    if target_stats is not None and uri is None:
        _usage("--target-stats: give it with --uri (the simulated server's stats are read anyway)", "wire")
    if uri is not None and (server_cpus is not None or bw != "2g" or lat != "50us"):
        _usage("--bw, --lat, --server-cpus: they set up the simulated server; --uri runs against yours", "wire")
    for t in table or []:
        if t not in TABLE_KEYS:
            _usage(f"--table: '{t}' is not one of {', '.join(TABLE_KEYS)}", "wire")
    steps = None
    if threads is not None:
        try:
            steps = tuple(int(x) for x in threads.split(","))
        except ValueError:
            steps = ()
        if not steps or any(n < 1 for n in steps) or list(steps) != sorted(set(steps)):
            _usage(f"--threads '{threads}': expected rising whole numbers like 1,2,4", "wire")
    for option, value in (("--bw", bw), ("--lat", lat)):
        try:
            (_native.parse_size if option == "--bw" else _native.parse_duration_ns)(value)
        except ValueError as e:
            _usage(f"{option} '{value}': {e}", "wire")
    if client_cpus is not None:
        if len(client_cpus) != 2:
            _usage("--client-cpus: give it twice, once per client instance", "wire")
        for c in client_cpus:
            _cpus(c, "--client-cpus")
    if uri is not None:
        _check_uri(uri, target_stats)
    s = WireSettings(
        quick=quick,
        runtime_s=runtime,
        link=Link(bw=bw, lat=lat),
        server_cpus=_cpus(server_cpus, "--server-cpus") if server_cpus is not None else None,
        client_cpus=tuple(client_cpus) if client_cpus is not None else None,
        threads=steps,
        tables=tuple(dict.fromkeys(table)) if table else TABLE_KEYS,
        uri=uri,
        target_stats=target_stats,
    )

    def progress(line: str) -> None:
        print(f"iolab lab wire: {line}", file=sys.stderr, flush=True)

    chosen = fmt or format_for(output)
    report = run_lab(s, progress)
    _write(RENDERERS[chosen.value](report), output, chosen)


__all__ = ["wire"]
