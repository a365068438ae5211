"""A synthetic long run in bounded memory (issue 30's must-show).

    .venv/bin/python bench/interval_soak.py OUT_DIR [WORKERS] [HOURS] [INTERVAL_MS]

1. crates/iolab-core/examples/interval_soak streams WORKERS workers'
   intervals (one job) for HOURS of simulated time through the interval
   stream a run uses (each job's workers merged as they arrive) into
   OUT_DIR/run/intervals.hlog, printing its resident memory at 10 min, 1 h
   and the end, and writes the run result (engine_result.json: workers' series empty).
2. Here: the summary from the log (``summarize_with_log``, one pass), the
   run directory written (result.json + intervals.hlog), their sizes, and
   ``iolab report --window`` and ``iolab report`` of it, each timed with its
   peak resident memory.

The check printed is exact: the summary's I/Os equal WORKERS x intervals x
the example's I/Os per interval. A measurement, not a test: the bounds of
issue 30 (RSS <= 200 MB, result + log <= 1 GB, report <= 30 s) are printed
beside the figures, not asserted.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iolab import _native
from iolab.results.intervals import HLOG_FILE
from iolab.results.rundir import write_run_dir

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "target" / "release" / "examples" / "interval_soak"
IOS_PER_INTERVAL = 4000  # the example's


def timed_child(cmd: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (KiB) and stdout of ``cmd``. The peak is GNU
    time's (``/usr/bin/time -f %M``): a child's own ``ru_maxrss`` starts at
    its parent's, as the fork copied it."""
    with tempfile.NamedTemporaryFile("r") as rss:
        t = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-o", rss.name, "-f", "%M", *cmd], capture_output=True, text=True)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return wall, int(rss.read().split()[-1]), proc.stdout


def main(out: Path, workers: int, hours: float, interval_ms: int) -> None:
    run_dir = out / "run"
    if not (run_dir / HLOG_FILE).is_file():
        if not EXAMPLE.is_file():
            subprocess.run(
                ["cargo", "build", "--release", "-p", "iolab-core", "--example", "interval_soak"], cwd=ROOT, check=True
            )
        wall, peak, text = timed_child([str(EXAMPLE), str(run_dir), str(workers), str(hours), str(interval_ms)])
        print(text, end="")
        print(f"stream: {wall:.1f} s wall, peak RSS {peak / 1024:.1f} MiB (bound 200 MB)")
    result_json = (run_dir / "engine_result.json").read_text()
    t = time.perf_counter()
    summary_json = _native.summarize_with_log(result_json, run_dir / HLOG_FILE)
    summarize_s = time.perf_counter() - t
    summary = json.loads(summary_json)
    intervals = len(summary["jobs"][0]["series"])
    ios = summary["groups"][0]["read"]["ios"]
    assert ios == workers * intervals * IOS_PER_INTERVAL, (ios, workers, intervals)
    print(
        f"summary from the log: {summarize_s:.1f} s, {intervals} intervals, I/Os {ios} (= workers x intervals x "
        f"{IOS_PER_INTERVAL}), p99 {summary['groups'][0]['read']['lat']['percentiles']}"[:200]
    )
    meta = {"id": "run", "kind": "run", "interrupted": False}
    write_run_dir(run_dir, result_json, summary_json, run_meta=meta, config={"jobs": []}, host={})
    print(f"summary step peak RSS (this process): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MiB")
    del summary, summary_json, result_json
    sizes = {p.name: p.stat().st_size for p in run_dir.iterdir()}
    total = sum(sizes.values())
    print(f"on disk: {sizes}; total {total / 1e6:.1f} MB (bound 1000 MB)")
    per_worker_hour = sizes[HLOG_FILE] / (workers * hours)
    print(f"interval log: {per_worker_hour / 1e3:.1f} kB per worker-hour (one job's workers merged)")
    cli = [sys.executable, "-m", "iolab.cli.main", "report", str(run_dir)]
    wall, peak, text = timed_child([*cli, "--window", "10m..40m"])
    print(f"iolab report --window 10m..40m: {wall:.1f} s, peak RSS {peak / 1024:.1f} MiB (bound 30 s)")
    print(text, end="")
    wall, peak, text = timed_child(cli)
    print(f"iolab report: {wall:.1f} s, peak RSS {peak / 1024:.1f} MiB (bound 30 s)")


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    os.environ.setdefault("PYTHONPATH", str(ROOT / "python"))
    main(
        Path(args[0]),
        int(args[1]) if len(args) > 1 else 64,
        float(args[2]) if len(args) > 2 else 24.0,
        int(args[3]) if len(args) > 3 else 1000,
    )
