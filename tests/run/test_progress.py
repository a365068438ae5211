"""Live progress: a line kept up to date on a terminal, nothing but notes on a pipe."""

from __future__ import annotations

import io
import re

from iolab.run.progress import Terminal, TerminalProgress, progress_line
from iolab.units import fmt_mb_per_s, fmt_ns

SNAPSHOT = {
    "group": 0,
    "groups": 2,
    "phase": "running",
    "elapsed_ns": 12_000_000_000,
    "remaining_ns": 48_000_000_000,
    "fraction": 0.2,
    "iops": [12_345.0, 0.0],
    "bw_bytes_per_s": [50_565_120.0, 0.0],
    "p50_ns": [81_000, 0],
    "p99_ns": [412_000, 0],
}


def test_units():
    assert fmt_ns(850) == "850 ns"
    assert fmt_ns(12_345) == "12.3 µs"
    assert fmt_ns(4_100_000) == "4.10 ms"
    assert fmt_ns(1_200_000_000) == "1.20 s"
    assert fmt_mb_per_s(50_565_120) == "50.6 MB/s"


def test_progress_line_shows_active_directions_with_units():
    line = progress_line(SNAPSHOT)
    assert line.startswith("[1/2] running 12s, 48s left"), line
    assert "read 12.3k IOPS 50.6 MB/s p50 81.0 µs p99 412 µs" in line, line
    assert "write" not in line, line


def test_progress_line_shows_trims():
    trims = {**SNAPSHOT, "iops": [0.0, 0.0, 2_000.0], "bw_bytes_per_s": [0.0, 0.0, 8_192_000.0]}
    trims |= {"p50_ns": [0, 0, 30_000], "p99_ns": [0, 0, 90_000]}
    line = progress_line(trims)
    assert "trim 2.00k IOPS 8.19 MB/s p50 30.0 µs p99 90.0 µs" in line, line
    assert "read" not in line, line


def test_size_based_run_has_no_remaining_time():
    line = progress_line({**SNAPSHOT, "remaining_ns": None})
    assert "left" not in line, line


def test_tty_gets_a_live_line_and_notes_clear_it():
    buf = io.StringIO()
    p = TerminalProgress(Terminal(buf, is_tty=True, width_chars=200))
    p.update(SNAPSHOT)
    p.note("laid out testfile")
    p.update(SNAPSHOT)
    p.close()
    text = buf.getvalue()
    assert text.count("\r\x1b[K[1/2] running") == 2, repr(text)
    assert "\r\x1b[Klaid out testfile\n" in text, repr(text)
    assert text.endswith("\r\x1b[K"), repr(text)


def test_line_is_cut_to_the_terminal_width():
    buf = io.StringIO()
    TerminalProgress(Terminal(buf, is_tty=True, width_chars=40)).update(SNAPSHOT)
    assert len(buf.getvalue().split("\x1b[K")[-1]) == 39


def test_pipe_gets_notes_only():
    buf = io.StringIO()
    p = TerminalProgress(Terminal(buf, is_tty=False))
    p.update(SNAPSHOT)
    p.note("laid out testfile")
    p.update(SNAPSHOT)
    p.close()
    assert buf.getvalue() == "laid out testfile\n"


def test_eta_modes_decide_the_live_line(monkeypatch):
    from iolab.run.progress import eta_terminal

    buf = io.StringIO()
    monkeypatch.setattr("sys.stderr", buf)  # a pipe: auto shows no live line
    for mode, shown in (("auto", False), ("never", False), ("always", True)):
        p = TerminalProgress(eta_terminal(mode))
        p.update(SNAPSHOT)
        p.note("note: x")
        assert ("[1/2] running" in buf.getvalue()) == shown, mode
        assert buf.getvalue().endswith("note: x\n")
        buf.seek(0)
        buf.truncate()


def test_eta_on_the_command_line(cli):
    job = ["--name=a", "--ioengine=null", "--size=1m", "--bs=4k"]
    assert cli("run", *job, "--eta=never", "--output-format=terse").exit_code == 0
    r = cli("run", *job, "--eta=sometimes")
    assert r.exit_code == 2 and "--eta=sometimes: give auto, always or never" in r.output, r.output


def _at(elapsed_s: float) -> dict:
    return {**SNAPSHOT, "elapsed_ns": int(elapsed_s * 1e9)}


def test_eta_newline_keeps_a_line_every_period():
    """fio's --eta-newline=2: every 2 s of the run the live line is ended
    with a newline, so a log of the terminal keeps the run's course."""
    buf = io.StringIO()
    p = TerminalProgress(Terminal(buf, is_tty=True, width_chars=200), newline_ns=2_000_000_000)
    for t in (0.5, 1.0, 2.0, 2.5, 3.9, 4.0, 4.5):
        p.update(_at(t))
    p.close()
    kept = [ln.rsplit("\x1b[K", 1)[-1] for ln in buf.getvalue().split("\n")[:-1]]
    assert [ln.split(",")[0] for ln in kept] == ["[1/2] running 2s", "[1/2] running 4s"], repr(buf.getvalue())


def test_eta_newline_starts_again_with_the_next_group():
    buf = io.StringIO()
    p = TerminalProgress(Terminal(buf, is_tty=True, width_chars=200), newline_ns=2_000_000_000)
    for t in (2.0, 3.0, 0.5, 1.5, 2.5):  # the second group's clock starts at 0
        p.update(_at(t))
    assert buf.getvalue().count("\n") == 2, repr(buf.getvalue())


def test_eta_interval_redraws_at_most_every_period():
    buf = io.StringIO()
    p = TerminalProgress(Terminal(buf, is_tty=True, width_chars=200), every_ns=1_000_000_000)
    for t in (0.2, 0.4, 0.9, 1.2, 1.3, 2.2):
        p.update(_at(t))
    assert buf.getvalue().count("\r\x1b[K[1/2]") == 3, repr(buf.getvalue())  # 0.2, 1.2 and 2.2


def test_eta_newline_and_interval_on_the_command_line(cli):
    job = ["--name=a", "--ioengine=null", "--size=1m", "--bs=4k", "--output-format=terse"]
    assert cli("run", *job, "--eta-newline=1", "--eta-interval=500ms").exit_code == 0
    assert cli("run", *job, "--eta-newline", "0").exit_code == 0  # fio's 0: no newlines
    r = cli("run", *job, "--eta-newline=soon")
    assert r.exit_code == 2 and "--eta-newline" in r.output and "soon" in r.output, r.output


def test_eta_newline_keeps_lines_of_a_real_run(cli):
    """--eta=always (a pipe shows the live line too) with --eta-newline=1:
    a 2 s run keeps at least one progress line, ended with a newline; without
    --eta-newline none is kept (each is overwritten, then cleared)."""
    job = ["--name=a", "--ioengine=null", "--size=1m", "--bs=4k", "--time_based", "--runtime=2s"]

    def kept(*extra: str) -> list[str]:
        r = cli("run", *job, "--eta=always", "--output-format=terse", *extra)
        assert r.exit_code == 0, r.output
        return [ln for ln in r.stderr.split("\n") if "[1/1]" in ln.rsplit("\x1b[K", 1)[-1]]

    lines = [ln.rsplit("\x1b[K", 1)[-1] for ln in kept("--eta-newline=1")]
    # A line is kept once a second of the run has passed since the last one:
    # while it runs, or (a second after the last keep) the line of its end.
    assert lines and all(re.match(r"\[1/1\] (running|done) \d+s", ln) for ln in lines), lines
    assert kept() == []
