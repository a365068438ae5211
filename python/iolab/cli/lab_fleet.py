"""``iolab lab fleet``: seed 001 (VM Fleet on Storage Spaces Direct) as one
command, registered on ``iolab lab`` by :func:`register` (from
:mod:`iolab.cli.main`: this module reads :mod:`iolab.cli.lab`'s options,
so that one cannot import it back)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from iolab.cli.lab import FormatOption, OutputOption, _usage, _write, format_for
from iolab.lab.fleet_lab import FleetLabSettings, run_lab
from iolab.lab.fleet_lab.render import RENDERERS
from iolab.lab.fleet_lab.topology import DEFAULT_LIMIT_IOPS, DEFAULT_NODES, DEFAULT_VMS


class _Live:
    """The cluster view redrawn in place on stderr, only on a terminal."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
        self._lines = 0

    def show(self, view: Any) -> None:
        if not self.tty:
            return
        from iolab.lab.fleet_lab.watch import watch_table

        table = watch_table(view)
        sys.stderr.write((f"\x1b[{self._lines}F\x1b[J" if self._lines else "") + table + "\n")
        sys.stderr.flush()
        self._lines = table.count("\n") + 1

    def note(self, line: str) -> None:
        sys.stderr.write(f"iolab lab fleet: {line}\n")
        sys.stderr.flush()
        self._lines = 0


def fleet(
    quick: Annotated[
        bool, typer.Option("--quick", help="10 s of load and 16 MiB per VM instead of 60 s and 32 MiB.")
    ] = False,
    fmt: FormatOption = None,
    output: OutputOption = None,
    vms: Annotated[
        int, typer.Option("--vms", help="VMs (MPI ranks), each its own export and QoS limit.", min=1)
    ] = DEFAULT_VMS,
    nodes: Annotated[
        Optional[int],
        typer.Option(
            "--nodes", help=f"Nodes, each a 3-way mirror of simulated SSDs \\[default: {DEFAULT_NODES}].", min=1
        ),
    ] = None,
    runtime: Annotated[
        Optional[float], typer.Option("--runtime", help="Seconds of load (overrides --quick).", min=0.5)
    ] = None,
    limit_iops: Annotated[
        int,
        typer.Option("--limit-iops", help="The lowest VM's QoS limit (IOPS); each next VM's is limit/N higher.", min=1),
    ] = DEFAULT_LIMIT_IOPS,
    vm_size: Annotated[
        Optional[str], typer.Option("--vm-size", help="Each VM's file (its part of its node's mirror), e.g. 32m.")
    ] = None,
    netns: Annotated[
        Optional[bool],
        typer.Option(
            "--netns/--no-netns",
            help="Nodes as network namespaces (needs root); default: where root, else local ranks.",
            show_default=False,
        ),
    ] = None,
    hostfile: Annotated[
        Optional[Path],
        typer.Option(
            "--hostfile", help="Open MPI hostfile: the VMs on these hosts (over ssh), each host a node; needs --uri."
        ),
    ] = None,
    uri: Annotated[
        Optional[str],
        typer.Option("--uri", help="A real NBD server instead ({rank} gives each VM its own export); never written."),
    ] = None,
) -> None:
    """Seed 001 (VM Fleet on Storage Spaces Direct): VMs as MPI ranks, the post's figures and a verdict on each.

    N VMs as MPI ranks on nodes, 512 KiB random read at QD 3 each under
    its own QoS limit, against a 3-way mirror of simulated SSDs per node;
    a live cluster view, then the post's figures beside the measured ones
    and a verdict on each claim."""
    if output is not None and not output.parent.is_dir():
        _usage(f"--output: directory {output.parent} does not exist", "fleet")
    if uri is not None and vm_size is not None:
        _usage("--uri: a real server's exports are its own; leave out --vm-size", "fleet")
    if uri is not None and netns is not None:
        _usage(
            "--uri: the VMs reach a real server from this host or --hostfile's; leave out --netns/--no-netns", "fleet"
        )
    if hostfile is not None and nodes is not None:
        _usage("--nodes: with --hostfile each host is a node; leave --nodes out", "fleet")
    s = FleetLabSettings(
        vms=vms,
        nodes=DEFAULT_NODES if nodes is None else nodes,
        quick=quick,
        runtime_s=runtime,
        limit_iops=limit_iops,
        vm_size=vm_size,
        hostfile=hostfile,
        uri=uri,
        netns=netns,
    )
    live = _Live()
    chosen = fmt or format_for(output)
    report = run_lab(s, live.note, live.show)
    _write(RENDERERS[chosen.value](report), output, chosen)


def register(lab_app: typer.Typer) -> None:
    lab_app.command("fleet")(fleet)


__all__ = ["fleet", "register"]
