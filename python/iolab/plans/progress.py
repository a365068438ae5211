"""Progress of a sweep: points done/total and an ETA from the measured
durations of the points run so far, in front of the current point's live
line (:func:`iolab.run.progress.progress_line`). On a pipe only the notes
(one line per point started) are written.
"""

from __future__ import annotations

from typing import Optional

from iolab.run.local import INTERRUPTED_NOTE, WARNING_MARK
from iolab.run.progress import Progress, Terminal, TerminalProgress, progress_line


def fmt_eta(seconds: float) -> str:
    """``45s``, ``3m05s``, ``1h02m``."""
    s = max(round(seconds), 0)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


class SweepProgress(TerminalProgress):
    """A :class:`TerminalProgress` that knows where the sweep is."""

    def __init__(self, terminal: Optional[Terminal] = None) -> None:
        super().__init__(terminal)
        self.total = 0
        self.done = 0
        self.durations_s: list[float] = []
        self._warned: set[str] = set()

    def begin(self, total: int, done: int) -> None:
        self.total, self.done = total, done
        if done:
            self.note(f"resuming: {done} of {total} runs already finished")

    def eta_s(self) -> Optional[float]:
        """Mean measured run time x runs left; None before the first run ends,
        or when the number of runs is not known in advance (``iolab find``)."""
        if not self.durations_s or not self.total:
            return None
        return sum(self.durations_s) / len(self.durations_s) * (self.total - self.done)

    def status(self) -> str:
        eta = self.eta_s()
        left = "" if eta is None else f", ETA {fmt_eta(eta)}"
        of = f"/{self.total}" if self.total else ""
        return f"[{self.done}{of} runs{left}]"

    def note(self, line: str) -> None:
        # A sweep does not keep a run cut short (the same command reruns it):
        # the single run's "results cover only the time that ran" is untrue here.
        if line == INTERRUPTED_NOTE:
            line = "interrupted: the run in progress is discarded (the same command reruns it)"
        # A job's warning (a setting without effect) is the same at every repeat of a point:
        # said once per sweep, not before each of its runs.
        if WARNING_MARK in line:
            if line in self._warned:
                return
            self._warned.add(line)
        super().note(line)

    def start_point(self, label: str, repeat: int, repeats: int) -> None:
        rep = f" repeat {repeat}/{repeats}" if repeats > 1 else ""
        self.note(f"{self.status()} {label}{rep}")

    def end_point(self, duration_s: float) -> None:
        self.durations_s.append(duration_s)
        self.done += 1

    def update(self, progress: Progress) -> None:
        if not self.terminal.is_tty:
            return
        line = f"{self.status()} {progress_line(progress)}"[: max(self.terminal.width_chars - 1, 20)]
        self.terminal.stream.write("\r\x1b[K" + line)
        self.terminal.stream.flush()
        self._shown = True
