"""Self-describing result directories, and reading them back as tables.

A run directory (one ``iolab run --results``, one point x repeat of a sweep)::

    config.json        the jobs as written and as prepared (every option resolved)
    host.json          host facts (iolab.run.hostfacts), with the target's filesystem and device
    result.json        the iolab.result/1 document: summary, histograms (HdrHistogram V2), raw series
    timeseries.parquet the per-interval series of every job and direction (pyarrow); a streamed
                       run's also every stonewall group's, and its result.json leaves them out
    diskstats.json     the device under the files over the run (iolab.run.diskstats), when measured
    run.json           id, kind, times, tool version, interrupted; written LAST: its presence marks
                       the directory complete

:class:`RunRecord` is the same in memory: :func:`write_record` is the one
writer, :func:`run_config` builds ``config.json`` (a run, a sweep point and
``iolab quick`` alike), :func:`read_record` reads a directory back.

A sweep directory holds ``sweep.json``, the plan and ``points/pNNN-rK/`` run
directories (see :mod:`iolab.plans.sweep`). :func:`load` reads either into a
pandas DataFrame (pandas is imported only there, so the CLI starts fast).
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from iolab import _native
from iolab.errors import ResultFormatError
from iolab.results.document import build_output, check_document
from iolab.run.series import DIR_FIELDS, SERIES_FILE, attach_series, json_default

if TYPE_CHECKING:
    import pandas as pd

Json = dict[str, Any]
DIRS = ("read", "write")
RUN_FILE = "run.json"
RESULT_FILE = "result.json"


#: A document longer than this, compact, is written compact: indentation
#: makes Python's json use its pure-Python encoder, 10-20 times slower than
#: the C one (a 1,000-host fleet's result.json, 22 MB: 7 s against 0.4 s).
INDENT_MAX_BYTES = 256 << 10


def write_json(path: Path, value: Any, compact: bool = False) -> None:
    """Write atomically (a reader never sees half a file); indented for
    reading by eye unless large (:data:`INDENT_MAX_BYTES`) or ``compact``
    (many files: a fleet's hosts/rank-R.json)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=json_default)
    if not compact and len(text) <= INDENT_MAX_BYTES:
        text = json.dumps(value, indent=1, sort_keys=True, default=json_default)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    os.replace(tmp, path)


@dataclass(frozen=True)
class RunRecord:
    """A run as its directory holds it, in memory: what :func:`write_record`
    writes and what analysis reads (from here, or from disk by
    :func:`read_record`), so a report needs no directory."""

    #: The results document (``iolab.result/1``).
    doc: Json
    #: ``config.json``: the jobs as written and as prepared (:func:`run_config`).
    config: Json
    #: ``host.json``.
    host: Json
    #: ``run.json`` (without ``tool_version``, which the writer adds).
    meta: Json
    #: More files by name (``diskstats.json``, ``wire.json``), written before run.json.
    files: dict[str, Json] = field(default_factory=dict)


def run_config(specs: Sequence[Any], prepared: Sequence[Json]) -> Json:
    """``config.json``: the one place a run directory's configuration is
    built (the jobs as written, ``JobSpec`` s, and as the core prepared them)."""
    jobs = [{"name": j.name, "options": [list(o) for o in j.options]} for j in specs]
    return {"jobs": jobs, "prepared": list(prepared)}


def write_record(directory: Path, record: RunRecord) -> Json:
    """Write a complete run directory (the one writer); returns its results document."""
    directory.mkdir(parents=True, exist_ok=True)
    write_json(directory / "config.json", record.config)
    write_json(directory / "host.json", record.host)
    for name, value in record.files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)  # hosts/rank-R.json of a fleet
        write_json(directory / name, value)
    write_json(directory / RESULT_FILE, record.doc)
    if "series_file" not in record.doc["summary"]:
        write_series(directory / SERIES_FILE, series_rows(record.doc))
    elif not (directory / SERIES_FILE).is_file():  # a streamed run's, written beside its interval log
        raise ResultFormatError(f"{directory}: a streamed run's {SERIES_FILE} must be written there first")
    write_json(directory / RUN_FILE, {**record.meta, "tool_version": record.doc["tool"]["version"]})
    return record.doc


def write_run_dir(
    directory: Path,
    result_json: str,
    summary_json: str,
    *,
    run_meta: Json,
    config: Json,
    host: Json,
    extra: Optional[dict[str, Json]] = None,
) -> Json:
    """:func:`write_record` from the engine's JSON; returns the results document.
    ``extra``: more JSON files by name (``diskstats.json``), written before run.json."""
    doc = build_output(result_json, summary_json)
    return write_record(directory, RunRecord(doc, config, host, run_meta, dict(extra or {})))


def read_record(directory: Path) -> RunRecord:
    """A complete run directory back in memory (files other than the record's
    own: the JSON files beside them, e.g. ``diskstats.json``, and those under
    ``OBSERVED_DIRS``, e.g. ``hosts/rank-0.json``)."""
    own = {"config.json", "host.json", RESULT_FILE, RUN_FILE}
    files = {p.name: _read_json(p) for p in sorted(directory.glob("*.json")) if p.name not in own}
    for folder in OBSERVED_DIRS:  # a fleet's hosts/rank-R.json, under the names a run in memory gives them
        files.update({folder + p.name: _read_json(p) for p in sorted(directory.glob(folder + "*.json"))})
    config = _read_json(directory / "config.json") if (directory / "config.json").is_file() else {}
    host = _read_json(directory / "host.json") if (directory / "host.json").is_file() else {}
    return RunRecord(read_document(directory), config, host, _read_json(directory / RUN_FILE), files)


