"""sim-hdd and sim-ssd served by an iolab target and measured by iolab's own
nbd client (``iolab run --ioengine=nbd``), in real time.

The yardsticks are the model's own figures, which the target publishes
(``model_service_ns`` over ``model_decided``: what the model decided each
request takes), and the loopback round trip measured in the same run on a
memory export — never wall time alone, so the bounds hold on a loaded
2-core machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from iolab import _native

from tests.host_load import SPARE_OTHERS_PCT, others_busy_pct

Json = dict[str, Any]


class Served:
    """A target on a private socket with a sim-hdd, a sim-ssd and a memory export."""

    def __init__(self, tmp_path: Path) -> None:
        self.sock = tmp_path / "sim.sock"
        exports = ["hdd=sim-hdd,seed=1", "ssd=sim-ssd,capacity=512m", "mem=memory,size=64g"]
        self.t = _native.Target(exports=exports, listen=f"unix:{self.sock}")
        self.t.start()

    def run(self, export: str, rw: str, bs: str, qd: int, runtime: str = "2s") -> Json:
        """One job; fio's JSON for its read or write side."""
        cmd = [sys.executable, "-m", "iolab.cli.main", "run", "--ioengine=nbd",
               f"--uri=nbd+unix:///{export}?socket={self.sock}", f"--rw={rw}", f"--bs={bs}",
               f"--iodepth={qd}", "--time_based", f"--runtime={runtime}", "--randseed=7",
               "--name=x", "--output-format=fio-json"]  # fmt: skip
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        job = json.loads(out.stdout)["jobs"][0]
        side: Json = job["write" if "write" in rw else "read"]
        return side

    def counters(self, export: str, reset: bool = True) -> dict[str, int]:
        """The sim device's counters over the stats window (then a new window)."""
        return self.window(export, reset)[0]

    def window(self, export: str, reset: bool = True) -> tuple[dict[str, int], Json]:
        """The sim device's counters over the stats window and the target's
        CPU record of it (``cpu_summary``), then a new window."""
        snap = json.loads(self.t.stats_json(reset=reset))
        for dev in snap["counters"]:
            if dev["export"] == export and dev["path"].startswith("sim-"):
                return {c["name"]: c["value"] for c in dev["counters"]}, snap["cpu_summary"]
        raise AssertionError(f"no sim counters for {export}: {snap['counters']}")

    def close(self) -> None:
        self.t.shutdown()
        self.t.wait()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    s = Served(tmp_path)
    try:
        yield s
    finally:
        s.close()


def mib_s(side: Json) -> float:
    return float(side["bw_bytes"]) / (1 << 20)


# A loaded machine only ever adds time (a late timer or client wake-up),
# never removes it: so each figure is taken as the best of a few short runs,
# the one the load disturbed least.
TRIES = 3


def test_qd1_service_time_is_the_models_plus_the_round_trip(served: Served) -> None:
    # The client's mean within 5 % of the model's service plus the round
    # trip is iolab's where the host has CPU to spare. Beside CPU-bound work
    # every reply can wait for a time slice, at the target's reply timer and
    # at the client's wake-up (+19.5 %, +92.5 %, +64.2 % in three tries beside
    # busy loops and other builds), which is the machine's load. So a try
    # counts for the 5 % only where the target's CPU record of its window
    # shows other work (the client among it: a QD 1 nbd job at ~70 IOPS,
    # a few % of a CPU) kept at most SPARE_OTHERS_PCT of the CPUs busy; every
    # try asserts what load cannot move: the model decided each of the
    # client's I/Os, its figure is a disk's, and the client never read
    # faster than the model (a late reply only adds time).
    tries: list[tuple[str, float]] = []
    for _ in range(TRIES):
        rtt_ns = served.run("mem", "randread", "64k", 1, "500ms")["lat_ns"]["mean"]
        served.counters("hdd")  # start the window
        side = served.run("hdd", "randread", "64k", 1, "2s")
        c, cpu = served.window("hdd")
        assert c["model_decided"] == side["total_ios"] == c["media_reads"] + c["buffer_hits"]
        model_ns = c["model_service_ns"] / c["model_decided"]
        # The model's own figure is a disk's: ≈ 14 ms per random 64 KiB read.
        assert 10e6 < model_ns < 18e6
        got = side["lat_ns"]["mean"]
        assert got >= 0.99 * model_ns, (got, model_ns)
        err = got / (model_ns + rtt_ns) - 1
        busy = others_busy_pct(cpu)
        said = f"client {got:.0f} ns vs model {model_ns:.0f} + round trip {rtt_ns:.0f}: {err:+.1%}"
        tries.append((f"{said} (other work {busy:.0f} % of the CPUs)", busy))
        if abs(err) < 0.05:
            return
    said = "; ".join(t for t, _ in tries)
    if all(busy > SPARE_OTHERS_PCT for _, busy in tries):
        print(f"5 % not asserted, every try beside other work: {said}")
        return
    raise AssertionError(said)


