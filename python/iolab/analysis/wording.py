"""Figures as words in findings: every number with its unit.

Findings quote the figures behind them; these helpers keep the units
explicit and the precision honest (about three significant digits, binary
prefixes for bytes, one latency unit chosen per value).
"""

from __future__ import annotations

from iolab.analysis.model import Point, Scalar
from iolab.report.units import fmt_sig3


def num(x: float) -> str:
    """About three significant digits, no exponent."""
    return fmt_sig3(x)


def iops(x: float) -> str:
    """``"12.3k IOPS"``."""
    for scale, prefix in ((1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{num(x / scale)}{prefix} IOPS"
    return f"{num(x)} IOPS"


def bytes_per_s(x: float) -> str:
    """``"1.20 GiB/s"``."""
    for scale, prefix in ((2**30, "GiB/s"), (2**20, "MiB/s"), (2**10, "KiB/s")):
        if abs(x) >= scale:
            return f"{num(x / scale)} {prefix}"
    return f"{num(x)} B/s"


def size(n: float) -> str:
    """``"4 KiB"``, ``"1.50 GiB"``."""
    for scale, prefix in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if abs(n) >= scale:
            v = n / scale
            return f"{v:.0f} {prefix}" if v == int(v) else f"{num(v)} {prefix}"
    return f"{n:.0f} B"


def ns(x: float) -> str:
    """A latency in the unit that reads best: ``"81.2 µs"``."""
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if abs(x) >= scale:
            return f"{num(x / scale)} {unit}"
    return f"{x:.0f} ns"


def pct(x: float) -> str:
    return f"{num(x)}%"


def signed_pct(x: float) -> str:
    return ("+" if x >= 0 else "") + f"{num(x)}%"


def value(v: Scalar) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def label(point: Point) -> str:
    """``"point 3 (iodepth=32)"``."""
    params = ", ".join(f"{k}={value(v)}" for k, v in point.params.items())
    return f"point {point.index} ({params})" if params else f"point {point.index}"
