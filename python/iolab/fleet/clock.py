"""Clock offsets, a common start instant and the start skew.

Before the start, rank 0 plays ping-pong with every other rank in turn
(blocking MPI send/recv: every rank is alive and waiting then). One round:
rank 0 notes its wall clock ``t0``, sends; the rank answers with its own
wall clock ``t_r``; rank 0 notes ``t1``. If the two legs take the same
time, ``t_r`` was read at ``(t0 + t1) / 2`` on rank 0's clock, so

    offset_ns = t_r - (t0 + t1) / 2      (rank r's clock minus rank 0's)
    round_trip_ns = t1 - t0              (the offset's error is at most half)

Of several rounds the one with the shortest round trip is kept (NTP's
minimum filter: the least queueing, the least asymmetry). Rank 0 then
broadcasts a start instant on its own clock; each rank starts its engine at
that instant plus its offset, on its own clock. After the run each rank's
real start (its result's ``start_unix_ns``, its own clock) is mapped back
to rank 0's clock; the spread of those is the start skew.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iolab.fleet.comm import TAG_CLOCK

#: Ping-pong rounds per rank; the shortest round trip is kept.
ROUNDS = 8


@dataclass(frozen=True)
class ClockSample:
    """One rank's clock against rank 0's."""

    rank: int
    offset_ns: int
    round_trip_ns: int


def offset_of(t0_ns: int, t_remote_ns: int, t1_ns: int) -> ClockSample:
    """One round's estimate (rank set by the caller)."""
    return ClockSample(0, t_remote_ns - (t0_ns + t1_ns) // 2, t1_ns - t0_ns)


def best(samples: Sequence[ClockSample]) -> ClockSample:
    """The sample with the shortest round trip."""
    return min(samples, key=lambda s: s.round_trip_ns)


def measure(world: Any, rounds: int = ROUNDS) -> list[ClockSample]:
    """Collective: on rank 0 the best sample per rank (rank 0's own is
    zero); on the others an empty list."""
    if world.rank != 0:
        for _ in range(rounds):
            world.recv(0, TAG_CLOCK)
            world.send(time.time_ns(), 0, TAG_CLOCK)
        return []
    out = [ClockSample(0, 0, 0)]
    for r in range(1, world.size):
        samples = []
        for _ in range(rounds):
            t0 = time.time_ns()
            world.send(None, r, TAG_CLOCK)
            t_r = world.recv(r, TAG_CLOCK)
            t1 = time.time_ns()
            samples.append(offset_of(t0, t_r, t1))
        b = best(samples)
        out.append(ClockSample(r, b.offset_ns, b.round_trip_ns))
    return out


def start_instant(samples: Sequence[ClockSample], lead_ns: int) -> int:
    """A start instant on rank 0's clock far enough ahead for the broadcast
    to reach every rank: ``lead_ns`` plus ten of the slowest round trips."""
    slowest = max((s.round_trip_ns for s in samples), default=0)
    return time.time_ns() + lead_ns + 10 * slowest


@dataclass(frozen=True)
class Skew:
    """When the ranks really started, on rank 0's clock."""

    #: Per rank: its measured window's start minus the earliest one, ns.
    start_after_first_ns: dict[int, int]
    #: Latest minus earliest start, ns.
    skew_ns: int


def start_skew(starts_local_ns: dict[int, int], offsets_ns: dict[int, int]) -> Skew:
    """Real starts (each on its own clock) → skew on rank 0's clock."""
    on_zero = {r: t - offsets_ns.get(r, 0) for r, t in starts_local_ns.items()}
    if not on_zero:
        return Skew({}, 0)
    first = min(on_zero.values())
    return Skew({r: t - first for r, t in sorted(on_zero.items())}, max(on_zero.values()) - first)


def clock_report(samples: Sequence[ClockSample], skew: Skew, hosts: Sequence[str]) -> dict[str, Any]:
    """The ``clock`` section of a fleet result."""
    rtts = [s.round_trip_ns for s in samples if s.rank != 0]
    return {
        "method": f"ping-pong from rank 0 over MPI, best (shortest round trip) of {ROUNDS} rounds per rank; "
        "offset = remote clock - midpoint of the round trip",
        "ranks": [
            {
                "rank": s.rank,
                "host": hosts[s.rank] if s.rank < len(hosts) else "",
                "offset_ns": s.offset_ns,
                "round_trip_ns": s.round_trip_ns,
                "offset_error_bound_ns": s.round_trip_ns // 2,
                "start_after_first_ns": skew.start_after_first_ns.get(s.rank),
            }
            for s in samples
        ],
        "round_trip_median_ns": int(statistics.median(rtts)) if rtts else 0,
        "start_skew_ns": skew.skew_ns,
    }


__all__ = [
    "ROUNDS",
    "ClockSample",
    "Skew",
    "best",
    "clock_report",
    "measure",
    "offset_of",
    "start_instant",
    "start_skew",
]
