"""``iolab target``: serve an NBD target in the foreground.

Exports come from a TOML file (``--config``) or compact specs
(``--export NAME=BACKEND,KEY=VALUE...+LAYER...``, repeatable); see
docs/target.md. Listening is on loopback unless ``--listen-any``. A
configuration error prints one line naming the key and exits 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer

from iolab import _native
from iolab.cli.errors import EXIT_JOB
from iolab.target import serve_foreground


def target(
    config: Annotated[Optional[Path], typer.Option("--config", help="Target config (TOML).")] = None,
    export: Annotated[
        Optional[list[str]],
        typer.Option("--export", help="Export spec NAME=BACKEND,...; repeatable."),
    ] = None,
    unix: Annotated[Optional[Path], typer.Option("--unix", help="Listen on this Unix socket.")] = None,
    tcp: Annotated[Optional[str], typer.Option("--tcp", help="Listen on HOST:PORT (default 127.0.0.1:10809).")] = None,
    stats_http: Annotated[Optional[str], typer.Option("--stats-http", help="Serve stats on HOST:PORT.")] = None,
    pacing: Annotated[
        Optional[str],
        typer.Option("--pacing", help="IO pacing, e.g. buffers=96,cache=6,unit=128k."),
    ] = None,
    read_only: Annotated[bool, typer.Option("--read-only", help="Serve every export read-only.")] = False,
    max_connections: Annotated[
        Optional[int], typer.Option("--max-connections", help="Open connections at most.")
    ] = None,
    max_request: Annotated[
        Optional[str],
        typer.Option("--max-request", help="Largest request payload, e.g. 48m (default and most 64m)."),
    ] = None,
    listen_any: Annotated[bool, typer.Option("--listen-any", help="Allow non-loopback addresses.")] = False,
    realtime: Annotated[
        bool,
        typer.Option("--realtime", help="Serving threads under SCHED_FIFO (needs CAP_SYS_NICE or ulimit -r >= 1)."),
    ] = False,
    conn_io: Annotated[
        Optional[str],
        typer.Option(
            "--conn-io",
            help="How connections receive requests: threads (a blocking recv; the default), uring (io_uring "
            "multishot receive; refused where io_uring is unavailable), auto (uring where the host allows it).",
        ),
    ] = None,
    zero_copy: Annotated[
        Optional[str],
        typer.Option(
            "--zero-copy",
            help="Reply data to Unix-socket clients by vmsplice+splice instead of a copying writev: off (the "
            "default), auto (sets of replies of 16 KiB or more each, 128 KiB at most in all), on (every set with "
            "data; refused with --tcp).",
        ),
    ] = None,
    metrics_summaries: Annotated[
        bool,
        typer.Option(
            "--metrics-summaries",
            help="/metrics also writes latency quantile summaries (not mergeable) beside the histograms.",
        ),
    ] = False,
) -> None:
    """Serve an NBD target until SIGTERM or SIGINT (then finish, flush, exit 0)."""
    if unix is not None and tcp is not None:
        _usage("--unix and --tcp: give one of the two")
    if metrics_summaries and stats_http is None:
        _usage("--metrics-summaries: /metrics is served with --stats-http HOST:PORT; give it too")
    listen = f"unix:{unix}" if unix is not None else tcp
    try:
        toml = config.read_text() if config is not None else None
        t = _native.Target(
            toml,
            export or [],
            listen=listen,
            stats_http=stats_http,
            read_only=read_only,
            max_connections=max_connections,
            allow_remote=listen_any,
            pacing=pacing,
            max_request=max_request,
            realtime=realtime,
            metrics_summaries=metrics_summaries,
            conn_io=conn_io,
            zero_copy=zero_copy,
        )
    except (ValueError, OSError) as e:
        where = f"{config}: " if config is not None and isinstance(e, ValueError) else ""
        _usage(f"{where}{e}")
    serve_foreground(t)


def _usage(msg: str) -> NoReturn:
    typer.echo(f"iolab target: {msg}", err=True)
    raise typer.Exit(EXIT_JOB)


def register(app: typer.Typer) -> None:
    app.command()(target)
