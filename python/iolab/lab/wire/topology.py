"""The small-scale system of seed 000: an ``iolab target`` process serving
five exports ("shares"), each a 2-copy mirror (raid1) over two simulated
SSDs, every export behind one shared link (the block stack's ``link``
layer, docs/target.md), with a ``stats`` layer between the mirror and the
link so the target records the storage's time on its own (the paper's
server-side trace "above NTFS"); the client's time minus that is the wire.

The target runs as its own process (``python -m iolab.cli.main target``),
so its CPU time is its own (``getrusage`` of that process, in its stats
window) and never mixed with the client's; with ``cpus`` it is pinned to
those CPUs (``sched_setaffinity`` in the child before the target starts:
every thread it makes inherits the mask).
"""

from __future__ import annotations

import collections
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Optional

from iolab.errors import EngineError

SHARES = 5
#: Each mirror's drives: sim-ssd's geometry at a capacity that fits memory
#: (data is kept in RAM only where written; 28 % spare is the least its GC
#: accepts at this size).
DRIVE = "sim-ssd(capacity=256m,op=28%)"
#: The stats layer's name in front of the share's index (server latency).
SERVER_LAYER = "srv"
LINK_NAME = "wire"
START_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Link:
    """The shared wire: bandwidth in size syntax per second (``1g`` =
    1 GiB/s) and latency added to every request (``50us``)."""

    bw: str = "1g"
    lat: str = "50us"


def export_specs(link: Optional[Link], shares: int = SHARES) -> list[str]:
    """The compact export specs of the simulated file server."""
    out = []
    for i in range(shares):
        spec = f"s{i}=raid1,members=2,member={DRIVE}+stats,name={SERVER_LAYER}{i}"
        if link is not None:
            spec += f"+link,name={LINK_NAME},bw={link.bw},lat={link.lat}"
        out.append(spec)
    return out


class SimServer:
    """The simulated file server as a child process; a context manager that
    stops it (SIGTERM, then waits) on exit."""

    def __init__(self, link: Optional[Link], cpus: Optional[tuple[int, ...]] = None, shares: int = SHARES) -> None:
        self.link, self.cpus, self.shares = link, cpus, shares
        self._tmp = tempfile.TemporaryDirectory(prefix="iolab-lab-wire-")
        self.socket = Path(self._tmp.name) / "server.sock"
        self.stats_url = ""
        self.stacks: list[str] = []
        self._proc: Optional[subprocess.Popen[str]] = None
        #: The target's last lines after start-up (drained so its pipe never fills).
        self.log: collections.deque[str] = collections.deque(maxlen=20)
        self._drain: Optional[threading.Thread] = None

    def uri(self, share: int) -> str:
        return f"nbd+unix:///s{share}?socket={self.socket}"

    def __enter__(self) -> SimServer:
        args = ["target", "--unix", str(self.socket), "--stats-http", "127.0.0.1:0", "--max-connections", "1024"]
        for spec in export_specs(self.link, self.shares):
            args += ["--export", spec]
        # Pinned in the child before the target starts a thread (every
        # thread inherits the mask); not with preexec_fn, which is unsafe
        # in a parent that runs threads.
        pin = f"os.sched_setaffinity(0, {set(self.cpus)!r}); " if self.cpus is not None else ""
        boot = f"import os, runpy, sys; {pin}sys.argv[0] = 'iolab'; runpy.run_module('iolab.cli.main', run_name='__main__')"
        self._proc = subprocess.Popen(
            [sys.executable, "-c", boot, *args], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
        )
        try:
            self._await_ready()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        stream = self._proc.stderr
        assert stream is not None
        self._drain = threading.Thread(target=lambda: self.log.extend(stream), name="lab-wire-target-log", daemon=True)
        self._drain.start()
        return self

    def _await_ready(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        seen: list[str] = []
        while len(self.stacks) < self.shares:
            line = self._proc.stderr.readline()
            if not line or time.monotonic() > deadline:
                why = seen[-1].strip() if seen else "no output"
                raise EngineError(f"the simulated server did not start: {why}")
            seen.append(line)
            if "stats on " in line:
                self.stats_url = line.split("stats on ", 1)[1].strip()
            elif line.startswith("  export s"):
                self.stacks.append(line.split(": ", 2)[-1].strip())

    def __exit__(
        self, et: Optional[type[BaseException]], ev: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._drain is not None:
                self._drain.join(timeout=10)
            if self._proc.stderr is not None:
                self._proc.stderr.close()
            self._proc = None
        self._tmp.cleanup()
