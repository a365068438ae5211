"""fio's terse output, version 3 (``fio --minimal``, ``--output-format=terse``).

One line per fio ``jobs`` entry, fields separated by ``;`` in the order
fio's HOWTO lists for terse version 3 ("Terse output"): version, fio
version, job name, group, error; per direction (read, write) total KiB,
KiB/s, IOPS, runtime ms, slat/clat min/max/mean/stdev (µs), 20 clat
percentiles ``P%=µs``, lat min/max/mean/stdev (µs), bw min/max/aggregate
%/mean/stdev (KiB/s); CPU user %, system %, context switches, major and
minor faults; I/O depth distribution (7); latency distribution in µs (10)
and ms (12); then the job's ``description`` if it has one.

Built from the fio JSON entries (:func:`iolab.results.fio_json.to_fio_json`),
so both outputs say the same thing. Fields iolab does not measure (page
faults, the queue-depth distribution) are left empty, never filled with
invented zeros; a terse reader that splits on ``;`` still finds every later
field at its position. No disk utilisation line is written (not sampled).
"""

from __future__ import annotations

from typing import Any

from iolab.results.fio_json import Json

TERSE_VERSION = 3
#: fio's terse line always has 20 percentile fields; unused ones read "0%=0".
PERCENTILE_FIELDS = 20
#: Upper bounds (µs, then ms) of fio's latency distribution fields.
_LAT_US = ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000")
_LAT_MS = ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000")


def _us(ns: float) -> int:
    return int(ns // 1000)


def _lat_fields(lat: Json) -> list[str]:
    return [str(_us(lat["min"])), str(_us(lat["max"])), f"{lat['mean'] / 1000:f}", f"{lat['stddev'] / 1000:f}"]


def _percentiles(clat: Json) -> list[str]:
    pct: dict[str, Any] = clat.get("percentile", {})
    fields = [f"{float(p):f}%={_us(v)}" for p, v in pct.items()][:PERCENTILE_FIELDS]
    return fields + ["0%=0"] * (PERCENTILE_FIELDS - len(fields))


def _direction(d: Json) -> list[str]:
    return [
        str(d["io_kbytes"]),
        str(d["bw"]),
        str(round(d["iops"])),
        str(d["runtime"]),
        *_lat_fields(d["slat_ns"]),
        *_lat_fields(d["clat_ns"]),
        *_percentiles(d["clat_ns"]),
        *_lat_fields(d["lat_ns"]),
        str(d["bw_min"]),
        str(d["bw_max"]),
        f"{d['bw_agg']:f}%",
        f"{d['bw_mean']:f}",
        f"{d['bw_dev']:f}",
    ]


def _lat_distribution(entry: Json) -> list[str]:
    # fio's terse line starts at "<= 2 µs": everything below 1 µs counts there.
    us = dict(entry["latency_us"])
    below_1us = sum(entry["latency_ns"].values())
    us["2"] = min(100.0, us.get("2", 0.0) + below_1us)
    ms = entry["latency_ms"]
    return [f"{us.get(k, 0.0):.2f}%" for k in _LAT_US] + [f"{ms.get(k, 0.0):.2f}%" for k in _LAT_MS]


def terse_line(entry: Json) -> str:
    """One fio ``jobs`` entry as a terse v3 line (no newline)."""
    fields = [
        str(TERSE_VERSION),
        entry.get("fio_version", ""),
        entry["jobname"],
        str(entry["groupid"]),
        str(entry["error"]),
    ]
    # unified_rw_reporting, as fio's terse: mixed alone in place of read and
    # write (a shorter line), or after them with both.
    dirs = ("read", "write") if "read" in entry else ()
    for d in dirs + (("mixed",) if "mixed" in entry else ()):
        fields += _direction(entry[d])
    fields += [f"{entry['usr_cpu']:f}%", f"{entry['sys_cpu']:f}%", str(entry["ctx"]), "", ""]
    fields += [""] * 7  # queue-depth distribution: not recorded
    fields += _lat_distribution(entry)
    if "total_err" in entry:  # fio adds them under continue_on_error
        fields += [str(entry["total_err"]), str(entry["first_error"])]
    description = entry["job options"].get("description")
    if description:
        fields.append(description)
    return ";".join(fields)


def to_terse(fio_doc: Json) -> str:
    """A fio JSON document (``to_fio_json``) as terse v3 lines, one per entry."""
    version = fio_doc["fio version"]
    return "".join(terse_line({**e, "fio_version": version}) + "\n" for e in fio_doc["jobs"])
