"""Serving an iolab NBD target in the foreground.

The target itself (protocol, block stack, pacing, stats endpoint) is Rust
(``iolab._native.Target``); this module runs one until SIGTERM or SIGINT:
it announces where it listens and what it exports, turns either signal
into a clean shutdown (in-flight requests answered, exports flushed), and
restores the previous handlers afterwards.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import TextIO

from iolab import _native
from iolab.units import fmt_bytes_exact


def announce(target: _native.Target, out: TextIO) -> None:
    """Print where the target listens and its exports (name, size, stack)."""
    addrs = target.addresses()
    print(f"iolab target: listening on {addrs['nbd']}", file=out)
    if addrs["stats_http"] is not None:
        print(f"iolab target: stats on http://{addrs['stats_http']}/stats", file=out)
    for name, size_bytes, stack, read_only in target.exports():
        ro = " (read-only)" if read_only else ""
        print(f"  export {name}: {fmt_bytes_exact(size_bytes)}{ro}: {stack}", file=out)
    out.flush()


def serve_foreground(target: _native.Target, out: TextIO = sys.stderr) -> None:
    """Serve until SIGTERM/SIGINT, then shut down cleanly and return."""

    def stop(signum: int, _frame: FrameType | None) -> None:
        print(f"iolab target: {signal.Signals(signum).name}, shutting down", file=out)
        target.shutdown()

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        target.start()
        announce(target, out)
        target.wait()
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    print("iolab target: stopped", file=out)
