"""The workbook's questions answered from the measured figures.

Each answer states the numbers behind it (percent changes or ratios of the
measured tests) and draws its conclusion from them: when the data do not
show what the workbook expects, the answer says what they do show.
"""

from __future__ import annotations

from typing import Any, Optional

from iolab.lab.workbook import QUESTION_TESTS, ROWS, Test

Measured = dict[str, dict[str, Any]]


def _pct(a: float, b: float) -> float:
    return (b / a - 1.0) * 100.0 if a else float("nan")


def _get(m: Measured, t: Test) -> Optional[dict[str, Any]]:
    return m.get(t.key)


def _row_test(lab: str, label: str, column: Optional[str] = None) -> Test:
    for r in ROWS:
        if r.lab == lab and r.label == label and (column is None or r.column == column):
            return r.test
    raise KeyError(f"{lab} {label} {column}")


def _size_step(m: Measured, small: Test, big: Test, what: str) -> Optional[str]:
    a, b = _get(m, small), _get(m, big)
    if a is None or b is None:
        return None
    di, db = _pct(a["iops"], b["iops"]), _pct(a["mib_per_s"], b["mib_per_s"])
    head = f"{what}: IOPS {di:+.0f}%, MB/s {db:+.0f}%"
    if abs(di) < abs(db):
        return f"{head}: MB/s changes more; the per-I/O cost is positioning, not transfer"
    return f"{head}: IOPS changes more; throughput is bound by the drives' sustained media rate, not per-I/O cost"


def answers(m: Measured) -> list[dict[str, str]]:
    """``[{"lab", "question", "answer"}]`` for the questions the data cover."""
    out: list[dict[str, str]] = []

    def add(lab: str, q: str, a: Optional[str]) -> None:
        if a is not None:
            out.append({"lab": lab, "question": q, "answer": a})

    add(
        "1",
        "If we change 8 KB random read to 16 KB random read, which changes more - IOPS or MB/s?",
        _size_step(m, QUESTION_TESTS["rand8k"], QUESTION_TESTS["rand16k"], "8 KiB -> 16 KiB random read"),
    )
    add(
        "1",
        "If we change 1 MB sequential read to 2 MB sequential read, which changes more - IOPS or MB/s?",
        _size_step(m, QUESTION_TESTS["seq1m"], QUESTION_TESTS["seq2m"], "1 MiB -> 2 MiB sequential read"),
    )
    ra, none = _get(m, _row_test("2A", "Adaptive Read Ahead")), _get(m, _row_test("2A", "No Read Ahead"))
    if ra is not None and none is not None:
        x = ra["mib_per_s"] / none["mib_per_s"]
        why = (
            "the controller sees the sequential stream and reads ahead from all drives at once, "
            "while without read-ahead each 64 KiB request waits on one drive"
            if x > 1.2
            else "read-ahead did not help here"
        )
        add(
            "2",
            "Which Read Policy gives better sequential read performance, and why?",
            f"Adaptive Read Ahead {ra['mib_per_s']:.1f} MiB/s vs No Read Ahead {none['mib_per_s']:.1f} MiB/s "
            f"({x:.1f}x): {why}",
        )
    wb = _get(m, _row_test("2B", "Write Back", "Disk Cache Disabled"))
    wt = _get(m, _row_test("2B", "Write Through", "Disk Cache Disabled"))
    if wb is not None and wt is not None:
        x = wb["mib_per_s"] / wt["mib_per_s"]
        add(
            "2",
            "Why does Write Back give larger benefits than Write Through for sequential writes?",
            f"Write Back {wb['mib_per_s']:.1f} MiB/s vs Write Through {wt['mib_per_s']:.1f} MiB/s ({x:.0f}x, "
            "disk cache disabled): write-back acknowledges once the data is in the controller cache and destages "
            "whole stripes (no parity reads); write-through waits, per 64 KiB, for RAID 5's read-modify-write "
            "on two drives, whose write must wait a revolution for the sectors it just read",
        )
    wbon = _get(m, _row_test("2B", "Write Back", "Disk Cache Enabled"))
    if wb is not None and wbon is not None:
        d = _pct(wb["mib_per_s"], wbon["mib_per_s"])
        why = (
            "the controller already queues whole-stripe writes to every drive, so a second cache in the "
            "drive has little left to hide"
            if abs(d) <= 15
            else "here the drive's cache changed the figure by more than 15%, so it was not redundant in this run"
        )
        add(
            "2",
            "Why is the disk write cache unnecessary with Write Back?",
            f"Write Back with disk cache enabled {wbon['mib_per_s']:.1f} MiB/s vs disabled "
            f"{wb['mib_per_s']:.1f} MiB/s ({d:+.0f}%): {why}",
        )
    seq, rnd = _get(m, _row_test("1B", "64 KB Sequential Read")), _get(m, _row_test("1B", "64 KB Random Read"))
    if seq is not None and rnd is not None:
        x = seq["mib_per_s"] / rnd["mib_per_s"]
        why = (
            "each random I/O pays a seek and half a revolution, so random is counted in IOPS"
            if x >= 4
            else "random costs little more than sequential here: no mechanical positioning behind it"
        )
        add(
            "1",
            "Sequential vs random (lab 1B): which metric describes each?",
            f"64 KiB sequential {seq['mib_per_s']:.1f} MiB/s vs random {rnd['mib_per_s']:.1f} MiB/s "
            f"({x:.1f}x); random read is {rnd['iops']:.0f} IOPS: {why}",
        )
    return out
