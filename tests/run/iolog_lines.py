"""Reading fio's iolog text (version 3) in tests: the I/O lines and their
timestamps, as the replay tests compare them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: (file, direction, offset, length) of one logged I/O.
Io = tuple[str, str, int, int]


def io_lines(log: Path) -> list[tuple[int, Io]]:
    """(timestamp in µs, I/O) of every read, write and trim line, in order."""
    lines = log.read_text().splitlines()
    assert lines[0] == "fio version 3 iolog", lines[:1]
    out = []
    for line in lines[1:]:
        f = line.split()
        if len(f) == 5 and f[2] in ("read", "write", "trim"):
            out.append((int(f[0]), (f[1], f[2], int(f[3]), int(f[4]))))
    return out


def ios(log: Path) -> list[Io]:
    return [io for _, io in io_lines(log)]


def iolab_run(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", *args, "--output-format=terse"]
    return subprocess.run(cmd, capture_output=True, text=True)


def replay(log: Path, out: Path, *args: str) -> list[tuple[int, Io]]:
    """Replays `log` with iolab, recording what it issued in `out`."""
    r = iolab_run("--name=replay", f"--read_iolog={log}", f"--write_iolog={out}", *args)
    assert r.returncode == 0, r.stderr
    return io_lines(out)
