"""``iolab find`` through NBD on a stack whose latency-load curve is known by
construction (docs/performance.md, "iolab find through NBD").

``iolab target --pacing buffers=1,cache=0,unit=128k`` over a memory export
behind a ``delay`` layer serves one request at a time, ``--delay`` each: a
closed loop at QD n reads in n x (the QD 1 latency). The true highest QD
meeting ``p50 < T`` is therefore floor(T / L1) (less one where whole),
with L1 the QD 1 median the search itself measured. Prints the search's
values in the order it ran them, its answer against that truth, and its
runs against a full sweep's at the same resolution.

    PYTHONPATH=python python bench/find_nbd.py --slo-ms 40.5 --delay 1ms
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _wait_for(sock: Path, proc: subprocess.Popen[bytes], deadline_s: float = 30.0) -> None:
    end = time.monotonic() + deadline_s
    while not sock.exists():
        if proc.poll() is not None or time.monotonic() > end:
            raise SystemExit(f"the target did not start (exit {proc.poll()})")
        time.sleep(0.05)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slo-ms", type=float, default=40.5, help="the p50 ceiling, ms")
    ap.add_argument("--delay", default="1ms", help="the delay layer's read latency")
    ap.add_argument("--runtime", default="500ms", help="each run's runtime")
    ap.add_argument("--limit", default="128")
    ap.add_argument("--repeats", default="2")
    ap.add_argument("--max-repeats", default="4")
    args = ap.parse_args()
    iolab = [sys.executable, "-m", "iolab.cli.main"]
    with tempfile.TemporaryDirectory() as tmp:
        sock = Path(tmp) / "b.sock"
        target = subprocess.Popen([*iolab, "target", "--unix", str(sock), "--pacing", "buffers=1,cache=0,unit=128k",
                                   "--export", f"m=memory,size=4m+delay,read={args.delay}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            _wait_for(sock, target)
            t0 = time.monotonic()
            r = subprocess.run(
                [*iolab, "find", "--slo", f"p50<{args.slo_ms}ms", "--limit", args.limit, "--resolution", "1",
                 "--repeats", args.repeats, "--max-repeats", args.max_repeats, "--results", tmp,
                 "--name=bench", "--ioengine=nbd", f"--uri=nbd+unix:///m?socket={sock}", "--rw=randread",
                 "--bs=4k", f"--runtime={args.runtime}", "--time_based"],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            wall = time.monotonic() - t0
        finally:
            target.terminate()
            target.wait(timeout=30)
        if r.returncode != 0:
            raise SystemExit(r.stderr)
        found = json.loads((Path(tmp) / "find-bench-iodepth" / "find.json").read_text())
    evs = found["evaluations"]
    print("QD        " + " ".join(f"{e['value']:>7}" for e in evs))
    print("p50 (ms)  " + " ".join(f"{e['clauses'][0]['value'] / 1e6:>7.3f}" for e in evs))
    print("repeats   " + " ".join(f"{e['repeats']:>7}" for e in evs))
    l1 = next(e["clauses"][0]["value"] for e in evs if e["value"] == 1) / 1e6
    ratio = args.slo_ms / l1
    truth = math.ceil(ratio) - 1
    print(*found["statement"], sep="\n")
    best = found["best"]
    print(f"truth: QD 1 at {l1:.3f} ms, so QD n at n x {l1:.3f} ms: highest QD meeting p50<{args.slo_ms}ms is {truth}")
    err = abs(best - truth) / truth * 100 if best else float("nan")
    share = found["runs"] / found["full_sweep_runs"]
    print(f"found {best} ({err:.1f} % from the truth) in {found['runs']} runs, "
          f"{share:.2f} of a full sweep's {found['full_sweep_runs']}; {wall:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
