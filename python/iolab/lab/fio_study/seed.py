"""Seed 002 as data: its three fio commands verbatim, every table as it
prints it (cells as text: ``1791k``, ``1117.6M``, ``n/a``), and its written
analysis, statement by statement.

Nothing here is measured or interpreted: :mod:`.consistency` reads the
cells, :mod:`.plans` turns the commands into sweep plans, :mod:`.claims`
verdicts the statements.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The seed's commands, as printed (``[Variable]`` is the swept option).
COMMANDS = {
    "bs": (
        "fio --filename=testfile --size=10G --rw=randrw --rwmixread=50 --bs=[Variable] --iodepth=16 "
        "--time_based --runtime=60 --name=test"
    ),
    "rwmix": (
        "fio --filename=testfile --size=10G --rw=randrw --rwmixread=[Variable] --bs=4k --iodepth=16 "
        "--time_based --runtime=60 --name=test"
    ),
    "qd": (
        "fio --filename=testfile --size=10G --rw=randrw --rwmixread=50 --bs=4k --iodepth=[Variable] "
        "--time_based --runtime=60 --name=test"
    ),
}
#: The option each sweep varies, and the sweep's title as the seed writes it.
VARIED = {"bs": "bs", "rwmix": "rwmixread", "qd": "iodepth"}
TITLES = {
    "bs": "Effect of Data Access Size",
    "rwmix": "Effect of Read/Write Intensity Ratio",
    "qd": "Effect of I/O Queue Depth",
}
#: The first column's heading of the seed's latency tables.
ROW_HEADINGS = {"bs": "Data Access Size", "rwmix": "Read/Write Ratio", "qd": "I/O Queue Depth"}

#: The latency tables' column groups: (name as the seed heads it, its unit as
#: headed, the fio figure it is). Each group has Avg, Min, Max.
LAT_GROUPS = (
    ("Latency (total) lat(μ s)", "us", "lat"),
    ("Latency (Submission) lat(us)", "us", "slat"),
    ("Latency (Completion) lat(ns)", "ns", "clat"),
)
STATS = ("Avg", "Min", "Max")


@dataclass(frozen=True)
class LatRow:
    """One row of a latency table: the label and its nine cells as printed
    (total avg/min/max, submission avg/min/max, completion avg/min/max)."""

    sweep: str
    direction: str  # read | write
    label: str
    cells: tuple[str, ...]


def _rows(sweep: str, direction: str, text: str) -> tuple[LatRow, ...]:
    out = []
    for line in text.strip().splitlines():
        label, *cells = line.split()
        out.append(LatRow(sweep, direction, label, tuple(cells)))
    return tuple(out)


LAT_TABLES: tuple[LatRow, ...] = (
    *_rows(
        "bs",
        "read",
        """
4k 1820.3 7 206848 28.51 2 59147 1791k 500 20624k
16k 1582.84 210 133349 34.38 2 10025 1582.84 3 133339
32k 1571.52 76 210530 39.9 2 21597 1531.61 9 210521
64k 1434.52 120 125485 130.07 3 16139 1390 77 125466
""",
    ),
    *_rows(
        "bs",
        "write",
        """
4k 3705.32 6 406369 54.17 2 12863 3651k 375 406365k
16k 7200.72 21 1117.6k 76.07 2 14546 7124k 583 1117.6M
32k 11567.48 26 6354.1k 76.15 3 123153 11481k 26 6354.1k
64k 12025.18 68 1368.6k 77.14 4 123919 11948k 542 1368.6M
""",
    ),
    *_rows(
        "rwmix",
        "read",
        """
100/0 1933.88 5 177804 33.76 2 36583 2381k 417 114059k
50/50 1238.85 5 216730 25.81 2 8830 9430k 458 20597k
70/30 2799.12 5 157738 40.36 2 27483 4456k 750 224058k
0/100 n/a n/a n/a n/a n/a n/a n/a n/a n/a
""",
    ),
    *_rows(
        "rwmix",
        "write",
        """
