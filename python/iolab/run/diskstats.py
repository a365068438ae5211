"""The block device under a run's files, measured over the run from
/proc/diskstats: a :class:`~iolab.run.local.RunObserver` whose result
(``RunOutput.observed["diskstats"]``) is written as ``diskstats.json`` in
the run directory.

For each device: completed reads and writes, bytes (sectors x 512: the
kernel counts 512-byte sectors whatever the device's block size), and
utilisation = io_ticks / window x 100 (the share of the window with at
least one I/O in flight). A file on a partition is measured on the
partition's own line (what the run did there, without the rest of the
disk); ``partition`` and ``disk`` say so. Paths on no block device
(tmpfs, a network filesystem) give no device, and a note.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Callable, Optional

from iolab.run.hostfacts import storage_facts
from iolab.run.local import prepare

Json = dict[str, Any]
DISKSTATS = Path("/proc/diskstats")
SECTOR_BYTES = 512


def read_diskstats(path: Path = DISKSTATS) -> dict[str, list[int]]:
    """Device name → its counters (the fields after the name, as integers)."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) >= 14:
            out[fields[2]] = [int(f) for f in fields[3:]]
    return out


def delta(before: list[int], after: list[int], window_ns: int) -> Json:
    """The figures of one device between two snapshots."""
    d = [a - b for a, b in zip(after, before)]
    return {
        "reads_completed": d[0],
        "read_bytes": d[2] * SECTOR_BYTES,
        "writes_completed": d[4],
        "write_bytes": d[6] * SECTOR_BYTES,
        "read_ticks_ms": d[3],
        "write_ticks_ms": d[7],
        "in_queue_ms": d[10],
        "io_ticks_ms": d[9],
        "util_pct": min(100.0, d[9] * 1e6 / window_ns * 100.0) if window_ns > 0 else 0.0,
        "window_ns": window_ns,
    }


class DiskstatsObserver:
    """Snapshots /proc/diskstats for the devices under ``paths`` at begin and end."""

    name = "diskstats"

    def __init__(
        self,
        paths: Iterable[Path],
        diskstats: Path = DISKSTATS,
        clock_ns: Callable[[], int] = time.monotonic_ns,
        find: Callable[[Path], Json] = storage_facts,
    ) -> None:
        self.paths = list(paths)
        self.diskstats, self.clock_ns, self.find = diskstats, clock_ns, find
        self.devices: list[Json] = []
        self.notes: list[str] = []
        self.before: dict[str, list[int]] = {}
        self.t0 = 0

    def _find_devices(self) -> None:
        seen = set()
        for p in self.paths:
            facts = self.find(p)
            dev = facts.get("device")
            if dev is None:
                self.notes.append(f"{p}: on no block device ({facts.get('fstype') or 'unknown filesystem'})")
            elif dev not in seen:
                seen.add(dev)
                partition = facts.get("disk") not in (None, dev)
                self.devices.append({"device": dev, "disk": facts.get("disk"), "partition": partition})
                if partition:
                    self.notes.append(f"{p}: on partition {dev} of {facts.get('disk')}: the partition's line is used")

    def begin(self) -> None:
        # The files exist by now (the run laid them out), so the devices are the ones the run uses.
        self._find_devices()
        self.before = read_diskstats(self.diskstats)
        self.t0 = self.clock_ns()

    def end(self) -> Json:
        after = read_diskstats(self.diskstats)
        window = self.clock_ns() - self.t0
        devices = []
        for d in self.devices:
            name = d["device"]
            if name in self.before and name in after:
                devices.append({**d, **delta(self.before[name], after[name], window)})
            else:
                self.notes.append(f"{name}: not in {self.diskstats}")
        return {"window_ns": window, "devices": devices, "notes": self.notes}


def observer_for(prepared_jobs: Iterable[Json]) -> Optional[DiskstatsObserver]:
    """The observer for the files of prepared jobs (``filenames``, else ``directory``); None when they name none."""
    paths: list[Path] = []
    for job in prepared_jobs:
        if job.get("nbd"):
            continue  # a network block device: no local device to watch
        names = [str(f) for f in job.get("filenames") or []]
        # Without filename= the engine creates the files in directory=, else the working directory.
        paths += [Path(n) for n in names] or [Path(str(job.get("directory") or "."))]
    unique = list(dict.fromkeys(paths))
    return DiskstatsObserver(unique) if unique else None


def diskstats_observers(jobs: Iterable[Any]) -> list[DiskstatsObserver]:
    """``[observer]`` for jobs on local files, ``[]`` for none (NBD only).
    ``jobs``: prepared (as ``prepare_all`` gives them); a ``JobSpec`` is prepared here."""
    found = observer_for(j if isinstance(j, dict) else prepare(j) for j in jobs)
    return [found] if found is not None else []


