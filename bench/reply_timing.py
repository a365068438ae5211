#!/usr/bin/env python3
"""Reply timing under load: the client's figure at QD 1 against the model's
service time plus the loopback round trip measured in the same run.

Serves the RAID lab's simulated array (``iolab lab raid``'s lab 1 stack:
RAID 5 of six sim-hdd drives under the controller cache) on a private Unix
socket, reads it 64 KiB sequentially at QD 1 with iolab's nbd client, and
after each such run measures the round trip the same client pays against
an export that does no work (a null device held for the model's service
time: :func:`iolab.lab.rtt.measure_rtt`, same socket kind, engine, block
size and real-time setting). Prints per request, in µs:

- ``model svc``: the stack's service time on a virtual clock (no host at
  all), its client paying the measured round trip;
- ``RTT``: the measured round trip (the probe's client time less the
  target's own hold of each request);
- ``model+RTT``: the model's time per request with that round trip;
- ``client``: what the client saw against the simulated array, runtime /
  I/Os (1 / IOPS at QD 1), and its ratio to ``model+RTT`` — within 5 % is
  issue 25's bound;
- ``service``: the target's own record — reply written minus request read,
  less how late the reply went out after its model time (``hold_late_ns``);
- ``late mean/p50/p99``: how late replies went out after their model time
  (inside ``client``: a host that wakes the reply timer late shows here).

At each load (0, 1 and 2 CPU-bound busy loops beside it, like
``shared/tools/under-load``) the variants run interleaved (the simulated
array, then the probe), ``--rounds`` times each, and the medians are
printed (one run's figure is noise on a shared machine). Variants:
``default`` (the server as configured) and, with ``--realtime``,
``realtime`` (the target's serving threads under SCHED_FIFO) and
``rt+client`` (the client's worker too: the job option ``realtime=1``).

    PYTHONPATH=python python bench/reply_timing.py               # loads 0 1 2, 5 rounds
    PYTHONPATH=python python bench/reply_timing.py --loads 0 --rounds 3 --seconds 1
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
from typing import Any

from iolab import _native
from iolab.lab.raid import MEMBERS, export_spec, model_figures, server_hold
from iolab.lab.rtt import measure_rtt, serve_and_run
from iolab.lab.workbook import LAB1, MODEL_RTT_NS, Test

MIB = 1 << 20
TEST = Test(LAB1, "read", "64k", 1)
#: Issue 25's bound: the client within this share of the model's service time plus the measured round trip.
BOUND = 0.05


def busy_loops(n: int) -> list[subprocess.Popen[bytes]]:
    """``n`` CPU-bound loops at normal priority (as shared/tools/under-load)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


VARIANTS = ("default", "realtime", "rt+client")


def one_run(variant: str, seconds: float, spec: str, size_bytes: int, hold_ns: float) -> dict[str, float]:
    """The simulated array's run, then the round-trip probe's, in one variant."""
    got = sim_run(variant, seconds, spec, size_bytes)
    rt = variant != "default"
    probe = measure_rtt(TEST, hold_ns, seconds, realtime_target=rt, realtime_client=variant == "rt+client")
    return {**got, "rtt": probe["rtt_ns"] / 1e3}


def sim_run(variant: str, seconds: float, spec: str, size_bytes: int) -> dict[str, float]:
    rt = variant != "default"
    summary, record = serve_and_run(
        spec, TEST, seconds, size_bytes, realtime_target=rt, realtime_client=variant == "rt+client"
    )
    server = server_hold(record, TEST)
    client_us = 1e6 / float(summary["jobs"][0]["merged"]["read"]["iops"])
    return {
        "service": server["service_ns_mean"] / 1e3,
        "late_p50": server["late_ns_p50"] / 1e3,
        "late_p99": server["late_ns_p99"] / 1e3,
        "late_mean": server["hold_late_ns_mean"] / 1e3,
        "client": client_us,
        "lost": client_us - server["lat_ns_mean"] / 1e3,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loads", type=int, nargs="+", default=[0, 1, 2], help="busy loops beside the run")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0, help="runtime of each run")
    ap.add_argument("--realtime", action="store_true", help="also run the target with SCHED_FIFO threads")
    ap.add_argument("--json", action="store_true", help="print the medians as JSON")
    a = ap.parse_args()
    spec = export_spec("r5", LAB1, "sim-hdd(wcache={wcache},seed={i})")
    probe = _native.Target(None, [spec], listen="127.0.0.1:0")
    size = int(probe.exports()[0][1])
    model_us = 1e6 / model_figures(TEST, spec, size)["iops"]
    hold_ns = model_us * 1e3 - MODEL_RTT_NS
    variants = list(VARIANTS) if a.realtime else ["default"]
    out: list[dict[str, Any]] = []
    print(f"64 KiB seq read QD 1, RAID 5 of {MEMBERS} sim-hdd (lab 1); model {model_us:.0f} µs per I/O")
    print(f"with the {MODEL_RTT_NS / 1e3:.0f} µs round trip it assumes; medians of {a.rounds} interleaved runs,")
    print(f"µs per I/O; ok: client within {BOUND:.0%} of model svc + RTT")
    head = ("busy loops", "variant", "load avg", "model svc", "RTT", "model+RTT", "client", "vs", "ok")
    tail = ("service", "late mean", "late p50", "late p99")
    print(" ".join(f"{h:>10}" for h in head + tail))
    for load in a.loads:
        loops = busy_loops(load)
        try:
            runs: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
            for i in range(a.rounds):
                order = variants if i % 2 == 0 else variants[::-1]
                for v in order:
                    runs[v].append(one_run(v, a.seconds, spec, size, hold_ns))
            loadavg = os.getloadavg()[0]
        finally:
            for p in loops:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
        for v in variants:
            med = {k: statistics.median(r[k] for r in runs[v]) for k in runs[v][0]}
            with_rtt_us = 1e6 / model_figures(TEST, spec, size, med["rtt"] * 1e3)["iops"]
            svc_us = with_rtt_us - med["rtt"]
            ratio = med["client"] / with_rtt_us
            ok = abs(ratio - 1.0) <= BOUND
            out.append(
                {
                    "busy_loops": load,
                    "variant": v,
                    "loadavg_1min": loadavg,
                    "model_us": model_us,
                    "model_service_us": svc_us,
                    "model_with_rtt_us": with_rtt_us,
                    "client_vs_model_with_rtt": ratio,
                    "within_bound": ok,
                    **{f"{k}_us": x for k, x in med.items()},
                }
            )
            cells = (load, v, f"{loadavg:.1f}", f"{svc_us:.0f}", f"{med['rtt']:.0f}", f"{with_rtt_us:.0f}")
            cells += (f"{med['client']:.0f}", f"{ratio - 1.0:+.1%}", "yes" if ok else "NO")
            cells += (f"{med['service']:.0f}", f"{med['late_mean']:.1f}", f"{med['late_p50']:.1f}")
            cells += (f"{med['late_p99']:.1f}",)
            print(" ".join(f"{c:>10}" for c in cells))
    if a.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
