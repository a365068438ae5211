#!/usr/bin/env python3
"""What the fleet machinery costs a run: one rank under ``iolab fleet -n 1``
vs plain ``iolab run``, the same null-engine job, alternating rounds.

The fleet adds per interval a snapshot (two interval histograms merged and
sent over MPI), its spool line, and rank 0's view; issue #9 asks that this
take < 2 % of the IOPS of a one-rank null-engine run. Prints the median
IOPS of each and their ratio.

    bench/fleet_overhead.py --rounds 5 --runtime 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

JOB = ["--name=r", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g", "--time_based"]


def iolab(*args: str) -> list[str]:
    return [sys.executable, "-m", "iolab.cli.main", *args]


def plain(runtime: int) -> float:
    out = subprocess.run(
        iolab("run", *JOB, f"--runtime={runtime}", "--output-format=json"), capture_output=True, text=True, check=True
    )
    return float(json.loads(out.stdout)["summary"]["jobs"][0]["merged"]["read"]["iops"])


def fleet(runtime: int, spool: str) -> float:
    cmd = iolab(
        "fleet", "-n", "1", "run", *JOB, f"--runtime={runtime}", "--output-format=json", f"--fleet-spool={spool}"
    )
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"fleet run failed ({out.returncode}): {out.stderr[-2000:]}")
    return float(json.loads(out.stdout)["total"]["summary"]["jobs"][0]["merged"]["read"]["iops"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5, help="seconds per run")
    args = ap.parse_args()
    a: list[float] = []
    b: list[float] = []
    with tempfile.TemporaryDirectory() as spool:
        for _ in range(args.rounds):
            a.append(plain(args.runtime))
            b.append(fleet(args.runtime, spool))
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"rounds: {args.rounds} x {args.runtime} s, null engine, randread 4k, QD 1")
    print(f"  plain iolab run:     median {ma / 1e3:.1f} kIOPS  (all: {', '.join(f'{x / 1e3:.0f}' for x in a)})")
    print(f"  iolab fleet -n 1:    median {mb / 1e3:.1f} kIOPS  (all: {', '.join(f'{x / 1e3:.0f}' for x in b)})")
    print(f"  fleet / plain: {mb / ma:.3f} (cost {100 * (1 - mb / ma):+.1f} %)")


if __name__ == "__main__":
    main()
