"""Lines about a fleet run's hosts, from its ``fleet.json`` document: the
start skew and clock offsets, the spread of IOPS across hosts, and the
host rows per group and direction. Pure functions over the document, in
the report layer so that both the HTML report and :mod:`iolab.fleet.report`
(the text report) use them without an upward import.

:func:`host_spread` is the spread of many hosts (quantiles, a histogram,
the slowest first, the stragglers), shown instead of a row per host above
:data:`ROWS_MAX` hosts by the report and by the live view
(:mod:`iolab.fleet.live`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

#: Up to this many hosts a fleet is shown a row (a bar) per host; above, its
#: spread (:func:`host_spread`).
ROWS_MAX = 24
#: Hosts listed at each end (slowest, fastest) of a spread.
ENDS = 5
#: A straggler: a host with IOPS below this fraction of the median host's.
STRAGGLER_FRACTION = 0.75
#: Equal bins of the distribution of host IOPS (beside the stragglers' own).
BINS = 8
#: Names listed (stragglers, late hosts) before "and N more".
NAMES_MAX = 10


@dataclass(frozen=True)
class HostSpread:
    """How hosts spread in IOPS."""

    #: Hosts counted.
    hosts: int
    #: Host IOPS: ``min``, ``p10``, ``p50`` (median), ``p90``, ``max`` —
    #: nearest rank over the hosts (each host's own rate; no latency here).
    quantiles: dict[str, float]
    #: Coefficient of variation of host IOPS, percent.
    cv_pct: float
    #: ``(low_iops, high_iops, hosts)`` per bin: the stragglers' bin first
    #: when there are any (from the slowest host to the straggler limit,
    #: so that a few hosts far below do not squeeze the rest into one bin),
    #: then :data:`BINS` equal bins over the others.
    bins: tuple[tuple[float, float, int], ...]
    #: Indices of the hosts given, slowest first.
    order: tuple[int, ...]
    #: How many of the slowest are stragglers (below :data:`STRAGGLER_FRACTION` of the median).
    stragglers: int


def _nearest_rank(sorted_values: Sequence[float], p: float) -> float:
    return sorted_values[max(1, math.ceil(p / 100 * len(sorted_values))) - 1]


def host_spread(iops: Sequence[float]) -> Optional[HostSpread]:
    """The spread of ``iops`` (one figure per host), or None for no host."""
    if not iops:
        return None
    order = sorted(range(len(iops)), key=lambda i: iops[i])
    xs = [iops[i] for i in order]
    q = {"min": xs[0], **{f"p{p:g}": _nearest_rank(xs, p) for p in (10.0, 50.0, 90.0)}, "max": xs[-1]}
    mean = statistics.fmean(xs)
    cv = statistics.pstdev(xs) / mean * 100 if mean > 0 else 0.0
    limit = STRAGGLER_FRACTION * q["p50"]
    slow = sum(1 for x in xs if x < limit)
    rest = xs[slow:]
    bins: list[tuple[float, float, int]] = [(xs[0], limit, slow)] if slow else []
    lo, hi = rest[0], rest[-1]
    n_bins = BINS if hi > lo else 1
    width = (hi - lo) / n_bins
    counts = [0] * n_bins
    for x in rest:
        counts[min(n_bins - 1, int((x - lo) / width)) if width else 0] += 1
    bins += [(lo + i * width, lo + (i + 1) * width if i < n_bins - 1 else hi, c) for i, c in enumerate(counts)]
    return HostSpread(len(xs), q, cv, tuple(bins), tuple(order), slow)


def named(names: Sequence[str], most: int = NAMES_MAX) -> str:
    """``a, b, c`` — at most ``most`` names, then "and N more"."""
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown} and {len(names) - most} more"


def quantiles_line(sp: HostSpread) -> str:
    q = sp.quantiles
    return (
        f"host kIOPS: min {q['min'] / 1e3:.2f}  p10 {q['p10'] / 1e3:.2f}  median {q['p50'] / 1e3:.2f}  "
        f"p90 {q['p90'] / 1e3:.2f}  max {q['max'] / 1e3:.2f}  (CV {sp.cv_pct:.1f} %)"
    )


def histogram_lines(sp: HostSpread, indent: str = "  ") -> list[str]:
    """The distribution of host kIOPS as text bars, a line per bin."""
    top = max(c for _, _, c in sp.bins)
    out = []
    for i, (lo, hi, c) in enumerate(sp.bins):
        bar = "#" * (0 if top == 0 else round(40 * c / top))
        tail = " (stragglers)" if i == 0 and sp.stragglers else ""
        out.append(f"{indent}{lo / 1e3:>9.2f} - {hi / 1e3:<9.2f} kIOPS {c:>6} hosts {bar}{tail}")
    return out


def stragglers_line(labelled: Sequence[tuple[str, float]]) -> str:
    """The stragglers named with their kIOPS (``labelled``: slowest first), or ""."""
    if not labelled:
        return ""
    return f"stragglers ({len(labelled)}, below {STRAGGLER_FRACTION:.0%} of the median host's kIOPS): " + named(
        [f"{h} {x / 1e3:.2f}" for h, x in labelled]
    )


def skew_line(doc: dict[str, Any]) -> str:
    c = doc["clock"]
    offs = [abs(r["offset_ns"]) for r in c["ranks"]]
    return (
        f"start skew {c['start_skew_ns'] / 1e6:.3f} ms; clock offsets up to {max(offs, default=0) / 1e6:.3f} ms "
        f"(round trip median {c['round_trip_median_ns'] / 1e3:.1f} µs)"
    )


def spread_line(sel: list[dict[str, Any]]) -> str:
    """The spread of IOPS across hosts (max/min and CV), or "" for fewer than two."""
    iops = [r["iops"] for r in sel]
    if len(iops) < 2 or min(iops) <= 0:
        return ""
    cv = statistics.pstdev(iops) / statistics.mean(iops) * 100
    return (
        f"spread across hosts: min {min(iops) / 1e3:.2f}, max {max(iops) / 1e3:.2f} kIOPS "
        f"(max/min {max(iops) / min(iops):.3f}, CV {cv:.1f} %)"
    )


def by_group_dir(doc: dict[str, Any]) -> list[tuple[tuple[int, str], list[dict[str, Any]]]]:
    """The table's host rows (no Total) per (group, direction)."""
    rows = [r for r in doc["table"] if r["host"] != "Total"]
    return [
        (k, [r for r in rows if (r["group"], r["dir"]) == k]) for k in sorted({(r["group"], r["dir"]) for r in rows})
    ]


