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
