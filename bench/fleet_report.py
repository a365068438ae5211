#!/usr/bin/env python3
"""A fleet result directory of N simulated hosts, and `iolab report` on it.

One real result (fleet_merge.one_result: a 2 s null-engine run) is copied
to N hosts, each renamed and given its own runtime (IOPS spread over
1x-1.5x, every 997th host a straggler at a third), so the spread across
hosts is known. The bench times what rank 0 does at the end of a fleet run
given ``--results`` — ``iolab.fleet.output.build`` (each host's series put
on rank 0's clock, the exact merge, the core's summary of the total, the
per-host table) and ``save_fleet_run`` (the run directory: the merged
result, fleet.json, each host's own document written as it is made) —
then ``iolab report DIR`` in each format, as a user runs it (a new
process; wall clock and the child's CPU time). It checks that the text
report shows the spread (the histogram of host kIOPS, the slowest hosts,
the straggler named) in a few dozen lines, not a bar per host. Issue #29
asks for ≤ 10 s at 10,000 hosts.

    bench/fleet_report.py --hosts 1000 10000 --keep /tmp/fleet10k
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import iolab
from fleet_merge import one_result, simulated
from iolab.fleet import clock
from iolab.fleet.output import build
from iolab.fleet.rundir import save_fleet_run
from iolab.fleet.runner import FleetConfig, FleetOutcome, HostPart


def factor(i: int) -> float:
    """Host i's runtime relative to the real one (its IOPS is the inverse)."""
    return 3.0 if i % 997 == 13 else 1 + ((i * 7919) % 1000) / 2000


def outcome_of(base: dict[str, Any], n: int) -> FleetOutcome:
    """A finished fleet run of ``n`` simulated hosts, as rank 0 holds it."""
    hosts = simulated(base, n)
    for i, (_, r) in enumerate(hosts):
        f = factor(i)
        for j in r["jobs"]:
            for w in j["workers"]:
                w["runtime_ns"] = int(w["runtime_ns"] * f)
                for d in w["dirs"]:
                    if "runtime_ns" in d:
                        d["runtime_ns"] = int(d["runtime_ns"] * f)
    parts = [HostPart(i, name, result_json=json.dumps(r)) for i, (name, r) in enumerate(hosts)]
    samples = [clock.ClockSample(i, 0 if i == 0 else 1_000 + i, 0 if i == 0 else 20_000) for i in range(n)]
    starts = {i: int(r["start_unix_ns"]) + (1_000 + i if i else 0) for i, (_, r) in enumerate(hosts)}
    skew = clock.start_skew(starts, {s.rank: s.offset_ns for s in samples})
    report = clock.clock_report(samples, skew, [h for h, _ in hosts])
    job = iolab.Job("r", ioengine="null", rw="randread", bs="4k", size="64m", time_based=True, runtime="2s")
    return FleetOutcome(parts, report, [], False, (job,), FleetConfig())


def timed_report(directory: Path, fmt: str, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``iolab report DIR -f FMT -o OUT`` in a new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "iolab.cli.main", "report", str(directory), "-f", fmt, "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def check_text(text: str, n: int) -> None:
    fleet = text[text.index(f"Fleet: {n} hosts") :]
    assert len(fleet.splitlines()) < 40, "the report shows the spread, not a bar per host"
    assert "slowest 10 hosts" in fleet and "host00013" in fleet and "(stragglers)" in fleet, fleet


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[10_000])
    ap.add_argument("--keep", type=Path, help="keep the result directories under this root")
    args = ap.parse_args()
    base = one_result()
    print("build = align + merge + summary + table; save = the run directory; report = `iolab report DIR -f FMT`")
    head = (
        "hosts",
        "build_s",
        "build_cpu_s",
        "save_s",
        "save_cpu_s",
        "result_MB",
        "text_s",
        "json_s",
        "html_s",
        "html_cpu_s",
    )
    print(" ".join(f"{h:>{max(len(h), 6)}}" for h in head))
    for n in args.hosts:
        outcome = outcome_of(base, n)
        root = Path(tempfile.mkdtemp(prefix=f"fleet{n}-", dir=args.keep))
        c0, t0 = time.process_time(), time.perf_counter()
        res = build(outcome)
        c1, t1 = time.process_time(), time.perf_counter()
        directory = save_fleet_run(root, res)
        c2, t2 = time.process_time(), time.perf_counter()
        del res, outcome
        size_mb = (directory / "result.json").stat().st_size / 1e6
        walls, cpus = {}, {}
        for fmt in ("text", "json", "html"):
            walls[fmt], cpus[fmt] = timed_report(directory, fmt, root / f"report.{fmt}")
        check_text((root / "report.text").read_text(encoding="utf-8"), n)
        assert json.loads((root / "report.json").read_text())["fleet"]["spread"][0]["hosts"] == n
        cells = (
            n,
            t1 - t0,
            c1 - c0,
            t2 - t1,
            c2 - c1,
            size_mb,
            walls["text"],
            walls["json"],
            walls["html"],
            cpus["html"],
        )
        print(
            " ".join(f"{c:>{max(len(h), 6)}.2f}" if isinstance(c, float) else f"{c:>6}" for h, c in zip(head, cells)),
            flush=True,
        )
        if args.keep is None:
            shutil.rmtree(root)
        else:
            print(f"  kept: {directory}")


if __name__ == "__main__":
    main()
