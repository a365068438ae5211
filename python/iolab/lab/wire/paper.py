"""Seed 000's tables and claims as printed (Lovinger, "Windows File Server
Performance", EchoStreams FlacheSAN2, April 2013): the reference values
``iolab lab wire`` prints beside its measured ones.

Units as the paper prints them: latency in µs, bandwidth in GB/s (10^9
bytes), c/B in CPU cycles per byte of user data, %CPU of the whole machine
(16 cores each side). Each table is a list of :class:`PaperRow`; a row is
one load step (Table 1: one I/O size) and maps each column, as printed, to
its value.
"""

from __future__ import annotations

from dataclasses import dataclass

KIB = 1024


@dataclass(frozen=True)
class Column:
    """One printed column: its heading, unit, and the key of the measured figure."""

    heading: str
    unit: str
    key: str


@dataclass(frozen=True)
class PaperRow:
    label: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class PaperTable:
    key: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[PaperRow, ...]


def _cols(*c: tuple[str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(*x) for x in c)


#: Table 1: single random I/O (QD 1) at one share; p90 at client and server, wire = client - server.
TABLE1 = PaperTable(
    "table1",
    "Table 1 - single random I/O latencies at client and server (p90, us)",
    _cols(
        ("read client", "us", "read_client_p90_us"),
        ("read server", "us", "read_server_p90_us"),
        ("read wire", "us", "read_wire_p90_us"),
        ("write client", "us", "write_client_p90_us"),
        ("write server", "us", "write_server_p90_us"),
        ("write wire", "us", "write_wire_p90_us"),
    ),
    (
        PaperRow("1 KiB", (204, 176, 29, 153, 119, 34)),
        PaperRow("8 KiB", (197, 159, 38, 113, 65, 49)),
        PaperRow("64 KiB", (419, 366, 52, 366, 303, 63)),
        PaperRow("512 KiB", (1297, 1112, 185, 1355, 1143, 212)),
    ),
)
TABLE1_SIZES_KIB = (1, 8, 64, 512)


def _scale_label(threads: int) -> str:
    return f"{threads} ({20 * threads} I/O)"


#: The paper's thread steps (threads x 20 outstanding I/Os: 4 per share x 5 shares).
PAPER_THREADS = (1, 2, 4, 8, 16)

TABLE2 = PaperTable(
    "table2",
    "Table 2 - scaling of read IOPS (1 KiB and 8 KiB random read, 20 outstanding per thread)",
    _cols(
        ("1 KiB IOPS", "IOPS", "1k.iops"),
        ("1 KiB p90", "us", "1k.read_p90_us"),
        ("1 KiB c/B", "c/B", "1k.client_c_per_b"),
        ("1 KiB %CPU", "%", "1k.client_cpu_pct"),
        ("1 KiB %CPU srv", "%", "1k.server_cpu_pct"),
        ("8 KiB IOPS", "IOPS", "8k.iops"),
        ("8 KiB p90", "us", "8k.read_p90_us"),
        ("8 KiB c/B", "c/B", "8k.client_c_per_b"),
        ("8 KiB %CPU", "%", "8k.client_cpu_pct"),
        ("8 KiB %CPU srv", "%", "8k.server_cpu_pct"),
    ),
    (
        PaperRow(_scale_label(1), (76650, 265, 43.3, 7.9, 10.8, 64500, 310, 7.9, 9.7, 9.8)),
        PaperRow(_scale_label(2), (144050, 320, 43.3, 14.8, 21.7, 123600, 365, 7.0, 16.4, 20.3)),
        PaperRow(_scale_label(4), (244250, 390, 41.4, 24.0, 48.4, 211500, 445, 6.5, 26.3, 46.6)),
        PaperRow(_scale_label(8), (360950, 560, 41.7, 35.7, 84.5, 327050, 530, 6.4, 40.0, 82.5)),
        PaperRow(_scale_label(16), (438400, 1040, 44.9, 46.6, 99.9, 425900, 955, 7.2, 58.2, 100.0)),
    ),
)

TABLE3 = PaperTable(
    "table3",
    "Table 3 - scaling of mixed I/O (60% read / 40% write, 1 KiB and 8 KiB random)",
    _cols(
        ("1 KiB IOPS", "IOPS", "1k.iops"),
        ("1 KiB p90 R", "us", "1k.read_p90_us"),
        ("1 KiB p90 W", "us", "1k.write_p90_us"),
        ("1 KiB c/B", "c/B", "1k.client_c_per_b"),
        ("1 KiB %CPU", "%", "1k.client_cpu_pct"),
        ("8 KiB IOPS", "IOPS", "8k.iops"),
        ("8 KiB p90 R", "us", "8k.read_p90_us"),
        ("8 KiB p90 W", "us", "8k.write_p90_us"),
        ("8 KiB c/B", "c/B", "8k.client_c_per_b"),
        ("8 KiB %CPU", "%", "8k.client_cpu_pct"),
    ),
    (
        PaperRow(_scale_label(1), (69800, 300, 350, 44.3, 7.3, 70700, 310, 270, 7.1, 9.5)),
        PaperRow(_scale_label(2), (125900, 355, 410, 45.3, 13.5, 124950, 370, 340, 7.0, 16.6)),
        PaperRow(_scale_label(4), (206450, 435, 495, 43.4, 21.3, 210850, 450, 410, 6.9, 27.4)),
        PaperRow(_scale_label(8), (319150, 545, 635, 39.6, 30.0, 328150, 575, 510, 6.8, 42.5)),
        PaperRow(_scale_label(16), (424850, 960, 1140, 47.1, 47.5, 375900, 1235, 1330, 7.4, 52.7)),
    ),
)

TABLE4 = PaperTable(
    "table4",
    "Table 4 - large read scaling (64 KiB and 512 KiB random read)",
    _cols(
        ("64 KiB GB/s", "GB/s", "64k.gb_per_s"),
        ("64 KiB p90", "us", "64k.read_p90_us"),
        ("64 KiB c/B", "c/B", "64k.client_c_per_b"),
        ("64 KiB %CPU", "%", "64k.client_cpu_pct"),
        ("512 KiB GB/s", "GB/s", "512k.gb_per_s"),
        ("512 KiB p90", "us", "512k.read_p90_us"),
        ("512 KiB c/B", "c/B", "512k.client_c_per_b"),
        ("512 KiB %CPU", "%", "512k.client_cpu_pct"),
    ),
    (
        PaperRow(_scale_label(1), (2.45, 550, 1.22, 6.9, 6.64, 1630, 0.31, 4.7)),
        PaperRow(_scale_label(2), (4.95, 630, 1.06, 12.2, 11.34, 2570, 0.29, 7.6)),
        PaperRow(_scale_label(4), (8.58, 780, 1.05, 20.8, 14.41, 4970, 0.29, 9.8)),
        PaperRow(_scale_label(8), (11.84, 1300, 1.06, 29.0, 15.68, 9930, 0.30, 10.9)),
        PaperRow(_scale_label(16), (13.99, 2520, 1.09, 35.3, 16.40, 19900, 0.31, 11.6)),
    ),
)

TABLES = (TABLE1, TABLE2, TABLE3, TABLE4)

#: The paper's queueing arithmetic (section 7): 160 x 512 KiB outstanding
#: over 3 x 54 Gb/s = 20.25 GB/s is a 4.1 ms transmit time.
PAPER_QUEUE = {"outstanding": 160, "size_bytes": 512 * KIB, "link_bytes_per_s": 20.25e9, "transmit_ms": 4.1}
#: Local storage c/B the paper compares with (section 6.1 and 7).
LOCAL_C_PER_B_8K = (6.0, 6.5)

#: The claims of the paper's conclusions and section texts, by key.
CLAIMS = {
    "wire_constant": "Wire latency is near-constant across I/O sizes (sections 5, 8; Figure 6).",
    "server_cpu_limit": "IOPS are limited by server CPU (sections 1, 6.1: server CPU 100% at saturation).",
    "cb_falls": "c/B falls as the I/O size grows (43 c/B at 1 KiB, 6.4 at 8 KiB, 1.1 at 64 KiB, 0.31 at 512 KiB).",
    "cb_local": "8 KiB client c/B is close to local storage's (6.4 c/B remote; 6.0-6.5 c/B local, section 6.1).",
    "knee": "At saturation latency jumps while throughput flattens (sections 6.1, 6.2).",
    "queueing": "Large-I/O latency is explained by outstanding bytes over link bandwidth (section 7: 4.1 ms).",
}
