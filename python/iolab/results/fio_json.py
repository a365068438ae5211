"""Export to fio's JSON layout (``fio --output-format=json``, fio 3.33).

Tools written for fio (plotters, CI dashboards, spreadsheets) read this.
The layout — key names, nesting, units (``bw`` in KiB/s, ``runtime`` in ms,
latencies in ns, percentile keys like ``"99.900000"``) — was copied from
real fio 3.33 output; tests/results/test_fio_json.py compares the key sets
against fio run on the spot.

``to_fio_json(..., plus=True)`` is fio's json+: every latency with samples
also carries ``bins`` in fio's own buckets (:mod:`iolab.results.fio_plat`),
so fio's ``fio_jsonplus_clat2csv`` reads it unchanged.

Like fio: one ``jobs`` entry per worker without ``group_reporting``; with
it, one per stonewall group: the group's jobs that set it merged exactly
(the summary's ``groups[].reported``), named after the first of them, with
the last one's ``job options`` (as fio 3.33 writes them). Each direction's
``runtime`` is the time its I/Os ran in (fio's per-direction runtime: a
verify job's write and read phases apart), and its rates are over it.
``trim`` is fio's third direction, filled like read and write (all zero in
a job that does not trim, or from a summary written before iolab issued
trims). Values are only ever measured or structurally fixed
(``latency_target`` is off because iolab has no such option). Keys for things iolab does not measure are left
out rather than filled with invented zeros: ``FIO_OMITTED_KEYS`` lists them
with the reason. Everything iolab measures beyond fio goes under each
entry's ``"iolab"`` key. docs/results-schema.md has the field-by-field list.
"""

from __future__ import annotations

import math
import time
from typing import Any

from iolab.results import lat_target
from iolab.results.fio_plat import plat_bins, plat_counts
from iolab.results.fio_prios import prio_summaries
from iolab.results.unified import mode as unified_mode

Json = dict[str, Any]

#: fio keys iolab does not write, and why (``job.`` = per jobs entry,
#: ``dir.`` = inside read/write/trim).
FIO_OMITTED_KEYS: dict[str, str] = {
    "job.majf": "page faults per thread are not measured",
    "job.minf": "page faults per thread are not measured",
    "job.iodepth_level": "the queue-depth distribution is not recorded",
    "job.iodepth_submit": "submit batch sizes are not recorded",
    "job.iodepth_complete": "completion batch sizes are not recorded",
    "dir.short_ios": "short transfers are not counted separately",
    "dir.drop_ios": "dropped I/Os are not counted",
}

_DIRS = ("read", "write")
_LATS = ("slat_ns", "clat_ns", "lat_ns")


def _pct_key(p: float) -> str:
    """fio's percentile key: six decimals ("99.900000")."""
    return f"{p:.6f}"


def _lat(s: Json) -> Json:
    """A LatSummary → fio's {min, max, mean, stddev, N[, percentile]} (ns)."""
    out: Json = {
        "min": s["min_ns"],
        "max": s["max_ns"],
        "mean": s["mean_ns"],
        "stddev": s["stdev_ns"],
        "N": s["count"],
    }
    # fio writes percentiles only for latencies with samples.
    if s["count"] > 0 and s["percentiles"]:
        out["percentile"] = {_pct_key(p["percentile"]): p["value_ns"] for p in s["percentiles"]}
    return out


def _add_prios(entry: Json, workers: list[Json], percentiles: list[float]) -> None:
    """fio's per-priority clat (``prios``) in each direction that has them
    (and is shown: not under unified_rw_reporting=mixed)."""
    for d, prios in prio_summaries(workers, percentiles).items():
        if d not in entry:
            continue
        entry[d]["prios"] = [{**names, "clat_ns": _lat(s)} for names, s in prios]


def _zero_lat() -> Json:
    return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}