#: Hosts listed as the slowest in a report's spread.
SLOWEST = 10


def rows_spread(sel: list[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """The spread of a group and direction's host rows (``fleet.json``'s
    table rows: ``host``, ``iops``, ``lat_p99_ns``) as JSON: ``hosts``,
    ``quantiles_iops``, ``cv_pct``, ``bins`` (``low_iops``, ``high_iops``,
    ``hosts``), the :data:`SLOWEST` slowest and :data:`ENDS` fastest rows
    and the stragglers (slowest first); None for no host."""
    sp = host_spread([r["iops"] for r in sel])
    if sp is None:
        return None

    def brief(i: int) -> dict[str, Any]:
        r = sel[i]
        return {"host": r["host"], "iops": r["iops"], "lat_p99_ns": r.get("lat_p99_ns")}

    return {
        "hosts": sp.hosts,
        "quantiles_iops": sp.quantiles,
        "cv_pct": sp.cv_pct,
        "bins": [{"low_iops": lo, "high_iops": hi, "hosts": c} for lo, hi, c in sp.bins],
        "straggler_fraction": STRAGGLER_FRACTION,
        "stragglers": [brief(i) for i in sp.order[: sp.stragglers]],
        "slowest": [brief(i) for i in sp.order[:SLOWEST]],
        "fastest": [brief(i) for i in reversed(sp.order[-ENDS:])],
    }


def spread_of_json(spread: dict[str, Any]) -> HostSpread:
    """:func:`rows_spread`'s figures back as a :class:`HostSpread` (for its lines)."""
    bins = tuple((b["low_iops"], b["high_iops"], b["hosts"]) for b in spread["bins"])
    return HostSpread(spread["hosts"], spread["quantiles_iops"], spread["cv_pct"], bins, (), len(spread["stragglers"]))


def many_hosts_lines(spread: dict[str, Any], indent: str = "    ") -> list[str]:
    """A group and direction of many hosts in words: the quantiles of host
    kIOPS, their histogram, the slowest hosts, the stragglers named."""
    sp = spread_of_json(spread)
    lines = [indent + quantiles_line(sp), *histogram_lines(sp, indent + "  ")]

    def us(ns: Optional[float]) -> str:
        return "-" if ns is None else f"{ns / 1e3:.1f}"

    label = f"slowest {len(spread['slowest'])} hosts"
    width = max([len(label) - 2, *(len(r["host"]) for r in spread["slowest"])])
    lines.append(f"{indent}{label:<{width + 2}} {'kIOPS':>9} {'p99 µs':>9}")
    lines += [
        f"{indent}  {r['host']:<{width}} {r['iops'] / 1e3:>9.2f} {us(r['lat_p99_ns']):>9}" for r in spread["slowest"]
    ]
    strag = stragglers_line([(r["host"], r["iops"]) for r in spread["stragglers"]])
    if strag:
        lines.append(indent + strag)
    return lines
