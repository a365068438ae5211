"""Preparing every rank's engine in waves, so ranks that share a file lay it out once.

Ranks that name one path share that file, as fio's jobs do when they name
one ``filename`` (and as ranks on one host do with the default
``jobname.jobnum.filenum`` names). The engine lays a file out with
``O_CREAT|O_EXCL`` and finds a file it laid out earlier complete, so the
ranks that could share a file must not lay it out at the same time: one
lays it out, the others then find it.

Which ranks share a file is not known before the engine resolves the names
(and whether two hosts share a file system is not known at all), so the
ranks prepare in up to three waves, each ended by a collective:

0. rank 0;
1. the first rank of every other host (a file system shared by every host,
   as on a cluster, finds rank 0's file laid out);
2. every other rank (finds its host's file laid out, or lays out its own).

A file that needs no laying out (it is complete, or the job has no file)
costs a wave only the collective. A file laid out for the first time by
ranks of several waves (each its own file, e.g. ``filename=data{rank}.dat``
from a hosts table) is laid out one wave after another.

Any failure ends every rank with the failing host named; a file created by
another rank or process while this one laid it out (``File exists``) says
so, and how to give each rank its own file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable, Optional

from iolab.fleet.comm import World
from iolab.fleet.env import FleetError
from iolab.run.local import RunLike

#: What a ``File exists`` at layout means on a fleet, and the way out.
RACE_HINT = (
    "another rank (or process) created this file while this rank laid it out (ranks of one preparing wave "
    "named one path: a file system shared by several hosts?); to give each rank its own file, use a hosts "
    'table (--hosts) with [default] filename = "NAME.{rank}" (docs/fleet.md, "Files shared by ranks")'
)


def prepare_waves(hostnames: Sequence[str]) -> list[int]:
    """The wave each rank prepares in (see the module doc): 0 for rank 0,
    1 for the first rank of every other host, 2 for the rest."""
    waves = []
    for r, h in enumerate(hostnames):
        waves.append(0 if r == 0 else 1 if h not in hostnames[:r] else 2)
    return waves


def prepare_in_waves(
    world: World, hostnames: Sequence[str], labels: Sequence[str], make: Callable[[], RunLike]
) -> RunLike:
    """Every rank calls ``make`` (prepares its engine) in its wave; after each
    wave every rank learns whether one failed, and if so every rank raises the
    first failing rank's error, its host named (the later waves never start)."""
    waves = prepare_waves(hostnames)
    mine = waves[world.rank]
    run: Optional[RunLike] = None
    for wave in sorted(set(waves)):
        error: Optional[BaseException] = None
        if wave == mine:
            try:
                run = make()
            except Exception as e:  # reported to every rank below
                error = e
        outcomes = world.allgather(None if error is None else (type(error), str(error)))
        _raise_first(outcomes, labels)
    assert run is not None
    return run


def _raise_first(outcomes: Sequence[Optional[tuple[type, str]]], labels: Sequence[str]) -> None:
    for r, o in enumerate(outcomes):
        if o is None:
            continue
        kind, text = o
        if issubclass(kind, FileExistsError):
            text = f"{text}; {RACE_HINT}"
        raise kind(f"{labels[r]} (rank {r}): {text}") if issubclass(kind, Exception) else FleetError(text)


__all__ = ["RACE_HINT", "prepare_in_waves", "prepare_waves"]
