"""A fleet run as a result directory (``--results ROOT`` under MPI).

The directory is an ordinary run directory (so ``iolab ls``, ``show``,
``report`` and ``iolab.load`` read it) whose result is the exact merge of
the hosts, plus:

- ``fleet.json``: the per-host table, the clock (offsets, round trips,
  start skew), faults and whether the run is incomplete;
- ``hosts/rank-R.json``: each host's own results document.

Each point directory of a fleet sweep keeps the same two (through
``RunOutput.observed``: :func:`fleet_observed`).

An incomplete run is recorded as failed in the catalog, with its faults.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

from iolab.fleet.output import FleetResults, fleet_json, host_document
from iolab.results.catalog import save_run
from iolab.results.rundir import RANK_FILE_PREFIX, write_json

FLEET_FILE = "fleet.json"
HOSTS_DIR = "hosts"
Json = dict[str, Any]


def fleet_files(res: FleetResults) -> tuple[Json, Iterator[tuple[int, Json]]]:
    """``fleet.json`` (without the hosts' documents) and each rank's own
    results document, made one at a time as the iterator is read: 10,000
    hosts' documents are never in memory together."""
    doc = fleet_json(res, documents=False)
    doc.pop("total")
    per_rank = ((p.rank, d) for p in res.outcome.parts if (d := host_document(p)) is not None)
    return doc, per_rank


def fleet_observed(res: FleetResults) -> dict[str, Json]:
    """The same files as ``RunOutput.observed`` entries (``fleet``,
    ``hosts/rank-R``), which a sweep's point directory keeps as ``NAME.json``."""
    doc, per_rank = fleet_files(res)
    return {"fleet": doc, **{f"{RANK_FILE_PREFIX}{r}": d for r, d in per_rank}}


def save_fleet_run(root: Path, res: FleetResults, directory: Optional[Path] = None) -> Path:
    """The run directory: the merged result (its summary computed once, at
    the end of the run), ``fleet.json``, then each host's document written
    as it is made."""
    assert res.total is not None
    doc, per_rank = fleet_files(res)
    error = None
    if res.outcome.incomplete:
        error = "incomplete fleet run: " + "; ".join(res.outcome.faults)
    # ``directory``: the one rank 0 streamed the fleet's interval log into (--stream-intervals)
    directory = save_run(
        root, list(res.outcome.jobs), res.total, extra={FLEET_FILE: doc}, error=error, directory=directory
    )
    (directory / HOSTS_DIR).mkdir(exist_ok=True)
    for rank, document in per_rank:
        write_json(directory / HOSTS_DIR / f"rank-{rank}.json", document, compact=True)
    return directory


def iter_rank_results(directory: Path) -> Iterator[tuple[int, Any]]:
    """Each rank's own results document kept in a run or point directory,
    by rank, one at a time (10,000 hosts' documents are never in memory
    together)."""
    import json

    paths = {int(p.stem.removeprefix("rank-")): p for p in (directory / HOSTS_DIR).glob("rank-*.json")}
    for rank in sorted(paths):
        yield rank, json.loads(paths[rank].read_text(encoding="utf-8"))


def read_rank_results(directory: Path) -> dict[int, Any]:
    """Each rank's own results document kept in a run or point directory
    (``hosts/rank-R.json``; rank → document). Not the hosts table a fleet
    run is given (:func:`iolab.fleet.hosts.read_hosts`)."""
    import json

    out = {}
    for p in sorted((directory / HOSTS_DIR).glob("rank-*.json")):
        out[int(p.stem.removeprefix("rank-"))] = json.loads(p.read_text(encoding="utf-8"))
    return dict(sorted(out.items()))


def read_fleet(directory: Path) -> Any:
    """``fleet.json`` of a run directory, or None for a single-host run."""
    import json

    p = directory / FLEET_FILE
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else None


__all__ = [
    "FLEET_FILE",
    "HOSTS_DIR",
    "fleet_files",
    "fleet_observed",
    "iter_rank_results",
    "read_fleet",
    "read_rank_results",
    "save_fleet_run",
]
