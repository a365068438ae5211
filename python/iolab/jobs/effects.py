"""What the extra options (:mod:`iolab.jobs.extras`) do before a run.

:func:`plan_extras` takes the jobs as written and returns an
:class:`ExtrasPlan`: the jobs the engine gets (extras taken out, a
``stonewall`` added where ``wait_for`` asks), each job's typed extras, the
run's interval when logs or steady state decide it, and the notes to show
once. It checks what can be checked before any I/O: ``allow_file_create=0``
with a missing file, ``wait_for`` naming no earlier job, log windows that
disagree. Per-I/O logs (``log_avg_msec=0``) get a scratch directory for the
engine's records (the native option ``per_io_log``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from iolab.jobs import JobSpec, ParseError
from iolab.jobs.existing import size_from_existing_files
from iolab.jobs.extras import JobExtras, split_extras
from iolab.jobs.lenient import read_sizes_as_fio
from iolab.jobs.percent import resolve_percentages

NS_PER_MS = 1_000_000


@dataclass
class ExtrasPlan:
    jobs: list[JobSpec]
    extras: list[JobExtras]
    #: The interval the run must use (ns), or None to keep the caller's.
    interval_ns: Optional[int] = None
    notes: list[str] = field(default_factory=list)

    def wants_logs(self) -> bool:
        return any(
            e.text(n)
            for e in self.extras
            for n in ("write_bw_log", "write_iops_log", "write_lat_log", "write_hist_log")
        )


def _option(spec: JobSpec, name: str) -> Optional[str]:
    value = None
    for k, v in spec.options:
        if k == name:
            value = v
    return value


_WRITING_RW = frozenset({"write", "randwrite", "rw", "readwrite", "randrw", "trimwrite", "randtrimwrite"})


def _writes(spec: JobSpec) -> bool:
    rw = _option(spec, "rw") or _option(spec, "readwrite") or "read"
    return rw.split(":")[0] in _WRITING_RW


def _check_files_exist(spec: JobSpec) -> None:
    filename = _option(spec, "filename")
    if not filename:
        raise ParseError(
            f"job {spec.name}", None, "allow_file_create=0 needs filename= naming files that exist already"
        )
    directory = _option(spec, "directory") or ""
    # fio's ':' separates files; '\:' is a colon inside a name.
    for name in (p.replace("\0", ":") for p in filename.replace("\\:", "\0").split(":")):
        path = name if os.path.isabs(name) else os.path.join(directory, name)
        if not os.path.exists(path):
            raise ParseError(
                f"job {spec.name}",
                None,
                f"allow_file_create=0 and {path} does not exist: create it, or drop the option",
            )


def _notes(e: JobExtras, spec: JobSpec) -> list[str]:
    notes = []
    for name in ("gtod_reduce", "disable_lat", "disable_clat", "disable_slat"):
        if e.get(name) is True:
            notes.append(f"{name}=1: iolab measures slat, clat and lat of every I/O anyway")
    if e.get("disable_bw_measurement") is True:
        notes.append("disable_bw_measurement=1: iolab measures bandwidth and IOPS per interval anyway")
    if "random_generator" in e.values:
        notes.append(f"random_generator={e.get('random_generator')}: iolab draws offsets with its own generator")
    if "clocksource" in e.values:
        notes.append(f"clocksource={e.get('clocksource')}: iolab times I/O with clock_gettime(CLOCK_MONOTONIC)")
    if "iodepth_low" in e.values:
        notes.append(
            f"iodepth_low={e.get('iodepth_low')}: iolab refills the queue as soon as an I/O completes "
            "(no low watermark)"
        )
    if e.get("overwrite") is False and _writes(spec):
        notes.append(
            "overwrite=0: iolab lays out the files before the run, so the writes overwrite laid-out data "
            "(fio's overwrite=1) instead of extending new files"
        )
    if e.get("create_on_open") is True:
        notes.append(
            "create_on_open=1: iolab creates and lays out the files before the run, so they exist before the "
            "job opens them and writes overwrite laid-out data (fio creates them empty at the first open)"
        )
    if e.get("disk_util") is True:
        notes.append(
            "disk_util=1: iolab's outputs have no disk utilisation section; "
            "`iolab run --results DIR` keeps the devices' counts in diskstats.json"
        )
    if "significant_figures" in e.values:
        notes.append(
            f"significant_figures={e.get('significant_figures')}: no effect; iolab's text output has its own "
            "precision and its JSON exact figures"
        )
    if e.get("verify_async"):
        notes.append(f"verify_async={e.get('verify_async')}: iolab verifies each block inline as its read completes")
    if e.get("unit_base") == "1":
        notes.append("unit_base=1: fio would print rates in bits; iolab prints them in bytes per second")
    return notes


def _check_openfiles(e: JobExtras, spec: JobSpec) -> None:
    """``openfiles`` below the worker's number of files asks fio to close and
    reopen files while it moves between them, which iolab does not do."""
    limit = e.get("openfiles")
    if not isinstance(limit, int):
        return
    filename = _option(spec, "filename")
    text = (_option(spec, "nrfiles") or _option(spec, "nr_files") or "").strip()
    nrfiles = int(text) if text.isdigit() else None
    if filename:
        # fio's rule (the core's options/files.rs): the first nrfiles names.
        nfiles = len(filename.replace("\\:", "").split(":"))
        nfiles = min(nfiles, nrfiles) if nrfiles else nfiles
    else:
        nfiles = nrfiles or 1
    if limit < nfiles:
        raise ParseError(
            f"job {spec.name}",
            None,
            f"openfiles={limit}: each worker has {nfiles} file(s) and iolab keeps them all open; "
            f"set openfiles={nfiles} or more, or leave it out",
        )


def _log_window_ns(e: JobExtras) -> Optional[int]:
    """The interval this job's bw/iops/lat logs need (ns), or None without
    windowed logs (``log_avg_msec=0`` logs every I/O: see :func:`per_io_logs`)."""
    avg = e.ms("log_avg_msec")
    if avg and (e.text("write_bw_log") or e.text("write_iops_log") or e.text("write_lat_log")):
        return avg * NS_PER_MS
    return None


def _scratch_dir() -> str:
    """A directory for the engine's per-I/O records. The logs writer removes
    it once the logs are written; a run that fails before that leaves it to
    be removed when the process exits."""
    path = tempfile.mkdtemp(prefix="iolab-iolog-")
    atexit.register(shutil.rmtree, path, True)
    return path


def per_io_logs(e: JobExtras) -> bool:
    """fio's rule: with ``log_avg_msec=0`` (the default) the bw, iops and lat
    logs have one line per I/O, which the engine records (``per_io_log``)."""
    return e.ms("log_avg_msec") == 0 and any(e.text(n) for n in ("write_bw_log", "write_iops_log", "write_lat_log"))


def plan_extras(jobs: Sequence[JobSpec], interval_ns: Optional[int] = None, *, check_files: bool = True) -> ExtrasPlan:
    """See the module doc. ``interval_ns``: the interval the user asked for
    (``--interval``), which logs and steady state must agree with.
    ``check_files=False`` (``--parse-only``): ``allow_file_create=0`` does
    not look for the files (fio's parse-only does not either)."""
    plan = ExtrasPlan([], [])
    names_so_far: set[str] = set()
    windows: dict[int, str] = {}
    for spec in jobs:
        native, e = split_extras(spec)
        native, lenient_notes = read_sizes_as_fio(native)
        native = resolve_percentages(native)
        native, sized_note = size_from_existing_files(native)
        if sized_note:
            lenient_notes.append(sized_note)
        wait_for = e.text("wait_for")
        if wait_for:
            if wait_for not in names_so_far:
                raise ParseError(f"job {spec.name}", None, f"wait_for={wait_for}: no earlier job has that name")
            native = native.with_options(("stonewall", None))
        _check_openfiles(e, native)
        if e.values.get("allow_file_create") is False and check_files:
            _check_files_exist(native)
        if per_io_logs(e):
            # --parse-only creates nothing: the directory is only named.
            records = _scratch_dir() if check_files else tempfile.gettempdir()
            native = native.with_options(("per_io_log", records))
        window = _log_window_ns(e)
        if window is not None:
            windows.setdefault(window, spec.name)
        ss_ns = e.get("steadystate_check_interval")
        if e.text("steadystate"):
            windows.setdefault(ss_ns if isinstance(ss_ns, int) else 1_000_000_000, spec.name)
        for note in lenient_notes + _notes(e, native):
            if note not in plan.notes:
                plan.notes.append(note)
        names_so_far.add(spec.name)
        plan.jobs.append(native)
        plan.extras.append(e)
    hist_ms = sorted({e.ms("log_hist_msec") for e in plan.extras if e.text("write_hist_log")})
    if 0 in hist_ms:
        raise ParseError("write_hist_log", None, "needs log_hist_msec (fio writes an empty file without it)")
    if not windows and hist_ms and interval_ns is None:
        windows[hist_ms[0] * NS_PER_MS] = "log_hist_msec"
    if len(windows) > 1:
        detail = ", ".join(f"{ns // NS_PER_MS} ms ({job})" for ns, job in windows.items())
        raise ParseError(
            "job files",
            None,
            f"log and steady-state windows differ ({detail}): iolab samples every job at one interval",
        )
    if windows:
        (window,) = windows
        if interval_ns is not None and interval_ns != window:
            raise ParseError(
                "--interval",
                None,
                f"{interval_ns // NS_PER_MS} ms disagrees with the jobs' log/steady-state window of "
                f"{window // NS_PER_MS} ms: leave --interval out",
            )
        plan.interval_ns = window
    step_ms = (plan.interval_ns or interval_ns or 1_000_000_000) // NS_PER_MS
    for ms in hist_ms:
        if ms % step_ms:
            raise ParseError("log_hist_msec", None, f"{ms} ms is not a multiple of the run's interval ({step_ms} ms)")
    return plan
