"""Units for reports: every printed figure carries one explicit unit.

fio prints "1791k" for 1.79 ms and mixes ns and µs in one table; here a
latency line or block picks ONE unit (ns, µs or ms, from a typical value of
that line) and says it, and sizes say KiB/MiB/GiB or MB/s explicitly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Callable

_LAT_UNITS = (("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9))


def lat_unit(typical_ns: float) -> tuple[str, float]:
    """(name, ns per unit) so that ``typical_ns`` reads as 1 … 9999 of the unit."""
    name, scale = _LAT_UNITS[0]
    for n, s in _LAT_UNITS:
        if typical_ns >= 10 * s:
            name, scale = n, s
    return name, scale


def bucket_edge(below_ns: int) -> str:
    """A latency-distribution bound in fio's unit for it: "250 ns", "4 µs", "2000 ms"."""
    if below_ns <= 1_000:
        return f"{below_ns} ns"
    if below_ns <= 1_000_000:
        return f"{below_ns // 1_000} µs"
    return f"{below_ns // 1_000_000} ms"


def lat_unit_for(values_ns: Iterable[float]) -> tuple[str, float]:
    """One unit for several values: chosen from their median."""
    vals = sorted(v for v in values_ns if v > 0)
    return lat_unit(vals[len(vals) // 2] if vals else 0.0)


def fmt_lat(ns: float, scale: float) -> str:
    """A latency in the unit of ``scale``: whole ns, else four significant
    digits — more than the histogram's three, so nothing is rounded away,
    and no false precision in the last digits of a bucket's edge."""
    if scale == 1.0:
        return f"{ns:.0f}"
    return fmt_num(ns / scale)


def fmt_sig3(x: float) -> str:
    """About three significant digits, no exponent, no suffix (progress
    lines and sentences, where four digits would be noise)."""
    ax = abs(x)
    if ax >= 100:
        return f"{x:.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def fmt_num(x: float) -> str:
    """About four significant digits, no exponent, no k/M suffix."""
    ax = abs(x)
    if ax >= 1000:
        return f"{x:.0f}"
    if ax >= 100:
        return f"{x:.1f}"
    if ax >= 10:
        return f"{x:.2f}"
    return f"{x:.3f}"


_BINARY_BYTES = ((" TiB", 2.0**40), (" GiB", 2.0**30), (" MiB", 2.0**20), (" KiB", 2.0**10))
_DECIMAL_BYTES = ((" TB", 1e12), (" GB", 1e9), (" MB", 1e6), (" kB", 1e3))


def fmt_scaled(x: float, units: Sequence[tuple[str, float]], digits: Callable[[float], str], below: str) -> str:
    """``x`` in the largest of ``units`` (suffix, size; largest first) that it
    reaches, written by ``digits``; below them all, whole ones with ``below``."""
    for suffix, scale in units:
        if x >= scale:
            return digits(x / scale) + suffix
    return f"{x:.0f}{below}"


def fmt_bytes(n: float) -> str:
    """A byte count with a binary unit (B, KiB, MiB, GiB, TiB)."""
    return fmt_scaled(n, _BINARY_BYTES, fmt_num, " B")


def fmt_decimal_bytes(n: float) -> str:
    """A byte count with a decimal unit (B, kB, MB, GB, TB)."""
    return fmt_scaled(n, _DECIMAL_BYTES, fmt_num, " B")


def fmt_bw(bytes_per_s: float) -> str:
    """Bandwidth in MiB/s with MB/s beside it."""
    return f"{fmt_num(bytes_per_s / 2**20)} MiB/s ({fmt_num(bytes_per_s / 1e6)} MB/s)"


def fmt_secs(ns: float) -> str:
    """A duration in seconds (ms resolution)."""
    return f"{ns / 1e9:.3f} s"


def fmt_pct(x: float) -> str:
    return f"{x:.2f}%"
