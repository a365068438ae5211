"""The measured loopback round trip (issue 25): each lab row against the
model plus it, and the client at QD 1 against the model's service time plus
it.

The row logic (:func:`iolab.lab.rtt.row_fit`) is checked on made-up
figures with a counterexample for each verdict; the report and its text
show the new columns. End to end, a sim-hdd array at QD 1 with the
round-trip probe interleaved: the client's time per request is the model's
service plus the measured round trip plus the lateness the target itself
recorded, within 5 % (the bound and why it holds on a loaded 2-core machine
are at the test).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
from typing import Any

import pytest
from iolab import _native
from iolab.lab.raid import DEFAULT_MEMBER, LabSettings, build_report, export_spec, model_figures, server_hold
from iolab.lab.render import RENDERERS
from iolab.lab.rtt import (
    MIN_HOLD_NS,
    ROW_TOLERANCE,
    fit_for,
    measure_rtt,
    model_hold_ns,
    probe_spec,
    row_fit,
    serve_and_run,
)
from iolab.lab.workbook import LAB1, MODEL_RTT_NS, ROWS
from iolab.lab.workbook import Test as LabTest

QD1 = LabTest(LAB1, "read", "64k", 1)
QD16 = LabTest(LAB1, "read", "64k", 16)


def test_within_the_tolerance_is_ok_either_side() -> None:
    assert row_fit(QD1, 1000.0, 1000.0, 0.0)["verdict"] == "ok"
    assert row_fit(QD1, 905.0, 1000.0, 0.0)["verdict"] == "ok"
    assert row_fit(QD1, 1095.0, 1000.0, 0.0)["verdict"] == "ok"
    assert row_fit(QD1, 1000.0, 1000.0, 0.0)["text"].startswith(f"within {ROW_TOLERANCE:.0%}")


def test_a_shortfall_the_reply_lateness_accounts_for_is_late() -> None:
    # 800 IOPS at QD 1 = 1250 µs per request against the model's 1000 µs:
    # 250 µs of it were the target's late replies.
    f = row_fit(QD1, 800.0, 1000.0, 250_000.0)
    assert f["verdict"] == "late" and f["late_ratio"] == pytest.approx(1.0), f
    assert "250 µs late on average" in f["text"] and "model's column stands" in f["text"], f
    # Counterexample: the same shortfall with replies on time is a gap, shown.
    g = row_fit(QD1, 800.0, 1000.0, 1_000.0)
    assert g["verdict"] == "gap" and "not explained" in g["text"] and "-20%" in g["text"], g
    # Lateness that explains only part of it (100 of 250 µs: 1150 µs on
    # time, 13 % off) leaves a gap; 150 µs (1100 µs, 9 % off) is within.
    assert row_fit(QD1, 800.0, 1000.0, 100_000.0)["verdict"] == "gap"
    assert row_fit(QD1, 800.0, 1000.0, 150_000.0)["verdict"] == "late"


def test_lateness_counts_once_per_request_in_flight_at_depth() -> None:
    # QD 16 at 800 IOPS: 20 ms per request; the model's 16 ms (1000 IOPS)
    # needs 4 ms of each request's time to have been lateness.
    assert row_fit(QD16, 800.0, 1000.0, 4_000_000.0)["verdict"] == "late"
    assert row_fit(QD16, 800.0, 1000.0, 250_000.0)["verdict"] == "gap"


def test_faster_than_the_model_is_a_gap_whatever_the_lateness() -> None:
    f = row_fit(QD1, 1200.0, 1000.0, 500_000.0)
    assert f["verdict"] == "gap" and "+20%" in f["text"], f


def test_the_probe_holds_what_the_model_says_the_client_waits() -> None:
    # QD 1: the service (the model's time per request less its assumed RTT).
    assert model_hold_ns(QD1, 1e9 / 554_000) == pytest.approx(554_000 - MODEL_RTT_NS)
    # At depth: the time from one reply to the next, not the whole latency.
    assert model_hold_ns(QD16, 7162.0) == pytest.approx(1e9 / 7162 - MODEL_RTT_NS)
    assert model_hold_ns(QD1, 1e9 / 20_000) == MIN_HOLD_NS
    assert probe_spec(524_000.4) == "rtt=null,size=1073741824+delay,read=524000ns,write=524000ns"


QD4 = LabTest(LAB1, "read", "64k", 4)
#: Lab 1's export: six 64 GiB members, five of data per row.
LAB1_BYTES = 5 * (64 << 30)


def test_lab_1c_qd4_as_recorded_live_fits_the_model() -> None:
    """Session 10's one unexplained row, on an idle machine: 1C at QD 4
    measured 421.9 MiB/s with a 58 µs probe round trip, the target holding
    each request 514 µs (replies ~10 µs late), while the model said 224.4
    (900 µs held): a gap. The model then lost a revolution whenever a read
    reached a drive just before its look-ahead did (issue 25); now the same
    record fits it, and the figure it gave then is still a gap."""
    m = model_figures(QD4, export_spec("r5", LAB1, DEFAULT_MEMBER), LAB1_BYTES, 58_000.0)
    measured_iops = 421.9 * 16
    fit = row_fit(QD4, measured_iops, m["iops"], 10_000.0)
    assert fit["verdict"] == "ok", (m, fit)
    # The target's mean hold against the model's (its time per request at
    # QD 4 less the round trip), within 5 %.
    model_hold_ns = QD4.iodepth / m["iops"] * 1e9 - 58_000.0
    assert 514_000.0 / model_hold_ns == pytest.approx(1.0, abs=0.05), model_hold_ns
    assert row_fit(QD4, measured_iops, 224.4 * 16, 10_000.0)["verdict"] == "gap"


def _measured(ratio: float, late_ns: float) -> dict[str, dict[str, Any]]:
    """Lab 1C QD 1 measured at ``ratio`` x the model with a 60 µs round trip."""
    model_rtt = {"iops": 1e9 / 584_000, "mib_per_s": 1e9 / 584_000 / 16}
    got = {
        "iops": model_rtt["iops"] * ratio,
        "mib_per_s": model_rtt["mib_per_s"] * ratio,
        "model": {"iops": 1e9 / 554_000, "mib_per_s": 1e9 / 554_000 / 16},
        "model_rtt": model_rtt,
        "rtt": {"rtt_ns": 60_000.0},
        "server": {"ios": 100.0, "lat_ns_mean": 524_000.0 + late_ns, "hold_late_ns_mean": late_ns},
    }
    return {QD1.key: got}


def test_the_report_shows_model_plus_rtt_and_each_rows_verdict() -> None:
    rows = [r for r in ROWS if r.test == QD1]
    for ratio, late, verdict in ((0.97, 0.0, "ok"), (0.7, 250_000.0, "late"), (0.7, 0.0, "gap")):
        report = build_report(_measured(ratio, late), LabSettings(quick=True))
        cells = [x for t in report["tables"] for x in t["rows"] if x["test"] == QD1.key]
        assert len(cells) == len(rows) and all(x["fit"]["verdict"] == verdict for x in cells), cells
        assert cells[0]["model_rtt"] == pytest.approx(1e9 / 584_000 / 16)
        assert fit_for(QD1, _measured(ratio, late)[QD1.key]) == cells[0]["fit"]
        text = RENDERERS["text"](report)
        assert "model + RTT" in text and "round trip 60.0 µs" in text, text
        section = text.split("Measured vs model + measured round trip (within 10%)")[1].split("\n\n")[0]
        if verdict == "ok":
            assert "every row is within 10%" in section, section
        else:
            assert f"1C 1 (MiB/s): {verdict}: " in section, section
    # A run recorded before the probe (or on real storage) has no such column.
    old = _measured(1.0, 0.0)
    del old[QD1.key]["rtt"]
    assert "model + RTT" not in RENDERERS["text"](build_report(old, LabSettings()))


def _busy_loops(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def test_client_at_qd1_is_the_model_service_plus_the_measured_round_trip() -> None:
    """Beside two busy loops of its own (and whatever else the machine runs),
    interleaved rounds: the simulated array (lab 1's RAID 5 of sim-hdd) at
    QD 1, then the probe, client and target under SCHED_FIFO. Medians of
    each figure, in ns per request:

    1. The target's service time (its hold less its reply's lateness) is
       the model's service time within 5 %: the stack's physics, which the
       host's load cannot change (the target's own record takes the
       lateness out).
    2. The client's time per request is the target's recorded hold plus
       the measured round trip, within 5 % of the model's time with that
       round trip: what the client loses against the array outside the
       target is what it loses against a null export in the same minute.
       With 1, the client is the model's service plus the measured round
       trip plus the lateness and extra time the target recorded, within
       about 10 % (the bench prints the issue's 5 % figure per load).

    Why it holds loaded: real time keeps the busy loops off the reply timer
    and the client's worker (passed 3 of 3 beside 6 busy loops at load
    average 7); what the host still adds inside the target is on its
    record and counted. Why a busy machine cannot fake it: the round trip
    is added on both sides from separate runs, so a client (or socket path)
    that loses time against the array and not against the null export (an
    extra wake-up, a stall at completion) fails 2, and a target serving off
    the model fails 1. Without real time it cannot hold under load (seen:
    replies 1 ms late on average, a 320 µs round trip), so it is skipped
    where SCHED_FIFO is not permitted.
    """
    if os.geteuid() != 0 and resource.getrlimit(resource.RLIMIT_RTPRIO)[0] < 1:
        pytest.skip("SCHED_FIFO not permitted (needs CAP_SYS_NICE or ulimit -r >= 1)")
    realtime = True
    spec = export_spec("r5", LAB1, DEFAULT_MEMBER)
    size = int(_native.Target(None, [spec], listen="127.0.0.1:0").exports()[0][1])
    hold = model_hold_ns(QD1, model_figures(QD1, spec, size)["iops"])
    rounds: list[dict[str, float]] = []
    loops = _busy_loops(2)
    try:
        for _ in range(3):
            summary, record = serve_and_run(spec, QD1, 0.5, size, realtime_target=realtime, realtime_client=realtime)
            server = server_hold(record, QD1)
            probe = measure_rtt(QD1, hold, 0.5, realtime_target=realtime, realtime_client=realtime)
            rounds.append(
                {
                    "client": 1e9 / float(summary["jobs"][0]["merged"]["read"]["iops"]),
                    "service": server["service_ns_mean"],
                    "late": server["hold_late_ns_mean"],
                    "hold": server["lat_ns_mean"],
                    "rtt": probe["rtt_ns"],
                    "probe_service": probe["hold_ns"] - probe["late_ns_mean"],
                }
            )
    finally:
        for p in loops:
            p.kill()
            p.wait()
    med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    with_rtt = 1e9 / model_figures(QD1, spec, size, med["rtt"])["iops"]
    model_service = with_rtt - med["rtt"]
    # The probe held what it was asked (the delay layer's truth) and the
    # round trip is a loopback's, not a hold's.
    assert med["probe_service"] == pytest.approx(hold, rel=0.05), (med, hold)
    assert 0 < med["rtt"] < 0.5 * hold, (med, rounds)
    assert med["service"] == pytest.approx(model_service, rel=0.05), (med, model_service, rounds)
    expected = med["hold"] + med["rtt"]
    assert abs(med["client"] - expected) <= 0.05 * with_rtt, (med, with_rtt, rounds)


def test_faster_than_model_plus_rtt_but_not_than_the_model_is_a_slowed_probe() -> None:
    # The probe measured 200 µs (model + RTT 800 IOPS); the row ran at 950,
    # within 10 % of the model at its nominal round trip (1000): the host
    # slowed the probe more than the row — late, the model's column stands.
    f = row_fit(QD1, 950.0, 800.0, 0.0, model_iops=1000.0, rtt_ns=200_000.0)
    assert f["verdict"] == "late" and "probe (200 µs) was slowed" in f["text"] and "-5%" in f["text"], f
    # Counterexample: faster than the model at its nominal round trip too
    # (1200 against 1000) is faster than the drives allow: a gap.
    g = row_fit(QD1, 1200.0, 800.0, 0.0, model_iops=1000.0, rtt_ns=200_000.0)
    assert g["verdict"] == "gap", g
    # Without the model's figure the rule cannot apply: a gap, as before.
    assert row_fit(QD1, 950.0, 800.0, 0.0)["verdict"] == "gap"


def test_every_row_not_ok_is_marked() -> None:
    from iolab.lab.render import _unreliable

    on_time = {"unreliable": False}
    assert not _unreliable({"fidelity": on_time, "fit": {"verdict": "ok"}})
    assert _unreliable({"fidelity": on_time, "fit": {"verdict": "gap"}})
    assert _unreliable({"fidelity": on_time, "fit": {"verdict": "late"}})
    assert _unreliable({"fidelity": {"unreliable": True}, "fit": {"verdict": "ok"}})
    assert not _unreliable({"fidelity": None, "fit": None})
