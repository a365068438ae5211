"""Sweep progress: runs done/total, ETA from measured durations, live line."""

from __future__ import annotations

import io

from iolab.plans.progress import SweepProgress
from iolab.run.progress import Terminal

SNAPSHOT = {
    "group": 0,
    "groups": 1,
    "phase": "running",
    "elapsed_ns": 2 * 10**9,
    "remaining_ns": 3 * 10**9,
    "iops": [1000.0, 0.0],
    "bw_bytes_per_s": [4.096e6, 0.0],
    "p50_ns": [80_000, 0],
    "p99_ns": [300_000, 0],
}


def test_eta_from_measured_durations_and_live_line_on_a_tty() -> None:
    stream = io.StringIO()
    p = SweepProgress(Terminal(stream, is_tty=True, width_chars=200))
    p.begin(total=4, done=1)
    assert p.eta_s() is None
    p.start_point("bs=4k", 1, 1)
    p.end_point(10.0)
    p.start_point("bs=8k", 1, 1)
    p.end_point(20.0)
    assert p.eta_s() == 15.0  # mean 15 s x 1 run left
    p.update(SNAPSHOT)
    text = stream.getvalue()
    assert "resuming: 1 of 4 runs already finished" in text
    # after one 10 s run, 2 left: 20 s
    assert "[1/4 runs] bs=4k" in text and "[2/4 runs, ETA 20s] bs=8k" in text
    assert "\r\x1b[K[3/4 runs, ETA 15s] [1/1] running 2s, 3s left | read 1.00k IOPS" in text


def test_pipe_gets_notes_only() -> None:
    stream = io.StringIO()
    p = SweepProgress(Terminal(stream, is_tty=False))
    p.begin(total=2, done=0)
    p.start_point("bs=4k", 2, 3)
    p.update(SNAPSHOT)
    assert stream.getvalue() == "[0/2 runs] bs=4k repeat 2/3\n"


def test_a_jobs_warning_is_said_once_per_sweep() -> None:
    # Session 12: `iolab lab fio-study --quick` printed psync's "iodepth=16 has no effect" before
    # each of the 3 repeats of each point, burying the progress lines.
    stream = io.StringIO()
    p = SweepProgress(Terminal(stream, is_tty=False))
    p.begin(total=3, done=0)
    psync = "test: warning: ioengine=psync is synchronous: iodepth=16 has no effect"
    for repeat in (1, 2, 3):
        p.start_point("bs=4k", repeat, 3)
        p.note(psync)
        p.note("reused testfile: 65536 bytes, created and filled by iolab earlier")
    p.note(psync.replace("16", "32"))
    lines = stream.getvalue().splitlines()
    assert lines.count(psync) == 1 and lines[1] == psync, lines
    assert lines.count("reused testfile: 65536 bytes, created and filled by iolab earlier") == 3, lines
    assert lines[-1] == psync.replace("16", "32"), lines
