"""What sim-ssd's greedy GC predicts for uniform random writes: the write
amplification and the steady-state random-write IOPS (docs/pts.md).

Write amplification (docs/simulation.md, "Write amplification"): the fluid
limit of greedy GC under uniform random writes, where a block is reclaimed
holding a share ``u`` of valid pages with ``u = exp(-alpha (1 - u))`` and
``WA = 1 / (1 - u)``; ``alpha`` is the pages GC can fill (every block of
every plane but the 2 each keeps free, ``GC_RESERVE``) over the user pages
— the over-provisioning as the model lays it out (blocks per plane rounded
up), not the nominal ``op``. The same result is in Desnoyers, "Analytic
models of SSD write performance" (2012); the model's Rust tests check the
FTL against it (crates/iolab-target/src/stack/sim/ssd_tests.rs).

Steady-state IOPS of page-sized random writes: each host page costs its
plane one program, ``WA - 1`` copybacks (a read and a program each) and
``WA / pages_per_block`` erases (a reclaimed block frees ``(1 - u) x
pages_per_block`` pages), and the planes work in parallel:
``IOPS = planes / (t_prog + (WA - 1)(t_read + t_prog) + WA t_erase / ppb)``
— when the planes, not the channels or the host, are the bottleneck.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from iolab import _native
from iolab.errors import JobError

#: Free blocks each plane keeps for GC (crates/iolab-target/src/stack/sim/ssd_ftl.rs ``GC_RESERVE``).
GC_RESERVE = 2

_DEFAULTS = {
    "capacity": "1g",
    "op": "0.127",
    "channels": "8",
    "dies": "4",
    "planes": "2",
    "page": "4k",
    "pages_per_block": "64",
    "t_read": "75us",
    "t_prog": "750us",
    "t_erase": "3.8ms",
}


@dataclass(frozen=True)
class SsdModel:
    capacity_bytes: int
    op: float
    plane_count: int
    page_bytes: int
    pages_per_block: int
    t_read_ns: int
    t_prog_ns: int
    t_erase_ns: int

    @classmethod
    def from_spec(cls, spec: str) -> SsdModel:
        """From a sim-ssd export spec (``sim-ssd,capacity=16m,planes=2,...``)."""
        kind, *pairs = spec.split(",")
        if kind != "sim-ssd":
            raise JobError(f"{spec}: not a sim-ssd spec")
        keys = dict(_DEFAULTS)
        for pair in pairs:
            k, _, v = pair.partition("=")
            keys[k] = v
        op = keys["op"]
        return cls(
            capacity_bytes=_native.parse_size(keys["capacity"]),
            op=float(op[:-1]) / 100 if op.endswith("%") else float(op),
            plane_count=int(keys["channels"]) * int(keys["dies"]) * int(keys["planes"]),
            page_bytes=_native.parse_size(keys["page"]),
            pages_per_block=int(keys["pages_per_block"]),
            t_read_ns=_native.parse_duration_ns(keys["t_read"]),
            t_prog_ns=_native.parse_duration_ns(keys["t_prog"]),
            t_erase_ns=_native.parse_duration_ns(keys["t_erase"]),
        )

    @property
    def user_pages(self) -> int:
        return -(-self.capacity_bytes // self.page_bytes)

    @property
    def blocks_per_plane(self) -> int:
        """As ssd.rs lays them out: user pages plus ``op`` spare, rounded up per plane."""
        return math.ceil(self.user_pages * (1 + self.op) / (self.plane_count * self.pages_per_block))

    @property
    def alpha(self) -> float:
        """Pages GC can fill over user pages."""
        gc_able = (self.blocks_per_plane - GC_RESERVE) * self.pages_per_block * self.plane_count
        return gc_able / self.user_pages

    def write_amplification(self) -> float:
        return greedy_wa(self.alpha)

    def plane_ns_per_host_page(self) -> float:
        wa = self.write_amplification()
        copy = (wa - 1) * (self.t_read_ns + self.t_prog_ns)
        return self.t_prog_ns + copy + wa * self.t_erase_ns / self.pages_per_block

    def steady_random_write_iops(self) -> float:
        """Page-sized uniform random writes, the planes the bottleneck."""
        return self.plane_count * 1e9 / self.plane_ns_per_host_page()

    def fob_random_write_iops(self) -> float:
        """Fresh out of the box: a program per host page, no GC."""
        return self.plane_count * 1e9 / self.t_prog_ns


def greedy_wa(alpha: float) -> float:
    """``1 / (1 - u)`` with ``u = exp(-alpha (1 - u))``: the fixed point below 1,
    found by iterating from 0 (it converges there when ``alpha > 1``)."""
    if alpha <= 1:
        raise ValueError(f"alpha {alpha}: GC needs more physical than user pages")
    u = 0.0
    for _ in range(100_000):
        nxt = math.exp(-alpha * (1 - u))
        if abs(nxt - u) < 1e-13:
            break
        u = nxt
    return 1 / (1 - u)
