"""A fleet run with a fault injected while it measures (tests/fleet).

:func:`run_with_fault` starts a fleet command, waits (on the condition, with
a deadline) until a rank has spooled two lines — the ranks are measuring —
then injects the fault (kill a rank, stop it, cut its link, Ctrl-C) and
times how long the run takes to end. The tests that use it differ only in
the fault and what they assert.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from waits import wait_until

#: A whole fleet command (MPI start-up of a few ranks on a loaded 2-core machine included).
RUN_LIMIT_S = 240


@dataclass(frozen=True)
class Ended:
    """How a faulted fleet run ended: its exit status, output, and the seconds from fault to end."""

    returncode: int
    out: str
    err: str
    took_s: float


def spooled_lines(spool: Path, rank: int) -> int:
    """Lines rank ``rank`` has spooled so far (0 before its spool exists)."""
    files = list(spool.glob(f"*/rank-{rank}.jsonl"))
    return len(files[0].read_text().splitlines()) if files else 0


def rank_pid(rank: int, spool: Path) -> Optional[int]:
    """The pid of ``rank`` of the fleet whose spool is ``spool``."""
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            env = (p / "environ").read_bytes().split(b"\0")
            cmd = (p / "cmdline").read_bytes()
        except OSError:
            continue
        if f"OMPI_COMM_WORLD_RANK={rank}".encode() in env and str(spool).encode() in cmd:
            return int(p.name)
    return None


def run_with_fault(
    cmd: list[str], spool: Path, rank: int, fault: Callable[[subprocess.Popen[str]], None], cwd: Optional[Path] = None
) -> Ended:
    """Run ``cmd``; once ``rank`` has spooled two lines, call ``fault(proc)``
    and wait for the run to end (killed if it outlives the limit)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    try:

        def measuring() -> bool:
            if proc.poll() is not None:
                raise AssertionError(
                    f"the run ended before rank {rank} spooled two lines: {proc.communicate()[1][-3000:]}"
                )
            return spooled_lines(spool, rank) >= 2

        wait_until(measuring, RUN_LIMIT_S, f"two spooled lines of rank {rank}")
        fault(proc)
        faulted = time.monotonic()
        out, err = proc.communicate(timeout=RUN_LIMIT_S)
        return Ended(proc.returncode, out, err, time.monotonic() - faulted)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
