#!/usr/bin/env python3
"""Side-by-side NBD benchmarks: iolab's target vs nbdkit, iolab's client vs fio's.

Scenarios (medians of alternating rounds, as in compare_fio.py):

- ``server-4k``: fio's nbd engine (the same client for both) reading 4 KiB
  at random, QD 32, from a 1 GiB memory export on a Unix socket served by
  ``iolab target`` and by ``nbdkit memory`` → IOPS ratio (issue #4 asks
  for ≥ 1.5);
- ``server-1m``: the same with 1 MiB reads at QD 8 → MB/s ratio (≥ 1.2);
- ``client``: against nbdkit's memory plugin, iolab's nbd client
  (``iolab run --ioengine=nbd``) vs fio's nbd engine, 4 KiB random reads
  at QD 32 → IOPS ratio (≥ 1.0).

    bench/compare_nbd.py --rounds 5 --runtime 5 --markdown
"""

from __future__ import annotations

import argparse
import json
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
from compare_fio import iolab_cmd, save, version

EXPORT_BYTES = 1 << 30


@contextmanager
def server(kind: str, sock: Path) -> Iterator[str]:
    """Serve a 1 GiB memory export on `sock`; yield its URI."""
    if kind == "iolab":
        cmd = [*iolab_cmd(), "target", "--unix", str(sock), "--export", f"mem=memory,size={EXPORT_BYTES}"]
        uri = f"nbd+unix:///mem?socket={sock}"
    else:
        cmd = ["nbdkit", "-f", "-U", str(sock), "memory", str(EXPORT_BYTES)]
        uri = f"nbd+unix:///?socket={sock}"
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not sock.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{kind} server did not start: {' '.join(cmd)}")
            time.sleep(0.05)
        yield uri
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        sock.unlink(missing_ok=True)


def fio_job(uri: str, bs: str, depth: int, runtime_s: int) -> list[str]:
    return ["fio", "--name=nbd", "--ioengine=nbd", f"--uri={uri}", "--rw=randread", f"--bs={bs}",
            f"--iodepth={depth}", "--time_based", f"--runtime={runtime_s}", "--output-format=json"]  # fmt: skip


def read_figures(cmd: list[str]) -> tuple[float, float]:
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {out.stderr.strip()[:400]}")
    # fio's nbd engine prints "fio: connected to NBD server" on stdout first.
    r = json.loads(out.stdout[out.stdout.index("{") :])["jobs"][0]["read"]
    return float(r["iops"]), float(r["bw_bytes"])


def server_scenario(name: str, bs: str, depth: int, rounds: int, runtime_s: int, tmp: Path) -> dict:
    figs: dict[str, list[tuple[float, float]]] = {"nbdkit": [], "iolab": []}
    for r in range(rounds):
        order = ["nbdkit", "iolab"] if r % 2 == 0 else ["iolab", "nbdkit"]
        for kind in order:
            with server(kind, tmp / f"{kind}.sock") as uri:
                f = read_figures(fio_job(uri, bs, depth, runtime_s))
            figs[kind].append(f)
            print(
                f"  {name} round {r + 1}/{rounds} {kind:6s}: {f[0]:10,.0f} IOPS {f[1] / 1e6:9.1f} MB/s", file=sys.stderr
            )
    return summarise(name, f"fio nbd engine, {bs} randread QD {depth}, memory export", "nbdkit", figs)


def client_scenario(rounds: int, runtime_s: int, tmp: Path) -> dict:
    figs: dict[str, list[tuple[float, float]]] = {"fio": [], "iolab": []}
    with server("nbdkit", tmp / "kit.sock") as uri:
        fio = fio_job(uri, "4k", 32, runtime_s)
        ours = [*iolab_cmd(), "run", *fio[1:-1], "--output-format=fio-json"]
        for r in range(rounds):
            order = [("fio", fio), ("iolab", ours)]
            if r % 2:
                order.reverse()
            for kind, cmd in order:
                f = read_figures(cmd)
                figs[kind].append(f)
                print(f"  client round {r + 1}/{rounds} {kind:6s}: {f[0]:10,.0f} IOPS", file=sys.stderr)
    return summarise("client", "nbd client against nbdkit memory, 4k randread QD 32", "fio", figs)


def summarise(name: str, what: str, peer: str, figs: dict[str, list[tuple[float, float]]]) -> dict:
    out: dict = {"scenario": name, "what": what, "peer": peer}
    for i, key in enumerate(("iops", "bw_bytes_per_s")):
        p = statistics.median(x[i] for x in figs[peer])
        o = statistics.median(x[i] for x in figs["iolab"])
        out[key] = {peer: p, "iolab": o, "ratio_iolab_over_peer": o / p if p else None}
    return out


def markdown(results: list[dict], meta: dict) -> str:
    lines = [
        f"Run {meta['date']}, {meta['rounds']} alternating rounds of {meta['runtime_s']} s, medians; "
        f"{meta['fio']}, {meta['nbdkit']}, {meta['iolab']}.",
        "",
        "| scenario | peer | peer IOPS | iolab IOPS | IOPS ratio | peer MB/s | iolab MB/s | MB/s ratio |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        p = r["peer"]
        i, b = r["iops"], r["bw_bytes_per_s"]
        lines.append(
            f"| {r['scenario']}: {r['what']} | {p} | {i[p]:,.0f} | {i['iolab']:,.0f} | "
            f"{i['ratio_iolab_over_peer']:.2f} | {b[p] / 1e6:,.1f} | {b['iolab'] / 1e6:,.1f} | "
            f"{b['ratio_iolab_over_peer']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5, help="seconds per run")
    ap.add_argument("--only", default="", help="comma-separated: server-4k,server-1m,client")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "compare_nbd.json")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    for tool in ("fio", "nbdkit"):
        if not shutil.which(tool):
            print(f"{tool} not found: apt-get install fio nbdkit", file=sys.stderr)
            return 2
    wanted = {s for s in a.only.split(",") if s} or {"server-4k", "server-1m", "client"}
    results = []
    with tempfile.TemporaryDirectory(prefix="iolab-bench-nbd-") as d:
        tmp = Path(d)
        if "server-4k" in wanted:
            results.append(server_scenario("server-4k", "4k", 32, a.rounds, a.runtime, tmp))
        if "server-1m" in wanted:
            results.append(server_scenario("server-1m", "1m", 8, a.rounds, a.runtime, tmp))
        if "client" in wanted:
            results.append(client_scenario(a.rounds, a.runtime, tmp))
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "rounds": a.rounds,
        "runtime_s": a.runtime,
        "fio": version(["fio", "--version"]),
        "nbdkit": version(["nbdkit", "--version"]),
        "iolab": version([*iolab_cmd(), "version"]),
    }
    save(a.out, meta, results, markdown(results, meta) if a.markdown else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
