"""The summary's time series of a streamed run, kept in ``timeseries.parquet``
instead of ``result.json`` (docs/results-schema.md, "Series in timeseries.parquet").

A run that streamed its intervals (``iolab run --stream-intervals``) would
otherwise carry one row per interval of every job and stonewall group in
its summary (``summary.jobs[].series``, ``groups[].series``): 128 MB of
JSON for a one-job 24-hour run, parsed whole by every reader. Instead the
core writes the rows to a CSV file as it makes them from the interval log
(``_native.summarize_with_log_to``), :func:`summarize_streamed` turns that
into ``timeseries.parquet`` in bounded chunks, and the summary names the
file (``summary.series_file``) with its ``series`` left empty.

:func:`attach_series` puts a :class:`SeriesView` where each empty series
was: a list that reads its rows from the Parquet file, a batch at a time,
whenever it is iterated, so the readers written for embedded series (steady
state, charts, compare) read streamed ones unchanged and in bounded memory,
and the results writer writes it back as the empty list the file holds
(:func:`json_default`).
"""

from __future__ import annotations

import csv as _csv
import itertools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, SupportsIndex, Union, overload

from iolab import _native
from iolab.errors import ResultFormatError

if TYPE_CHECKING:
    import pyarrow as pa

Json = dict[str, Any]

#: The series file of a run directory (also the embedded runs' table).
SERIES_FILE = "timeseries.parquet"
#: What the core writes before :func:`summarize_streamed` converts it (removed then).
SERIES_CSV = "timeseries.csv.part"
#: The directions of a row, in the order the core writes them.
ROW_DIRS = ("read", "write", "trim", "total")
#: Per-direction fields of a row (``DirIntervalSummary``).
DIR_FIELDS = ("ios", "bytes", "iops", "bw_bytes_per_s", "lat_p50_ns", "lat_p99_ns", "lat_max_ns")
#: Rows converted at a time (to a row group, or to dicts: ~1 kB a row as dicts).
BATCH_ROWS = 8_192


def _schema() -> pa.Schema:
    """The series file's columns (docs/results-schema.md)."""
    import pyarrow as pa

    u64 = pa.uint64()
    fields = [("series", pa.string()), ("index", u64), ("job", pa.string()), ("t_start_ns", u64), ("t_end_ns", u64)]
    fields += [("dir", pa.string()), ("ios", u64), ("bytes", u64), ("iops", pa.float64())]
    fields += [("bw_bytes_per_s", pa.float64()), ("lat_p50_ns", u64), ("lat_p99_ns", u64), ("lat_max_ns", u64)]
    return pa.schema(fields)


def summarize_streamed(result_json: str, interval_log: Path) -> str:
    """The summary (JSON) of a run that streamed its intervals to
    ``interval_log``, its series written beside the log as ``timeseries.parquet``
    and named by ``series_file`` instead of embedded."""
    directory = interval_log.parent
    csv = directory / SERIES_CSV
    summary_json, job_rows, group_rows = _native.summarize_with_log_to(result_json, interval_log, csv)
    summary: Json = json.loads(summary_json)
    try:
        csv_to_parquet(csv, directory / SERIES_FILE, [str(j["name"]) for j in summary["jobs"]])
    finally:
        csv.unlink(missing_ok=True)
    summary["series_file"] = {"file": SERIES_FILE, "jobs": job_rows, "groups": group_rows}
    return json.dumps(summary)


