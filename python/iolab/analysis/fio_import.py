"""fio's own results (``--output-format=json`` or ``json+``, fio 3.33) → a
:class:`~iolab.analysis.model.Dataset`, so ``iolab report fio-output.json``
analyses what fio measured exactly as it analyses iolab's runs.

- :func:`load_fio_json` — the entry point; raises
  :class:`~iolab.errors.ResultFormatError` for anything that is not fio JSON.
- One :class:`Point` per stonewall group (``groupid``) with one
  :class:`Sample` (fio runs each group once). A group's ``jobs`` entries —
  numjobs clones without ``group_reporting``, or several jobs in one group —
  are merged: counts and bytes summed, IOPS and bandwidth by the core's one
  definition (docs/architecture.md): the group's I/Os and bytes of a
  direction over the longest runtime of its entries that did that direction
  (fio's own group line, ``Run status group``, divides the same way; a sum
  of the entries' rates overstates a group whose jobs ran for different
  times); min/max/mean/stdev combined exactly; json+ ``bins`` become one HdrHistogram
  (``hist_from_counts``) whose percentiles are the point's. Plain json has
  only each entry's percentiles, which cannot be combined: a point of one
  entry keeps fio's printed percentiles, a point of several keeps none and
  says why in ``Sample.notes`` (percentiles are never averaged).
- Points count from 1, as a plan's do (``Sample.label`` keeps fio's
  ``groupid``, which counts from 0).
- Axes: the job options (``global options`` + ``job options``) whose values
  differ between points; sizes parsed by fio's rules (:func:`fio_size`). An
  option without effect for a point's rw (fio's default ``rwmixread=50`` of
  a ``randread`` job) is "-" there, never a number on an axis.
- ``disk_util`` covers fio's whole run, so it becomes the sample's
  :class:`DeviceFigures` only when the output has a single group.

fio leaves options given without a value (``time_based``,
``group_reporting``) out of its JSON, so they cannot be read back: the
config says ``time_based=False`` and the thread count of a
``group_reporting`` entry is its ``numjobs``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Optional, Union

from iolab import _native
from iolab.analysis.job_options import no_effect, shared
from iolab.analysis.model import (
    DIRS,
    LAT_KINDS,
    CpuFigures,
    Dataset,
    DeviceFigures,
    DirResult,
    LatStats,
    Point,
    Sample,
    SampleConfig,
    Scalar,
)
from iolab.analysis.samples import lat_from_hist
from iolab.errors import ResultFormatError

Json = dict[str, Any]
HINT = "run fio with --output-format=json or json+"

#: fio 3.33's defaults (fio(1)) for the options a SampleConfig reads.
FIO_DEFAULTS: dict[str, str] = {
    "rw": "read",
    "bs": "4k",
    "iodepth": "1",
    "numjobs": "1",
    "direct": "0",
    "ioengine": "psync",
    "rwmixread": "50",
    "ramp_time": "0",
    "kb_base": "1024",
}
#: Options that name or order jobs rather than configure them: never axes.
NOT_AXES = {"name", "description", "stonewall", "wait_for_previous", "new_group", "group_reporting"}
#: Options whose value is a size (fio's size syntax) or a plain count.
SIZE_OPTIONS = {"bs", "blocksize", "size", "filesize", "io_size", "io_limit", "offset", "offset_increment", "ba"}
SIZE_OPTIONS |= {"blockalign", "rate", "rate_min", "buffer_size"}
COUNT_OPTIONS = {"iodepth", "numjobs", "rwmixread", "rwmixwrite", "nrfiles", "number_ios", "rate_iops", "direct"}
COUNT_OPTIONS |= {"iodepth_batch", "iodepth_batch_complete_min", "iodepth_low", "thinktime", "fsync"}
TIME_OPTIONS = {"runtime", "ramp_time"}
RW_NAMES = {"read": "read", "write": "write", "randread": "randread", "randwrite": "randwrite"}
RW_NAMES |= {"rw": "rw", "readwrite": "rw", "randrw": "randrw"}
RW_NAMES |= {n: n for n in ("trim", "randtrim", "trimwrite", "randtrimwrite")}


def fio_size(text: str, kb_base: int = 1024) -> Optional[int]:
    """fio's size syntax → bytes (the core's parser, ``_native.parse_size``:
    fio's kb_base rule included); None when it is not a plain size (a
    percentage, a range, an expression)."""
    try:
        return _native.parse_size(text, kb_base)
    except ValueError:
        return None


def _fio_flag(o: Json, name: str, entry: Json) -> Optional[bool]:
    """A boolean job option as the core reads one (``_native.parse_bool``:
    ``time_based=0`` is off, ``direct=true`` on); None when not written."""
    if name not in o:
        return None
    try:
        return _native.parse_bool(o[name] or None)
    except ValueError as e:
        raise ResultFormatError(f"job '{entry.get('jobname')}': {name}={o[name]}: {e}") from None


def fio_time_ns(text: str) -> Optional[int]:
    """fio's time syntax (plain number = seconds) → ns (the core's parser); None otherwise."""
    try:
        return _native.parse_time_ns(text)
    except ValueError:
        return None


def load_fio_json(path: Union[str, Path]) -> Dataset:
    """fio 3.33 ``json``/``json+`` output at ``path`` → its Dataset."""
    p = Path(path)
    doc = _read_doc(p)
    global_opts = _options(doc.get("global options"), p, "global options")
    groups: dict[int, list[Json]] = {}
    for entry in _jobs(doc, p):
        groups.setdefault(entry["groupid"], []).append(entry)
    opts = {
        gid: [{**global_opts, **_options(e.get("job options"), p, "job options")} for e in es]
        for gid, es in groups.items()
    }
    samples = [_sample(gid, groups[gid], opts[gid]) for gid in sorted(groups)]
    _attach_device(doc, samples)
    per_point = [_point_options(opts[gid]) for gid in sorted(groups)]
    axes, params, values = _axes(per_point, samples)
    points = [Point(i + 1, params[i], values[i], [s]) for i, s in enumerate(samples)]
    ramp = any(s.config.ramp_time_ns > 0 for s in samples)
    # fio's JSON names a host only in client/server mode (fio --client).
    hostnames = sorted({str(e["hostname"]) for es in groups.values() for e in es if e.get("hostname")})
    host: Json = {"hostname": ", ".join(hostnames)} if hostnames else {}
    return Dataset(
        source="fio-json",
        name=p.stem,
        path=str(p),
        axes=axes,
        points=points,
        host=host,
        plan={"repeats": 1, "warmup": ramp},
        tool=str(doc["fio version"]),
        job=shared([_ran(po, s) for po, s in zip(per_point, samples)], axes),
    )


# -- reading and checking -----------------------------------------------------


def _read_doc(p: Path) -> Json:
    text = p.read_text(encoding="utf-8", errors="replace")
    doc = _parse(text, p)
    if not isinstance(doc, dict) or "fio version" not in doc:
        raise ResultFormatError(f"{p}: JSON, but not fio output (no 'fio version' key); {HINT}")
    return doc


def _parse(text: str, p: Path) -> Any:
    """The JSON document; fio may print notes (``fio: ...``) or, with
    ``--output-format=normal,json``, its text report before it, so parsing
    starts at the first line that opens an object."""
    start = 0 if text.lstrip().startswith(("{", "[")) else text.find("\n{") + 1
    if start > 0 or text.lstrip().startswith(("{", "[")):
        try:
            return json.JSONDecoder().raw_decode(text[start:].lstrip())[0]
        except json.JSONDecodeError as e:
            raise ResultFormatError(f"{p}: not valid JSON ({e.msg} at line {e.lineno}); {HINT}") from None
    if re.match(r"^\d+;fio-", text) or "Run status group" in text or re.search(r"groupid=\d+, jobs=", text):
        raise ResultFormatError(f"{p}: this is fio's text (normal or terse) output, not JSON; {HINT}")
    raise ResultFormatError(f"{p}: not JSON; {HINT}")


def _jobs(doc: Json, p: Path) -> list[Json]:
    # Client/server runs (fio --client) list the jobs under client_stats,
    # with an "All clients" aggregate that would count every I/O twice.
    raw = doc.get("jobs") or [j for j in doc.get("client_stats") or [] if j.get("jobname") != "All clients"]
    if not isinstance(raw, list) or not raw:
        raise ResultFormatError(f"{p}: fio output with no jobs (fio failed before running any: see its stderr)")
    for i, entry in enumerate(raw):
        missing = [k for k in ("groupid", "read", "write") if not isinstance(entry, dict) or k not in entry]
        if missing:
            raise ResultFormatError(f"{p}: jobs[{i}] lacks {', '.join(missing)}: not fio 3.x JSON output")
    return raw


def _options(raw: Any, p: Path, key: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ResultFormatError(f"{p}: '{key}' is not an object: not fio JSON output")
    return {str(k): str(v) for k, v in raw.items()}


# -- one group → one sample ---------------------------------------------------


def _sample(gid: int, entries: list[Json], opts: list[dict[str, str]]) -> Sample:
    names = list(dict.fromkeys(str(e.get("jobname", "?")) for e in entries))
    notes: list[str] = []
    dirs = {d: _dir_result(entries, d, notes) for d in DIRS}
    config = _config(entries, opts, notes)
    trim = _dir_result(entries, "trim", notes) if any(e.get("trim", {}).get("total_ios") for e in entries) else None
    runtime_ns = max([dirs[d].runtime_ns for d in DIRS] + ([trim.runtime_ns] if trim else []))
    for e in entries:
        if e.get("error"):
            notes.append(f"fio job '{e.get('jobname')}' ended with error {e['error']} (errno)")
    return Sample(
        label=f"group {gid}: {', '.join(names)}",
        config=config,
        read=dirs["read"],
        write=dirs["write"],
        runtime_ns=runtime_ns,
        cpu=_cpu(entries),
        notes=notes,
        trim=trim,
    )


def _dir_result(entries: list[Json], d: str, notes: list[str]) -> DirResult:
    ds = [e[d] for e in entries]
    lats: dict[str, Optional[LatStats]] = {k: _lat(ds, k, d, notes) for k in LAT_KINDS}
    ios = sum(int(x.get("total_ios", 0)) for x in ds)
    nbytes = sum(int(x.get("io_bytes", 0)) for x in ds)
    # The core's definition (summary/group.rs group_dir): over the longest
    # runtime of the entries that did this direction.
    runtime_s = max((int(x.get("runtime", 0)) for x in ds if int(x.get("total_ios", 0)) > 0), default=0) / 1e3
    return DirResult(
        ios=ios,
        bytes=nbytes,
        # fio counts I/O errors per job, not per direction (see _sample's notes).
        errors=0,
        runtime_ns=max(int(x.get("runtime", 0)) for x in ds) * 1_000_000,
        iops=ios / runtime_s if runtime_s else 0.0,
        bw_bytes_per_s=nbytes / runtime_s if runtime_s else 0.0,
        slat=lats["slat"],
        clat=lats["clat"],
        lat=lats["lat"],
    )


def _lat(ds: list[Json], kind: str, d: str, notes: list[str]) -> Optional[LatStats]:
    objs = [x[f"{kind}_ns"] for x in ds if int(x.get(f"{kind}_ns", {}).get("N", 0)) > 0]
    if not objs:
        return None
    count = sum(int(o["N"]) for o in objs)
    mean = sum(int(o["N"]) * float(o["mean"]) for o in objs) / count
    hist = _hist(objs)
    if len(objs) == 1 and "percentile" in objs[0]:
        pcts = {float(k): int(v) for k, v in objs[0]["percentile"].items()}
    elif hist is not None:
        wanted = [float(k) for k in objs[0].get("percentile", {})]
        pcts = lat_from_hist(hist, wanted).percentiles
    else:
        pcts = {}
        if any("percentile" in o for o in objs):
            notes.append(
                f"{d} {kind} percentiles left out: fio's plain json gives {len(objs)} jobs' percentiles but no "
                "histograms, and percentiles of separate jobs cannot be combined (use --output-format=json+)"
            )
    return LatStats(
        count=count,
        min_ns=min(int(o["min"]) for o in objs),
        max_ns=max(int(o["max"]) for o in objs),
        mean_ns=mean,
        stdev_ns=_pooled_stdev(objs, mean, count),
        percentiles=pcts,
        hist=hist,
    )


def _hist(objs: list[Json]) -> Optional[str]:
    """json+ bins (``{"value_ns": count}``) of every entry as one histogram;
    None unless every entry has bins (a partial histogram would lie)."""
    if not all("bins" in o for o in objs):
        return None
    pairs = [(int(v), int(n)) for o in objs for v, n in o["bins"].items()]
    return _native.hist_from_counts(pairs)


def _pooled_stdev(objs: list[Json], mean: float, count: int) -> float:
    """The stdev of the union from each part's N/mean/stdev, exactly (fio's
    stdev divides by N-1: sum of squares = (N-1)·sd² + N·(mean-M)²)."""
    if count < 2:
        return 0.0
    ss = sum((int(o["N"]) - 1) * float(o["stddev"]) ** 2 + int(o["N"]) * (float(o["mean"]) - mean) ** 2 for o in objs)
    return math.sqrt(ss / (count - 1))


def _cpu(entries: list[Json]) -> CpuFigures:
    """fio's usr_cpu/sys_cpu: % of one CPU per thread. Several entries →
    weighted by their job_runtime, i.e. total CPU time / total thread time,
    which is what fio prints for a group_reporting entry."""
    weights = [float(e.get("job_runtime", 0)) for e in entries]
    total = sum(weights)

    def avg(key: str) -> Optional[float]:
        if any(e.get(key) is None for e in entries):
            return None
        vals = [float(e[key]) for e in entries]
        if total <= 0:
            return sum(float(v) for v in vals) / len(vals)
        return sum(float(v) * w for v, w in zip(vals, weights)) / total

    return CpuFigures(usr_cpu_pct=avg("usr_cpu"), sys_cpu_pct=avg("sys_cpu"))


def _config(entries: list[Json], opts: list[dict[str, str]], notes: list[str]) -> SampleConfig:
    o = {**FIO_DEFAULTS, **opts[0]}
    kb = int(o["kb_base"])
    differing = sorted(
        k for k in ("rw", "bs", "iodepth", "direct", "ioengine", "size") if len({x.get(k) for x in opts}) > 1
    )
    if differing:
        notes.append(
            f"jobs of this group differ in {', '.join(differing)}; the config shows '{entries[0].get('jobname')}''s"
        )
    rw_raw = o.get("readwrite", o["rw"])
    rw = RW_NAMES.get(rw_raw.split(":")[0].strip())
    if rw is None:
        raise ResultFormatError(
            f"job '{entries[0].get('jobname')}': rw={rw_raw}: iolab analyses reads, writes and trims only"
        )
    varying = next((o[k] for k in ("bssplit", "bsrange", "blocksize_range") if k in o), None)
    bs_read, bs_write = _bs(varying or o.get("blocksize", o["bs"]), kb, entries[0])
    threads = _threads(entries, opts)
    depths = {int(x.get("iodepth", FIO_DEFAULTS["iodepth"])) for x in opts}
    mix: Optional[float] = None
    if rw in ("rw", "randrw"):
        mix = (
            100.0 - float(o["rwmixwrite"])
            if "rwmixwrite" in o and "rwmixread" not in opts[0]
            else float(o["rwmixread"])
        )
    return SampleConfig(
        rw=rw,
        bs_read_bytes=bs_read,
        bs_write_bytes=bs_write,
        iodepth=int(o["iodepth"]),
        numjobs=threads,
        direct=_fio_flag(o, "direct", entries[0]) or _fio_flag(o, "buffered", entries[0]) is False,
        ioengine=o["ioengine"].split(":")[0],
        rwmixread_pct=mix,
        size_bytes=fio_size(o.get("filesize", o.get("size", "")), kb),
        ramp_time_ns=fio_time_ns(o["ramp_time"]) or 0,
        # rate=0 and rate=0,0 mean "no limit"; any other digit or unit sets one.
        rate_limited=any(set(o.get(k, "0")) - {"0", ","} for k in ("rate", "rate_iops")),
        time_based=bool(_fio_flag(o, "time_based", entries[0])),
        bs_fixed=varying is None,
        rate_iops=_rate_cap(o.get("rate_iops"), rw, threads, 0),
        rate_bytes_per_s=_rate_cap(o.get("rate"), rw, threads, kb),
        # Jobs of one group with different depths: iodepth x numjobs would be wrong.
        outstanding_total=sum(_depth_threads(entries, opts)) if len(depths) > 1 else None,
    )


def _rate_cap(text: Optional[str], rw: str, threads: int, kb: int) -> Optional[float]:
    """A job's ``rate``/``rate_iops`` (``R[,W]`` per thread, 0 = no cap) as
    the cap over all threads and the directions the job issues; None when
    uncapped or not a plain number."""
    if not text:
        return None
    parts = text.split(",")
    fields = [parts[0], parts[0] if len(parts) == 1 else parts[1]]
    vals = [(fio_size(f, kb) if kb else fio_size(f, 1000)) if f else 0 for f in fields]
    issued = [rw not in ("write", "randwrite"), rw not in ("read", "randread")]
    if any(v is None for v, on in zip(vals, issued) if on):
        return None
    caps = [float(v or 0) for v, on in zip(vals, issued) if on]
    # A direction without a cap makes the total uncapped.
    return sum(caps) * threads if caps and all(c > 0 for c in caps) else None


def _bs(text: str, kb: int, entry: Json) -> tuple[int, int]:
    """``bs=R[,W[,T]]`` (fio(1): an empty field is the default; a value not
    followed by a comma applies to the types after it). A range (``4k-16k``)
    or a split (``4k/10:64k/90``) gives its largest size."""
    parts = text.split(",")
    read = _largest_size(parts[0] or FIO_DEFAULTS["bs"], kb)
    write = read if len(parts) == 1 else _largest_size(parts[1] or FIO_DEFAULTS["bs"], kb)
    if read is None or write is None:
        raise ResultFormatError(f"job '{entry.get('jobname')}': block size {text} is not in fio's size syntax")
    return read, write


def _largest_size(field: str, kb: int) -> Optional[int]:
    sizes = [fio_size(tok.split("/")[0], kb) for part in field.split(":") for tok in part.split("-")]
    return None if any(x is None for x in sizes) else max(x for x in sizes if x is not None)


def _per_job(entries: list[Json], opts: list[dict[str, str]]) -> dict[str, tuple[int, dict[str, str]]]:
    """Job name → (worker threads, options): numjobs clones appear as
    separate entries; a group_reporting entry stands for numjobs threads."""
    seen: dict[str, tuple[int, dict[str, str]]] = {}
    for e, o in zip(entries, opts):
        n, first = seen.get(str(e.get("jobname")), (0, o))
        seen[str(e.get("jobname"))] = (n + 1, first)
    return {k: (n if n > 1 else int(o.get("numjobs", "1")), o) for k, (n, o) in seen.items()}


def _threads(entries: list[Json], opts: list[dict[str, str]]) -> int:
    return sum(n for n, _ in _per_job(entries, opts).values())


def _depth_threads(entries: list[Json], opts: list[dict[str, str]]) -> list[int]:
    """iodepth x threads of each job of the group."""
    return [n * int(o.get("iodepth", FIO_DEFAULTS["iodepth"])) for n, o in _per_job(entries, opts).values()]


def _attach_device(doc: Json, samples: list[Sample]) -> None:
    disks = [x for x in doc.get("disk_util") or [] if isinstance(x, dict) and "name" in x]
    if not disks:
        return
    if len(samples) > 1:
        for s in samples:
            s.notes.append("fio's disk_util covers its whole run (every group), so no group is given device figures")
        return
    # Several disks: a device-mapper/md device and its members; the busiest is the one the job waited on.
    disk = max(disks, key=lambda x: float(x.get("util", 0.0)))
    s = samples[0]
    s.device = DeviceFigures(
        device=str(disk["name"]),
        # fio does not print its disk-stat window; its util is over the run, ≈ the group's runtime.
        window_ns=s.runtime_ns,
        util_pct=float(disk.get("util", 0.0)),
        reads_completed=int(disk.get("read_ios", 0)),
        writes_completed=int(disk.get("write_ios", 0)),
        read_bytes=0,
        write_bytes=0,
        bytes_known=False,
        read_ticks_ms=int(disk.get("read_ticks", 0)),
        write_ticks_ms=int(disk.get("write_ticks", 0)),
        in_queue_ms=int(disk.get("in_queue", 0)),
    )
    if len(disks) > 1:
        s.notes.append(f"fio measured {len(disks)} devices; device figures are the busiest, {disk['name']}")


# -- axes -------------------------------------------------------------------


def _ran(options: dict[str, str], sample: Sample) -> dict[str, Scalar]:
    """A point's options with fio's defaults filled in, "-" for those without effect."""
    full = {**FIO_DEFAULTS, **options}
    return {k: "-" if no_effect(k, sample.config.rw, v) else v for k, v in full.items()}


def _point_options(opts: list[dict[str, str]]) -> dict[str, str]:
    """The options of a point: each entry's, "(mixed)" where its jobs differ."""
    keys = dict.fromkeys(k for o in opts for k in o if k not in NOT_AXES)
    out = {}
    for k in keys:
        vals = {o.get(k, FIO_DEFAULTS.get(k, "(default)")) for o in opts}
        out[k] = vals.pop() if len(vals) == 1 else "(mixed)"
    return out


