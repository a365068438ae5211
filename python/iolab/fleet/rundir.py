"""A fleet run as a result directory (``--results ROOT`` under MPI).

The directory is an ordinary run directory (so ``iolab ls``, ``show``,
``report`` and ``iolab.load`` read it) whose result is the exact merge of
the hosts, plus:

- ``fleet.json``: the per-host table, the clock (offsets, round trips,
  start skew), faults and whether the run is incomplete;
- ``hosts/rank-R.json``: each host's own results document.

An incomplete run is recorded as failed in the catalog, with its faults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iolab.fleet.output import FleetResults, fleet_json
from iolab.results.catalog import save_run
from iolab.results.rundir import write_json

FLEET_FILE = "fleet.json"


def save_fleet_run(root: Path, res: FleetResults) -> Path:
    assert res.total is not None
    doc = fleet_json(res)
    hosts = doc.pop("hosts")
    doc.pop("total")
    doc["hosts"] = [{k: v for k, v in h.items() if k != "document"} for h in hosts]
    error = None
    if res.outcome.incomplete:
        error = "incomplete fleet run: " + "; ".join(res.outcome.faults)
    directory = save_run(root, list(res.outcome.jobs), res.total, extra={FLEET_FILE: doc}, error=error)
    (directory / "hosts").mkdir(exist_ok=True)
    for h in hosts:
        if h["document"] is not None:
            write_json(directory / "hosts" / f"rank-{h['rank']}.json", h["document"])
    return directory


def read_fleet(directory: Path) -> Any:
    """``fleet.json`` of a run directory, or None for a single-host run."""
    import json

    p = directory / FLEET_FILE
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else None


__all__ = ["FLEET_FILE", "read_fleet", "save_fleet_run"]
