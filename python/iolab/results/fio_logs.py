"""fio's log files (``write_bw_log``, ``write_iops_log``, ``write_lat_log``,
``write_hist_log``) from a run's time series, in fio's own formats.

fio's HOWTO ("Log File Formats") defines a line as ``time (ms), value,
data direction, block size, [offset,] command priority``; with windowed
logging (``log_avg_msec``) the value is the window's average and block
size and offset are 0. That is exactly what iolab's per-interval series
holds, because the run's interval is set to the log window
(:mod:`iolab.jobs.effects`):

- bw log: the window's bytes / its length, in KiB/s (integer, as fio);
- iops log: the window's I/Os / its length (integer, as fio);
- lat log: mean (or max, ``log_max_value``) total latency in ns of the I/Os
  completed in the window, from the window's HDR histogram; windows
  without I/O have no line (as in fio);
- hist log: ``time, direction, block size, 1856 bucket counts`` of the
  I/Os completed in each ``log_hist_msec`` window, in fio's buckets
  (:mod:`iolab.results.fio_plat`), merged exactly from the intervals'
  histograms. It holds total latency (``_lat_hist``), not fio's clat.

With ``log_avg_msec=0`` (fio's default) the bw, iops and lat logs have one
line per I/O, as in fio: ``time of completion, value, direction, block
size, [offset,] priority``, the value being total latency (``_lat``),
completion latency (``_clat``) and submission latency (``_slat``) in ns,
the I/O's bytes per ms of its clat (``_bw``, fio's formula) or 1 (``_iops``).
The engine streams one record per I/O (the job's ``per_io_log``
directory, see :mod:`iolab.jobs.effects`); ``_native.iolog_to_fio`` merges
the workers' records in time order into fio's text. With ``log_prio=1``
the priority column is the I/O's ioprio value (``0x%04x``), else 1 for the
realtime class and 0 otherwise (fio's columns).

Times are ms from the start of the measured window, at the window's end;
with ``log_unix_epoch=1`` the window's wall-clock start (the result's
``start_unix_ns``, in ms) is added, so they are Unix epoch ms as fio writes.
Files are named as fio names them: ``PREFIX_bw.N.log`` with ``N`` the
worker's number in the run (1-based, over all jobs' workers), or
``PREFIX_bw.log`` with ``per_job_logs=0`` (then the job's workers are summed
per window, latencies merged).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from iolab import _native
from iolab.jobs.extras import JobExtras
from iolab.results.fio_plat import PLAT_NR, plat_counts

Json = dict[str, Any]
_DIRS = (0, 1)


def _line(fields: Sequence[object]) -> str:
    return ", ".join(str(f) for f in fields) + "\n"


def _tail(e: JobExtras, bs: int = 0) -> list[object]:
    """block size, [offset], priority: fio writes 0 for windowed logs."""
    return [bs, 0, 0] if e.flag("log_offset") else [bs, 0]


def _active_dirs(workers: list[Json]) -> list[int]:
    return [d for d in _DIRS if any(w["dirs"][d]["ios"] for w in workers)]


def _windows(workers: list[Json]) -> list[tuple[int, int, list[list[Json]]]]:
    """(start_ns, end_ns, [each worker's dirs]) per interval, workers aligned
    by interval number (they share the run's clock)."""
    out = []
    for i in range(max((len(w["series"]) for w in workers), default=0)):
        rows = [w["series"][i] for w in workers if i < len(w["series"])]
        out.append((rows[0]["start_ns"], max(r["end_ns"] for r in rows), [r["dirs"] for r in rows]))
    return out


def _rate_log(workers: list[Json], e: JobExtras, key: str) -> str:
    text = []
    for start, end, dirs in _windows(workers):
        secs = (end - start) / 1e9
        if secs <= 0:
            continue
        for d in _active_dirs(workers):
            total = sum(x[d][key] for x in dirs)
            value = total / secs / (1024 if key == "bytes" else 1)
            text.append(_line([round(end / 1e6), int(value), d, *_tail(e)]))
    return "".join(text)


def _lat_log(workers: list[Json], e: JobExtras) -> str:
    mode = {"0": "avg", "1": "max"}.get(str(e.get("log_max_value", "avg")), str(e.get("log_max_value", "avg")))
    text = []
    for _start, end, dirs in _windows(workers):
        for d in _active_dirs(workers):
            hists = [x[d]["lat_ns"] for x in dirs if x[d]["ios"]]
            if not hists:
                continue
            stats = _native.hist_stats(_native.hist_merge(hists), [])
            values = {"avg": [int(stats["mean_ns"])], "max": [stats["max_ns"]]}
            values["both"] = values["avg"] + values["max"]
            text.append(_line([round(end / 1e6), *values[mode], d, *_tail(e)]))
    return "".join(text)


def _coarse(counts: list[int], coarseness: int) -> list[int]:
    step = 1 << coarseness
    return [sum(counts[i : i + step]) for i in range(0, PLAT_NR, step)]


def _hist_log(workers: list[Json], e: JobExtras, interval_ns: int, bs: Sequence[int]) -> str:
    per = max(1, e.ms("log_hist_msec") * 1_000_000 // interval_ns)
    windows = _windows(workers)
    text = []
    for first in range(0, len(windows), per):
        group = windows[first : first + per]
        end = group[-1][1]
        for d in _active_dirs(workers):
            counts = plat_counts(x[d]["lat_ns"] for _s, _e, dirs in group for x in dirs if x[d]["ios"])
            counts = _coarse(counts, e.ms("log_hist_coarseness") if "log_hist_coarseness" in e.values else 0)
            text.append(_line([round(end / 1e6), d, bs[d], *counts]))
    return "".join(text)


def _block_sizes(job: Json) -> list[int]:
    bs = job["job"].get("bs")
    if isinstance(bs, list) and len(bs) == 2:
        return [_min_bs(b) for b in bs]
    return [0, 0]


def _min_bs(spec: Any) -> int:
    if isinstance(spec, dict) and "fixed" in spec:
        return int(spec["fixed"])
    return 0


def _log_text(option: str, group: list[Json], e: JobExtras, interval_ns: int, bs: list[int]) -> str:
    if option == "write_bw_log":
        return _rate_log(group, e, "bytes")
    if option == "write_iops_log":
        return _rate_log(group, e, "ios")
    if option == "write_lat_log":
        return _lat_log(group, e)
    return _hist_log(group, e, interval_ns, bs)


#: Each log option and the type fio puts in the file name.
LOG_KINDS = {"write_bw_log": "_bw", "write_iops_log": "_iops", "write_lat_log": "_lat", "write_hist_log": "_lat_hist"}


#: Per-I/O logs: each option's files and the value each holds (fio writes
#: slat, clat and lat logs for write_lat_log).
PER_IO_KINDS = {
    "write_bw_log": (("_bw", "bw"),),
    "write_iops_log": (("_iops", "iops"),),
    "write_lat_log": (("_lat", "lat"), ("_clat", "clat"), ("_slat", "slat")),
}


def _records_dir(job: Json) -> Optional[Path]:
    d = job["job"].get("worker", {}).get("per_io_log")
    return Path(d) if d else None


def _per_io(
    option: str, records: Path, job_index: int, group: list[Json], e: JobExtras, name: tuple[Path, str]
) -> list[Path]:
    """``name``: (directory/prefix, suffix); fio puts the kind between them."""
    inputs = [str(records / f"{job_index}.{w['worker']}.iolog") for w in group]
    written = []
    for kind, value in PER_IO_KINDS[option]:
        path = Path(f"{name[0]}{kind}{name[1]}")
        _native.iolog_to_fio(inputs, str(path), value, e.flag("log_offset"), e.flag("log_prio"))
        written.append(path)
    return written


def _to_unix_epoch(path: Path, start_ms: int) -> None:
    """Shift the time column (the first) of a written log by ``start_ms``."""
    tmp = path.with_name(path.name + ".epoch")
    with path.open() as src, tmp.open("w") as dst:
        for line in src:
            t, sep, rest = line.partition(",")
            dst.write(f"{int(t) + start_ms}{sep}{rest}")
    tmp.replace(path)


def write_fio_logs(result: Json, extras: Sequence[JobExtras], directory: Path = Path(".")) -> list[Path]:
    """Write the logs every job asked for; return the files written.
    ``extras`` are the jobs' extra options, in the result's job order. The
    engine's per-I/O records are removed once turned into logs."""
    written: list[Path] = []
    number = 0
    for job_index, (job, e) in enumerate(zip(result["jobs"], extras)):
        workers: list[Json] = job["workers"]
        groups = [[w] for w in workers] if e.flag("per_job_logs") else [workers]
        records = _records_dir(job)
        first_new = len(written)
        for group in groups:
            number += len(group)
            suffix = f".{number}.log" if e.flag("per_job_logs") else ".log"
            for option, kind in LOG_KINDS.items():
                prefix = e.text(option)
                if not prefix:
                    continue
                if records is not None and option in PER_IO_KINDS:
                    written += _per_io(option, records, job_index, group, e, (directory / prefix, suffix))
                    continue
                path = directory / f"{prefix}{kind}{suffix}"
                path.write_text(_log_text(option, group, e, result["interval_ns"], _block_sizes(job)))
                written.append(path)
        if e.flag("log_unix_epoch"):
            for path in written[first_new:]:
                _to_unix_epoch(path, result["start_unix_ns"] // 1_000_000)
        if records is not None and records.name.startswith("iolab-iolog-"):
            shutil.rmtree(records, ignore_errors=True)
    return written
