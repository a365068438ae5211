"""Per-phase rates of a verify job, iolab beside fio 3.33 (issue 21).

A ``randwrite`` job with ``verify=crc32c`` and ``do_verify=1`` writes, then
reads back what it wrote: two phases. fio rates each direction over its own
runtime (fio keeps a runtime per data direction), so the write IOPS is over
the write phase and the verify read's over the verify phase — not both over
the whole job. Both tools run the same job against ``iolab target`` with a
delay layer (writes held 10 ms, reads 5 ms, queue depth 1: long beside
the stalls of a busy machine), so the truth is known: about 100 write IOPS
and 200 read IOPS, where the whole job's window would give about 67 for
both. iolab's text, JSON and fio-JSON outputs must each rate a direction
over the window fio rates it over, and stay under the delay's bound.

"The same window" is checked through what the load cannot move: at queue
depth 1, IOPS x mean latency is the share of its rating window the
direction had an I/O in flight (about 1 where a phase is rated over its own
runtime, about a third for reads rated over the whole write-then-verify
job). iolab's share within 10 % of fio's, for IOPS and for bandwidth. The
rates themselves are not compared across the tools: beside two busy loops
fio's best of five interleaved runs read 142.9 verify IOPS where iolab's
read 199.2 (each of fio's replies waiting for its wake-up), while each
tool's share stayed its own.

A ``write`` job with ``verify_backlog`` (reads interleaved with the writes,
then the final verify) gives the writes the first phase and the reads both
(fio's rule since fio 3.34, commit 615c794c "Read stats for backlog
verifies not reported"; fio 3.33 counted only the final verify phase for
the reads, so there its read rate is checked against the whole job's
window, and its write rate against fio's).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from iolab.results.fio_json import to_fio_json

from tests.interop.test_fio_nbd_verify import Target
from tests.peers import require_peer

DELAY_S = {"write": 0.010, "read": 0.005}
BLOCKS = 60
JOB = [
    "--name=v",
    "--ioengine=nbd",
    "--bs=4k",
    f"--size={BLOCKS * 4}k",
    "--iodepth=1",
    "--verify=crc32c",
    "--do_verify=1",
    "--randseed=7",
]
DIRS = ("read", "write")
RUNS = 5
#: Per direction: (IOPS, bytes/s, mean latency in ns).
Rates = dict[str, tuple[float, float, float]]


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Target]:
    t = Target(tmp_path, ("d=memory,size=8m+delay,read=5ms,write=10ms",))
    try:
        yield t
    finally:
        t.stop()


def fio_rates(job: list[str]) -> Rates:
    """fio's (IOPS, bytes/s) per direction."""
    exe = require_peer("fio")
    out = subprocess.run(
        [exe, *job, "--verify_state_save=0", "--output-format=json"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    # libnbd's engine prints "fio: connected to NBD server" before the JSON.
    j = json.loads(out.stdout[out.stdout.index("{") :])["jobs"][0]
    return {d: (j[d]["iops"], float(j[d]["bw_bytes"]), float(j[d]["lat_ns"]["mean"])) for d in DIRS}


def iolab_rates(job: list[str], tmp_path: Path) -> tuple[dict[str, Rates], float]:
    """iolab's (IOPS, bytes/s) per direction, as its text, its JSON document
    and its fio-JSON layout each give them (one run); and the job's whole
    window (both phases), s."""
    doc_path = tmp_path / "doc.json"
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", *job, "--output-format=json", f"--output={doc_path}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(doc_path.read_text())
    merged = doc["summary"]["jobs"][0]["merged"]
    fio_layout = to_fio_json(doc["result"], doc["summary"])["jobs"][0]
    # The run's mean latency per direction, for each output's rates.
    lat = {d: float(merged[d]["lat"]["mean_ns"]) for d in DIRS}
    text: Rates = {}
    for d in DIRS:
        m = re.search(rf"^  {d}: IOPS=([\d.]+), BW=([\d.]+) MiB/s", out.stdout, re.M)
        assert m, out.stdout
        text[d] = (float(m[1]), float(m[2]) * 2**20, lat[d])
    outputs = {
        "text": text,
        "json": {d: (merged[d]["iops"], merged[d]["bw_bytes_per_s"], lat[d]) for d in DIRS},
        "fio-json": {d: (fio_layout[d]["iops"], float(fio_layout[d]["bw_bytes"]), lat[d]) for d in DIRS},
    }
    return outputs, merged["runtime_ns"] / 1e9


def best(runs: list[Rates]) -> Rates:
    """Per direction, the run with the highest IOPS of several."""
    return {d: max((r[d] for r in runs), key=lambda x: x[0]) for d in DIRS}


def run_both(job: list[str], tmp_path: Path) -> tuple[Rates, dict[str, Rates], list[tuple[dict[str, Rates], float]]]:
    """fio's best rates, iolab's best per output, and iolab's runs."""
    fio_runs: list[Rates] = []
    runs: list[tuple[dict[str, Rates], float]] = []
    for _ in range(RUNS):  # interleaved: a busy spell disturbs both tools
        fio_runs.append(fio_rates(job))
        runs.append(iolab_rates(job, tmp_path))
    fio = best(fio_runs)
    ours = {output: best([r[output] for r, _ in runs]) for output in runs[0][0]}
    return fio, ours, runs


def check_direction(d: str, fio: tuple[float, float, float], ours: dict[str, Rates]) -> None:
    """Each of iolab's outputs rates direction ``d`` over the window fio
    does: its share of that window busy (IOPS x mean latency at QD 1, and
    the same from the bandwidth) within 10 % of fio's; and neither tool
    faster than the delay allows at QD 1."""
    bound = 1 / DELAY_S[d]
    f_iops, f_bw, f_lat = fio
    assert f_iops <= 1.01 * bound, (d, fio)
    f_share, f_bw_share = f_iops * f_lat / 1e9, f_bw / 4096 * f_lat / 1e9
    for output, rates in ours.items():
        iops, bw, lat = rates[d]
        assert iops <= 1.01 * bound, (output, d, rates)
        share, bw_share = iops * lat / 1e9, bw / 4096 * lat / 1e9
        assert abs(share / f_share - 1) <= 0.10, (
            f"{output} {d} busy share {share:.3f} vs fio {f_share:.3f}: {rates[d]} vs {fio}"
        )
        assert abs(bw_share / f_bw_share - 1) <= 0.10, (
            f"{output} {d} busy share by bandwidth {bw_share:.3f} vs fio {f_bw_share:.3f}"
        )


def test_write_then_verify_rates_each_phase_over_its_own_runtime_as_fio(target: Target, tmp_path: Path) -> None:
    job = [*JOB, "--rw=randwrite", f"--uri={target.uri('d')}"]
    fio, ours, _ = run_both(job, tmp_path)
    for d in DIRS:
        check_direction(d, fio[d], ours)
    # Over the whole job both would read about 67: the phases differ.
    assert fio["read"][0] > 1.5 * fio["write"][0], fio
    assert ours["json"]["read"][0] > 1.5 * ours["json"]["write"][0], ours


def test_verify_backlog_reads_run_in_both_phases(target: Target, tmp_path: Path) -> None:
    job = [*JOB, "--rw=write", "--verify_backlog=15", f"--uri={target.uri('d')}"]
    fio, ours, runs = run_both(job, tmp_path)
    check_direction("write", fio["write"], ours)
    # The reads ran through the whole job (between the writes, then the
    # last backlog): their rate is over the whole window, so it is the
    # rate of the whole job's reads, in every output of each run (fio 3.33
    # would rate them over the last backlog alone: several times more).
    for outputs, window_s in runs:
        for output, rates in outputs.items():
            iops = rates["read"][0]
            assert abs(iops * window_s / BLOCKS - 1) <= 0.01, (output, iops, window_s)
