"""The one home of unit formatting: every printed figure carries one explicit unit.

Analysis (findings' sentences), reports, live progress and the CLI all
format bytes, latencies and rates here; nothing else in the package turns
a number into text with a unit. It imports nothing from iolab, so every
layer may use it.

- Tables and reports: fio prints "1791k" for 1.79 ms and mixes ns and µs in
  one table; here a latency line or block picks ONE unit (:func:`lat_unit`,
  :func:`lat_unit_for`, :func:`fmt_lat`) and says it, and sizes say
  KiB/MiB/GiB (:func:`fmt_bytes`, :func:`fmt_bytes_exact`) or MB/s
  (:func:`fmt_bw`) explicitly; four significant digits (:func:`fmt_num`).
- Sentences and progress lines: three significant digits (:func:`fmt_sig3`)
  and a unit chosen per value (:func:`fmt_ns`, :func:`fmt_iops`,
  :func:`fmt_count_per_s`, :func:`fmt_bytes_per_s`, :func:`fmt_mb_per_s`,
  :func:`fmt_size`).
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


_BINARY_EXACT = ((" TiB", 1 << 40), (" GiB", 1 << 30), (" MiB", 1 << 20), (" KiB", 1 << 10))


def fmt_bytes_exact(n: int) -> str:
    """A size exactly, in the largest binary unit that divides it: "4 KiB", "1 MiB", "1536 B"."""
    for suffix, scale in _BINARY_EXACT:
        if n >= scale and n % scale == 0:
            return f"{n // scale}{suffix}"
    return f"{n} B"


def fmt_ns(ns: float) -> str:
    """A duration with its unit, three significant digits: 850 ns, 12.3 µs, 4.10 ms, 1.20 s."""
    return _sig3_scaled(ns, ((" s", 1e9), (" ms", 1e6), (" µs", 1e3)), lambda x: f"{x:.0f} ns")


def fmt_count_per_s(x: float) -> str:
    """An operation rate: 950, 12.3k, 1.20M (per second)."""
    return fmt_scaled(x, (("M", 1e6), ("k", 1e3)), fmt_sig3, "")


def fmt_iops(x: float) -> str:
    """``"12.3k IOPS"``."""
    return _sig3_scaled(x, (("M IOPS", 1e6), ("k IOPS", 1e3)), lambda v: f"{fmt_sig3(v)} IOPS")


def fmt_mb_per_s(bytes_per_s: float) -> str:
    """Bandwidth in MB/s (10^6 bytes per second)."""
    return f"{fmt_sig3(bytes_per_s / 1e6)} MB/s"


def fmt_bytes_per_s(x: float) -> str:
    """Bandwidth with a binary unit, three significant digits: ``"1.20 GiB/s"``."""
    units = ((" GiB/s", 2.0**30), (" MiB/s", 2.0**20), (" KiB/s", 2.0**10))
    return _sig3_scaled(x, units, lambda v: f"{fmt_sig3(v)} B/s")


def fmt_size(n: float) -> str:
    """A size with a binary unit, whole when it is one: ``"4 KiB"``, ``"1.50 GiB"``."""
    for suffix, scale in _BINARY_BYTES:
        if abs(n) >= scale:
            v = n / scale
            return f"{v:.0f}{suffix}" if v == int(v) else f"{fmt_sig3(v)}{suffix}"
    return f"{n:.0f} B"


def _sig3_scaled(x: float, units: Sequence[tuple[str, float]], small: Callable[[float], str]) -> str:
    """``x`` in the largest of ``units`` its magnitude reaches, three significant
    digits; below them all, written by ``small``."""
    for suffix, scale in units:
        if abs(x) >= scale:
            return fmt_sig3(x / scale) + suffix
    return small(x)
