"""WSAT on the simulated SSD (sim-ssd over NBD), shrunk: random 4 KiB writes
from fresh out of the box fall to a steady state whose IOPS is what the
model's greedy GC predicts for its over-provisioning (iolab.pts.wa).

The drive is small and slow enough for a loaded 2-core host to keep its
planes busy: 16 MiB, one channel, one die, 2 planes, 100 us programs —
fresh ≈ 20k IOPS (the host may deliver less), steady ≈ 2.9k IOPS at WA ≈ 6
(alpha = 1.094: the default op 0.127 as the model lays out its blocks).
A busy host only makes the drive's I/Os wait longer in the queue of 128;
the planes stay the bottleneck.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from iolab.plans.progress import SweepProgress
from iolab.plans.sweep import SweepOptions
from iolab.pts.procedure import run_pts
from iolab.pts.report import format_pts_text
from iolab.pts.settings import PtsSettings
from iolab.pts.wa import SsdModel
from iolab.run.progress import Terminal

from tests.pts.served import served

SSD = "sim-ssd,capacity=16m,channels=1,dies=1,planes=2,buffer=64k,t_read=10us,t_prog=100us,t_erase=500us"


def test_wsat_falls_from_fresh_to_the_greedy_gc_steady_state(tmp_path: Path) -> None:
    model = SsdModel.from_spec(SSD)
    predicted = model.steady_random_write_iops()
    assert predicted == pytest.approx(2865, rel=0.01)
    quiet = SweepOptions(progress=SweepProgress(Terminal(io.StringIO(), is_tty=False)))
    settings = PtsSettings("wsat", "client", round_time="500ms", max_rounds=40, wsat_fills=8)
    with served(tmp_path, ssd=SSD) as uris:
        doc = run_pts(settings, None, uris["ssd"], tmp_path / "res", sweep_options=quiet).doc
    (stage,) = doc["stages"]
    iops = [round(r["tracking"]) for r in stage["rounds"]]
    w = stage["window"]
    assert stage["written_bytes"] >= 8 * (16 << 20) and doc["purge"]["how"] == "nbd TRIM"
    assert (w["first_round"], w["last_round"]) == (len(iops) - 4, len(iops))
    # A round the host stalled in only lost I/Os (the window's steady-state verdict may
    # then fail on a loaded machine): the steady rate is the window's median round.
    steady = sorted(w["values"])[2]
    assert iops[0] > 2 * steady, iops  # fresh out of the box well above the steady state
    assert abs(steady / predicted - 1) < 0.10, (steady, predicted, iops)
    text = format_pts_text(doc)
    assert "SHRUNK, not a conforming PTS run: rounds of 500ms per cell" in text
    assert "WSAT: IOPS against total written" in text
