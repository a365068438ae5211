#!/usr/bin/env python3
"""Cost of the fleet's live view: rank 0's gather, merge and render of one
interval for N simulated hosts.

Each simulated host's snapshot is what a rank sends rank 0 every interval
(``Snapshotter.take`` on a real engine progress: a 4 KiB randrw null-engine
run's intervals, the latency histograms included), its IOPS scaled so that
hosts differ (a few stragglers at a third). Per interval the bench times
what rank 0 does (iolab.fleet.watch.Watch):

- gather: the snapshots taken off MPI (``Watch.gather``); in-process, the
  bytes mpi4py would receive are unpickled (``pickle.loads``, what
  mpi4py's receive does after the transport); with ``--mpi`` under
  ``mpiexec -n 2`` rank 1 sends all N snapshots through Open MPI and rank 0
  drains them (the source mapped back to the snapshot's own rank);
- view: a row per host and the total, its p50/p99 from the N interval
  histograms merged (``Watch.view`` → ``total_of``);
- terminal: the table, a summary above 24 hosts (``terminal_table``);
- page: ``/view.json`` (first page) as JSON text;
- and, apart (per scrape, not per interval, rendered once per interval at
  most): ``/metrics`` as Prometheus text.

It checks the view's total against the hosts' own rates and histogram
counts, and prints medians over the intervals in ms and as a share of a
1 s interval. Issue #29 asks for gather + merge + render ≤ 20 % of the
interval at 1,000 hosts.

    bench/fleet_live.py --hosts 100 1000 3000 10000 --intervals 5
    mpiexec -n 2 python bench/fleet_live.py --mpi --hosts 1000
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from iolab import _native
from iolab.fleet.comm import TAG_INTERVAL, World
from iolab.fleet.live import ClusterInterval, prometheus_text, terminal_table, view_json
from iolab.fleet.parts import FleetConfig, Snapshotter
from iolab.fleet.spool import Spool
from iolab.fleet.watch import Watch
from iolab.run.api import Job
from iolab.run.local import run_jobs


class _Sink:
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    def note(self, line: str) -> None:
        pass

    def update(self, progress: dict[str, Any]) -> None:
        self.updates.append(progress)

    def close(self) -> None:
        pass


def engine_progress() -> list[dict[str, Any]]:
    """Real interval progress (histograms included) of a short null-engine run."""
    sink = _Sink()
    job = Job("r", ioengine="null", rw="randrw", bs="4k", size="16m", time_based=True, runtime="3s")
    run_jobs([job], interval_ns=500_000_000, progress=sink)
    got = [u for u in sink.updates if u["iops"][0] > 0]
    assert got, "the engine gave no interval with I/O"
    return got


def factor(i: int) -> float:
    """Host i's IOPS relative to the engine's: spread over ±20 %, every 97th a straggler at a third."""
    return 1 / 3 if i % 97 == 13 else 0.8 + 0.4 * ((i * 7919) % 1000) / 1000


def snapshots(progress: list[dict[str, Any]], n: int, seq: int) -> list[dict[str, Any]]:
    """Interval ``seq`` of ``n`` hosts, as each rank's Snapshotter makes it."""
    out = []
    now = time.monotonic()
    for i in range(n):
        p = progress[i % len(progress)]
        f = factor(i)
        scaled = {
            **p,
            "iops": tuple(x * f for x in p["iops"]),
            "bw_bytes_per_s": tuple(x * f for x in p["bw_bytes_per_s"]),
        }
        snap = Snapshotter(i, f"host{i:05d}", now, 1.0, ["r"])
        snap.seq = seq - 1
        out.append(snap.take(scaled, now))
    return out


class SimulatedWorld:
    """Rank 0's World for N simulated hosts: ``drain`` hands over what the
    ranks sent. In-process: pickled bytes, unpickled on receipt; over MPI
    (``real``): Open MPI's messages from rank 1, each attributed to the
    rank its snapshot names."""

    def __init__(self, n: int, real: Optional[World] = None) -> None:
        self.rank, self.size, self.host = 0, n, "host00000"
        self.real = real
        self.inbox: list[bytes] = []

    def drain(self, tag: int, source: Optional[int] = None) -> list[tuple[int, Any]]:
        if tag != TAG_INTERVAL:
            return []
        if self.real is not None:
            return [(int(s["rank"]), s) for _, s in self.real.drain(tag)]
        got = [pickle.loads(b) for b in self.inbox]
        self.inbox = []
        return [(int(s["rank"]), s) for s in got]

    def post(self, value: Any, dest: int, tag: int) -> None:
        pass

    def flush(self, deadline: float) -> bool:
        return True


