"""Seed 004's tests as data: what each configures (stack, pacing, target
cores) and the fio+SPDK tables it printed (QD, BW Gb/s, wire BW Gb/s,
average latency µs, BW stddev). The kernel-initiator tables (tests 2-5)
are not re-run: iolab's initiator is its NBD client, one kind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

#: The seed's columns and units, as its tables head them.
COLUMNS = (("bw", "BW", "Gb/s"), ("wire", "WIRE BW", "Gb/s"), ("lat", "AVG LAT", "us"), ("sd", "BW STDDEV", "Gb/s"))


@dataclass(frozen=True)
class SeedRow:
    """One line of a seed table: ``x`` is its QD, or its buffer count (9, 10)."""

    x: int
    bw: float
    wire: Optional[float] = None
    lat: Optional[float] = None
    sd: Optional[float] = None
    cache: Optional[int] = None


@dataclass(frozen=True)
class Variant:
    """One table of a test: a stack configuration and the seed's rows."""

    label: str
    rows: tuple[SeedRow, ...]
    #: pacing: (buffers, cache) or None; cores: the seed's target cores.
    pacing: Optional[tuple[int, int]] = None
    cores: int = 16


@dataclass(frozen=True)
class SeedTest:
    number: int
    pacing: str
    disks: str
    description: str
    #: null | nvme | split | delay1 | delay2
    stack: str
    exports: int = 16
    variants: tuple[Variant, ...] = field(default_factory=tuple)
    #: the x axis: "qd" or "buffers" (tests 9, 10)
    axis: str = "qd"


def _rows(text: str) -> tuple[SeedRow, ...]:
    """Rows of ``QD | BW | WIRE BW | AVG LAT | BW STDDEV`` (trailing columns may be missing)."""
    out = []
    for line in text.strip().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        nums = [float(c) if c else None for c in cells]
        out.append(SeedRow(int(nums[0] or 0), *[n for n in nums[1:]]))  # type: ignore[arg-type]
    return tuple(out)


def _buffer_rows(text: str) -> tuple[SeedRow, ...]:
    """Rows of ``Num buffers | Buf cache | QD | BW | WIRE BW | AVG LAT | BW STDDEV``."""
    out = []
    for line in text.strip().splitlines():
        n, cache, _qd, bw, wire, lat, sd = (float(c) for c in line.strip().strip("|").split("|"))
        out.append(SeedRow(int(n), bw, wire, lat, sd, cache=int(cache)))
    return tuple(out)


