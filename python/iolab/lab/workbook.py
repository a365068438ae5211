"""Seed 003's tables as data: every row of the workbook's reference results
with its label as the workbook writes it, and the test that measures it.

The workbook's "MB/s" are MiB/s (6627 IOPS x 64 KiB = 414 MiB/s), so every
figure here is MiB/s where the workbook's column says MB/s.

A *test* is one measurement: an array configuration (read policy, write
policy, disk cache) and a job (rw, bs, iodepth). Rows that the workbook
measured under the same configuration and job (1C at QD 1, 1D at 64 KB,
2A with No Read Ahead) share one test. Lab 1B's queue depth is not in the
workbook (its iometer.icf set it): its 414 MB/s sequential figure is more
than three times 1C's QD 1 figure on the same array, so it was not QD 1;
iolab runs it at QD ``LAB_1B_IODEPTH`` and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

LAB_1B_IODEPTH = 16
#: The workbook's transfer sizes, in bytes.
BS_BYTES = {"8k": 8 << 10, "16k": 16 << 10, "64k": 64 << 10, "1m": 1 << 20, "2m": 2 << 20}
#: The client round trip per request the model assumes (iolab's client over
#: a Unix socket on an idle machine).
MODEL_RTT_NS = 30_000

#: Columns measured in the workbook's unit.
IOPS = "IOPS"
MBS = "MB/s"


@dataclass(frozen=True)
class ArrayConfig:
    """The virtual disk's settings in RAID Web Console's words."""

    read_policy: str  # "none" | "adaptive"
    write_policy: str  # "back" | "through"
    disk_cache: bool

    @property
    def key(self) -> str:
        dc = "dcon" if self.disk_cache else "dcoff"
        return f"r{self.read_policy}-w{self.write_policy}-{dc}"


@dataclass(frozen=True)
class Test:
    """One measurement: a configuration and a job."""

    array: ArrayConfig
    rw: str
    bs: str
    iodepth: int

    @property
    def key(self) -> str:
        return f"{self.array.key}:{self.rw}:{self.bs}:qd{self.iodepth}"

    @property
    def writes(self) -> bool:
        return "write" in self.rw


@dataclass(frozen=True)
class Row:
    """A cell of a workbook table: row label, column, reference, test."""

    lab: str
    label: str
    column: str
    reference: float
    test: Test

    @property
    def unit(self) -> str:
        return "IOPS" if self.column == IOPS else "MiB/s"


# Lab 1's array: RAID 5, Disk Cache Policy Disabled (step A.2.e), the
# default No Read Ahead (1C's QD 1 figure equals 2A's No Read Ahead one).
LAB1 = ArrayConfig("none", "back", False)
ADAPTIVE = ArrayConfig("adaptive", "back", False)


def _seq(array: ArrayConfig, bs: str, qd: int = 1, rw: str = "read") -> Test:
    return Test(array, rw, bs, qd)


_SEQ_1B = _seq(LAB1, "64k", LAB_1B_IODEPTH)
_RAND_1B = Test(LAB1, "randread", "64k", LAB_1B_IODEPTH)

TITLES = {
    "1B": "Lab 1B: sequential vs random read (64 KB)",
    "1C": "Lab 1C: outstanding I/Os, 64 KB sequential read",
    "1D": "Lab 1D: transfer block size, sequential read, QD 1",
    "2A": "Lab 2A: read policy, 64 KB sequential read, QD 1",
    "2B": "Lab 2B: write policy and disk cache, 64 KB sequential write, QD 1",
}

#: The first column's heading of each table, as the workbook writes it.
ROW_HEADINGS = {"1B": "", "1C": "Outstanding IOs", "1D": "Transfer Block Size", "2A": "", "2B": ""}

ROWS: tuple[Row, ...] = (
    Row("1B", "64 KB Sequential Read", IOPS, 6627.44, _SEQ_1B),
    Row("1B", "64 KB Sequential Read", MBS, 414.22, _SEQ_1B),
    Row("1B", "64 KB Random Read", IOPS, 546.70, _RAND_1B),
    Row("1B", "64 KB Random Read", MBS, 34.17, _RAND_1B),
    Row("1C", "1", MBS, 127.17, _seq(LAB1, "64k", 1)),
    Row("1C", "2", MBS, 231.49, _seq(LAB1, "64k", 2)),
    Row("1C", "4", MBS, 310.30, _seq(LAB1, "64k", 4)),
    Row("1D", "8 KB", MBS, 42.89, _seq(LAB1, "8k")),
    Row("1D", "64 KB", MBS, 127.72, _seq(LAB1, "64k")),
    Row("1D", "1 MB", MBS, 379.89, _seq(LAB1, "1m")),
    Row("2A", "Adaptive Read Ahead", MBS, 306.89, _seq(ADAPTIVE, "64k")),
    Row("2A", "No Read Ahead", MBS, 127.23, _seq(LAB1, "64k")),
    Row(
        "2B",
        "Write Through",
        "Disk Cache Disabled",
        7.09,
        _seq(ArrayConfig("none", "through", False), "64k", rw="write"),
    ),
    Row(
        "2B",
        "Write Through",
        "Disk Cache Enabled",
        30.17,
        _seq(ArrayConfig("none", "through", True), "64k", rw="write"),
    ),
    Row("2B", "Write Back", "Disk Cache Disabled", 245.56, _seq(ArrayConfig("none", "back", False), "64k", rw="write")),
    Row("2B", "Write Back", "Disk Cache Enabled", 239.50, _seq(ArrayConfig("none", "back", True), "64k", rw="write")),
)

#: The tests behind the lab questions (not in the workbook's tables).
QUESTION_TESTS = {
    "rand8k": Test(LAB1, "randread", "8k", LAB_1B_IODEPTH),
    "rand16k": Test(LAB1, "randread", "16k", LAB_1B_IODEPTH),
    "seq1m": _seq(LAB1, "1m"),
    "seq2m": _seq(LAB1, "2m"),
}


def all_tests() -> list[Test]:
    """Every distinct test, table rows first, in workbook order."""
    seen: dict[str, Test] = {}
    for t in [r.test for r in ROWS] + list(QUESTION_TESTS.values()):
        seen.setdefault(t.key, t)
    return list(seen.values())