def check(view: ClusterInterval, sent: list[dict[str, Any]]) -> None:
    """The view's total is every host's rate summed, its histogram every host's interval merged."""
    want = sum(s["row"]["iops"] for s in sent)
    assert abs((view.total.iops or 0.0) - want) <= 1e-9 * want, (view.total.iops, want)
    assert view.total.lat_hist is not None
    count = _native.hist_stats(view.total.lat_hist, [50.0])["count"]
    hosts = sum(_native.hist_stats(s["row"]["lat_hist"], [50.0])["count"] for s in sent[:50])
    assert count >= hosts and len(view.rows) == len(sent) and not view.late_hosts


def measure(progress: list[dict[str, Any]], n: int, intervals: int, real: Optional[World] = None) -> dict[str, float]:
    """Median seconds of each step over ``intervals`` for ``n`` hosts."""
    world = SimulatedWorld(n, real)
    with tempfile.TemporaryDirectory() as tmp:
        spool = Spool(Path(tmp), 0)
        watch = Watch(
            world,
            None,
            FleetConfig(),
            Snapshotter(0, "host00000", time.monotonic(), 1.0),
            spool,
            [f"host{i:05d}" for i in range(n)],
        )  # type: ignore[arg-type]
        steps: dict[str, list[float]] = {k: [] for k in ("gather_s", "view_s", "terminal_s", "page_s", "metrics_s")}
        for seq in range(1, intervals + 1):
            sent = snapshots(progress, n, seq)
            if real is not None:
                real.bcast(None)  # rank 1: send this interval's snapshots now
                real.comm.Barrier()  # rank 1 has posted and flushed them
            else:
                world.inbox = [pickle.dumps(s, protocol=pickle.HIGHEST_PROTOCOL) for s in sent]
            t0 = time.perf_counter()
            watch.gather()
            while real is not None and len(watch.snapshots.get(seq, {})) < n:
                watch.gather()  # the rest still in flight
            t1 = time.perf_counter()
            view = watch.view(seq)
            t2 = time.perf_counter()
            terminal_table(view)
            t3 = time.perf_counter()
            json.dumps(view_json(view))
            t4 = time.perf_counter()
            prometheus_text(view)
            t5 = time.perf_counter()
            check(view, sent)
            for k, a, b in (
                ("gather_s", t0, t1),
                ("view_s", t1, t2),
                ("terminal_s", t2, t3),
                ("page_s", t3, t4),
                ("metrics_s", t4, t5),
            ):
                steps[k].append(b - a)
        spool.close()
    return {k: statistics.median(v) for k, v in steps.items()}


def _rank1(progress: list[dict[str, Any]], world: World, sizes: list[int], intervals: int) -> None:
    """Rank 1 of ``--mpi``: sends every simulated host's snapshot of each interval."""
    for n in sizes:
        for seq in range(1, intervals + 1):
            sent = snapshots(progress, n, seq)
            world.bcast(None)
            for s in sent:
                world.post(s, 0, TAG_INTERVAL)
            world.flush(time.monotonic() + 60)
            world.comm.Barrier()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[1000], help="simulated host counts")
    ap.add_argument("--intervals", type=int, default=5, help="intervals per size (medians)")
    ap.add_argument("--mpi", action="store_true", help="under mpiexec -n 2: the snapshots cross Open MPI from rank 1")
    args = ap.parse_args()
    real = World.init() if args.mpi else None
    progress = engine_progress() if real is None or real.rank == 0 else []
    if real is not None:
        progress = real.bcast(progress)  # both ranks make the same snapshots
        if real.rank == 1:
            _rank1(progress, real, args.hosts, args.intervals)
            return
    print(
        f"intervals: {args.intervals} (medians), 1 s each; gather: {'Open MPI from rank 1' if real else 'unpickle in-process'}"
    )
    print("live = gather + view + terminal + page (per interval); /metrics per scrape, apart")
    head = ("hosts", "gather_ms", "view_ms", "terminal_ms", "page_ms", "live_ms", "live_pct", "metrics_ms")
    print(" ".join(f"{h:>{max(len(h), 6)}}" for h in head))
    for n in args.hosts:
        try:
            m = measure(progress, n, args.intervals, real)
        except BaseException:
            if real is not None:
                import traceback

                traceback.print_exc()
                real.comm.Abort(1)  # rank 1 would wait for the next interval forever
            raise
        live = m["gather_s"] + m["view_s"] + m["terminal_s"] + m["page_s"]
        cells = [
            n,
            *(m[k] * 1e3 for k in ("gather_s", "view_s", "terminal_s", "page_s")),
            live * 1e3,
            live * 100,
            m["metrics_s"] * 1e3,
        ]
        print(
            " ".join(f"{c:>{max(len(h), 6)}.1f}" if isinstance(c, float) else f"{c:>6}" for h, c in zip(head, cells)),
            flush=True,
        )


if __name__ == "__main__":
    main()