def _dir(d: Json, window_ns: int, group_bw_bytes_per_s: float, hists: list[Json] | None) -> Json:
    """One direction of a Summary → fio's read/write object; with ``hists``
    (the direction's raw histograms of the workers it covers: json+), each
    latency with samples also gets fio's ``bins``. ``window_ns``: the
    entry's window, the runtime of summaries older than per-direction ones."""
    active = d["ios"] + d["errors"] > 0
    runtime_ns = d.get("runtime_ns", window_ns)
    iv = d["intervals"]
    bw_mean_kib = iv["bw_mean_bytes_per_s"] / 1024
    group_kib = group_bw_bytes_per_s / 1024
    out: Json = {
        "io_bytes": d["bytes"],
        "io_kbytes": d["bytes"] // 1024,
        # Rates come from the ns-exact runtime (fio divides by whole ms).
        "bw_bytes": int(d["bw_bytes_per_s"]),
        "bw": int(d["bw_bytes_per_s"] / 1024),
        "iops": d["iops"],
        "runtime": round(runtime_ns / 1e6) if active else 0,
        "total_ios": d["ios"],
        "slat_ns": _lat(d["slat"]),
        "clat_ns": _lat(d["clat"]),
        "lat_ns": _lat(d["lat"]),
        "bw_min": int(iv["bw_min_bytes_per_s"] / 1024),
        "bw_max": int(iv["bw_max_bytes_per_s"] / 1024),
        "bw_agg": bw_mean_kib / group_kib * 100 if group_kib > 0 else 0.0,
        "bw_mean": bw_mean_kib,
        "bw_dev": iv["bw_stdev_bytes_per_s"] / 1024,
        "bw_samples": iv["samples"],
        "iops_min": round(iv["iops_min"]),
        "iops_max": round(iv["iops_max"]),
        "iops_mean": iv["iops_mean"],
        "iops_stddev": iv["iops_stdev"],
        "iops_samples": iv["samples"],
    }
    if hists is not None:
        for lat in _LATS:
            if out[lat]["N"] > 0:
                out[lat]["bins"] = plat_bins(plat_counts(h[lat] for h in hists))
    return out


def _idle_dir() -> Json:
    """fio's all-zero direction object: the trim of a summary written
    before iolab issued trims."""
    return {
        "io_bytes": 0,
        "io_kbytes": 0,
        "bw_bytes": 0,
        "bw": 0,
        "iops": 0.0,
        "runtime": 0,
        "total_ios": 0,
        "slat_ns": _zero_lat(),
        "clat_ns": _zero_lat(),
        "lat_ns": _zero_lat(),
        "bw_min": 0,
        "bw_max": 0,
        "bw_agg": 0.0,
        "bw_mean": 0.0,
        "bw_dev": 0.0,
        "bw_samples": 0,
        "iops_min": 0,
        "iops_max": 0,
        "iops_mean": 0.0,
        "iops_stddev": 0.0,
        "iops_samples": 0,
    }


