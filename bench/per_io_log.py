#!/usr/bin/env python3
"""Side-by-side benchmark: what fio's per-I/O latency log costs in iolab and in fio.

The same job (libaio, buffered 4 KiB reads at QD 32 over 64 MiB kept in the
page cache: no device behind it, so the tools' own costs show) runs with and
without ``write_lat_log`` at ``log_avg_msec=0`` (one line per I/O in the lat,
clat and slat logs), fio and iolab alternating, ``--rounds`` times each. CPU
per I/O is the kernel's accounting of each whole process (user + system)
divided by the I/Os it reports; the logs are written to a scratch directory
that is removed after each run, and the line count of each lat log is
checked against the I/Os the tool reports.

    bench/per_io_log.py --rounds 3 --runtime 2 --markdown
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_fio import ensure_file, iolab_cmd, measure


def run(tool: str, args: list[str], log: bool) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="iolab-bench-log-") as d:
        extra = [f"--write_lat_log={d}/b", "--log_avg_msec=0"] if log else []
        if tool == "fio":
            cmd = ["fio", *args, *extra, "--output-format=json"]
        else:
            cmd = [*iolab_cmd(), "run", *args, *extra, "--output-format=fio-json"]
        s = measure(cmd)
        if log:
            lines = sum(1 for _ in open(f"{d}/b_lat.1.log"))
            assert lines == s.total_ios, (tool, lines, s.total_ios)
        return s.cpu_ns_per_io, s.total_ios


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=2, help="seconds per run")
    ap.add_argument("--data", type=Path, default=Path("/var/tmp/iolab-bench/data.1g"))
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    ensure_file(a.data, 1 << 30)
    args = [
        "--name=cached",
        "--ioengine=libaio",
        "--iodepth=32",
        "--rw=read",
        "--bs=4k",
        "--size=64m",
        f"--filename={a.data}",
        f"--runtime={a.runtime}",
        "--time_based",
    ]
    cpu: dict[tuple[str, bool], list[float]] = {}
    for r in range(a.rounds):
        order = [("fio", False), ("iolab", False), ("fio", True), ("iolab", True)]
        for tool, log in order if r % 2 == 0 else reversed(order):
            ns, ios = run(tool, args, log)
            cpu.setdefault((tool, log), []).append(ns)
            print(f"  round {r + 1} {tool:5s} log={int(log)}: {ns:7.0f} ns CPU/IO over {ios:,} I/Os", file=sys.stderr)
    med = {k: statistics.median(v) for k, v in cpu.items()}
    rows = [
        "| tool | CPU/IO without log (ns) | CPU/IO with per-I/O lat log (ns) | with / without |",
        "|---|---:|---:|---:|",
    ]
    for tool in ("fio", "iolab"):
        plain, logged = med[(tool, False)], med[(tool, True)]
        rows.append(f"| {tool} | {plain:,.0f} | {logged:,.0f} | {logged / plain:.2f} |")
    ratio = med[("iolab", True)] / med[("fio", True)]
    rows.append(
        f"\nwith the log, CPU/IO iolab / fio: {ratio:.2f} ({a.rounds} alternating rounds of {a.runtime} s, medians)"
    )
    print("\n".join(rows) if a.markdown else f"ratio {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
