#!/usr/bin/env python3
"""Side-by-side NBD benchmarks: iolab's target vs nbdkit, iolab's client vs fio's.

Scenarios (medians of alternating rounds, as in compare_fio.py):

- ``server-4k``: fio's nbd engine (the same client for both) reading 4 KiB
  at random, QD 32, from a 1 GiB memory export on a Unix socket served by
  ``iolab target`` and by ``nbdkit memory`` → IOPS ratio (issue #4 asks
  for ≥ 1.5);
- ``server-4k-2jobs``: the same 32 requests in flight from two fio jobs
  (two connections, QD 16 each), so that one client thread is less of the
  limit;
- ``server-1m``: the same with 1 MiB reads at QD 8 → MB/s ratio (≥ 1.2);
- ``server-4k-qd1``: 4 KiB random reads at QD 1 → the client's p50
  completion latency (``clat_p50_us``) beside IOPS: what the server adds
  to a round trip, since the client and the socket are the same for both;
- ``client``: against nbdkit's memory plugin, iolab's nbd client
  (``iolab run --ioengine=nbd``) vs fio's nbd engine, 4 KiB random reads
  at QD 32 → IOPS ratio (≥ 1.0).

Server scenarios also report each server's CPU per request: the
kernel's accounting of the whole server process (user + system time from
``/proc/PID/stat``, all threads, read just before and just after the fio
run) divided by the requests fio completed in that run. On a machine whose
cores the client shares, that is the figure that says which server is
cheaper, whatever the client's own limit.

    bench/compare_nbd.py --rounds 5 --runtime 5 --markdown
    bench/compare_nbd.py --only server-4k,server-4k-2jobs --rounds 3
    bench/compare_nbd.py --only server-4k --conn-io uring,threads   # A/B iolab's receive paths
    bench/compare_nbd.py --only server-4k --zero-copy on,off        # A/B iolab's reply sending

With ``--conn-io A,B`` each round runs nbdkit and one iolab target per
``iolab target --conn-io`` value (in alternating order), reported as
``iolab-A``, ``iolab-B``, each with its ratio to nbdkit; ``--zero-copy
A,B`` likewise per ``iolab target --zero-copy`` value, reported as
``iolab-zc-A``, ``iolab-zc-B``. ``--pin-cpus S,C`` runs every server on CPU
S and fio on CPU C (``taskset``): ``0,1`` puts them on different cores, as
an idle machine's scheduler does, whatever else the machine runs; ``0,0``
on one core, as a loaded machine often does.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_fio import iolab_cmd, save, version

EXPORT_BYTES = 1 << 30
SCENARIOS = ("server-4k", "server-4k-batched", "server-4k-2jobs", "server-4k-qd1", "server-1m", "client")
#: One fio job at QD 32 that submits and reaps in batches of 16: the same
#: client options against both servers, at a lower client cost per request.
BATCHED = ("--iodepth_batch_submit=16", "--iodepth_batch_complete_min=16")
TICKS_PER_S = os.sysconf("SC_CLK_TCK")
#: `iolab target --conn-io` values.
CONN_IO = ("auto", "uring", "threads")
#: `iolab target --zero-copy` values.
ZERO_COPY = ("auto", "on", "off")
#: `taskset` prefixes for the servers and for fio (`--pin-cpus`).
PIN: dict[str, list[str]] = {"server": [], "client": []}


@dataclass
class Run:
    """One fio run: what the client saw, and what the server spent."""

    iops: float
    bw_bytes_per_s: float
    ios: int
    clat_p50_us: float
    server_cpu_s: float | None = None

    @property
    def cpu_per_request_us(self) -> float | None:
        if self.server_cpu_s is None or not self.ios:
            return None
        return self.server_cpu_s / self.ios * 1e6


def process_cpu_s(pid: int) -> float:
    """User + system CPU time of process `pid` (all its threads), s."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # Fields after the command name (which may hold spaces) start at 3.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_S