_T1 = """8 | 184.0 | 196.3107 | 90.5 | 1.5
16 | 184.6 | 196.3327 | 181.1 | .8
32 | 184.0 | 196.3318 | 364.0 | 2.4
64 | 177.3 | 188.6632 | 756.1 | .7
128 | 177.4 | 188.7209 | 1511.9 | .6
256 | 177.6 | 188.7393 | 3021.1 | .5"""
_T2 = """8 | 167.1 | 181.425 | 99.9 | 10.1
16 | 176.8 | 192.4352 | 189.2 | 9.9
32 | 179.2 | 194.919 | 373.9 | 7.5
64 | 181.2 | 196.3038 | 739.9 | 4.8
128 | 181.5 | 196.3335 | 1477.7 | 7.7
256 | 184.8 | 196.3406 | 2903.2 | 0"""
_T3 = """8 | 98.8 | 106.5925 | 169.1 | 5.2
16 | 162.9 | 177.3973 | 205.3 | 10.4
32 | 178.2 | 188.405 | 375.9 | 8.5
64 | 154.1 | 186.9401 | 870.3 | 3.1
128 | 149.1 | 172.697 | 1798.7 | 3.7
256 | 145.1 | 131.8397 | 3698.2 | 4.2"""
_T3_CLOSE = """40 | 175.7 | 193.2358 | 476.6
41 | 166.7 | 193.6239 | 514.9
42 | 166.7 | 193.1893 | 527.7
43 | 164.2 | 191.6463 | 548.2
44 | 161.1 | 191.3681 | 571.8
48 | 157.9 | 192.3115 | 636.6"""
_T4 = """8 | 169.4 | 181.0699 | 98.5 | 7.8
16 | 176.9 | 192.2888 | 189.1 | 9.8
32 | 179.0 | 194.0834 | 374.2 | 7.9
64 | 179.1 | 194.9661 | 748.5 | 7.5
128 | 182.7 | 195.3542 | 1468.5 | 3.8
256 | 183.4 | 196.2781 | 2925.4 | 3.0"""
_T5 = """8 | 96.1 | 101.7948
16 | 167.9 | 179.8046
32 | 182.3 | 193.8036
64 | 182.7 | 194.3911
128 | 182.8 | 195.7273
256 | 183.1 | 194.1423"""
#: Test 6: ten runs per QD (BW only; the seed's other columns follow the same pattern).
_T6_BW = {
    32: (176.9, 177.0, 176.9, 177.1, 180.6, 180.5, 180.6, 180.5, 180.6, 180.5),
    64: (181.7, 181.0, 180.9, 180.4, 180.4, 180.2, 180.8, 181.1, 181.6, 181.1),
    128: (180.7, 181.4, 181.6, 181.6, 169.5, 181.6, 181.8, 181.4, 181.0, 181.6),
    256: (182.4, 182.4, 182.6, 182.5, 182.9, 182.3, 181.5, 182.2, 182.8, 182.4),
}
_T7 = {
    16: """8 | 97.3 | 106.0621 | 171.7 | 5.9
16 | 162.1 | 176.1584 | 206.3 | 10.2
32 | 177.0 | 192.845 | 378.5 | 10.1
64 | 181.2 | 193.9438 | 740.0 | 5.9
128 | 181.8 | 195.2145 | 1475.2 | 4.6
256 | 182.4 | 195.8669 | 2942.2 | 4.0""",
    8: """8 | 104.5 | 110.949 | 159.8 | 0
16 | 174.7 | 185.6216 | 191.4 | 2.1
32 | 184.8 | 196.2932 | 362.4 | 0
64 | 184.7 | 196.298 | 725.8 | .2
128 | 184.8 | 196.3279 | 1451.8 | .1
256 | 184.7 | 196.3195 | 2905.4 | .2""",
    4: """8 | 106.4 | 113.1102 | 157.0 | .1
16 | 174.4 | 185.751 | 191.7 | .2
32 | 184.8 | 196.3121 | 362.4 | 0
64 | 184.8 | 196.3286 | 725.6 | .1
128 | 184.8 | 196.3073 | 1451.9 | .1
256 | 184.8 | 196.3337 | 2904.5 | .1""",
    2: """8 | 109.5 | 116.4625 | 152.5 | .1
16 | 171.7 | 182.089 | 194.7 | .3
32 | 184.7 | 196.2224 | 362.6 | 0
64 | 184.8 | 196.3316 | 725.6 | .1
128 | 184.8 | 196.3326 | 1451.6 | .1
256 | 184.8 | 196.3332 | 2903.9 | .1""",
    1: """8 | 101.8 | 108.2169 | 164.1 | .1
16 | 150.8 | 160.8635 | 221.9 | .3
32 | 177.8 | 188.5567 | 376.8 | .3
64 | 177.6 | 188.2296 | 755.1 | .5
128 | 171.7 | 182.3304 | 1562.2 | .5
256 | 156.9 | 166.5067 | 3420.7 | .6""",
}
_T8 = {
    6: _T5,
    0: """8 | 94.5 | 100.5522
16 | 166.9 | 178.6776
32 | 182.1 | 193.7545
64 | 182.7 | 194.8118""",
    1: """8 | 91.9 | 98.8753
16 | 163.2 | 176.9629
32 | 182.1 | 194.0412
64 | 182.6 | 194.3561
128 | 133.0 | 139.5647
256 | 134.5 | 137.4158""",
}
#: Test 8, cache 0: "Test hangs with queue depth 128 and more."
T8_HANG_QD = 128
_T9 = """128 | 12 | 256 | 161.1 | 190.8806 | 3330.8 | 3.9
96 | 6 | 256 | 180.7 | 195.5755 | 2970.4 | 5.3
64 | 4 | 256 | 170.2 | 194.2269 | 3153.8 | 7.7
48 | 3 | 256 | 180.6 | 195.3472 | 2971.3 | 5.4
44 | 2 | 256 | 178.8 | 192.0676 | 3002.4 | 4.0
40 | 2 | 256 | 177.8 | 191.2827 | 3018.4 | 4.5
36 | 2 | 256 | 176.9 | 188.9295 | 3034.2 | 5.2
32 | 2 | 256 | 171.6 | 191.2294 | 3127.2 | 6.2
24 | 1 | 256 | 142.1 | 152.6891 | 3775.0 | 2.9
16 | 1 | 256 | 112.8 | 125.2018 | 4759.4 | 3.9"""
_T10 = """128 | 32 | 256 | 175.3 | 179.7331 | 3070.2 | 4.3
96 | 24 | 256 | 184.8 | 196.3222 | 2903.2 | 0
64 | 16 | 256 | 184.8 | 196.3309 | 2903.5 | 0
48 | 12 | 256 | 184.8 | 196.2957 | 2904.0 | 0
44 | 11 | 256 | 184.7 | 196.2403 | 2905.0 | 0
40 | 10 | 256 | 184.6 | 195.9709 | 2907.4 | .1
36 | 9 | 256 | 183.5 | 194.6438 | 2925.3 | .1
32 | 8 | 256 | 180.5 | 191.9847 | 2972.7 | .3
24 | 6 | 256 | 151.8 | 161.1801 | 3534.6 | .3
16 | 4 | 256 | 114.9 | 123.3957 | 4669.5 | .5"""
_T11 = """8 | 61.1 | 66.4308 | 273.7 | 3.2
16 | 113.6 | 123.2159 | 294.6 | 5.3
32 | 177.7 | 193.0578 | 376.9 | 8.0
64 | 133.0 | 141.9838 | 1008.3 | 2.3
128 | 110.6 | 119.4736 | 2426.0 | 2.2
256 | 107.1 | 115.637 | 5011.1 | 2.1"""
#: Tests 12 and 14 print the same table in the seed.
_T12 = """8 | 180.2 | 193.8022 | 278.8 | 2.4
16 | 178.0 | 191.901 | 564.7 | 2.2
32 | 179.3 | 193.484 | 1122.1 | 2.3
64 | 178.3 | 190.4941 | 2258.1 | 1.6
128 | 181.9 | 193.2196 | 4558.9 | 1.1
256 | 182.4 | 193.44 | 9354.5 | 2.6"""
_T13 = """8 | 29.9 | 32.3077 | 562.7 | .9
16 | 55.8 | 59.2461 | 600.3 | 1.8
32 | 106.4 | 115.1262 | 629.6 | 3.6
64 | 163.0 | 175.7864 | 822.6 | 4.9
128 | 108.6 | 117.3446 | 2469.8 | 2.4
256 | 106.7 | 113.3583 | 5030.5 | 1.1"""
_T15 = """8 | 19.0 | 20.5105 | 883.2 | .5
16 | 36.7 | 39.6856 | 913.0 | 1.1
32 | 71.1 | 76.9438 | 942.6 | 2.1
64 | 129.6 | 141.1166 | 1034.2 | 4.2
128 | 107.9 | 115.2508 | 2487.1 | 2.6
256 | 105.2 | 112.922 | 5102.1 | 2.1"""
_T16 = """8 | 119.1 | 129.7133 | 422.0 | 2.5
16 | 167.4 | 178.8634 | 600.6 | 4.7
32 | 152.8 | 162.3213 | 1360.9 | 2.8
64 | 138.9 | 148.3271 | 2898.5 | 1.8
128 | 142.1 | 149.9065 | 6100.5 | 2.2
256 | 141.0 | 149.944 | 12418.3 | 3.1"""

