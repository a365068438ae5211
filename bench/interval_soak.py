"""A synthetic long run in bounded memory (issue 30's must-show).

    .venv/bin/python bench/interval_soak.py OUT_DIR [WORKERS] [HOURS] [INTERVAL_MS] [REAL_RUN_S]

1. crates/iolab-core/examples/interval_soak streams WORKERS workers'
   intervals (one job) for HOURS of simulated time through the interval
   stream a run uses (each job's workers merged as they arrive) into
   OUT_DIR/run/intervals.hlog, printing its resident memory at 10 min, 1 h
   and the end, and writes the run result (engine_result.json: workers' series empty).
2. The end of the run in Python, in a process of its own (this script with
   ``--end-of-run``): what ``iolab run --stream-intervals --results`` does
   after the engine returns — the summary (``iolab.run.local.summarize_result``:
   one pass over the log, the series written to ``timeseries.parquet``),
   the fio-style text output, the run directory written — timed with its
   peak resident memory.
3. The run directory's sizes, then ``iolab report --window``, ``iolab report``
   (text and HTML) and ``iolab compare`` of it against a hard-linked copy
   (a second run directory, same bytes), each timed with its peak memory.
4. With REAL_RUN_S > 0: a real ``iolab run --stream-intervals`` of WORKERS
   null-engine workers for REAL_RUN_S seconds at 10 ms intervals, the whole
   process's peak memory (engine, streaming, end of run).

The check printed is exact: the summary's I/Os equal WORKERS x intervals x
the example's I/Os per interval. A measurement, not a test: the bounds of
issue 30 (RSS <= 200 MB, result + log <= 1 GB, report <= 30 s) are printed
beside the figures, not asserted.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def end_of_run(run_dir: Path, workers: int) -> None:
    """``--end-of-run``: what ``iolab run`` does once the engine returned (see the module docs)."""
    from iolab.cli.render import run_output
    from iolab.run.local import RunOutput, summarize_result

    t = time.perf_counter()
    result_json = (run_dir / "engine_result.json").read_text()
    summary_json = summarize_result(result_json, run_dir / HLOG_FILE)
    out = RunOutput(result_json, summary_json, False, (), series_dir=run_dir)
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        run_output(out, ["text"], None)
    meta = {"id": run_dir.name, "kind": "run", "interrupted": False}
    doc = write_run_dir(run_dir, result_json, summary_json, run_meta=meta, config={"jobs": []}, host={})
    wall = time.perf_counter() - t
    intervals = doc["summary"]["series_file"]["groups"][0]
    ios = doc["summary"]["groups"][0]["read"]["ios"]
    assert ios == workers * intervals * IOS_PER_INTERVAL, (ios, workers, intervals)
    print(f"  {wall:.1f} s; {intervals} intervals, I/Os {ios} (= workers x intervals x {IOS_PER_INTERVAL})")


def main(out: Path, workers: int, hours: float, interval_ms: int, real_run_s: int) -> None:
    run_dir = out / "run"
    if not (run_dir / HLOG_FILE).is_file():
        if not EXAMPLE.is_file():
            subprocess.run(
                ["cargo", "build", "--release", "-p", "iolab-core", "--example", "interval_soak"], cwd=ROOT, check=True
            )
        wall, peak, text = timed_child([str(EXAMPLE), str(run_dir), str(workers), str(hours), str(interval_ms)])
        print(text, end="")
        print(f"stream: {wall:.1f} s wall, peak RSS {peak / 1024:.1f} MiB (bound 200 MB)")
    wall, peak, text = timed_child([sys.executable, __file__, "--end-of-run", str(run_dir), str(workers)])
    print(f"end of run in Python (summary, series file, text output, run directory): {wall:.1f} s wall, "
          f"peak RSS {peak / 1024:.1f} MiB (bound 200 MB)")  # fmt: skip
    print(text, end="")
    sizes = {p.name: p.stat().st_size for p in run_dir.iterdir() if p.name != "engine_result.json"}
    total = sum(sizes.values())
    print(f"on disk: {sizes}; total {total / 1e6:.1f} MB (bound 1000 MB)")
    for name in (HLOG_FILE, "timeseries.parquet", "result.json"):
        print(f"  {name}: {sizes[name] / (workers * hours) / 1e3:.1f} kB per worker-hour")
    cli = [sys.executable, "-m", "iolab.cli.main"]
    copy = out / "run-copy"
    if not copy.exists():
        subprocess.run(["cp", "-al", str(run_dir), str(copy)], check=True)
    steps = {
        "iolab report --window 10m..40m": ["report", str(run_dir), "--window", "10m..40m"],
        "iolab report": ["report", str(run_dir)],
        "iolab report -o report.html": ["report", str(run_dir), "-o", str(out / "report.html")],
        "iolab compare RUN COPY": ["compare", str(run_dir), str(copy)],
    }
    for label, args in steps.items():
        wall, peak, _text = timed_child([*cli, *args])
        print(f"{label}: {wall:.1f} s, peak RSS {peak / 1024:.1f} MiB (bound 30 s)")
    print(f"  report.html: {(out / 'report.html').stat().st_size / 1e6:.1f} MB")
    if real_run_s > 0:
        real = out / "real"
        job = ["--name=soak", "--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g", "--time_based",
               f"--runtime={real_run_s}s", f"--numjobs={workers}", "--rate_iops=1000", "--interval", "10ms"]  # fmt: skip
        wall, peak, _text = timed_child([*cli, "run", *job, "--results", str(real), "--stream-intervals"])
        print(f"real iolab run, {workers} workers x {real_run_s} s at 10 ms intervals, streamed: {wall:.1f} s, "
              f"whole-process peak RSS {peak / 1024:.1f} MiB (bound 200 MB)")  # fmt: skip


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    os.environ.setdefault("PYTHONPATH", str(ROOT / "python"))
    if args[0] == "--end-of-run":
        end_of_run(Path(args[1]), int(args[2]))
        raise SystemExit(0)
    main(
        Path(args[0]),
        int(args[1]) if len(args) > 1 else 64,
        float(args[2]) if len(args) > 2 else 24.0,
        int(args[3]) if len(args) > 3 else 1000,
        int(args[4]) if len(args) > 4 else 0,
    )
