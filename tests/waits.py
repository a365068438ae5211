"""Waiting on a condition with a deadline, never on a sleep: what tests use
to synchronise with another process (a run that is measuring, a file that
appeared).

:func:`wait_until` polls a condition until it holds or a deadline passes
(then fails naming what it waited for); :func:`busy_workers` tells from
/proc whether a process's engine workers (threads ``iolab-w<job>.<worker>``)
exist and have run on a CPU — i.e. the run is measuring.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

#: How often a condition is checked: short against the deadlines, long
#: enough not to take a CPU from the process being watched.
POLL_S = 0.02


def wait_until(cond: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Return as soon as ``cond()`` holds; fail after ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:g} s for {what}")
        time.sleep(POLL_S)


def _worker_cpu_ticks(pid: int) -> list[int]:
    """User + system clock ticks of each engine worker thread of ``pid``."""
    ticks = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            if not (task / "comm").read_text().startswith("iolab-w"):
                continue
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended while we looked
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        ticks.append(int(fields[11]) + int(fields[12]))  # utime, stime (fields 14, 15 of stat)
    return ticks


def busy_workers(pid: int, min_ticks: int = 1) -> bool:
    """Whether ``pid`` has an engine worker thread that has used at least
    ``min_ticks`` clock ticks of CPU (0: that exists at all)."""
    return any(t >= min_ticks for t in _worker_cpu_ticks(pid))