@contextmanager
def server(kind: str, sock: Path) -> Iterator[tuple[str, int]]:
    """Serve a 1 GiB memory export on `sock`; yield its URI and pid."""
    if kind.startswith("iolab"):
        cmd = [*iolab_cmd(), "target", "--unix", str(sock), "--export", f"mem=memory,size={EXPORT_BYTES}"]
        if kind.startswith("iolab-zc-"):
            cmd += ["--zero-copy", kind.removeprefix("iolab-zc-")]
        elif kind != "iolab":
            cmd += ["--conn-io", kind.removeprefix("iolab-")]
        uri = f"nbd+unix:///mem?socket={sock}"
    else:
        cmd = ["nbdkit", "-f", "-U", str(sock), "memory", str(EXPORT_BYTES)]
        uri = f"nbd+unix:///?socket={sock}"
    proc = subprocess.Popen([*PIN["server"], *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30  # a loaded host starts Python slowly
        while not sock.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{kind} server did not start: {' '.join(cmd)}")
            time.sleep(0.05)
        yield uri, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        sock.unlink(missing_ok=True)


def fio_job(uri: str, bs: str, depth: int, runtime_s: int, jobs: int = 1, extra: tuple[str, ...] = ()) -> list[str]:
    """A fio nbd-engine randread job; `jobs` > 1: that many connections of QD `depth` each."""
    many = [f"--numjobs={jobs}", "--group_reporting"] if jobs > 1 else []
    return ["fio", "--name=nbd", "--ioengine=nbd", f"--uri={uri}", "--rw=randread", f"--bs={bs}",
            f"--iodepth={depth}", *many, *extra, "--time_based", f"--runtime={runtime_s}",
            "--output-format=json"]  # fmt: skip


def read_figures(cmd: list[str]) -> Run:
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {out.stderr.strip()[:400]}")
    # fio's nbd engine prints "fio: connected to NBD server" on stdout first.
    jobs = json.loads(out.stdout[out.stdout.index("{") :])["jobs"]
    if len(jobs) != 1:
        raise SystemExit(f"expected one (grouped) job in {cmd[0]}'s output, got {len(jobs)}")
    r = jobs[0]["read"]
    p50_ns = float(r["clat_ns"]["percentile"]["50.000000"])
    return Run(float(r["iops"]), float(r["bw_bytes"]), int(r["total_ios"]), p50_ns / 1e3)


def served_run(
    kind: str, tmp: Path, bs: str, depth: int, jobs: int, runtime_s: int, extra: tuple[str, ...] = ()
) -> Run:
    """One fio run against a fresh server of `kind`, with the server's CPU."""
    with server(kind, tmp / f"{kind}.sock") as (uri, pid):
        cpu0 = process_cpu_s(pid)
        run = read_figures([*PIN["client"], *fio_job(uri, bs, depth, runtime_s, jobs, extra)])
        run.server_cpu_s = process_cpu_s(pid) - cpu0
    return run


def server_scenario(
    name: str,
    bs: str,
    depth: int,
    jobs: int,
    rounds: int,
    runtime_s: int,
    tmp: Path,
    extra: tuple[str, ...] = (),
    ours: tuple[str, ...] = ("iolab",),
) -> dict[str, Any]:
    kinds = ["nbdkit", *ours]
    figs: dict[str, list[Run]] = {k: [] for k in kinds}
    for r in range(rounds):
        order = kinds if r % 2 == 0 else kinds[::-1]
        for kind in order:
            f = served_run(kind, tmp, bs, depth, jobs, runtime_s, extra)
            figs[kind].append(f)
            print(
                f"  {name} round {r + 1}/{rounds} {kind:13s}: {f.iops:10,.0f} IOPS {f.bw_bytes_per_s / 1e6:9.1f} MB/s "
                f"{f.cpu_per_request_us:6.2f} µs server CPU/request, clat p50 {f.clat_p50_us:7.1f} µs",
                file=sys.stderr,
            )
    clients = f"{jobs} jobs x QD {depth}" if jobs > 1 else f"QD {depth}"
    clients += f" ({' '.join(x.lstrip('-') for x in extra)})" if extra else ""
    return summarise(name, f"fio nbd engine, {bs} randread {clients}, memory export", "nbdkit", figs, ours)


def client_scenario(rounds: int, runtime_s: int, tmp: Path) -> dict[str, Any]:
    figs: dict[str, list[Run]] = {"fio": [], "iolab": []}
    with server("nbdkit", tmp / "kit.sock") as (uri, _):
        fio = fio_job(uri, "4k", 32, runtime_s)
        ours = [*iolab_cmd(), "run", *fio[1:-1], "--output-format=fio-json"]
        for r in range(rounds):
            order = [("fio", fio), ("iolab", ours)]
            if r % 2:
                order.reverse()
            for kind, cmd in order:
                f = read_figures(cmd)
                figs[kind].append(f)
                print(f"  client round {r + 1}/{rounds} {kind:6s}: {f.iops:10,.0f} IOPS", file=sys.stderr)
    return summarise("client", "nbd client against nbdkit memory, 4k randread QD 32", "fio", figs)


def summarise(
    name: str, what: str, peer: str, figs: dict[str, list[Run]], ours: tuple[str, ...] = ("iolab",)
) -> dict[str, Any]:
    """Medians per tool; each of `ours` (iolab variants) with its ratio to `peer`."""
    out: dict[str, Any] = {"scenario": name, "what": what, "peer": peer, "ours": list(ours)}
    for key in ("iops", "bw_bytes_per_s", "cpu_per_request_us", "clat_p50_us"):
        per_tool = {t: [v for x in figs[t] if (v := getattr(x, key)) is not None] for t in (peer, *ours)}
        if not all(per_tool.values()):
            continue
        med = {t: statistics.median(v) for t, v in per_tool.items()}
        out[key] = dict(med)
        for t in ours:
            out[key][f"ratio_{t}_over_peer"] = med[t] / med[peer] if med[peer] else None
    return out


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        f"Run {meta['date']} on commit {meta['commit']} (load average {meta['load_avg_1m_start']:.1f} at the start, "
        f"{meta['load_avg_1m_end']:.1f} at the end), {meta['rounds']} alternating rounds of "
        f"{meta['runtime_s']} s, medians"
        + (
            f", server on CPU {meta['pin_cpus'].split(',')[0]} and fio on CPU {meta['pin_cpus'].split(',')[1]}"
            if meta.get("pin_cpus")
            else ""
        )
        + f"; {meta['fio']}, {meta['nbdkit']}, {meta['iolab']}.",
        "",
        "| scenario | tool | IOPS | IOPS ratio | MB/s | server CPU/request (µs) | CPU ratio | clat p50 (µs) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        p = r["peer"]
        for t in [p, *r.get("ours", ["iolab"])]:
            ratio = "" if t == p else f"{r['iops'][f'ratio_{t}_over_peer']:.2f}"
            c = r.get("cpu_per_request_us")
            cpu = f"{c[t]:.2f}" if c else ""
            cpu_ratio = f"{c[f'ratio_{t}_over_peer']:.2f}" if c and t != p else ""
            lines.append(
                f"| {r['scenario']}: {r['what']} | {t} | {r['iops'][t]:,.0f} | {ratio} | "
                f"{r['bw_bytes_per_s'][t] / 1e6:,.1f} | {cpu} | {cpu_ratio} | {r['clat_p50_us'][t]:.1f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5, help="seconds per run")
    ap.add_argument("--only", default="", help=f"comma-separated, of: {','.join(SCENARIOS)}")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "compare_nbd.json")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument(
        "--conn-io",
        default="",
        help="comma-separated `iolab target --conn-io` values to run side by side (e.g. uring,threads)",
    )
    ap.add_argument(
        "--zero-copy",
        default="",
        help="comma-separated `iolab target --zero-copy` values to run side by side (e.g. on,off)",
    )
    ap.add_argument("--pin-cpus", default="", help="S,C: servers on CPU S and fio on CPU C (taskset)")
    a = ap.parse_args()
    for tool in ("fio", "nbdkit"):
        if not shutil.which(tool):
            print(f"{tool} not found: apt-get install fio nbdkit", file=sys.stderr)
            return 2
    wanted = {s for s in a.only.split(",") if s} or set(SCENARIOS)
    if unknown := wanted - set(SCENARIOS):
        print(
            f"--only: unknown scenario(s) {', '.join(sorted(unknown))}; choose from {', '.join(SCENARIOS)}",
            file=sys.stderr,
        )
        return 2
    modes = [m for m in a.conn_io.split(",") if m]
    if bad := [m for m in modes if m not in CONN_IO]:
        print(f"--conn-io: unknown value(s) {', '.join(bad)}; choose from {', '.join(CONN_IO)}", file=sys.stderr)
        return 2
    zc = [m for m in a.zero_copy.split(",") if m]
    if bad := [m for m in zc if m not in ZERO_COPY]:
        print(f"--zero-copy: unknown value(s) {', '.join(bad)}; choose from {', '.join(ZERO_COPY)}", file=sys.stderr)
        return 2
    if a.pin_cpus:
        cpus = a.pin_cpus.split(",")
        if len(cpus) != 2 or not all(c.isdigit() and int(c) < (os.cpu_count() or 1) for c in cpus):
            print(f"--pin-cpus: '{a.pin_cpus}' is not two CPU numbers S,C of this machine's", file=sys.stderr)
            return 2
        PIN["server"], PIN["client"] = (["taskset", "-c", c] for c in cpus)
    if modes and zc:
        print("--conn-io and --zero-copy: give one of the two", file=sys.stderr)
        return 2
    ours = tuple(f"iolab-{m}" for m in modes) or tuple(f"iolab-zc-{m}" for m in zc) or ("iolab",)
    if a.rounds < 1 or a.runtime < 1:
        print("--rounds and --runtime must be at least 1", file=sys.stderr)
        return 2
    results = []
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="iolab-bench-nbd-") as d:
        tmp = Path(d)
        if "server-4k" in wanted:
            results.append(server_scenario("server-4k", "4k", 32, 1, a.rounds, a.runtime, tmp, ours=ours))
        if "server-4k-batched" in wanted:
            results.append(
                server_scenario("server-4k-batched", "4k", 32, 1, a.rounds, a.runtime, tmp, BATCHED, ours=ours)
            )
        if "server-4k-2jobs" in wanted:
            results.append(server_scenario("server-4k-2jobs", "4k", 16, 2, a.rounds, a.runtime, tmp, ours=ours))
        if "server-4k-qd1" in wanted:
            results.append(server_scenario("server-4k-qd1", "4k", 1, 1, a.rounds, a.runtime, tmp, ours=ours))
        if "server-1m" in wanted:
            results.append(server_scenario("server-1m", "1m", 8, 1, a.rounds, a.runtime, tmp, ours=ours))
        if "client" in wanted:
            results.append(client_scenario(a.rounds, a.runtime, tmp))
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": version(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "--short", "HEAD"]),
        "load_avg_1m_start": load_start,
        "load_avg_1m_end": os.getloadavg()[0],
        "rounds": a.rounds,
        "runtime_s": a.runtime,
        "pin_cpus": a.pin_cpus or None,
        "fio": version(["fio", "--version"]),
        "nbdkit": version(["nbdkit", "--version"]),
        "iolab": version([*iolab_cmd(), "version"]),
    }
    save(a.out, meta, results, markdown(results, meta) if a.markdown else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
