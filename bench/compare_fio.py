#!/usr/bin/env python3
"""Side-by-side benchmark: iolab vs fio on the same jobs, in the same run.

Each scenario runs fio and iolab alternately (the order flips every round,
so neither always runs on a warmer cache), ``--rounds`` times each, and
reports the median of each tool and their ratio. CPU per I/O is the
kernel's accounting of each whole process (user + system from wait4's
rusage, so iolab's Python start-up counts against it) divided by the I/Os
the tool reports.

Both tools are asked for fio's JSON layout (iolab: ``--output-format
fio-json``), so one parser reads both.

    bench/compare_fio.py                      # all scenarios, 5 rounds
    bench/compare_fio.py --only null --rounds 3 --runtime 3
    bench/compare_fio.py --markdown >> docs/performance.md

Scenarios: ``null`` (tool overhead: null engine, 4 KiB randread, QD 32,
one worker), ``uring`` (io_uring, O_DIRECT, 4 KiB randread, QD 32, 1 GiB
file), ``truth-psync`` / ``truth-uring`` (IOPS and clat p50/p99 agreement),
``libaio-qd1`` / ``libaio-qd32`` / ``sync`` (the same for those engines),
``libaio-cached`` (buffered libaio on cached data: CPU per I/O with no device),
``truth-buffered`` (buffered psync randread of a 64 MiB region: the device each
pass, as fio measures it, not the page cache).
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
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Scenario:
    name: str
    what: str
    args: list[str]  # fio-style options, shared by both tools
    fio_extra: list[str] = field(default_factory=list)
    needs_file: bool = False


def scenarios(runtime_s: int, data: Path) -> list[Scenario]:
    common = [f"--runtime={runtime_s}", "--time_based", "--bs=4k"]
    f = f"--filename={data}"
    return [
        Scenario(
            "null",
            "null engine, 4 KiB randread, QD 32, 1 worker",
            ["--name=null", "--ioengine=null", "--rw=randread", "--iodepth=32", "--size=1g", *common],
        ),
        Scenario(
            "uring",
            "io_uring, O_DIRECT, 4 KiB randread, QD 32, 1 GiB file",
            [
                "--name=uring",
                "--ioengine=io_uring",
                "--direct=1",
                "--rw=randread",
                "--iodepth=32",
                "--size=1g",
                f,
                *common,
            ],
            needs_file=True,
        ),
        Scenario(
            "uring-fixed",
            "as uring, fio with --fixedbufs --registerfiles (its fastest io_uring set-up)",
            [
                "--name=uring",
                "--ioengine=io_uring",
                "--direct=1",
                "--rw=randread",
                "--iodepth=32",
                "--size=1g",
                f,
                *common,
            ],
            fio_extra=["--fixedbufs", "--registerfiles"],
            needs_file=True,
        ),
        Scenario(
            "truth-psync",
            "psync, O_DIRECT, 4 KiB randread, QD 1",
            ["--name=psync", "--ioengine=psync", "--direct=1", "--rw=randread", "--size=1g", f, *common],
            needs_file=True,
        ),
        Scenario(
            "truth-uring",
            "io_uring, O_DIRECT, 4 KiB randread, QD 8",
            [
                "--name=uring8",
                "--ioengine=io_uring",
                "--direct=1",
                "--rw=randread",
                "--iodepth=8",
                "--size=1g",
                f,
                *common,
            ],
            needs_file=True,
        ),
        *aio_and_sync(common, f),
    ]


def aio_and_sync(common: list[str], f: str) -> list[Scenario]:
    """libaio at QD 1 and 32 and the sync engine (issue #11's truth checks),
    and buffered libaio over 64 MiB kept in the page cache: no device
    behind it, so CPU per I/O is what each tool and the AIO path cost (the
    null-equivalent overhead)."""
    rand = ["--direct=1", "--rw=randread", "--size=1g", f, *common]
    cached = ["--iodepth=32", "--rw=read", "--size=64m", f, *common]
    table = [
        ("libaio-qd1", "libaio, O_DIRECT, 4 KiB randread, QD 1", ["--ioengine=libaio", "--iodepth=1", *rand]),
        ("libaio-qd32", "libaio, O_DIRECT, 4 KiB randread, QD 32", ["--ioengine=libaio", "--iodepth=32", *rand]),
        ("sync", "sync (lseek + read), O_DIRECT, 4 KiB randread", ["--ioengine=sync", *rand]),
        (
            "truth-buffered",
            "psync, buffered, 4 KiB randread over 64 MiB (cache dropped at open and each pass, fio's defaults)",
            ["--ioengine=psync", "--rw=randread", "--size=64m", f, *common],
        ),
        (
            "libaio-cached",
            "libaio, buffered, 4 KiB read, QD 32, 64 MiB in the page cache (tool + AIO overhead)",
            ["--ioengine=libaio", *cached],
        ),
    ]
    return [Scenario(name, what, [f"--name={name}", *args], needs_file=True) for name, what, args in table]


@dataclass
class Sample:
    iops: float
    total_ios: int
    cpu_s: float
    clat_p50_ns: float
    clat_p99_ns: float

    @property
    def cpu_ns_per_io(self) -> float:
        return self.cpu_s * 1e9 / max(self.total_ios, 1)


def run_tool(cmd: list[str]) -> Sample:
    """Run one tool to completion; parse fio-layout JSON from stdout."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    # communicate() already reaped the child; rusage of children is collected
    # around the call instead (see measure()).
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {err.strip()[:500]}")
    doc = json.loads(out)
    jobs = doc["jobs"]
    rd = [j["read"] for j in jobs]
    iops = sum(r["iops"] for r in rd)
    total = sum(r["total_ios"] for r in rd)
    pct = rd[0]["clat_ns"].get("percentile", {})
    return Sample(iops, total, 0.0, float(pct.get("50.000000", 0)), float(pct.get("99.000000", 0)))


def measure(cmd: list[str]) -> Sample:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    s = run_tool(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    s.cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return s


def iolab_cmd() -> list[str]:
    """The checkout's own iolab: its venv's script, else ``iolab`` on PATH, else
    this interpreter running the CLI module (a git worktree has no .venv of its
    own; PYTHONPATH then picks the sources and native module under test)."""
    venv = ROOT / ".venv" / "bin" / "iolab"
    if venv.exists():
        return [str(venv)]
    found = shutil.which("iolab")
    return [found] if found else [sys.executable, "-m", "iolab.cli.main"]


def version(cmd: list[str]) -> str:
    """First line of a tool's version output."""
    return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]


def save(out: Path, meta: dict, results: list[dict], table: str | None) -> None:
    """Write the figures as JSON to `out`; print the Markdown table if any."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    print(f"wrote {out}", file=sys.stderr)
    if table is not None:
        print(table)


def ensure_file(path: Path, size: int) -> None:
    if path.exists() and path.stat().st_size >= size:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"laying out {path} ({size} bytes) with fio", file=sys.stderr)
    subprocess.run(
        [
            "fio",
            "--name=layout",
            f"--filename={path}",
            f"--size={size}",
            "--rw=write",
            "--bs=1m",
            "--direct=1",
            "--ioengine=psync",
            "--output=/dev/null",
        ],
        check=True,
    )


def run_scenario(sc: Scenario, rounds: int) -> dict:
    fio_s, iolab_s = [], []
    for r in range(rounds):
        order = [("fio", fio_s), ("iolab", iolab_s)]
        if r % 2:
            order.reverse()
        for tool, acc in order:
            if tool == "fio":
                cmd = ["fio", *sc.args, *sc.fio_extra, "--output-format=json"]
            else:
                cmd = [*iolab_cmd(), "run", *sc.args, "--output-format=fio-json"]
            s = measure(cmd)
            acc.append(s)
            print(
                f"  {sc.name} round {r + 1}/{rounds} {tool:5s}: {s.iops:12,.0f} IOPS  "
                f"{s.cpu_ns_per_io:8.0f} ns CPU/IO  clat p50 {s.clat_p50_ns / 1e3:8.1f} us  "
                f"p99 {s.clat_p99_ns / 1e3:8.1f} us",
                file=sys.stderr,
            )

    def med(xs: list[Sample], attr: str) -> float:
        return statistics.median(getattr(x, attr) for x in xs)

    out = {"scenario": sc.name, "what": sc.what, "rounds": rounds, "fio_extra": sc.fio_extra}
    for attr in ("iops", "cpu_ns_per_io", "clat_p50_ns", "clat_p99_ns"):
        f, i = med(fio_s, attr), med(iolab_s, attr)
        out[attr] = {"fio": f, "iolab": i, "ratio_iolab_over_fio": (i / f) if f else None}
    return out


def markdown(results: list[dict], meta: dict) -> str:
    lines = [
        f"Run {meta['date']} on {meta['host']} ({meta['cpus']} CPUs), fio {meta['fio']}, iolab {meta['iolab']}, "
        f"{meta['rounds']} alternating rounds of {meta['runtime_s']} s, medians.",
        "",
        "| scenario | fio IOPS | iolab IOPS | IOPS ratio | fio CPU/IO (ns) | iolab CPU/IO (ns) | CPU ratio "
        "| fio clat p50/p99 (µs) | iolab clat p50/p99 (µs) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:

        def f(k: str, w: str, r: dict = r) -> float:
            return r[k][w]

        lines.append(
            f"| {r['scenario']}: {r['what']} | {f('iops', 'fio'):,.0f} | {f('iops', 'iolab'):,.0f} "
            f"| {r['iops']['ratio_iolab_over_fio']:.2f} | {f('cpu_ns_per_io', 'fio'):,.0f} "
            f"| {f('cpu_ns_per_io', 'iolab'):,.0f} | {r['cpu_ns_per_io']['ratio_iolab_over_fio']:.2f} "
            f"| {f('clat_p50_ns', 'fio') / 1e3:.1f} / {f('clat_p99_ns', 'fio') / 1e3:.1f} "
            f"| {f('clat_p50_ns', 'iolab') / 1e3:.1f} / {f('clat_p99_ns', 'iolab') / 1e3:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5, help="seconds per run")
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument(
        "--data",
        type=Path,
        default=Path("/var/tmp/iolab-bench/data.1g"),
        help="1 GiB data file on local disk (laid out by fio if missing)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "compare_fio.json")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table on stdout")
    a = ap.parse_args()
    if not shutil.which("fio"):
        print("fio not found: apt-get install fio", file=sys.stderr)
        return 2
    wanted = {s for s in a.only.split(",") if s}
    scs = [s for s in scenarios(a.runtime, a.data) if not wanted or s.name in wanted]
    if any(s.needs_file for s in scs):
        ensure_file(a.data, 1 << 30)
    results = [run_scenario(s, a.rounds) for s in scs]
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "host": os.uname().nodename,
        "cpus": os.cpu_count(),
        "fio": version(["fio", "--version"]),
        "iolab": version([*iolab_cmd(), "version"]),
        "rounds": a.rounds,
        "runtime_s": a.runtime,
    }
    save(a.out, meta, results, markdown(results, meta) if a.markdown else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
