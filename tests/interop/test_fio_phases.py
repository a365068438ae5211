"""Per-phase rates of a verify job, iolab beside fio 3.33 (issue 21).

A ``randwrite`` job with ``verify=crc32c`` and ``do_verify=1`` writes, then
reads back what it wrote: two phases. fio rates each direction over its own
runtime (fio keeps a runtime per data direction), so the write IOPS is over
the write phase and the verify read's over the verify phase — not both over
the whole job. Both tools run the same job against ``iolab target`` with a
delay layer (writes held 10 ms, reads 5 ms, queue depth 1: long beside
the stalls of a busy machine), so the truth is known: about 100 write IOPS
and 200 read IOPS, where the whole job's window would give about 67 for
both. iolab's text, JSON and fio-JSON outputs must
each give IOPS and bandwidth within 10 % of fio's, per direction, and under
the delay's bound.

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
Rates = dict[str, tuple[float, float]]


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
    return {d: (j[d]["iops"], float(j[d]["bw_bytes"])) for d in DIRS}


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
    text: Rates = {}
    for d in DIRS:
        m = re.search(rf"^  {d}: IOPS=([\d.]+), BW=([\d.]+) MiB/s", out.stdout, re.M)
        assert m, out.stdout
        text[d] = (float(m[1]), float(m[2]) * 2**20)
    outputs = {
        "text": text,
        "json": {d: (merged[d]["iops"], merged[d]["bw_bytes_per_s"]) for d in DIRS},
        "fio-json": {d: (fio_layout[d]["iops"], float(fio_layout[d]["bw_bytes"])) for d in DIRS},
    }
    return outputs, merged["runtime_ns"] / 1e9


def best(runs: list[Rates]) -> Rates:
    """Per direction, the highest IOPS and bandwidth of several runs."""
    return {d: (max(r[d][0] for r in runs), max(r[d][1] for r in runs)) for d in DIRS}


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


def check_direction(d: str, fio: tuple[float, float], ours: dict[str, Rates]) -> None:
    """Each of iolab's outputs within 10 % of fio's IOPS and bandwidth for
    direction ``d``, and neither tool faster than the delay allows at QD 1."""
    bound = 1 / DELAY_S[d]
    f_iops, f_bw = fio
    assert f_iops <= 1.01 * bound, (d, fio)
    for output, rates in ours.items():
        iops, bw = rates[d]
        assert iops <= 1.01 * bound, (output, d, rates)
        assert abs(iops / f_iops - 1) <= 0.10, f"{output} {d} IOPS {iops:.1f} vs fio {f_iops:.1f}"
        assert abs(bw / f_bw - 1) <= 0.10, f"{output} {d} bandwidth {bw:.0f} vs fio {f_bw:.0f} bytes/s"


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