PACED = (96, 6)


def _t6_rows() -> tuple[SeedRow, ...]:
    return tuple(SeedRow(qd, bw) for qd, runs in _T6_BW.items() for bw in runs)


TESTS: tuple[SeedTest, ...] = (
    SeedTest(1, "none", "1 Null", "Basic test", "null", exports=1, variants=(Variant("", _rows(_T1)),)),
    SeedTest(2, "none", "16 Null", "Basic test", "null", variants=(Variant("", _rows(_T2)),)),
    SeedTest(
        3,
        "none",
        "16 NVMe",
        "Basic test",
        "nvme",
        variants=(Variant("", _rows(_T3)), Variant("QD 40-48 close up", _rows(_T3_CLOSE))),
    ),
    SeedTest(4, "NumSharedBuffers", "16 Null", "Basic test", "null", variants=(Variant("", _rows(_T4), PACED),)),
    SeedTest(5, "NumSharedBuffers", "16 NVMe", "Basic test", "nvme", variants=(Variant("", _rows(_T5), PACED),)),
    SeedTest(
        6,
        "NumSharedBuffers",
        "16 NVMe",
        "Stability test: multiple same test runs",
        "nvme",
        variants=(Variant("10 runs per QD", _t6_rows(), PACED),),
    ),
    SeedTest(
        7,
        "NumSharedBuffers",
        "16 NVMe",
        "Different number of target cores",
        "nvme",
        variants=tuple(
            Variant(f"target cores {c}, cache {96 // c}", _rows(t), (96, 96 // c), cores=c) for c, t in _T7.items()
        ),
    ),
    SeedTest(
        8,
        "NumSharedBuffers",
        "16 NVMe",
        "Different buffer cache size",
        "nvme",
        variants=tuple(Variant(f"cache {c}", _rows(t), (96, c)) for c, t in _T8.items()),
    ),
    SeedTest(
        9,
        "NumSharedBuffers",
        "16 NVMe",
        "Different number of buffers, 16 target cores",
        "nvme",
        variants=(Variant("QD 256, cache = buffers/16", _buffer_rows(_T9), (0, 0), cores=16),),
        axis="buffers",
    ),
    SeedTest(
        10,
        "NumSharedBuffers",
        "16 NVMe",
        "Different number of buffers, 4 target cores",
        "nvme",
        variants=(Variant("QD 256, cache = buffers/4", _buffer_rows(_T10), (0, 0), cores=4),),
        axis="buffers",
    ),
    SeedTest(11, "None", "16 NVMe, split 3", "Basic test", "split", exports=48, variants=(Variant("", _rows(_T11)),)),
    SeedTest(
        12,
        "NumSharedBuffers",
        "16 NVMe, split 3",
        "Basic test",
        "split",
        exports=48,
        variants=(Variant("", _rows(_T12), PACED),),
    ),
    SeedTest(
        13,
        "None",
        "16 NVMe, split 3, 1 delay",
        "Basic test",
        "delay1",
        exports=48,
        variants=(Variant("", _rows(_T13)),),
    ),
    SeedTest(
        14,
        "NumSharedBuffers",
        "16 NVMe, split 3, 1 delay",
        "Basic test",
        "delay1",
        exports=48,
        variants=(Variant("", _rows(_T12), PACED),),
    ),
    SeedTest(
        15,
        "None",
        "16 NVMe, split 3, 2 delay",
        "Basic test",
        "delay2",
        exports=48,
        variants=(Variant("", _rows(_T15)),),
    ),
    SeedTest(
        16,
        "NumSharedBuffers",
        "16 NVMe, split 3, 2 delay",
        "Basic test",
        "delay2",
        exports=48,
        variants=(Variant("", _rows(_T16), PACED),),
    ),
)

BY_NUMBER = {t.number: t for t in TESTS}
