"""Methodology warnings: ways a study's setup can make its figures mean
less than they seem. Each rule is a function of the dataset (and rows)
returning at most one :class:`Finding` of severity "warning"; the
thresholds are the named constants below (docs/user-guide.md lists them).
"""

from __future__ import annotations

from typing import Callable, Optional

from iolab.analysis import wording as w
from iolab.analysis.model import DIRS, Dataset, Finding, Row, Sample
from iolab.analysis.tables import UNSTABLE_CV_PCT, unstable_metrics

#: Buffered I/O on a working set up to this fraction of RAM is likely served by the page cache.
BUFFERED_RAM_FRACTION = 1.0
#: A percentile needs at least this many samples beyond it to be more than its top few values.
MIN_TAIL_SAMPLES = 10
#: Random I/O with blocks up to this size is an IOPS workload.
SMALL_BLOCK_BYTES = 64 * 1024
#: CPU steal (% of all CPUs) from which a VM's neighbours are said to take CPU time.
STEAL_WARN_PCT = 2.0
#: The device did this much (%) more I/O than iolab (bytes and I/Os) → other I/O on it.
OTHER_IO_MARGIN_PCT = 20.0
OTHER_IO_MIN_BYTES = 4 * 1024 * 1024
OTHER_IO_MIN_IOS = 256

Rule = Callable[[Dataset, list[Row]], Optional[Finding]]


def _samples(ds: Dataset) -> list[Sample]:
    return [s for p in ds.points for s in p.samples]


def _label(ds: Dataset, point: int) -> str:
    """The point as the tables name its row (:func:`wording.label`)."""
    return next(w.label(p) for p in ds.points if p.index == point)


def _warn(kind: str, text: str, figures: dict[str, object], points: list[int], score: float) -> Finding:
    return Finding(kind, "warning", text, dict(figures), None, points, score)


