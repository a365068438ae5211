#!/usr/bin/env python3
"""What being scraped costs the engine: ``iolab run --metrics`` scraped every
second vs plain ``iolab run``, the same null-engine job, interleaved rounds
(the order flips every round, so neither always runs second on a loaded
machine).

The endpoint adds to every progress poll (4 a second, or one per
interval) the totals of every job (I/O and byte counters, the total-latency
histogram encoded), and per scrape the text of 2 x 257 buckets per job.
Issue 28 asks that this take ≤ 2 % of the IOPS of a null-engine run with a
scrape every second. Prints the median IOPS of each, every round, the
ratio of the medians and the median of the rounds' ratios; then the CPU
one poll and one scrape's text take (a bound that holds where the IOPS of
a loaded machine vary more than the 2 % asked about).

    bench/metrics_overhead.py --rounds 7 --runtime 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

JOB = ["--name=r", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g", "--time_based"]


def iolab(*args: str) -> list[str]:
    return [sys.executable, "-m", "iolab.cli.main", *args]


def _iops(stdout: str) -> float:
    return float(json.loads(stdout)["summary"]["jobs"][0]["merged"]["read"]["iops"])


def plain(runtime: int) -> float:
    cmd = iolab("run", *JOB, f"--runtime={runtime}", "--output-format=json")
    return _iops(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def scraped(runtime: int) -> tuple[float, int]:
    """IOPS of a run with --metrics, scraped every second; and the scrapes made."""
    cmd = iolab("run", *JOB, f"--runtime={runtime}", "--output-format=json", "--metrics", "127.0.0.1:0")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None and proc.stdout is not None
    line = proc.stderr.readline()
    while line and "metrics on http://" not in line:  # notes first, if any
        line = proc.stderr.readline()
    if not line:
        sys.exit(f"iolab run --metrics said no address ({proc.wait()})")
    url = line.split("metrics on ", 1)[1].strip()
    done = threading.Event()
    scrapes = 0

    def scrape() -> None:
        nonlocal scrapes
        while not done.wait(1.0):
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    r.read()
                scrapes += 1
            except OSError:
                return  # the run ended

    t = threading.Thread(target=scrape, daemon=True)
    t.start()
    out, err = proc.communicate()
    done.set()
    t.join()
    if proc.returncode != 0:
        sys.exit(f"iolab run --metrics failed ({proc.returncode}): {err[-2000:]}")
    return _iops(out), scrapes


def cpu_costs(runtime: int, repeat: int = 200) -> None:
    """CPU per poll (with the totals) and per scrape's text, in this process:
    a bound on what --metrics can take that a loaded machine's IOPS noise
    cannot hide."""
    from iolab import _native
    from iolab.run.metrics import engine_metrics_text

    opts = [("ioengine", "null"), ("rw", "randread"), ("bs", "4k"), ("size", "1g"), ("filename", "x")]
    run = _native.Run([("r", [*opts, ("time_based", None), ("runtime", f"{runtime}s")])])
    run.start(None)
    while not run.finished():
        run.poll(0.25)
    progress = run.poll(0.0)
    t0 = time.process_time()
    for _ in range(repeat):
        run.poll(0.0)
    poll_ms = (time.process_time() - t0) / repeat * 1e3
    run.wait()
    rows = [("h", "r", progress["totals"][0])]
    t0 = time.process_time()
    for _ in range(repeat):
        text = engine_metrics_text(rows)
    scrape_ms = (time.process_time() - t0) / repeat * 1e3
    print(f"  CPU per poll (1 job, totals included): {poll_ms:.3f} ms; 4 polls/s = {poll_ms * 4 / 10:.3f} % of a core")
    print(
        f"  CPU per scrape's text ({len(text)} bytes): {scrape_ms:.3f} ms; 1 scrape/s = {scrape_ms / 10:.3f} % of a core"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--runtime", type=int, default=5, help="seconds per run")
    args = ap.parse_args()
    a: list[float] = []
    b: list[float] = []
    scrapes: list[int] = []
    for i in range(args.rounds):
        for which in "ab" if i % 2 == 0 else "ba":
            if which == "a":
                a.append(plain(args.runtime))
            else:
                iops, n = scraped(args.runtime)
                b.append(iops)
                scrapes.append(n)
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"rounds: {args.rounds} x {args.runtime} s each, interleaved, null engine, randread 4k, QD 1")
    print(
        f"  plain iolab run:             median {ma / 1e3:.1f} kIOPS  (all: {', '.join(f'{x / 1e3:.0f}' for x in a)})"
    )
    print(
        f"  --metrics, scraped every 1 s: median {mb / 1e3:.1f} kIOPS  (all: {', '.join(f'{x / 1e3:.0f}' for x in b)})"
    )
    print(f"  scrapes per run: {', '.join(str(n) for n in scrapes)}")
    print(f"  ratio of medians (scraped / plain): {mb / ma:.4f}  ({(mb / ma - 1) * 100:+.2f} %)")
    paired = statistics.median(y / x for x, y in zip(a, b))
    print(f"  median of the rounds' ratios (each round's pair): {paired:.4f}  ({(paired - 1) * 100:+.2f} %)")
    cpu_costs(args.runtime)


if __name__ == "__main__":
    main()
