"""WSAT on the simulated SSD (sim-ssd over NBD), shrunk: random 4 KiB writes
from fresh out of the box fall to a steady state whose IOPS is what the
model's greedy GC predicts for its over-provisioning (iolab.pts.wa).

The drive is small and slow enough for a loaded 2-core host to keep its
planes busy: 16 MiB, one channel, one die, 2 planes, 100 us programs —
fresh ≈ 20k IOPS (the host may deliver less), steady ≈ 2.9k IOPS at WA ≈ 6
(alpha = 1.094: the default op 0.127 as the model lays out its blocks).
A busy host only makes the drive's I/Os wait longer in the queue of 128;
the planes stay the bottleneck — mostly: a host that stalls a round loses
I/Os (seen: the median round 11 % low beside a busy loop). So the steady
state is checked twice: the drive's own write amplification over writes
made in steady state (its counters: load cannot change it) within 10 % of
the greedy prediction, and the IOPS measured through NBD no more than
10 % above it and no more than 30 % below (a stalled round only loses).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from iolab.plans.progress import SweepProgress
from iolab.plans.sweep import SweepOptions
from iolab.pts.procedure import run_pts
from iolab.pts.report import format_pts_text
from iolab.pts.settings import PtsSettings
from iolab.pts.wa import SsdModel
from iolab.run.api import Job, run
from iolab.run.progress import Terminal

from tests.pts.served import served_target

SSD = "sim-ssd,capacity=16m,channels=1,dies=1,planes=2,buffer=64k,t_read=10us,t_prog=100us,t_erase=500us"


def test_wsat_falls_from_fresh_to_the_greedy_gc_steady_state(tmp_path: Path) -> None:
    model = SsdModel.from_spec(SSD)
    predicted = model.steady_random_write_iops()
    assert predicted == pytest.approx(2865, rel=0.01)
    quiet = SweepOptions(progress=SweepProgress(Terminal(io.StringIO(), is_tty=False)))
    settings = PtsSettings("wsat", "client", round_time="500ms", max_rounds=40, wsat_fills=8)
    with served_target(tmp_path, ssd=SSD) as (uris, target):
        doc = run_pts(settings, None, uris["ssd"], tmp_path / "res", sweep_options=quiet).doc
        # Steady-state write amplification from the drive's own counters,
        # over two more capacities of random writes.
        before = _media_and_host_pages(target)
        job = Job("wa", rw="randwrite", bs="4k", iodepth=32, ioengine="nbd", uri=uris["ssd"], size=16 << 20,
                  loops=2, norandommap=True, randrepeat=False)  # fmt: skip
        run(job)
        after = _media_and_host_pages(target)
    wa = (after[0] - before[0]) / (after[1] - before[1])
    assert abs(wa / model.write_amplification() - 1) < 0.10, (wa, model.write_amplification())
    (stage,) = doc["stages"]
    iops = [round(r["tracking"]) for r in stage["rounds"]]
    w = stage["window"]
    assert stage["written_bytes"] >= 8 * (16 << 20) and doc["purge"]["how"] == "nbd TRIM"
    assert (w["first_round"], w["last_round"]) == (len(iops) - 4, len(iops))
    # A round the host stalled in only lost I/Os (the window's steady-state verdict may
    # then fail on a loaded machine): the steady rate is the window's median round.
    steady = sorted(w["values"])[2]
    assert iops[0] > 2 * steady, iops  # fresh out of the box well above the steady state
    # The host can only lose I/Os (stalled rounds: 11 % and 15 % low seen
    # beside a busy loop), never run the planes faster than the model.
    assert 0.7 < steady / predicted < 1.10, (steady, predicted, iops)
    text = format_pts_text(doc)
    assert "SHRUNK, not a conforming PTS run: rounds of 500ms per cell" in text
    assert "WSAT: IOPS against total written" in text


def _media_and_host_pages(target: Any) -> tuple[int, int]:
    """The sim-ssd layer's pages written to flash and by the host so far."""
    stats = json.loads(target.stats_json())
    (layer,) = [c for c in stats["counters"] if c["path"] == "sim-ssd"]
    value = {c["name"]: c["value"] for c in layer["counters"]}
    return int(value["media_writes"]), int(value["host_pages"])
