"""Waiting on a condition with a deadline, never on a sleep: what tests use
to synchronise with another process (a run that is measuring, a file that
appeared, a server that announced itself).

:func:`wait_until` polls a condition until it holds or a deadline passes
(then fails naming what it waited for), failing at once if a process it
watches has exited; :func:`read_until` reads a process's output until a
line holds a marker, under a real deadline (a plain ``readline`` blocks
past any deadline); :func:`busy_workers` tells from /proc whether a
process's engine workers (threads ``iolab-w<job>.<worker>``) exist and
have run on a CPU — i.e. the run is measuring.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from pathlib import Path
from typing import IO, Any, Callable, Optional

#: How often a condition is checked: short against the deadlines, long
#: enough not to take a CPU from the process being watched.
POLL_S = 0.02


def wait_until(
    cond: Callable[[], bool],
    timeout_s: float,
    what: str,
    proc: Optional[subprocess.Popen[Any]] = None,
) -> None:
    """Return as soon as ``cond()`` holds; fail after ``timeout_s`` seconds,
    or as soon as ``proc`` (the process that should make it hold) exits."""
    deadline = time.monotonic() + timeout_s
    while not cond():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{_name(proc)} exited ({proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:g} s for {what}")
        time.sleep(POLL_S)


def read_until(proc: subprocess.Popen[Any], stream: IO[Any], marker: str, timeout_s: float) -> str:
    """The first line of ``stream`` (one of ``proc``'s pipes, not yet read
    through its Python buffer) that holds ``marker``. Reads the pipe's file
    descriptor directly, so the deadline holds while nothing is written; fails
    naming what was read when ``proc`` exits or the deadline passes."""
    fd, seen = stream.fileno(), b""
    deadline = time.monotonic() + timeout_s
    want = marker.encode()
    while True:
        for line in seen.splitlines(keepends=True):
            if want in line and line.endswith(b"\n"):
                return line.decode()
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"waited {timeout_s:g} s for '{marker}' from {_name(proc)}; it wrote: {seen!r}")
        if select.select([fd], [], [], min(left, 0.5))[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"{_name(proc)} closed its output before '{marker}': {seen!r}")
            seen += chunk


def _name(proc: subprocess.Popen[Any]) -> str:
    args = proc.args if isinstance(proc.args, (list, tuple)) else [proc.args]
    return " ".join(str(a) for a in args[:4])


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
