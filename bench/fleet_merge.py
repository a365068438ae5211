#!/usr/bin/env python3
"""Cost of the fleet's exact total: merging the final results of N hosts.

One real result (a 2 s null-engine run, randread 4k) is copied to N
simulated hosts, each renamed; the benchmark times what rank 0 does at the
end of a fleet run — the core's exact merge of the hosts' result JSON as the
ranks sent it (iolab.fleet.merge.merge_result_jsons → _native.merge_results),
the per-host table with the total from merged histograms (table_rows) and
the core's summary of the merged result — and prints the median of the
rounds, in total and per host. Issue #29 asks for ≤ 1 s / 3 s / 10 s at
1,000 / 3,000 / 10,000 hosts and a time per host flat (within 1.5 times) from
100 to 10,000; ``--hosts`` takes several sizes to show that.

    bench/fleet_merge.py --hosts 100 1000 3000 10000 --rounds 3
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time

import iolab
from iolab import _native
from iolab.fleet.merge import merge_result_jsons, table_rows


def one_result() -> dict:
    job = iolab.Job("r", ioengine="null", rw="randread", bs="4k", size="64m", time_based=True, runtime="2s")
    return iolab.run(job).result


def simulated(base: dict, n: int) -> list[tuple[str, dict]]:
    """``base`` copied to ``n`` hosts, each renamed."""
    hosts = []
    for i in range(n):
        r = copy.deepcopy(base)
        name = f"host{i:05d}"
        r["hosts"][0]["hostname"] = name
        for j in r["jobs"]:
            for w in j["workers"]:
                w["host"] = name
        for c in r["cpu"]:
            c["host"] = name
        hosts.append((name, r))
    return hosts


def measure(base: dict, n: int, rounds: int) -> dict[str, float]:
    """Median seconds of each step over ``rounds`` for ``n`` hosts (wall
    clock), and ``cpu_s``: the median CPU time of the three steps together
    (this process's, which on a loaded machine is the steadier figure)."""
    hosts = simulated(base, n)
    sent = [json.dumps(r) for _, r in hosts]  # what the ranks send rank 0
    times: dict[str, list[float]] = {"merge_s": [], "table_s": [], "summary_s": []}
    cpu: list[float] = []
    for _ in range(rounds):
        c0 = time.process_time()
        t0 = time.perf_counter()
        total = json.loads(merge_result_jsons(sent))
        t1 = time.perf_counter()
        rows = table_rows(hosts, total)
        t2 = time.perf_counter()
        summary = json.loads(_native.summarize(json.dumps(total)))
        t3 = time.perf_counter()
        cpu.append(time.process_time() - c0)
        times["merge_s"].append(t1 - t0)
        times["table_s"].append(t2 - t1)
        times["summary_s"].append(t3 - t2)
    per_host_ios = sum(w["dirs"][0]["ios"] for j in base["jobs"] for w in j["workers"])
    tot = next(r for r in rows if r["host"] == "Total")
    assert tot["ios"] == n * per_host_ios, "the table's total is not every host's I/Os"
    assert summary["groups"][0]["read"]["ios"] == n * per_host_ios, "the summary's total is not every host's I/Os"
    med = {k: statistics.median(v) for k, v in times.items()}
    med["cpu_s"] = statistics.median(cpu)
    return med


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--hosts", type=int, nargs="+", default=[1000], help="simulated host counts (several: a scaling table)"
    )
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    base = one_result()
    print(f"rounds: {args.rounds} (medians); per host = all / hosts")
    print("wall clock per step; all = merge + table + summary; cpu = this process's CPU time for all")
    head = ("hosts", "merge_s", "table_s", "summary_s", "all_s", "per_host_ms", "cpu_s", "cpu_per_host_ms")
    print(" ".join(f"{h:>{max(len(h), 6)}}" for h in head))
    per_host, cpu_per_host = [], []
    for n in args.hosts:
        med = measure(base, n, args.rounds)
        total_s = med["merge_s"] + med["table_s"] + med["summary_s"]
        per_host.append(total_s / n * 1e3)
        cpu_per_host.append(med["cpu_s"] / n * 1e3)
        cells = (
            n,
            med["merge_s"],
            med["table_s"],
            med["summary_s"],
            total_s,
            per_host[-1],
            med["cpu_s"],
            cpu_per_host[-1],
        )
        print(
            " ".join(f"{c:>{max(len(h), 6)}.3f}" if isinstance(c, float) else f"{c:>6}" for h, c in zip(head, cells)),
            flush=True,
        )
    if len(per_host) > 1:
        print(
            f"per-host time, largest / smallest: wall {max(per_host) / min(per_host):.2f}x, cpu {max(cpu_per_host) / min(cpu_per_host):.2f}x"
        )


if __name__ == "__main__":
    main()