def _read_json(path: Path) -> Json:
    value: Json = json.loads(path.read_text(encoding="utf-8"))
    return value


#: Observers (``RunOutput.observed``) whose measurement a run directory keeps as ``NAME.json``.
OBSERVED_FILES = ("diskstats", "fleet")
#: Observed entries under this folder are kept too (a fleet's ``hosts/rank-R``).
OBSERVED_DIRS = ("hosts/",)
#: A fleet run's own results document per rank: ``hosts/rank-R.json``.
RANK_FILE_PREFIX = "hosts/rank-"


def observed_files(observed: dict[str, Json]) -> dict[str, Json]:
    """What run observers measured, as run-directory files: ``{"diskstats.json": ...}``."""
    kept = [n for n in observed if n in OBSERVED_FILES or n.startswith(OBSERVED_DIRS)]
    return {f"{name}.json": observed[name] for name in kept}


def is_complete(directory: Path) -> bool:
    return (directory / RUN_FILE).is_file()


def read_document(directory: Path) -> Json:
    """The run directory's results document; a summary written by an older
    iolab (without the group totals or a job's total IOPS) is made again
    from the lossless result; a streamed run's series read from its
    ``timeseries.parquet`` on demand (:func:`iolab.run.series.attach_series`)."""
    doc = current_document(loads_large((directory / RESULT_FILE).read_text(encoding="utf-8")))
    attach_series(doc["summary"], directory)
    return doc


def loads_large(text: str) -> Json:
    """``json.loads`` with Python's cyclic garbage collector paused: parsing
    makes only acyclic objects, and a 10,000-host fleet's 134 MB result set
    off collections over all of them that took half the parse (1.6 s → 0.8 s)."""
    was = gc.isenabled()
    gc.disable()
    try:
        value: Json = json.loads(text)
    finally:
        if was:
            gc.enable()
    return value


def current_document(doc: Json) -> Json:
    """``doc`` checked, its summary made again from the lossless result when
    an older iolab wrote it without the group totals or the group series."""
    check_document(doc)
    summary = doc["summary"]
    old_groups = any("total" not in g or "series" not in g for g in summary["groups"])
    if old_groups or any("iops" not in j["merged"] for j in summary["jobs"]):
        doc["summary"] = json.loads(_native.summarize(json.dumps(doc["result"])))
    return doc


def series_rows(doc: Json) -> list[Json]:
    """One row per job, interval and direction of the summary's time series."""
    rows = []
    for job in doc["summary"]["jobs"]:
        for s in job["series"]:
            for d in DIRS:
                rows.append(
                    {"job": job["name"], "t_start_ns": s["t_start_ns"], "t_end_ns": s["t_end_ns"], "dir": d, **s[d]}
                )
    return rows


def write_series(path: Path, rows: Sequence[Json]) -> None:
    """The time series as Parquet (columnar, typed, read by pandas/polars/duckdb)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = ["job", "t_start_ns", "t_end_ns", "dir", *DIR_FIELDS]
    table = pa.table({c: [r.get(c) for r in rows] for c in columns}) if rows else pa.table({c: [] for c in columns})
    pq.write_table(table, path)


def _pct(lat: Json, p: float) -> Optional[int]:
    for entry in lat.get("percentiles", []):
        if abs(entry["percentile"] - p) < 1e-9:
            return int(entry["value_ns"])
    return None


def figure_rows(doc: Json) -> Iterator[Json]:
    """Headline figures, one row per job and direction that did I/O."""
    for job in doc["summary"]["jobs"]:
        merged = job["merged"]
        for d in DIRS:
            s = merged[d]
            if s["ios"] == 0:
                continue
            row: Json = {"job": job["name"], "dir": d, "ios": s["ios"], "iops": s["iops"]}
            row["bw_bytes_per_s"] = s["bw_bytes_per_s"]
            for kind in ("slat", "clat", "lat"):
                lat = s[kind]
                row[f"{kind}_mean_ns"] = lat["mean_ns"]
                row[f"{kind}_min_ns"] = lat["min_ns"]
                row[f"{kind}_max_ns"] = lat["max_ns"]
                for p, name in ((50.0, "p50"), (99.0, "p99"), (99.9, "p99_9")):
                    row[f"{kind}_{name}_ns"] = _pct(lat, p)
            row["usr_cpu_pct"] = merged["usr_cpu_pct"]
            row["sys_cpu_pct"] = merged["sys_cpu_pct"]
            yield row


def run_dirs(path: Path) -> list[Path]:
    """The complete run directories at ``path``: itself, or a sweep's points."""
    if is_complete(path):
        return [path]
    points = path / "points"
    if points.is_dir():
        return sorted(p for p in points.iterdir() if is_complete(p))
    raise FileNotFoundError(2, "not an iolab run or sweep directory (no run.json or points/)", str(path))


def table_rows(path: Path) -> list[Json]:
    """What :func:`load` returns, as plain dicts."""
    rows = []
    for d in run_dirs(path):
        meta = json.loads((d / RUN_FILE).read_text(encoding="utf-8"))
        params = meta.get("params", {})
        base = {"run": meta["id"], "point": meta.get("point"), "repeat": meta.get("repeat"), **params}
        for fig in figure_rows(read_document(d)):
            rows.append({**base, **fig})
    return rows


def load(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A run or sweep directory → a DataFrame: one row per point x repeat x
    job x direction, with the point's axis values as columns and the
    headline figures (IOPS, bandwidth, slat/clat/lat mean, min, max, p50,
    p99, p99.9 in ns, CPU %)."""
    import pandas as pd

    return pd.DataFrame(table_rows(Path(path)))
