"""How long `iolab report --format html` takes on a 100-point sweep (issue
#3: under 10 s).

The sweep is real: a plan of 5 block sizes x 5 queue depths x 4 access
patterns = 100 points, each run for 50 ms with the null ioengine through
the plans machinery (`iolab sweep`), so every point directory holds
engine results with histograms and time series. Then `iolab report` runs
as a separate process (start-up included, as a user sees it), ``--rounds``
times; the median and every round are printed (``--markdown``: a table
row for docs/performance.md).

    .venv/bin/python bench/report_speed.py --rounds 3 --markdown
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLAN = """
[plan]
name = "report-speed"
description = "100 points for timing iolab report"

[base]
filename = "{target}"
size = "4m"
ioengine = "null"
time_based = true
runtime = "50ms"

[axes]
bs = ["4k", "8k", "16k", "64k", "128k"]
iodepth = [1, 4, 16, 64, 256]
rw = ["randread", "randwrite", "read", "randrw"]
"""


def iolab(*args: str) -> list[str]:
    return [sys.executable, "-m", "iolab.cli.main", *args]


def make_sweep(root: Path) -> Path:
    plan = root / "plan.toml"
    plan.write_text(PLAN.format(target=root / "target.dat"))
    start = time.monotonic()
    subprocess.run(iolab("sweep", str(plan), "--results", str(root / "res")), check=True, capture_output=True)
    print(f"sweep of 100 points written in {time.monotonic() - start:.1f} s", file=sys.stderr)
    return root / "res" / "report-speed"


def time_report(sweep: Path) -> float:
    start = time.monotonic()
    subprocess.run(iolab("report", str(sweep), "--format", "html"), check=True, capture_output=True)
    return time.monotonic() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--markdown", action="store_true", help="print a table row for docs/performance.md")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="iolab-report-speed-") as tmp:
        sweep = make_sweep(Path(tmp))
        rounds = [time_report(sweep) for _ in range(args.rounds)]
        page = (sweep / "report.html").read_text(encoding="utf-8")
        size = len(page.encode())
    # The figure is only worth something if the report covers the whole sweep.
    assert "points: 100, axes: bs, iodepth, rw" in page, "the report does not cover 100 points"
    med = statistics.median(rounds)
    host = f"{platform.node()} ({os.cpu_count()} CPUs)"
    if args.markdown:
        print("| sweep | rounds | median (s) | every round (s) | report size (MiB) | machine |")
        print("|---|---:|---:|---|---:|---|")
        each = ", ".join(f"{r:.2f}" for r in rounds)
        print(f"| 100 points x 1 repeat | {len(rounds)} | {med:.2f} | {each} | {size / 2**20:.1f} | {host} |")
    else:
        print(f"iolab report --format html, 100 points: median {med:.2f} s over {rounds} (report {size} bytes)")


if __name__ == "__main__":
    main()
