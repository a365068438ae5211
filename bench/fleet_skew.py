#!/usr/bin/env python3
"""Start skew of a fleet: N ranks on this machine, M runs, the median.

Each run is ``iolab fleet -n N run`` of a short null-engine job; the skew
is the fleet result's ``clock.start_skew_ns`` — the spread of the ranks'
real starts (their measured windows' first instants) mapped onto rank 0's
clock with the measured offsets. On one machine every rank shares the
clock, so the offsets are a check (≈ 0 within round trip / 2). Issue #9
asks for 4 ranks within 10 ms (median of 10 runs).

    bench/fleet_skew.py --ranks 4 --runs 10
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

JOB = ["--name=r", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=64m", "--time_based", "--runtime=1"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    skews, offsets, rtts = [], [], []
    with tempfile.TemporaryDirectory() as spool:
        for _ in range(args.runs):
            cmd = [sys.executable, "-m", "iolab.cli.main", "fleet", "-n", str(args.ranks), "run", *JOB]
            cmd += ["--output-format=json", f"--fleet-spool={spool}"]
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if out.returncode != 0:
                sys.exit(f"fleet run failed ({out.returncode}): {out.stderr[-2000:]}")
            clock = json.loads(out.stdout)["clock"]
            skews.append(clock["start_skew_ns"])
            offsets.append(max(abs(r["offset_ns"]) for r in clock["ranks"]))
            rtts.append(clock["round_trip_median_ns"])
    print(f"ranks: {args.ranks}, runs: {args.runs}")
    print(f"  start skew: median {statistics.median(skews) / 1e6:.3f} ms, max {max(skews) / 1e6:.3f} ms")
    print(f"  largest |offset| per run: median {statistics.median(offsets) / 1e3:.1f} µs")
    print(f"  round trip (median per run): median {statistics.median(rtts) / 1e3:.1f} µs")


if __name__ == "__main__":
    main()