100/0 n/a n/a n/a n/a n/a n/a n/a n/a n/a
50/50 3860.89 7 1479.3k 40.24 2 7305 3505.92 8 1221.4k
70/30 4791.80 6 24741k 143.77 3 110850 1177380 458 2311.7M
0/100 3760.5 6 737085 21.93 2 1532k 4321k 625 1503M
""",
    ),
    *_rows(
        "qd",
        "read",
        """
1 160.73 6 315679 53.59 4 26703 107141 333 315546k
16 606.32 5 11143 26.77 2 4427 579547 458 11109k
32 3912.23 20 139048 25.54 2 13369 3886689 959 139007k
64 6697.31 6 387141 119.86 2 21254 6664577 625 387124k
""",
    ),
    *_rows(
        "qd",
        "write",
        """
1 227.7 12 1233.8k 71 4 20509 156704 375 1233.7M
16 3688.62 6 1755.3k 35.13 2 5309 3653393 458 1755.3M
32 7317.65 7 473617 54.93 2 12799 7262722 538 473605k
64 17045.72 6 547625 59.02 2 14225 16997696 667 54759k
""",
    ),
)


@dataclass(frozen=True)
class BwRow:
    """One row of a bandwidth table: the block size and (for the mix and
    queue-depth tables) the swept value it was measured at, read and write
    as printed, in the unit of the block it sits in (IOPS, or "MB/s" in the
    seed's "Large Access Size (MB/s)" blocks)."""

    sweep: str
    bs: str
    value: str  # the swept value ("100/0", "16"); the block size for the bs sweep
    unit: str  # IOPS | MB/s
    read: str
    write: str


def _bw(sweep: str, unit: str, text: str) -> tuple[BwRow, ...]:
    out = []
    for line in text.strip().splitlines():
        parts = line.split()
        if sweep == "bs":
            bs, r, w = parts
            out.append(BwRow(sweep, bs, bs, unit, r, w))
        else:
            bs, v, r, w = parts
            out.append(BwRow(sweep, bs, v, unit, r, w))
    return tuple(out)


BW_TABLES: tuple[BwRow, ...] = (
    *_bw("bs", "IOPS", "4k 2645 2646\n16k 1663 1661\n32k 1192 1183\n130k 1551 1546\n256k 1192 1183\n512k 294 295"),
    *_bw("bs", "MB/s", "130k 24.2 24.2\n256k 37.3 36\n512k 147 148"),
    *_bw(
        "rwmix",
        "IOPS",
        """
16k 100/0 4040 n/a
16k 50/50 1508 1504
16k 70/30 3201 1373
16k 0/100 n/a 1847
130k 100/0 1785 n/a
130k 50/50 687 683
130k 70/30 960 410
130k 0/100 n/a 716
""",
    ),
    *_bw("rwmix", "MB/s", "130k 100/0 230 n/a\n130k 50/50 87.3 86.8\n130k 70/30 122 52.2\n130k 0/100 n/a 90"),
    *_bw(
        "qd",
        "IOPS",
        """
16k 1 1242 1234
16k 16 1864 1859
16k 32 1122 1117
16k 64 1573 1569
130k 1 419 418
130k 16 703 699
130k 32 665 663
130k 64 513 513
""",
    ),
    *_bw("qd", "MB/s", "130k 1 53.2 53.2\n130k 16 89.3 88.8\n130k 32 84.4 84.2\n130k 64 65.2 65.2"),
)

#: The seed's written analysis, verbatim: (section, kind, point, statement).
#: ``kind`` is "trend" (Observed trend) or "reason" (Reason).
ANALYSIS: tuple[tuple[str, str, str, str], ...] = (
    ("size-lat", "trend", "small", "Small data size: latency is lower because smaller data sizes are processed quickly"),
    ("size-lat", "trend", "large", "Larger data size: latency increases because more time is needed to read/write data"),
    ("size-lat", "reason", "small", "Small data size: faster read/write operations which means lower latency. SSD is more efficient due to less data transfer per operation"),
    ("size-lat", "reason", "large", "Large data size: I/O takes longer to complete as data size increases. Large data blocks require more time to read/write to storage cells"),
    ("mix-lat", "trend", "read", "Read only: latency is lower for read operations because reading is faster than writing"),
    ("mix-lat", "trend", "write", "Write only: latency is higher for write operations due to needing to store modification"),
    ("mix-lat", "trend", "mixed", "Read/Write: latency falls in between read only and write only"),
    ("mix-lat", "reason", "read", "Read only: reading SSD is faster because it only needs to retrieve data with no modifying cells"),
    ("mix-lat", "reason", "write", "Write only: writing data requires reading, erasing, and programming cells which takes more time and higher latency"),
    ("mix-lat", "reason", "mixed", "Read/Write: latency falls between read only and write only - higher read ratio means lower latency"),
    ("qd-lat", "trend", "low", "Low queue depth: latency is lower because fewer I/O operations"),
    ("qd-lat", "trend", "moderate", "Moderate queue depth: latency increases as queue depth grows"),
    ("qd-lat", "trend", "high", "High queue depth: latency becomes higher as queue depth exceeds SSD capacity (when capacity is reached latency increases)"),
    ("qd-lat", "reason", "low", "Low queue depth: with fewer I/O operations in the queue each operation can be processed quickly, which leads to lower latency"),
    ("qd-lat", "reason", "moderate", "Moderate queue depth: as queue depth increases, more I/O operations are waiting to be processed, which leads to increased waiting time and increased latency"),
    ("qd-lat", "reason", "high", "Higher queue depth: when queue depth exceeds SSD capacity, latency increases due to an increasing number of queued operations"),
    ("size-bw", "trend", "small", "For small data sizes measured with IOPS, bandwidth tends to be higher due to the small number of I/O operations"),
    ("size-bw", "trend", "large", "For large data sizes, bandwidth will increase but will hit a point where it will level out or decrease due to SSD ability to handle large chunks of data"),
    ("size-bw", "reason", "small", "For small data sizes, SSD can handle large amounts of small I/O operations. This is because small data sizes require less time to read/write (SSD can handle multiple operations in parallel)"),
    ("size-bw", "reason", "large", "For large data sizes, each I/O operation takes more time due to the size. The bandwidth will increase until the SSD internal bandwidth is reached (this will cause the bandwidth to either level out or decrease)"),
    ("mix-bw", "trend", "read", "Read only: read operations are faster than write, so there is a higher bandwidth"),
    ("mix-bw", "trend", "write", "Write only: Slower than read operations, so lower bandwidth"),
    ("mix-bw", "trend", "mixed", "Read/Write: the bandwidth values fall between read and write bandwidth values"),
    ("mix-bw", "reason", "read", "Read only: Read operations are faster because SSD doesn't need to modify storage cells"),
    ("mix-bw", "reason", "write", "Write only: Writing data makes SSD erase and reprogram cells which takes up more bandwidth"),
    ("mix-bw", "reason", "mixed", "Read/Write: falls between read only and write only. If the read ratio is higher the bandwidth will be higher"),
    ("qd-bw", "trend", "low", "Low queue depth (1): bandwidth is lower because SSD is not fully used"),
    ("qd-bw", "trend", "moderate", "Moderate queue depth (16, 32): bandwidth increase as SSD can handle more I/O operations in parallel (better utilization of SSD)"),
    ("qd-bw", "trend", "high", "High queue depth (64): bandwidth increases but will level out/decrease as operations exceed SSD bandwidth capabilities"),
    ("qd-bw", "reason", "low", "Lower queue depth: few I/O operations cause SSD to be underutilized - controller spends more time waiting for new operations"),
    ("qd-bw", "reason", "moderate", "Moderate queue depth: SSD processes more I/O operations simultaneously which improves bandwidth"),
    ("qd-bw", "reason", "high", "High queue depth: SSD becomes overwhelmed due to increased need for management and resources needed"),
)  # fmt: skip
SECTION_TITLES = {
    "size-lat": "Effect of Data Access Size on Latency",
    "mix-lat": "Effect of Read/Write on Latency",
    "qd-lat": "Effect of I/O Queue Depth on Latency",
    "size-bw": "Effect of Data Access Size on Bandwidth",
    "mix-bw": "Effect of Read/Write on Bandwidth",
    "qd-bw": "Effect of I/O Queue Depth on Bandwidth",
}
#: The seed's note above its tables.
VM_NOTE = "Note: Using a VM for measurement and testing (may have affected some results)"