def buffered_fits_ram(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    ram = ds.host.get("memory_bytes")
    if not isinstance(ram, int) or ram <= 0:
        return None
    hits = [
        p.index for p in ds.points for s in p.samples[:1]
        if not s.config.direct and s.config.ioengine != "null" and s.config.size_bytes is not None
        and s.config.size_bytes * s.config.numjobs <= ram * BUFFERED_RAM_FRACTION
    ]  # fmt: skip
    if not hits:
        return None
    ws = max(s.config.size_bytes or 0 for p in ds.points if p.index in hits for s in p.samples[:1])
    text = (
        f"buffered I/O (direct=0) on a working set that fits in RAM ({w.size(ws)} per job, {w.size(ram)} of memory) "
        f"at {len(hits)} points: the page cache may serve it, so the figures can be memory's, not the device's; "
        "use direct=1 or a working set several times RAM"
    )
    return _warn("warn_buffered_fits_ram", text, {"working_set_bytes": ws, "memory_bytes": ram}, hits, 75.0)


def too_few_samples(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    worst: Optional[tuple[float, int, float, int]] = None  # (shortfall, point, percentile, count)
    for p in ds.points:
        for d in DIRS:
            got = [s.dir(d).lat or s.dir(d).clat for s in p.samples if s.dir(d).ios]
            lats = [lat for lat in got if lat is not None]
            if not lats:
                continue
            count = sum(lat.count for lat in lats)
            for pct in sorted({q for lat in lats for q in lat.percentiles}):
                beyond = count * (1 - pct / 100)
                if beyond < MIN_TAIL_SAMPLES and (worst is None or beyond < worst[0]):
                    worst = (beyond, p.index, pct, count)
    if worst is None:
        return None
    beyond, point, pct, count = worst
    need = MIN_TAIL_SAMPLES / (1 - pct / 100)
    where = _label(ds, point)
    text = (
        f"too few samples for p{pct:g}: {where} has {count} latencies, {w.num(beyond)} beyond p{pct:g} "
        f"(at least {MIN_TAIL_SAMPLES} needed, i.e. {need:.0f} latencies): that percentile is a single extreme value; "
        "run longer or report a lower percentile"
    )
    return _warn("warn_too_few_samples", text, {"percentile": pct, "count": count, "needed": need}, [point], 35.0)


def no_warmup(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    if ds.plan.get("warmup") or any(s.config.ramp_time_ns > 0 for s in _samples(ds)):
        return None
    text = (
        "no warm-up: the measured window starts cold (no ramp_time, no [warmup] run): caches, device state and "
        "thread start-up are in the figures; add a warm-up"
    )
    return _warn("warn_no_warmup", text, {}, [p.index for p in ds.points], 40.0)


def random_only_bandwidth(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    """Random small-block results whose source gave bandwidth but no IOPS (iolab's own tables always have both)."""
    hits = []
    for p in ds.points:
        for s in p.samples[:1]:
            for d in DIRS:
                r, bs = s.dir(d), s.config.bs_read_bytes if d == "read" else s.config.bs_write_bytes
                if s.config.random and bs <= SMALL_BLOCK_BYTES and r.bytes > 0 and r.iops <= 0:
                    hits.append(p.index)
    if not hits:
        return None
    text = (
        f"random small-block results given only in MB/s at {len(hits)} points: random I/O is judged in IOPS and "
        "latency; the source did not record IOPS"
    )
    return _warn("warn_random_only_bandwidth", text, {}, sorted(set(hits)), 50.0)


def one_queue_depth(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    depths = {s.config.outstanding for s in _samples(ds)}
    if len(depths) != 1:
        return None
    n = depths.pop()
    text = (
        f"one queue depth only: every point ran with {n} I/O(s) in flight (iodepth x numjobs): the figures say "
        "nothing about how the device scales with load; add an iodepth or numjobs axis"
    )
    return _warn("warn_one_queue_depth", text, {"outstanding": n}, [p.index for p in ds.points], 35.0)


def cpu_steal(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    steals = [(s.cpu.steal_pct, p.index) for p in ds.points for s in p.samples if s.cpu.steal_pct is not None]
    if not steals:
        return None
    worst, point = max(steals)
    if worst < STEAL_WARN_PCT:
        return None
    kind = (ds.host.get("virtualization") or {}).get("kind")
    virt = w.virtualization(kind)
    # A container's steal is its host kernel's: that kernel runs in a VM.
    vm = "" if not virt else f" (in {virt}, whose host is a VM)" if kind in w.CONTAINERS else f" ({virt})"
    text = (
        f"CPU steal up to {w.pct(worst)} of all CPUs at {_label(ds, point)}{vm}: the hypervisor gave CPU time to "
        "others during the run, so CPU-bound figures vary with the neighbours"
    )
    return _warn("warn_cpu_steal", text, {"steal_pct": worst}, [point], 50.0)


def frequency_scaling(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    governors = (ds.host.get("cpu") or {}).get("scaling_governors")
    if not governors:
        return None
    loose = sorted(g for g in governors if g != "performance")
    if not loose:
        return None
    text = (
        f"CPU frequency scaling not fixed: governor {', '.join(loose)} (not performance): the clock changes with "
        "load, so latency and cycles per I/O move with it; set the performance governor"
    )
    return _warn("warn_cpu_frequency_scaling", text, {"governors": list(governors)}, [], 45.0)


def repeats_disagree(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    bad = [(cv, r.point, r.dir, m) for r in rows for m, cv in unstable_metrics(r.metrics).items()]
    if not bad:
        return None
    cv, point, d, metric = max(bad)
    points = sorted({b[1] for b in bad})
    text = (
        f"repeats disagree at {len(points)} point(s) (coefficient of variation above {w.pct(UNSTABLE_CV_PCT)}; worst: "
        f"{_label(ds, point)} {d} {metric} CV {w.pct(cv)}): those figures are unstable; find the cause or add repeats"
    )
    return _warn("warn_repeats_disagree", text, {"worst_cv_pct": cv, "metric": metric}, points, 65.0)


def single_repeat(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    single = [p.index for p in ds.points if len(p.samples) < 2]
    if not single:
        return None
    text = (
        f"one repeat at {len(single)} of {len(ds.points)} points: no spread and no confidence interval; "
        "differences between points may be noise"
    )
    return _warn("warn_single_repeat", text, {}, single, 30.0)


def other_device_io(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    worst: Optional[tuple[float, int, Sample]] = None
    for p in ds.points:
        for s in p.samples:
            dev = s.device
            if dev is None or not s.config.direct:
                continue  # buffered I/O: readahead and writeback move device I/O away from iolab's own
            # The device's counts below are reads and writes (discards are
            # counted apart in diskstats), so iolab's trims stay out too.
            ios, nbytes = s.read.ios + s.write.ios, s.read.bytes + s.write.bytes
            dios, dbytes = dev.reads_completed + dev.writes_completed, dev.read_bytes + dev.write_bytes
            m = 1 + OTHER_IO_MARGIN_PCT / 100
            # Bytes guard against a device that splits large I/Os; without bytes (fio's disk_util) I/Os decide.
            more_bytes = dbytes > nbytes * m + OTHER_IO_MIN_BYTES if dev.bytes_known else True
            if dios > ios * m + OTHER_IO_MIN_IOS and more_bytes:
                excess = (dios / max(ios, 1) - 1) * 100
                if worst is None or excess > worst[0]:
                    worst = (excess, p.index, s)
    if worst is None:
        return None
    excess, point, s = worst
    dev = s.device
    assert dev is not None
    text = (
        f"other I/O on {dev.device} during {_label(ds, point)}: the device completed "
        f"{dev.reads_completed + dev.writes_completed} I/Os and {w.size(dev.read_bytes + dev.write_bytes)}, "
        f"iolab did {s.read.ios + s.write.ios} I/Os and {w.size(s.read.bytes + s.write.bytes)} "
        f"({w.signed_pct(excess)} I/Os): something else used the device, so its figures are shared"
    )
    return _warn("warn_other_device_io", text, {"excess_ios_pct": excess, "device": dev.device}, [point], 70.0)


def caches_not_dropped(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    if ds.plan.get("drop_caches") != "failed":
        return None
    text = "the plan asked to drop the page cache before every point, and at least one drop failed: see the run notes"
    return _warn("warn_drop_caches_failed", text, {}, [], 60.0)


#: Notes a run's samples carry when it did not finish as planned (iolab.analysis.load).
_CUT_SHORT = ("interrupted", "ended early", "stopped at the per-point timeout")


def incomplete(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    """A run or sweep that did not finish as planned, and what the figures
    cover: a run keeps what it measured until it stopped; a sweep keeps only
    the runs that finished (the one cut short is not written)."""
    notes: dict[str, list[int]] = {}
    for p in ds.points:
        for s in p.samples:
            for n in s.notes:
                if n.startswith(_CUT_SHORT):
                    notes.setdefault(n, []).append(p.index)
    planned, finished = ds.plan.get("planned_runs"), ds.plan.get("finished_runs")
    parts = []
    if isinstance(planned, int) and isinstance(finished, int) and finished < planned:
        parts.append(
            f"incomplete sweep: {finished} of {planned} planned runs finished (it was interrupted, failed or is "
            "still running); the figures are those of the finished runs only: a run cut short is not kept, and "
            "the same `iolab sweep` command resumes"
        )
    parts += [
        f"{n} (point{'s' if len(ps) > 1 else ''} {', '.join(map(str, sorted(set(ps))))})" for n, ps in notes.items()
    ]
    if not parts:
        return None
    figures = {"planned_runs": planned, "finished_runs": finished, "notes": sorted(notes)}
    return _warn("incomplete", "; ".join(parts), figures, sorted({i for ps in notes.values() for i in ps}), 100.0)


def _total_iops(s: Sample) -> float:
    return s.read.iops + s.write.iops


def buffered_io_uring(ds: Dataset, rows: list[Row]) -> Optional[Finding]:
    """Buffered io_uring with a queue that did fewer IOPS than psync one at a
    time on the same workload: io_uring hands buffered I/O it cannot
    complete at once to kernel worker threads (io-wq), and then measures
    them. Both figures are quoted (``iolab quick`` runs QD 1 on psync)."""
    sync: dict[tuple[str, int], tuple[int, float]] = {}
    for p in ds.points:
        for s in p.samples[:1]:
            if s.config.ioengine == "psync" and not s.config.direct:
                sync.setdefault((s.config.rw, s.config.bs_read_bytes), (p.index, _total_iops(s)))
    worst: Optional[tuple[float, int, Sample, int, float]] = None
    for p in ds.points:
        for s in p.samples[:1]:
            ref = sync.get((s.config.rw, s.config.bs_read_bytes))
            if ref is None or s.config.ioengine != "io_uring" or s.config.direct or s.config.iodepth < 2:
                continue
            ratio = _total_iops(s) / ref[1] if ref[1] else 1.0
            if ratio < 1.0 and (worst is None or ratio < worst[0]):
                worst = (ratio, p.index, s, ref[0], ref[1])
    if worst is None:
        return None
    ratio, point, s, ref_point, ref_iops = worst
    text = (
        f"buffered io_uring at QD {s.config.iodepth} ({_label(ds, point)}: {w.iops(_total_iops(s))}) did fewer I/Os per "
        f"second than psync at QD 1 on the same {s.config.rw} {w.size(s.config.bs_read_bytes)} workload "
        f"({_label(ds, ref_point)}: {w.iops(ref_iops)}): io_uring hands buffered I/O it cannot complete at once to "
        "kernel worker threads (io-wq), so the deeper job measures that fallback, not the storage; use direct=1 "
        "where the filesystem allows it"
    )
    figures: dict[str, object] = {"io_uring_iops": _total_iops(s), "io_uring_iodepth": s.config.iodepth, "psync_iops": ref_iops,
               "ratio": ratio}  # fmt: skip
    return _warn("warn_buffered_io_uring", text, figures, [ref_point, point], 80.0)


RULES: tuple[Rule, ...] = (
    incomplete, buffered_io_uring, buffered_fits_ram, too_few_samples, no_warmup, random_only_bandwidth, one_queue_depth, cpu_steal,
    frequency_scaling, repeats_disagree, single_repeat, other_device_io, caches_not_dropped,
)  # fmt: skip


def methodology_warnings(ds: Dataset, rows: list[Row]) -> list[Finding]:
    """Every rule's warning, highest score first."""
    found = [f for rule in RULES if (f := rule(ds, rows)) is not None]
    return sorted(found, key=lambda f: -f.score)
