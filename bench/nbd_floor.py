#!/usr/bin/env python3
"""The floor of an NBD server's CPU per request here, beside iolab's target.

Runs bench/nbd_floor.c (the least a server can do: a blocking recv, every
whole request answered, one writev per recv, zeros from a static page —
see its header) and ``iolab target`` (a 1 GiB memory export) under the same
fio nbd-engine clients as ``bench/compare_nbd.py`` (one job at QD 32; the
same batched by 16; two jobs at QD 16; QD 1), in alternating rounds, and
prints each server's CPU per request (the kernel's user + system time of
the whole server process over the requests fio completed), system calls
and context switches per request (``perf stat`` on the server, where perf
runs), and IOPS. Issue 25 part 4 asks for ≤ 2 µs per request with one job
and ≤ 1 µs batched or with two jobs: what the floor spends says whether
any server can on this host.

    bench/nbd_floor.py --rounds 3 --runtime 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_nbd import BATCHED, EXPORT_BYTES, fio_job, process_cpu_s, read_figures, server

HERE = Path(__file__).resolve().parent
#: name, block size, iodepth, jobs, extra fio options
SCENARIOS = {
    "server-4k": ("4k", 32, 1, ()),
    "server-4k-batched": ("4k", 32, 1, BATCHED),
    "server-4k-2jobs": ("4k", 16, 2, ()),
    "server-4k-qd1": ("4k", 1, 1, ()),
}


@contextmanager
def floor_server(binary: Path, sock: Path) -> Iterator[tuple[str, int]]:
    proc = subprocess.Popen([str(binary), str(sock), str(EXPORT_BYTES)])
    try:
        deadline = time.monotonic() + 10
        while not sock.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"nbd_floor did not start on {sock}")
            time.sleep(0.02)
        yield f"nbd+unix:///?socket={sock}", proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        sock.unlink(missing_ok=True)


def perf_counts(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes] | None:
    if not shutil.which("perf"):
        return None
    cmd = ["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter,context-switches", "-p", str(pid), "-o", str(out)]
    return subprocess.Popen([*cmd, "--", "sleep", str(seconds)], stderr=subprocess.DEVNULL)


def read_counts(p: subprocess.Popen[bytes] | None, out: Path) -> dict[str, float]:
    if p is None:
        return {}
    p.wait()
    counts = {}
    for line in out.read_text().splitlines():
        f = line.split(",")
        if len(f) > 2 and f[0].strip().isdigit():
            counts[f[2]] = float(f[0])
    return counts


def one(kind: str, binary: Path, tmp: Path, scen: str, runtime_s: int) -> dict[str, float]:
    bs, depth, jobs, extra = SCENARIOS[scen]
    sock = tmp / f"{kind}.sock"
    ctx = floor_server(binary, sock) if kind == "floor" else server("iolab", sock)
    with ctx as (uri, pid):
        cpu0 = process_cpu_s(pid)
        p = perf_counts(pid, runtime_s, tmp / "perf.txt")
        run = read_figures(fio_job(uri, bs, depth, runtime_s, jobs, extra))
        cpu = process_cpu_s(pid) - cpu0
        counts = read_counts(p, tmp / "perf.txt")
    fig = {"iops": run.iops, "cpu_us": cpu / run.ios * 1e6}
    # perf counts over its own `runtime_s`, fio's run over its own: per
    # request by fio's IOPS over the same span.
    per = run.iops * runtime_s
    for key, name in (("raw_syscalls:sys_enter", "syscalls"), ("context-switches", "switches")):
        if key in counts:
            fig[name] = counts[key] / per
    return fig


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=3, help="seconds per run")
    ap.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenarios")
    a = ap.parse_args()
    for tool in ("fio", "cc"):
        if not shutil.which(tool):
            raise SystemExit(f"nbd_floor.py needs {tool} on PATH")
    scens = a.only.split(",")
    bad = [s for s in scens if s not in SCENARIOS]
    if bad:
        raise SystemExit(f"unknown scenario {bad[0]!r}; choose from {', '.join(SCENARIOS)}")
    with tempfile.TemporaryDirectory(prefix="iolab-bench-floor-") as d:
        tmp = Path(d)
        binary = tmp / "nbd_floor"
        subprocess.run(["cc", "-O2", "-o", str(binary), str(HERE / "nbd_floor.c"), "-lpthread"], check=True)
        load0 = os.getloadavg()[0]
        rows = []
        for scen in scens:
            figs: dict[str, list[dict[str, float]]] = {"floor": [], "iolab": []}
            for r in range(a.rounds):
                order = ["floor", "iolab"] if r % 2 == 0 else ["iolab", "floor"]
                for kind in order:
                    f = one(kind, binary, tmp, scen, a.runtime)
                    figs[kind].append(f)
                    print(f"  {scen} round {r + 1}/{a.rounds} {kind:5s}: " + ", ".join(f"{k} {v:,.2f}" for k, v in f.items()),
                          file=sys.stderr)  # fmt: skip
            rows.append((scen, {k: {m: statistics.median(x[m] for x in v) for m in v[0]} for k, v in figs.items()}))
        load1 = os.getloadavg()[0]
    print(f"load average {load0:.1f} at the start, {load1:.1f} at the end; {a.rounds} alternating rounds of "
          f"{a.runtime} s, medians")  # fmt: skip
    print()
    print("| scenario | floor CPU/request (µs) | iolab CPU/request (µs) | floor syscalls / switches per request | "
          "iolab syscalls / switches per request | floor IOPS | iolab IOPS |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    for scen, m in rows:
        fl, io = m["floor"], m["iolab"]

        def sw(x: dict[str, float]) -> str:
            return f"{x['syscalls']:.2f} / {x['switches']:.2f}" if "syscalls" in x else "n/a"

        print(f"| {scen} | {fl['cpu_us']:.2f} | {io['cpu_us']:.2f} | {sw(fl)} | {sw(io)} | {fl['iops']:,.0f} | "
              f"{io['iops']:,.0f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