def _lat_dist(buckets: list[Json]) -> tuple[Json, Json, Json]:
    """clat_dist counts → fio's latency_ns / latency_us / latency_ms percentages."""
    total = sum(b["count"] for b in buckets)
    ns: Json = {}
    us: Json = {}
    ms: Json = {}
    for b in buckets:
        share = b["count"] / total * 100 if total else 0.0
        if 0 < share < 0.01:
            share = 0.01  # fio shows any non-empty bucket as at least 0.01%
        below: int | None = b["below_ns"]
        if below is None:
            ms[">=2000"] = share
        elif below <= 1_000:
            ns[str(below)] = share
        elif below <= 1_000_000:
            us[str(below // 1_000)] = share
        else:
            ms[str(below // 1_000_000)] = share
    return ns, us, ms


def _job_options(options: list[list[Any]]) -> Json:
    """Options as written; later ones override (fio's ``[global]`` rule). Bare flags → ""."""
    return {name: ("" if value is None else value) for name, value in options}


def _entry(
    job: Json,
    stats: Json,
    group: Json,
    worker: Json | None,
    raw: list[Json] | None,
    raw_job: Json | None = None,
    index: int | None = None,
) -> Json:
    """One fio ``jobs`` entry from a Summary (a worker's, or the merged job's);
    ``raw``: the result's workers it covers, for json+ bins (None: plain json);
    ``raw_job``/``index``: the job in the result and the worker's index (None: merged)."""
    cfg = job["config"]
    lat_ns, lat_us, lat_ms = _lat_dist(stats["clat_dist"])
    entry: Json = {
        "jobname": job["name"],
        "groupid": job["group"],
        "error": 0,
        "eta": 0,
        "elapsed": math.ceil((cfg["ramp_time_ns"] + stats["runtime_ns"]) / 1e9),
        "job options": _job_options(cfg["options"]),
    }
    for i, d in enumerate(_DIRS):
        hists = None if raw is None else [w["dirs"][i] for w in raw]
        entry[d] = _dir(stats[d], stats["runtime_ns"], group[d]["bw_bytes_per_s"], hists)
    if "trim" in stats:
        # A result's dirs hold a trim slot only when it trimmed (results/document.py).
        hists = None if raw is None else [w["dirs"][2] for w in raw if len(w["dirs"]) > 2]
        entry["trim"] = _dir(stats["trim"], stats["runtime_ns"], group["trim"]["bw_bytes_per_s"], hists)
    else:
        entry["trim"] = _idle_dir()
    entry["sync"] = {"total_ios": stats["sync"]["count"], "lat_ns": _lat(stats["sync"]["lat"])}
    _add_mixed(entry, cfg, stats, group, raw)
    entry.update(
        {
            "job_runtime": round(stats["thread_runtime_ns"] / 1e6),
            "usr_cpu": stats["usr_cpu_pct"],
            "sys_cpu": stats["sys_cpu_pct"],
            "ctx": stats["ctx_switches"],
            "latency_ns": lat_ns,
            "latency_us": lat_us,
            "latency_ms": lat_ms,
            **lat_target.fio_fields(raw_job, index, cfg["iodepth"]),
            "iolab": _extras(job, stats, worker),
        }
    )
    if cfg.get("continue_on_error"):
        # fio adds these two only when continue_on_error is in force.
        entry["total_err"] = stats.get("total_err", 0)
        entry["first_error"] = stats.get("first_error", 0)
    return entry


def _add_mixed(entry: Json, cfg: Json, stats: Json, group: Json, raw: list[Json] | None) -> None:
    """unified_rw_reporting as fio writes it: ``mixed`` (every direction as
    one, from the summary's exact merge) in place of read, write and trim,
    before ``sync``; or, with ``both``, after ``sync``."""
    m = unified_mode(cfg, stats)
    if m == "none":
        return
    hists = None if raw is None else [d for w in raw for d in w["dirs"]]
    mixed = _dir(stats["mixed"], stats["runtime_ns"], group["total"]["bw_bytes_per_s"], hists)
    if m == "both":
        entry["mixed"] = mixed
        return
    sync = entry.pop("sync")
    for d in ("read", "write", "trim"):
        del entry[d]
    entry["mixed"] = mixed
    entry["sync"] = sync


def _extras(job: Json, stats: Json, worker: Json | None) -> Json:
    """What iolab measures beyond fio's layout."""
    extras: Json = {
        "worker": None if worker is None else worker["worker"],
        "host": "" if worker is None else worker["host"],
        "errors": {d: stats[d]["errors"] for d in _DIRS},
        "latency_definitions": job["latency_definitions"],
    }
    if job["config"]["rate_limited"]:
        extras["lat_intended_ns"] = {
            d: _lat(stats[d]["lat_intended"]) for d in _DIRS if stats[d]["lat_intended"] is not None
        }
    return extras


def _group_entry(summary: Json, result: Json, group: Json, plus: bool) -> Json:
    """fio's one entry for a group's jobs with group_reporting: the merged
    ``groups[].reported``, named after the first job, with the last job's
    options (fio 3.33 keeps the last member's option list)."""
    members = [
        (j, rj)
        for j, rj in zip(summary["jobs"], result["jobs"])
        if j["group"] == group["group"] and j["config"]["group_reporting"]
    ]
    first, first_raw = members[0]
    workers = [w for _, rj in members for w in rj["workers"]]
    entry = _entry(first, group["reported"], group, None, workers if plus else None, first_raw, None)
    entry["job options"] = _job_options(members[-1][0]["config"]["options"])
    entry["iolab"]["jobs"] = [j["name"] for j, _ in members]
    _add_prios(entry, workers, first["config"]["percentile_list"])
    return entry


def to_fio_json(result: Json, summary: Json, *, plus: bool = False) -> Json:
    """fio 3.33's JSON layout from a run result and its summary (parsed dicts);
    ``plus``: fio's json+ (each latency's ``bins`` in fio's buckets, from the
    workers' HDR histograms merged exactly)."""
    groups = {g["group"]: g for g in summary["groups"]}
    jobs: list[Json] = []
    merged: set[int] = set()
    for job, raw_job in zip(summary["jobs"], result["jobs"]):
        assert job["name"] == raw_job["name"], "summary and result list the same jobs in order"
        group = groups[job["group"]]
        raw = raw_job["workers"] if plus else None
        pcts = [p["percentile"] for p in job["merged"]["read"]["clat"]["percentiles"]]
        if job["config"]["group_reporting"] and "reported" in group:
            if job["group"] not in merged:  # the group's one entry, at its first job
                merged.add(job["group"])
                jobs.append(_group_entry(summary, result, group, plus))
        elif job["config"]["group_reporting"]:
            # A summary written before groups[].reported: one entry per job.
            jobs.append(_entry(job, job["merged"], group, None, raw, raw_job, None))
            _add_prios(jobs[-1], raw_job["workers"], pcts)
        else:
            for k, w in enumerate(job["workers"]):
                jobs.append(_entry(job, w["stats"], group, w, None if raw is None else [raw[k]], raw_job, k))
                _add_prios(jobs[-1], [raw_job["workers"][k]], pcts)
    start_s = result["start_unix_ns"] // 1_000_000_000
    version = result["tool_version"]
    return {
        "fio version": f"iolab-{version}",
        "iolab version": version,
        "timestamp": start_s,
        "timestamp_ms": result["start_unix_ns"] // 1_000_000,
        "time": time.ctime(start_s),
        "jobs": jobs,
        # Disk utilisation is not sampled: an empty list, as fio writes for
        # jobs on no block device.
        "disk_util": [],
    }
