"""Each rank's own record of the run, written as it goes.

One JSON line per interval snapshot, then one for the final result, in
``DIR/rank-R.jsonl`` on the rank's own disk: if rank 0 or the network goes
away, what the rank measured up to then is still there (and the message
that ends the run names the file). Lines are flushed one by one, so a
rank killed mid-run leaves every interval it finished.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Optional, TextIO

#: Where spools go by default: ``$TMPDIR/iolab-fleet/RUN_ID``.
DEFAULT_ROOT = Path(tempfile.gettempdir()) / "iolab-fleet"


def run_id(kind: str, now: Optional[float] = None) -> str:
    """A spool folder's name: ``KIND-YYYYmmdd-HHMMSS-PID-XXXX`` (rank 0's
    PID, four random hex digits). Runs on one machine share the spool root:
    the PID keeps two started in the same second apart (spools are appended
    to), and the random part two in containers that share /tmp but not PIDs."""
    import secrets
    import time

    stamp = time.strftime(f"{kind}-%Y%m%d-%H%M%S", time.localtime(now))
    return f"{stamp}-{os.getpid()}-{secrets.token_hex(2)}"


class Spool:
    """Append-only JSON lines for one rank."""

    def __init__(self, directory: Path, rank: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"rank-{rank}.jsonl"
        self._file: Optional[TextIO] = self.path.open("a", encoding="utf-8")

    def write(self, kind: str, value: Any) -> None:
        if self._file is None:
            return
        self._file.write(json.dumps({"kind": kind, **value}, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_spool(path: Path) -> list[dict[str, Any]]:
    """Every complete line of a spool (a torn last line is dropped)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return out


__all__ = ["DEFAULT_ROOT", "Spool", "read_spool", "run_id"]
