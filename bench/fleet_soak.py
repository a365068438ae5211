#!/usr/bin/env python3
"""A shrunk long fleet run: does any rank's memory grow with the run's length?

    PYTHONPATH=python python bench/fleet_soak.py OUT_DIR [--ranks 4] [--runtime 60] [--interval 10ms] [--rounds 2]

Each round runs the same null-engine fleet job twice, alternating: as
today (intervals kept in each rank's result until the end) and with
``--stream-intervals``; 10 ms intervals stand in for 1 s ones (60 s =
6,000 intervals = 100 minutes of a real run's). While each runs, every
rank's resident memory (``/proc/PID/status`` VmRSS, and VmHWM for the peak)
is sampled every 0.2 s. Printed per run and rank: RSS at 10 %, 50 % and 100 %
of the measured run (the last sample before the run's end) and their
ratio, and each rank's peak (the end-of-run merge included on rank 0);
the medians over the rounds. For the streamed runs it also checks the
exact merge: every interval of the fleet's ``intervals.hlog`` is the union
of the ranks' logs' (I/Os summed, histograms merged bucket for bucket).

The watchdog's deadline is 60 s: a loaded 2-core machine stalls ranks for seconds.
A measurement, not a test: issue 30's bound (memory after 100 % equals
memory after 10 % within 10 %) is printed beside the figures. The load
average is printed with every round (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

from iolab import _native
from iolab.results.intervals import HLOG_FILE

JOB = ["--name=soak", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g", "--time_based"]


def _rank_pids(spool: Path) -> dict[int, int]:
    """rank → pid of the ranks of the fleet whose spool is ``spool``."""
    out = {}
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes()
            if str(spool).encode() not in cmd or b"iolab.cli.main\0run" not in cmd:
                continue
            env = (p / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for e in env:
            if e.startswith(b"OMPI_COMM_WORLD_RANK="):
                out[int(e.split(b"=", 1)[1])] = int(p.name)
    return out


def _kib(pid: int, key: str) -> Optional[int]:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def one_run(
    out: Path, ranks: int, runtime_s: int, interval: str, stream: bool, rate_iops: int, numjobs: int
) -> dict[str, Any]:
    name = "stream" if stream else "embedded"
    spool, results = out / f"spool-{name}", out / f"res-{name}"
    for d in (spool, results):
        shutil.rmtree(d, ignore_errors=True)
    cmd = [sys.executable, "-m", "iolab.cli.main", "fleet", "-n", str(ranks), "--deadline", "60s", "run", *JOB, f"--runtime={runtime_s}",
           "--interval", interval, f"--numjobs={numjobs}", f"--rate_iops={rate_iops}", "--results", str(results),
           f"--fleet-spool={spool}"] + (["--stream-intervals"] if stream else [])  # fmt: skip
    load = os.getloadavg()[0]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples: list[tuple[float, dict[int, int]]] = []  # (s since the measured start, rank → RSS KiB)
    peaks: dict[int, int] = {}
    t0 = None  # the measured start: rank 0's first snapshot spooled (1.15 intervals after it)
    while proc.poll() is None:
        if t0 is None and any(p.stat().st_size for p in spool.glob("*/rank-0.jsonl")):
            t0 = time.monotonic()
        pids = _rank_pids(spool)
        if t0 is not None and len(pids) == ranks:
            rss = {r: k for r, pid in pids.items() if (k := _kib(pid, "VmRSS")) is not None}
            for r, pid in pids.items():
                hwm = _kib(pid, "VmHWM")
                if hwm is not None:
                    peaks[r] = max(peaks.get(r, 0), hwm)
            samples.append((time.monotonic() - t0, rss))
        time.sleep(0.2)
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"fleet run failed ({proc.returncode}): {err[-2000:]}")

    def at(fraction: float) -> dict[int, int]:
        before = [s for t, s in samples if t <= fraction * runtime_s and len(s) == ranks]
        return before[-1] if before else {}

    row = {"mode": name, "load": load, "at10": at(0.1), "at50": at(0.5), "at100": at(0.98), "peak": peaks}
    if stream:
        row["exact"] = _exact(
            next(results.glob("run-*")), sorted(spool.glob("*/rank-*.hlog"), key=lambda p: int(p.stem.split("-")[1]))
        )
        row["log_bytes"] = sum(p.stat().st_size for p in results.glob(f"run-*/{HLOG_FILE}"))
    row["result_bytes"] = sum(p.stat().st_size for p in results.glob("run-*/result.json"))
    row["spool_bytes"] = sum(p.stat().st_size for p in spool.glob("*/*"))
    shutil.rmtree(spool, ignore_errors=True)
    shutil.rmtree(results, ignore_errors=True)
    return row


def _records(log: Path) -> dict[tuple[int, int], dict[str, Any]]:
    return {(e["job"], e["index"]): e for e in _native.IntervalLog(log) if "index" in e and e["worker"] is None}


def _shifts(rank_logs: list[Path], offsets_ns: dict[int, int]) -> dict[int, int]:
    """Each rank's shift in whole intervals (job 0), as rank 0 aligns series:
    its start on rank 0's clock after the first rank's, to the nearest interval."""
    starts, interval = {}, 1
    for r, p in enumerate(rank_logs):
        log = _native.IntervalLog(p)
        first = next(e for e in log if "index" in e)
        assert log.header is not None
        base, interval = log.header
        starts[r] = base + first["offset_ns"] - offsets_ns.get(r, 0)
    t0 = min(starts.values())
    return {r: (t - t0 + interval // 2) // interval for r, t in starts.items()}


def _exact(run_dir: Path, rank_logs: list[Path]) -> str:
    clock = json.loads((run_dir / "fleet.json").read_text())["clock"]
    shift = _shifts(rank_logs, {int(x["rank"]): int(x["offset_ns"]) for x in clock["ranks"]})
    fleet, ranks = _records(run_dir / HLOG_FILE), [_records(p) for p in rank_logs]
    bad = 0
    for (job, i), e in fleet.items():
        parts = [r[(job, i - shift[k])] for k, r in enumerate(ranks) if (job, i - shift[k]) in r]
        for d in range(len(e["ios"])):
            union = _native.hist_merge([p["lat_ns"][d] for p in parts])
            if e["ios"][d] != sum(p["ios"][d] for p in parts) or _native.hist_stats(
                e["lat_ns"][d], [99.0]
            ) != _native.hist_stats(union, [99.0]):
                bad += 1
    ios = sum(e["ios"][0] for e in fleet.values())
    rank_ios = sum(e["ios"][0] for r in ranks for e in r.values())
    shifted = {r: s for r, s in shift.items() if s}
    return (
        f"{len(fleet)} intervals, {bad} differ from the union of the ranks' (shifted by {shifted or 'none'}); "
        f"I/Os {ios} = ranks' {rank_ios}: {ios == rank_ios}"
    )


def _mb(kib: Optional[int]) -> str:
    return "-" if kib is None else f"{kib / 1024:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--runtime", type=int, default=60)
    ap.add_argument("--interval", default="10ms")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--rate-iops", type=int, default=20000, help="each worker's rate_iops")
    ap.add_argument("--numjobs", type=int, default=2, help="workers per rank")
    ap.add_argument("--modes", default="embedded,stream", help="which runs, in the first round's order")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(a.rounds):
        modes = [m == "stream" for m in a.modes.split(",")]
        for stream in modes if i % 2 == 0 else modes[::-1]:
            row = one_run(a.out, a.ranks, a.runtime, a.interval, stream, a.rate_iops, a.numjobs)
            rows.append(row)
            print(f"round {i + 1} {row['mode']:<8} load {row['load']:.1f}")
            for r in sorted(row["at100"]):
                a10, a50, a100 = row["at10"].get(r), row["at50"].get(r), row["at100"][r]
                ratio = f"{a100 / a10:.3f}" if a10 else "-"
                print(f"  rank {r}: RSS at 10 % {_mb(a10)} MB, 50 % {_mb(a50)} MB, 100 % {_mb(a100)} MB (x{ratio}), "
                      f"peak {_mb(row['peak'].get(r))} MB")  # fmt: skip
            sizes = f"result.json {row['result_bytes'] / 1e6:.1f} MB, spools {row['spool_bytes'] / 1e6:.1f} MB"
            if "exact" in row:
                sizes += f", fleet intervals.hlog {row['log_bytes'] / 1e6:.1f} MB"
                print(f"  exact merge: {row['exact']}")
            print(f"  {sizes}")
    print(f"\nmedians over {a.rounds} rounds ({a.ranks} ranks, {a.runtime} s of {a.interval} intervals; bound: x1.10):")
    for mode in a.modes.split(","):
        mine = [r for r in rows if r["mode"] == mode]
        for rank in range(a.ranks):
            ratio = [r["at100"][rank] / r["at10"][rank] for r in mine if r["at10"].get(rank) and rank in r["at100"]]
            peak = [r["peak"][rank] for r in mine if rank in r["peak"]]
            print(f"  {mode:<8} rank {rank}: RSS 100 %/10 % x{statistics.median(ratio):.3f}, "
                  f"peak {statistics.median(peak) / 1024:.1f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
