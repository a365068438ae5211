"""The catalog: an SQLite index of the runs and sweeps under a results root.

``RESULTS/catalog.sqlite`` has two tables:

- ``entries``: one row per run or sweep — ``id``, ``kind`` (run | sweep),
  ``name``, ``started_unix_ns``, ``host``, ``plan_hash``, ``status``
  (running | complete | interrupted | failed: an error stopped it), ``path`` (relative to the root).
- ``figures``: one row per run directory (a point x repeat of a sweep, or a
  run), job and direction — ``entry_id``, ``run_id``, ``point``, ``repeat``,
  ``params`` (JSON), ``job``, ``dir``, ``iops``, ``bw_bytes_per_s``,
  ``lat_mean_ns``, ``lat_p99_ns``.
- ``groups``: one row per run directory and stonewall group — ``entry_id``,
  ``run_id``, ``grp``, ``iops``, ``bw_bytes_per_s``: the core's group totals
  (``summary.groups[].total``, both directions over the group's longest
  runtime), the figure a run's "best" is ranked by.

:func:`save_run` writes and indexes one ``iolab run --results``.

The directories are the truth; the catalog only indexes them (a deleted
directory is skipped by ``iolab ls``).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from iolab.jobs import JobSpec
from iolab.results.rundir import figure_rows, observed_files, run_config, write_run_dir
from iolab.run.hostfacts import host_facts
from iolab.run.local import RunOutput, prepare_all

CATALOG_FILE = "catalog.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, started_unix_ns INTEGER NOT NULL,
    host TEXT, plan_hash TEXT, status TEXT NOT NULL, path TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS figures (
    entry_id TEXT NOT NULL, run_id TEXT NOT NULL, point INTEGER, repeat INTEGER, params TEXT NOT NULL,
    job TEXT NOT NULL, dir TEXT NOT NULL, iops REAL, bw_bytes_per_s REAL, lat_mean_ns REAL, lat_p99_ns REAL
);
CREATE INDEX IF NOT EXISTS figures_entry ON figures (entry_id);
CREATE TABLE IF NOT EXISTS groups (
    entry_id TEXT NOT NULL, run_id TEXT NOT NULL, grp INTEGER NOT NULL, iops REAL, bw_bytes_per_s REAL
);
CREATE INDEX IF NOT EXISTS groups_entry ON groups (entry_id);
"""


