#!/usr/bin/env python3
"""What the simulated disks cost the target: CPU per request, side by side
with a memory export in the same run.

The target runs in this process (``iolab._native.Target``), the client is
``iolab run --ioengine=nbd`` in a subprocess, so this process's CPU time
(getrusage, user + system) over a job is the target's. Each scenario runs
the same job against a memory export and a simulated one, alternately,
``--rounds`` times; the table gives the medians of:

- model µs/req: the time the target spent computing in the model
  (``model_cpu_ns`` / ``model_decided`` from its own counters; lock waits
  included, so an upper bound on the model's CPU) — the figure the issue
  bounds at < 2 µs;
- target CPU µs/req for the memory export and the simulated one, and
  their difference: what serving a simulated disk costs in all (holding
  replies on the timer included).

It first prints the models' compute per request on the virtual clock
(``cargo run --release -p iolab-target --example sim_cost``: no sockets,
no locks, least of 7 runs), the figure a loaded machine does not inflate.

    bench/sim_cost.py                 # 3 rounds, 3 s per job
    bench/sim_cost.py --rounds 1 --runtime 2 --markdown
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from iolab import _native

SCENARIOS = [
    # (name, sim export spec, job options)
    ("sim-ssd 4k randread QD32", "sim=sim-ssd,capacity=1g", ["--rw=randread", "--bs=4k", "--iodepth=32"]),
    ("sim-ssd 4k randwrite QD32", "sim=sim-ssd,capacity=1g", ["--rw=randwrite", "--bs=4k", "--iodepth=32"]),
    ("sim-hdd 4k randread QD32 (NCQ tickets)", "sim=sim-hdd", ["--rw=randread", "--bs=4k", "--iodepth=32"]),
    ("sim-hdd 64k read QD1 (look-ahead)", "sim=sim-hdd", ["--rw=read", "--bs=64k", "--iodepth=1"]),
]


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def job(sock: Path, export: str, opts: list[str], runtime_s: float) -> int:
    """Run one client job; the I/Os it completed."""
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", "--ioengine=nbd",
           f"--uri=nbd+unix:///{export}?socket={sock}", *opts, "--time_based",
           f"--runtime={int(runtime_s * 1000)}ms", "--name=x", "--output-format=fio-json"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=runtime_s + 60)
    if out.returncode != 0:
        raise SystemExit(f"iolab run failed ({out.returncode}): {out.stderr.strip()} {out.stdout[-500:]}")
    j = json.loads(out.stdout)["jobs"][0]
    return int(j["read"]["total_ios"] + j["write"]["total_ios"])


def sim_counters(t: _native.Target) -> dict[str, int]:
    snap = json.loads(t.stats_json(reset=True))
    for dev in snap["counters"]:
        if dev["export"] == "sim" and dev["path"].startswith("sim-"):
            return {c["name"]: c["value"] for c in dev["counters"]}
    raise SystemExit("the target published no sim counters")


def measure(spec: str, opts: list[str], rounds: int, runtime_s: float) -> dict[str, float]:
    model: list[float] = []
    mem: list[float] = []
    sim: list[float] = []
    with tempfile.TemporaryDirectory() as d:
        sock = Path(d) / "t.sock"
        t = _native.Target(exports=[spec, "mem=memory,size=64g"], listen=f"unix:{sock}")
        t.start()
        try:
            for _ in range(rounds):
                for export, into in (("mem", mem), ("sim", sim)):
                    sim_counters(t)
                    c0 = cpu_s()
                    n = job(sock, export, opts, runtime_s)
                    into.append((cpu_s() - c0) / max(n, 1) * 1e6)
                    if export == "sim":
                        c = sim_counters(t)
                        model.append(c["model_cpu_ns"] / max(c["model_decided"], 1) / 1e3)
        finally:
            t.shutdown()
            t.wait()
    m, s = statistics.median(mem), statistics.median(sim)
    return {"model_us": statistics.median(model), "mem_us": m, "sim_us": s, "extra_us": s - m}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=float, default=3.0, help="seconds per job")
    ap.add_argument("--markdown", action="store_true", help="a table for docs/performance.md")
    a = ap.parse_args()
    root = Path(__file__).resolve().parent.parent
    example = ["cargo", "run", "-q", "--release", "-p", "iolab-target", "--example", "sim_cost"]
    virt = subprocess.run(example, cwd=root, capture_output=True, text=True, check=True).stdout
    print("Virtual clock (model compute only):")
    print(virt)
    rows: list[tuple[str, dict[str, Any]]] = []
    for name, spec, opts in SCENARIOS:
        rows.append((name, measure(spec, opts, a.rounds, a.runtime)))
    if a.markdown:
        print("| scenario | model µs/req | target CPU µs/req, memory | target CPU µs/req, sim | difference µs/req |")
        print("|---|---|---|---|---|")
        for name, r in rows:
            print(f"| {name} | {r['model_us']:.2f} | {r['mem_us']:.1f} | {r['sim_us']:.1f} | {r['extra_us']:+.1f} |")
    else:
        for name, r in rows:
            print(f"{name:40s} model {r['model_us']:6.2f} us/req   target CPU: memory {r['mem_us']:6.1f}, "
                  f"sim {r['sim_us']:6.1f}, difference {r['extra_us']:+6.1f} us/req")  # fmt: skip


if __name__ == "__main__":
    main()