def _axes(
    per_point: list[dict[str, str]], samples: list[Sample]
) -> tuple[list[str], list[dict[str, Scalar]], list[dict[str, float]]]:
    """Axis names, each point's params and numeric values."""
    for po, s in zip(per_point, samples):
        po.update({k: "-" for k, v in po.items() if no_effect(k, s.config.rw, v)})
    keys = dict.fromkeys(k for po in per_point for k in po)
    table = {
        k: [po.get(k, "-" if no_effect(k, s.config.rw) else FIO_DEFAULTS.get(k, "(default)"))
            for po, s in zip(per_point, samples)]
        for k in keys
    }  # fmt: skip
    axes = [k for k, vals in table.items() if len(set(vals)) > 1]
    if not axes and len(per_point) > 1:
        # Groups with the same options (a job repeated behind stonewalls): name them by their jobs.
        axes = ["job"]
        table["job"] = [s.label.split(": ", 1)[1] for s in samples]
    params: list[dict[str, Scalar]] = [{a: table[a][i] for a in axes} for i in range(len(per_point))]
    values: list[dict[str, float]] = [{} for _ in per_point]
    for a in axes:
        nums = [_numeric(a, v, per_point[i].get("kb_base", "1024")) for i, v in enumerate(table[a])]
        if all(n is not None for n in nums):
            for i, n in enumerate(nums):
                values[i][a] = float(n)  # type: ignore[arg-type]
    return axes, params, values


def _numeric(axis: str, value: str, kb_base: str) -> Optional[float]:
    if axis in SIZE_OPTIONS:
        return fio_size(value, int(kb_base)) if "," not in value and kb_base.isdigit() else None
    if axis in TIME_OPTIONS:
        return fio_time_ns(value)
    if axis in COUNT_OPTIONS:
        try:
            return float(value)
        except ValueError:
            return None
    return None