def best_mib_s(served: Served, export: str, rw: str, bs: str, qd: int, runtime: str) -> float:
    return max(mib_s(served.run(export, rw, bs, qd, runtime)) for _ in range(TRIES))


def test_seed_003_physics_on_one_disk(served: Served) -> None:
    seq = {bs: best_mib_s(served, "hdd", "read", bs, 1, "1s") for bs in ("8k", "64k", "1m")}
    rnd = {qd: best_mib_s(served, "hdd", "randread", "64k", qd, "1500ms") for qd in (1, 2, 4)}
    # 64 KiB sequential ≥ 8x random (the workbook: 12x on its RAID 5).
    assert seq["64k"] >= 8 * rnd[1], (seq, rnd)
    # Sequential rises with the block size up to the media rate; on one
    # disk 64 KiB already streams at it (the rise to 1 MiB needs a stripe).
    assert seq["8k"] < seq["64k"] and seq["1m"] > 0.95 * seq["64k"], seq
    assert 80 < seq["1m"] < 91, seq
    # NCQ: from QD 4 the disk picks the nearest command. At QD 2 only one
    # command waits when the disk frees, so QD 2 gains only its overlap.
    assert rnd[2] > 0.97 * rnd[1] and rnd[4] > 1.1 * rnd[1], rnd


def test_write_cache_off_costs_a_revolution_per_write(served: Served, tmp_path: Path) -> None:
    sock = tmp_path / "wc.sock"
    t = _native.Target(exports=["off=sim-hdd,wcache=off", "on=sim-hdd,wcache=on"], listen=f"unix:{sock}")
    t.start()
    try:
        other = Served.__new__(Served)
        other.sock, other.t = sock, t
        off = best_mib_s(other, "off", "write", "64k", 1, "1s")
        on = best_mib_s(other, "on", "write", "64k", 1, "1s")
    finally:
        t.shutdown()
        t.wait()
    # 64 KiB per revolution (8.33 ms) plus its transfer: ≈ 7 MiB/s.
    assert 5.5 < off < 8, off
    assert on > 8 * off, (on, off)


def test_ssd_reads_back_and_counts_its_work(served: Served) -> None:
    served.counters("ssd")
    w = served.run("ssd", "randwrite", "4k", 16, "1s")
    c = served.counters("ssd")
    assert c["host_pages"] == w["total_ios"] == c["model_decided"]
    assert c["media_writes"] >= c["host_pages"]


def test_connections_share_one_timeline(served: Served) -> None:
    """Two connections at QD 8 each get what one at QD 16 gets, not twice it:
    one disk, one timeline (CAN_MULTI_CONN holds)."""
    one = best_mib_s(served, "hdd", "randread", "64k", 16, "1500ms")
    served.counters("hdd")
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", "--ioengine=nbd",
           f"--uri=nbd+unix:///hdd?socket={served.sock}", "--rw=randread", "--bs=64k", "--iodepth=8",
           "--nbd_connections=2", "--time_based", "--runtime=1500ms", "--name=x",
           "--output-format=fio-json"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    side = json.loads(out.stdout)["jobs"][0]["read"]
    c = served.counters("hdd")
    assert c["model_decided"] == side["total_ios"]
    assert mib_s(side) < 1.3 * one, (mib_s(side), one)