#: Other traffic below this many bytes is left unremarked: a filesystem's
#: journal commit (a few blocks) and the I/Os still in flight when a job's
#: window closed fit under it with the job's own ``iodepth x bs`` added.
OTHER_MIN_BYTES = 1 << 20
#: ... and so is other traffic below this share of the job's own I/Os and bytes.
OTHER_MIN_SHARE = 0.05


def own_io(summary_job: Json) -> Json:
    """A job's own completed I/Os and bytes per direction, from its summary entry."""
    m = summary_job["merged"]
    return {f"{d}_{k}": int(m[d][k]) for d in ("read", "write") for k in ("ios", "bytes")}


SYS_BLOCK = Path("/sys/block")
PAGE_BYTES = 4096


def request_limit_bytes(disk: str, sys_block: Path = SYS_BLOCK) -> Optional[int]:
    """The largest request the block layer sends ``disk`` in one piece: its
    ``max_sectors_kb``, and at most ``max_segments`` pages (a 1 MiB O_DIRECT
    read reaches a virtio disk of 254 segments as two requests). None where
    sysfs does not say."""
    q = sys_block / disk / "queue"
    try:
        sectors = int((q / "max_sectors_kb").read_text()) * 1024
        segments = int((q / "max_segments").read_text()) * PAGE_BYTES
    except (OSError, ValueError):
        return None
    return min(sectors, segments)


def device_requests(ios: int, max_bs: int, limit: Optional[int]) -> int:
    """How many device requests ``ios`` I/Os of up to ``max_bs`` bytes become at most
    (each split at ``limit``; unsplit where the limit is unknown)."""
    return ios * (-(-max_bs // limit) if limit else 1)


def other_traffic(observed: Json, own: Json, *, direct: bool, slack_bytes: int = 0) -> Json:
    """What the device under a job's file did during the job besides the job
    itself: the device's completed I/Os and bytes (``observed``, a
    :class:`DiskstatsObserver` window) less the job's own (:func:`own_io`).

    ``{"measured": False, "why": ...}`` where it cannot be told: no block
    device under the file, or buffered I/O (the page cache, not the job,
    decides what reaches the device). Otherwise ``measured``, the device's
    window (``diskstats``: the device's line as :class:`DiskstatsObserver` gives it),
    the device's
    and the job's figures, ``other_ios``, ``other_bytes`` (per direction
    too; never below 0: the block layer may merge the job's own requests),
    and ``flagged``: more than ``slack_bytes`` + :data:`OTHER_MIN_BYTES`
    and at least :data:`OTHER_MIN_SHARE` of the job's own bytes. The job's
    own I/Os are counted as the device saw them (``own["read_requests"]``,
    ``own["write_requests"]``: split where the device's request limit
    splits them, :func:`device_requests`), so other I/Os are an estimate;
    the bytes are exact."""
    devices = observed.get("devices") or []
    if not devices:
        notes = "; ".join(observed.get("notes") or []) or "no block device found"
        return {"measured": False, "why": f"not measured: {notes}"}
    if not direct:
        why = "not measured: buffered I/O (the page cache, not the job, decides what reaches the device)"
        return {"measured": False, "why": why, "device": devices[0]["device"]}
    d = devices[0]
    other = {
        "other_read_ios": max(0, d["reads_completed"] - own.get("read_requests", own["read_ios"])),
        "other_write_ios": max(0, d["writes_completed"] - own.get("write_requests", own["write_ios"])),
        "other_read_bytes": max(0, d["read_bytes"] - own["read_bytes"]),
        "other_write_bytes": max(0, d["write_bytes"] - own["write_bytes"]),
    }
    other_ios = other["other_read_ios"] + other["other_write_ios"]
    other_bytes = other["other_read_bytes"] + other["other_write_bytes"]
    own_ios, own_bytes = own["read_ios"] + own["write_ios"], own["read_bytes"] + own["write_bytes"]
    return {
        "measured": True,
        "device": d["device"],
        "window_ns": d["window_ns"],
        "util_pct": d["util_pct"],
        "device_ios": d["reads_completed"] + d["writes_completed"],
        "device_bytes": d["read_bytes"] + d["write_bytes"],
        "own_ios": own_ios,
        "own_bytes": own_bytes,
        **other,
        "other_ios": other_ios,
        "other_bytes": other_bytes,
        "flagged": other_bytes > slack_bytes + OTHER_MIN_BYTES and other_bytes >= OTHER_MIN_SHARE * own_bytes,
        "notes": list(observed.get("notes") or []),
        "diskstats": d,
    }
