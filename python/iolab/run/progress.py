"""Live progress of a run on the terminal.

The driver (:mod:`iolab.run.local`) hands a :class:`ProgressSink` three
kinds of things: notes (what layout did, that a run was interrupted),
progress snapshots (``Run.poll``), and the end. :class:`TerminalProgress`
writes notes as lines and, only when its stream is a terminal, keeps one
progress line up to date in place (``\\r``); on a pipe or a file it writes
the notes alone, so logs and captured output stay clean.

The terminal is injected (:class:`Terminal`), so tests can pretend to be
a TTY of a given width without monkeypatching.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from typing import Any, Optional, Protocol, TextIO

from iolab.units import fmt_count_per_s, fmt_mb_per_s, fmt_ns

Progress = dict[str, Any]
"""A ``Run.poll`` snapshot: group, groups, phase, elapsed_ns, remaining_ns,
fraction, and per direction (index 0 = read, 1 = write) iops,
bw_bytes_per_s, p50_ns, p99_ns of the last interval."""

#: The engine's progress arrays are [read, write, trim].
DIRS = ("read", "write", "trim")


class ProgressSink(Protocol):
    def note(self, line: str) -> None:
        """A line the user should read (always shown)."""

    def update(self, progress: Progress) -> None:
        """The latest progress snapshot."""

    def close(self) -> None:
        """The run is over: leave the terminal clean."""


@dataclass(frozen=True)
class Terminal:
    """Where progress goes and what it is."""

    stream: TextIO
    is_tty: bool
    width_chars: int = 100

    @classmethod
    def stderr(cls) -> Terminal:
        isatty = sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
        return cls(sys.stderr, isatty, shutil.get_terminal_size((100, 24)).columns)


#: fio's ``--eta`` values: when the live progress line is shown.
ETA_MODES = ("auto", "always", "never")


def eta_terminal(mode: str) -> Terminal:
    """stderr as ``--eta=mode`` wants it: ``auto`` shows the live line on a
    terminal only, ``always`` on a pipe too, ``never`` nowhere (notes still)."""
    term = Terminal.stderr()
    if mode == "auto":
        return term
    return Terminal(term.stream, mode == "always", term.width_chars)


def progress_line(p: Progress) -> str:
    """One line: group, phase, time, and per active direction IOPS, MB/s, p50/p99."""
    elapsed = f"{p.get('elapsed_ns', 0) / 1e9:.0f}s"
    remaining = p.get("remaining_ns")
    when = elapsed if remaining is None else f"{elapsed}, {remaining / 1e9:.0f}s left"
    head = f"[{p.get('group', 0) + 1}/{p.get('groups', 1)}] {p.get('phase', '')} {when}"
    parts = [head]
    for i, name in enumerate(DIRS):
        iops = p["iops"][i] if len(p.get("iops", ())) > i else 0.0
        if iops <= 0:
            continue
        parts.append(
            f"{name} {fmt_count_per_s(iops)} IOPS {fmt_mb_per_s(p['bw_bytes_per_s'][i])}"
            f" p50 {fmt_ns(p['p50_ns'][i])} p99 {fmt_ns(p['p99_ns'][i])}"
        )
    return " | ".join(parts)


class TerminalProgress:
    """A :class:`ProgressSink` for a terminal (live line) or a pipe (notes only).

    As fio's ``--eta-interval`` and ``--eta-newline``: the live line changes
    at most every ``every_ns`` of the run, and every ``newline_ns`` it is
    kept (ended with a newline) and the next one starts below it, so a log
    of the terminal keeps the run's course. Both count the run's own
    elapsed time (the snapshots' ``elapsed_ns``), not the wall clock.
    """

    def __init__(
        self, terminal: Optional[Terminal] = None, every_ns: int = 0, newline_ns: Optional[int] = None
    ) -> None:
        self.terminal = terminal or Terminal.stderr()
        self.every_ns = every_ns
        self.newline_ns = newline_ns
        self._shown = False  # a progress line is on screen and must be cleared first
        self._drawn_ns: Optional[int] = None  # elapsed_ns of the line last drawn
        self._kept_ns = 0  # elapsed_ns when a line was last kept

    def _clear(self) -> None:
        if self._shown:
            self.terminal.stream.write("\r\x1b[K")
            self._shown = False

    def note(self, line: str) -> None:
        self._clear()
        self.terminal.stream.write(line + "\n")
        self.terminal.stream.flush()

    def update(self, progress: Progress) -> None:
        if not self.terminal.is_tty:
            return
        now_ns = int(progress.get("elapsed_ns", 0))
        if self._drawn_ns is not None and now_ns < self._drawn_ns:  # the next group: its clock starts again
            self._drawn_ns, self._kept_ns = None, 0
        if self._drawn_ns is not None and now_ns - self._drawn_ns < self.every_ns:
            return
        self._drawn_ns = now_ns
        line = progress_line(progress)[: max(self.terminal.width_chars - 1, 20)]
        self.terminal.stream.write("\r\x1b[K" + line)
        self._shown = True
        if self.newline_ns is not None and now_ns - self._kept_ns >= self.newline_ns:
            self.terminal.stream.write("\n")
            self._kept_ns = now_ns
            self._shown = False
        self.terminal.stream.flush()

    def close(self) -> None:
        self._clear()
        self.terminal.stream.flush()


class SilentProgress:
    """A :class:`ProgressSink` that shows nothing (library use)."""

    def note(self, line: str) -> None:
        pass

    def update(self, progress: Progress) -> None:
        pass

    def close(self) -> None:
        pass
