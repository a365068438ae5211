"""The five PTS tests as data: each a list of stages, a stage a matrix of
cells run once per round until its tracking cell is steady (WSAT: until
a written amount), as the SNIA PTS (Enterprise 1.1 / Client 1.2) define
them — iolab's reading, in docs/pts.md:

- IOPS: random, 7 R/W mixes (100/0, 95/5, 65/35, 50/50, 35/65, 5/95,
  0/100) x 8 block sizes (1024k … 512 B), outer loop the mix; tracking
  variable: the IOPS of 4 KiB 0/100 (random 4 KiB writes);
- throughput: sequential 1024 KiB, then 128 KiB: writes until steady, then
  reads until steady; tracking: each stage's MB/s;
- latency: random, 3 mixes (100/0, 65/35, 0/100) x 3 block sizes (8k, 4k,
  512 B) at one thread, QD 1; tracking: the mean latency of 4 KiB 0/100;
- WSAT: random 4 KiB writes from fresh out of the box (purge, no
  preconditioning) in rounds until ``--wsat-fills`` x capacity is written;
- DIRTH: random 8 KiB 65/35 over threads x queue depth (32 … 1 each);
  tracking: the IOPS of the largest outstanding I/O.

Variants: the spec leaves thread count and queue depth of the IOPS,
throughput and WSAT tests to the operator; iolab takes T2Q16 for client
(PTS-C) and T4Q32 for enterprise (PTS-E). ``quick`` shrinks the matrices
(the tracking cell always kept); the verdict says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from iolab.errors import JobError
from iolab.plans.model import Value

TESTS = ("iops", "throughput", "latency", "wsat", "dirth")
VARIANTS = {"enterprise": (4, 32), "client": (2, 16)}
IOPS_MIXES = (100, 95, 65, 50, 35, 5, 0)
IOPS_BS = ("1024k", "128k", "64k", "32k", "16k", "8k", "4k", "512")
LAT_MIXES = (100, 65, 0)
LAT_BS = ("8k", "4k", "512")
DIRTH_OIO = (32, 16, 8, 4, 2, 1)
#: --quick: the matrices shrunk to these (each keeps its tracking cell).
QUICK_MATRIX: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "iops": ((100, 65, 0), ("128k", "4k")),
    "latency": ((100, 0), ("4k",)),
}
QUICK_DIRTH_OIO = (4, 2, 1)

Params = tuple[tuple[str, Value], ...]


@dataclass(frozen=True)
class Cell:
    label: str
    params: Params

    def param(self, key: str) -> Value:
        return dict(self.params)[key]


@dataclass(frozen=True)
class Stage:
    """Cells run once per round; ``tracking`` (an index into ``cells``) and
    ``metric`` (iops, bw_bytes_per_s, lat_mean_ns) decide steady state.
    ``until_written``: a WSAT stage, run until that many capacities are written."""

    name: str
    cells: tuple[Cell, ...]
    tracking: int
    metric: str
    until_written: bool = False


@dataclass(frozen=True)
class PtsTest:
    name: str
    title: str
    stages: tuple[Stage, ...]
    #: workload-independent preconditioning (2x capacity, 128 KiB sequential writes)
    wipc: bool


def _mix_label(read_pct: int) -> str:
    return f"{read_pct}/{100 - read_pct}"


def _mix_cell(read_pct: int, bs: str, jobs: int, qd: int) -> Cell:
    return Cell(
        f"{bs} {_mix_label(read_pct)}",
        (("rw", "randrw"), ("rwmixread", read_pct), ("bs", bs), ("numjobs", jobs), ("iodepth", qd)),
    )


def _matrix(mixes: tuple[int, ...], sizes: tuple[str, ...], jobs: int, qd: int, name: str, metric: str) -> Stage:
    cells = tuple(_mix_cell(m, b, jobs, qd) for m in mixes for b in sizes)
    tracking = [c.label for c in cells].index(f"4k {_mix_label(0)}")
    return Stage(name, cells, tracking, metric)


def pts_test(name: str, variant: str = "enterprise", quick: bool = False) -> PtsTest:
    """The test called ``name``; JobError naming the choices otherwise."""
    if name not in TESTS:
        raise JobError(f"unknown PTS test '{name}': choose one of {', '.join(TESTS)}")
    if variant not in VARIANTS:
        raise JobError(f"--variant {variant}: choose one of {', '.join(VARIANTS)}")
    jobs, qd = VARIANTS[variant]
    if name == "iops":
        mixes, sizes = QUICK_MATRIX["iops"] if quick else (IOPS_MIXES, IOPS_BS)
        return PtsTest(name, "IOPS", (_matrix(mixes, sizes, jobs, qd, "iops", "iops"),), True)
    if name == "latency":
        mixes, sizes = QUICK_MATRIX["latency"] if quick else (LAT_MIXES, LAT_BS)
        return PtsTest(name, "Latency (T1Q1)", (_matrix(mixes, sizes, 1, 1, "latency", "lat_mean_ns"),), True)
    if name == "throughput":
        stages = []
        for bs in ("1024k", "128k"):
            for rw in ("write", "read"):
                cell = Cell(f"{bs} seq {rw}", (("rw", rw), ("bs", bs), ("numjobs", 1), ("iodepth", qd)))
                stages.append(Stage(f"{bs} seq {rw}", (cell,), 0, "bw_bytes_per_s"))
        return PtsTest(name, "Throughput", tuple(stages), True)
    if name == "wsat":
        cell = Cell("4k randwrite", (("rw", "randwrite"), ("bs", "4k"), ("numjobs", jobs), ("iodepth", qd)))
        return PtsTest(name, "Write saturation (WSAT)", (Stage("wsat", (cell,), 0, "iops", True),), False)
    oio = QUICK_DIRTH_OIO if quick else DIRTH_OIO
    cells = tuple(
        Cell(
            f"T{t}Q{q}",
            (("rw", "randrw"), ("rwmixread", 65), ("bs", "8k"), ("numjobs", t), ("iodepth", q)),
        )
        for t in oio
        for q in oio
    )
    return PtsTest(
        name, "Demand intensity / response time histogram (DIRTH)", (Stage("dirth", cells, 0, "iops"),), True
    )
