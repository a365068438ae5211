#!/usr/bin/env python3
"""Cost of the fleet's exact total: merging the final results of N hosts.

One real result (a 2 s null-engine run, randread 4k) is copied to N
simulated hosts, each renamed; the benchmark times what rank 0 does at the
end of a fleet run — the core's exact merge of the hosts' result JSON as the
ranks sent it (iolab.fleet.merge.merge_result_jsons → _native.merge_results),
the per-host table with the total from merged histograms (table_rows) and
the core's summary of the merged result — and prints the median of the
rounds. Issue #9 asks for < 1 s at N = 1000.

    bench/fleet_merge.py --hosts 1000 --rounds 3
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    base = one_result()
    hosts = []
    for i in range(args.hosts):
        r = copy.deepcopy(base)
        r["hosts"][0]["hostname"] = f"host{i:04d}"
        for j in r["jobs"]:
            for w in j["workers"]:
                w["host"] = f"host{i:04d}"
        for c in r["cpu"]:
            c["host"] = f"host{i:04d}"
        hosts.append((f"host{i:04d}", r))
    sent = [json.dumps(r) for _, r in hosts]  # what the ranks send rank 0
    times = {"merge_s": [], "table_s": [], "summary_s": []}
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        total = json.loads(merge_result_jsons(sent))
        t1 = time.perf_counter()
        rows = table_rows(hosts, total)
        t2 = time.perf_counter()
        _native.summarize(json.dumps(total))
        t3 = time.perf_counter()
        times["merge_s"].append(t1 - t0)
        times["table_s"].append(t2 - t1)
        times["summary_s"].append(t3 - t2)
    tot = next(r for r in rows if r["host"] == "Total")
    assert tot["ios"] == args.hosts * sum(w["dirs"][0]["ios"] for j in base["jobs"] for w in j["workers"])
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"hosts: {args.hosts}, rounds: {args.rounds} (medians)")
    for k, v in med.items():
        print(f"  {k}: {v:.3f} s")
    print(f"  merge + table (rank 0's exact total and per-host rows): {med['merge_s'] + med['table_s']:.3f} s")
    print(f"  all, with the core's summary of the merged result: {sum(med.values()):.3f} s")


if __name__ == "__main__":
    main()