def csv_to_parquet(csv: Path, parquet: Path, job_names: list[str]) -> None:
    """The core's series CSV → Parquet, :data:`BATCH_ROWS` rows at a time (a
    row group each), with a ``job`` column: the job's name on its rows, null
    on a group's. Read with the ``csv`` module: pyarrow's CSV reader holds
    ~100 MB of buffers for a file of any size, more than the rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _schema()
    names = [f.name for f in schema if f.name != "job"]
    kinds = [str if n in ("series", "dir") else float if n in ("iops", "bw_bytes_per_s") else int for n in names]
    tmp = parquet.with_name(parquet.name + ".tmp")
    with csv.open(newline="") as text, pq.ParquetWriter(tmp, schema) as writer:
        rows = _csv.reader(text)
        if next(rows, None) != names:
            raise ResultFormatError(f"{csv}: not the core's series columns ({', '.join(names)})")
        while chunk := list(itertools.islice(rows, BATCH_ROWS)):
            columns: list[list[Any]] = [[k(v) for v in c] for c, k in zip(zip(*chunk), kinds)]
            del chunk
            columns.insert(2, [job_names[int(i)] if s == "job" else None for s, i in zip(columns[0], columns[1])])
            arrays = [pa.array(c, f.type) for c, f in zip(columns, schema)]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
    tmp.replace(parquet)


def attach_series(summary: Json, directory: Path) -> Json:
    """``summary`` with a :class:`SeriesView` of ``directory``'s series file
    in place of each empty series, when it names one (``series_file``)."""
    ref = summary.get("series_file")
    if not ref:
        return summary
    path = directory / str(ref["file"])
    if not path.is_file():
        raise ResultFormatError(f"{directory}: the summary names series file {ref['file']}, which is missing")
    for i, job in enumerate(summary["jobs"]):
        job["series"] = SeriesView(path, "job", i, int(ref["jobs"][i]))
    for g in summary["groups"]:
        n = int(g["group"])
        g["series"] = SeriesView(path, "group", n, int(ref["groups"][n]))
    return summary


class SeriesView(Sequence[Json]):
    """One job's or group's series in a Parquet series file, read on demand:
    iteration, indexing and slicing read the file a row group (~50,000
    rows) at a time and yield the ``IntervalSummary``
    dicts an embedded series has. Not JSON: :func:`json_default` writes it
    as the empty list the result file holds (``json.dumps`` elsewhere
    refuses it rather than embed a day of rows)."""

    def __init__(self, path: Path, series: str, index: int, rows: int) -> None:
        self.path, self.series, self.number, self.rows = path, series, index, rows

    def __len__(self) -> int:
        return self.rows

    def __bool__(self) -> bool:
        return self.rows > 0

    def __iter__(self) -> Iterator[Json]:
        import pyarrow.parquet as pq

        # A row group at a time (the writer made one per CSV block, ~50,000
        # rows), filtered in Python: pyarrow.compute's first call alone
        # costs ~40 MB of resident memory, more than the rows.
        columns = ["t_start_ns", "t_end_ns", "dir", *DIR_FIELDS]
        pending: list[Json] = []
        with pq.ParquetFile(self.path) as f:
            for group in range(f.num_row_groups):
                table = f.read_row_group(group, columns=["series", "index", *columns])
                of = zip(table.column("series").to_pylist(), table.column("index").to_pylist())
                mine = [k for k, (s, i) in enumerate(of) if i == self.number and s == self.series]
                for lo in range(0, len(mine), BATCH_ROWS):
                    part = mine[lo : lo + BATCH_ROWS]
                    first, last = part[0], part[-1]
                    values = [table.column(c).slice(first, last - first + 1).to_pylist() for c in columns]
                    for k in part:
                        pending.append(dict(zip(columns, (v[k - first] for v in values))))
                        if len(pending) == len(ROW_DIRS):
                            yield _row(pending)
                            pending = []
                del table

    @overload
    def __getitem__(self, i: SupportsIndex) -> Json: ...
    @overload
    def __getitem__(self, i: slice) -> list[Json]: ...
    def __getitem__(self, i: Union[SupportsIndex, slice]) -> Union[Json, list[Json]]:
        if isinstance(i, slice):
            wanted = range(self.rows)[i]
            if not wanted:
                return []
            lo, hi = min(wanted), max(wanted)
            got = {k: r for k, r in enumerate(self) if lo <= k <= hi}
            return [got[k] for k in wanted]
        k = range(self.rows)[i]  # IndexError as a list's
        return next(r for n, r in enumerate(self) if n == k)

    def __repr__(self) -> str:
        return f"SeriesView({self.path.name}, {self.series} {self.number}, {self.rows} rows)"


def json_default(value: object) -> object:
    """``json.dumps(default=...)`` for a document holding :class:`SeriesView` s:
    each is written ``[]``, its rows staying in the series file the summary names."""
    if isinstance(value, SeriesView):
        return []
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _row(dirs: list[Json]) -> Json:
    """One ``IntervalSummary`` from its four direction rows."""
    first = dirs[0]
    row: Json = {"t_start_ns": first["t_start_ns"], "t_end_ns": first["t_end_ns"]}
    for d in dirs:
        row[d["dir"]] = {k: d[k] for k in DIR_FIELDS}
    return row
