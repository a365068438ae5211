"""Options shared by several commands, declared once so their help cannot drift."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Optional

import typer

from iolab.errors import JobError
from iolab.run.metrics import MetricsServer

AllowOverwrite = Annotated[
    bool,
    typer.Option(
        "--allow-overwrite",
        help="Allow writing to existing files iolab did not create and to block devices "
        "(never to mounted devices or ones holding a filesystem).",
    ),
]

TestTarget = Annotated[
    Optional[str],
    typer.Option("--target", help="File or device to test (replaces the filename of the plan's or the job's options)."),
]

MetricsAddress = Annotated[
    Optional[str],
    typer.Option(
        "--metrics",
        help="Serve the running engine's Prometheus /metrics on HOST:PORT (loopback when only PORT is given): "
        "I/O and byte counters and latency histograms per job and direction.",
    ),
]

MetricsSummaries = Annotated[
    bool,
    typer.Option(
        "--metrics-summaries",
        help="/metrics also writes latency quantile summaries (not mergeable) beside the histograms.",
    ),
]


@contextmanager
def metrics_server(address: Optional[str], summaries: bool) -> Iterator[Optional[MetricsServer]]:
    """The engine's /metrics for the command's lifetime (None: not asked)."""
    if address is None:
        if summaries:
            raise JobError("--metrics-summaries: /metrics is served with --metrics HOST:PORT; give it too")
        yield None
        return
    server = MetricsServer(address, summaries=summaries)
    typer.echo(f"iolab: metrics on http://{server.address}/metrics", err=True)
    try:
        yield server
    finally:
        server.close()
