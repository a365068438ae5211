"""fio's latency buckets ("plat" bins), from iolab's HDR histograms.

fio keeps completion latency in 29 groups of 64 buckets (1856 in all, its
``FIO_IO_U_PLAT_*`` constants), as its stat.h explains: a value below 128 ns
has a bucket of its own; above that, the value's most significant bit
chooses the group and the next 6 bits the bucket, so a bucket spans
``2^(msb-6)`` ns and fio reports it by its midpoint (error at most 1/128 of
the value). ``--output-format=json+`` writes those buckets as ``bins``
(``{"<midpoint ns>": count}``) and ``write_hist_log`` writes all 1856
counts per interval.

iolab records into HdrHistogram with 3 significant digits: its buckets are
exact below 2048 ns and never wider than 1/1024 of their value, and both
schemes split at powers of two, so every HDR bucket lies inside exactly
one fio bucket. Re-bucketing is therefore exact: each recorded count lands
in the fio bucket fio itself would have counted it in. Written from the
description in fio's stat.h and HOWTO (no fio code copied).
"""

from __future__ import annotations

from collections.abc import Iterable

from iolab import _native

#: Bits of a value below its most significant bit that pick the bucket.
PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_GROUPS = 29
#: Number of fio buckets (the column count of a ``write_hist_log`` line).
PLAT_NR = PLAT_GROUPS * PLAT_VAL


def plat_index(value_ns: int) -> int:
    """fio's bucket index of a latency (values past the last bucket go in it)."""
    if value_ns < 2 * PLAT_VAL:
        return max(value_ns, 0)
    msb = value_ns.bit_length() - 1
    error_bits = msb - PLAT_BITS
    index = ((error_bits + 1) << PLAT_BITS) + ((value_ns >> error_bits) & (PLAT_VAL - 1))
    return min(index, PLAT_NR - 1)


def plat_value(index: int) -> int:
    """The value fio reports for bucket ``index``: its midpoint (ns)."""
    if index < 2 * PLAT_VAL:
        return index
    error_bits = (index >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    k = index % PLAT_VAL
    return base + (k << error_bits) + (1 << (error_bits - 1))


def plat_counts(hists: Iterable[str]) -> list[int]:
    """The 1856 fio bucket counts of one or more HDR histograms (V2 base64),
    merged exactly (bucket sums)."""
    counts = [0] * PLAT_NR
    for hist in hists:
        for value_ns, count in _native.hist_buckets(hist):
            counts[plat_index(value_ns)] += count
    return counts


def plat_bins(counts: list[int]) -> dict[str, int]:
    """json+ ``bins``: the non-empty buckets, ``{"<midpoint ns>": count}``, ascending."""
    return {str(plat_value(i)): c for i, c in enumerate(counts) if c}


def plat_percentile(counts: list[int], percent: float) -> int:
    """fio's percentile over its buckets: the midpoint of the first bucket
    whose running count reaches ``percent`` of the total (0 when empty)."""
    total = sum(counts)
    if total == 0:
        return 0
    want = total * percent / 100.0
    running = 0
    for i, c in enumerate(counts):
        running += c
        if c and running >= want:
            return plat_value(i)
    return plat_value(PLAT_NR - 1)