class Catalog:
    """The catalog of ``root`` (created on first use)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / CATALOG_FILE
        with self._connect() as db:
            db.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10)
        db.row_factory = sqlite3.Row
        return db

    def _rel(self, path: Path) -> str:
        try:
            return str(path.resolve().relative_to(self.root.resolve()))
        except ValueError:
            return str(path.resolve())

    def add_sweep(self, meta: dict[str, Any], directory: Path) -> None:
        host = meta.get("host") or _hostname()
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO entries VALUES (?, 'sweep', ?, ?, ?, ?, 'running', ?)",
                (meta["id"], meta["id"], meta["started_unix_ns"], host, meta["plan_hash"], self._rel(directory)),
            )

    def add_run(
        self, run_id: str, name: str, directory: Path, doc: dict[str, Any], interrupted: bool, failed: bool = False
    ) -> None:
        """A single run (``iolab run --results``) and its figures."""
        status = "failed" if failed else "interrupted" if interrupted else "complete"
        started = doc["summary"].get("start_unix_ns") or time.time_ns()
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO entries VALUES (?, 'run', ?, ?, ?, NULL, ?, ?)",
                (run_id, name, started, _hostname(), status, self._rel(directory)),
            )
            self._add_figures(db, run_id, {"id": run_id}, doc)

    def add_point(self, run_meta: dict[str, Any], directory: Path, doc: dict[str, Any]) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM figures WHERE run_id = ?", (run_meta["id"],))
            db.execute("DELETE FROM groups WHERE run_id = ?", (run_meta["id"],))
            self._add_figures(db, run_meta["sweep"], run_meta, doc)

    def _add_figures(self, db: sqlite3.Connection, entry_id: str, meta: dict[str, Any], doc: dict[str, Any]) -> None:
        params = json.dumps(meta.get("params", {}), sort_keys=True)
        rows = [
            (entry_id, meta["id"], meta.get("point"), meta.get("repeat"), params, f["job"], f["dir"], *_figures(f))
            for f in figure_rows(doc)
        ]
        db.executemany("INSERT INTO figures VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        totals = [
            (entry_id, meta["id"], int(g["group"]), g["total"]["iops"], g["total"]["bw_bytes_per_s"])
            for g in doc["summary"]["groups"]
        ]
        db.executemany("INSERT INTO groups VALUES (?, ?, ?, ?, ?)", totals)

    def set_status(self, entry_id: str, status: str) -> None:
        with self._connect() as db:
            db.execute("UPDATE entries SET status = ? WHERE id = ?", (status, entry_id))

    def forget(self, entry_id: str) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM entries WHERE id = ?", (entry_id,))
            db.execute("DELETE FROM figures WHERE entry_id = ?", (entry_id,))
            db.execute("DELETE FROM groups WHERE entry_id = ?", (entry_id,))

    def entries(self) -> list[dict[str, Any]]:
        """Every run and sweep whose directory still exists, oldest first,
        with ``runs`` (run directories indexed) and ``iops``/``bw_bytes_per_s``
        (the best run's: its stonewall groups' totals, the core's group
        figure, added over the groups)."""
        query = """
            SELECT e.*, (SELECT COUNT(DISTINCT f.run_id) FROM figures f WHERE f.entry_id = e.id) AS runs,
                MAX(t.iops) AS iops, MAX(t.bw) AS bw_bytes_per_s
            FROM entries e
            LEFT JOIN (
                SELECT entry_id, run_id, SUM(iops) AS iops, SUM(bw_bytes_per_s) AS bw FROM groups GROUP BY run_id
            ) t ON t.entry_id = e.id
            GROUP BY e.id ORDER BY e.started_unix_ns, e.id
        """
        with self._connect() as db:
            rows = [dict(r) for r in db.execute(query)]
        return [r for r in rows if (self.root / r["path"]).exists()]

    def find(self, entry_id: str) -> Optional[dict[str, Any]]:
        return next((e for e in self.entries() if e["id"] == entry_id), None)

    def figures(self, entry_id: str) -> list[dict[str, Any]]:
        with self._connect() as db:
            rows = db.execute("SELECT * FROM figures WHERE entry_id = ? ORDER BY point, repeat, job, dir", (entry_id,))
            return [dict(r) for r in rows]


def save_run(
    root: Path,
    specs: Sequence[JobSpec],
    out: RunOutput,
    extra: Optional[dict[str, Any]] = None,
    error: Optional[str] = None,
    directory: Optional[Path] = None,
) -> Path:
    """Write a run (``iolab run --results ROOT``) to ``ROOT/run-YYYYmmdd-HHMMSS``
    and index it; returns the directory. ``extra``: more files for the
    directory (``{"wire.json": ...}``), written before ``run.json`` marks it
    complete. ``error``: the error that ended the run early (its results
    cover the work done before it); recorded in ``run.json`` and as status
    ``failed`` in the catalog. ``directory``: the run's directory under
    ``root`` made before the run (:func:`new_run_dir`: a run that streams
    its intervals there as it goes)."""
    directory = directory or new_run_dir(root, create=False)
    prepared = out.prepared or prepare_all(specs)
    config = run_config(specs, prepared)
    first = prepared[0] if prepared else {}
    target = (first.get("filenames") or [None])[0] or first.get("directory")
    host = host_facts(Path(target) if isinstance(target, str) else None)
    meta: dict[str, Any] = {"id": directory.name, "kind": "run", "interrupted": out.interrupted}
    meta["finished_unix_ns"] = time.time_ns()
    if error is not None:
        meta["error"] = error
    doc = write_run_dir(
        directory, out.result_json, out.summary_json, run_meta=meta, config=config, host=host,
        extra={**observed_files(out.observed), **(extra or {})},
    )  # fmt: skip
    name = ",".join(dict.fromkeys(j.name for j in specs))
    Catalog(root).add_run(directory.name, name, directory, doc, out.interrupted, failed=error is not None)
    return directory


def new_run_dir(root: Path, create: bool = True) -> Path:
    """A new run directory's path, ``ROOT/run-YYYYmmdd-HHMMSS[-N]``; made
    (empty) with ``create``."""
    stamp = time.strftime("run-%Y%m%d-%H%M%S")
    directory, n = root / stamp, 1
    while directory.exists():
        n += 1
        directory = root / f"{stamp}-{n}"
    if create:
        directory.mkdir(parents=True)
    return directory


def _figures(f: dict[str, Any]) -> tuple[Any, ...]:
    return (f["iops"], f["bw_bytes_per_s"], f["lat_mean_ns"], f["lat_p99_ns"])


def _hostname() -> str:
    import socket

    return socket.gethostname()
