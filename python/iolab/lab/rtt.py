"""The loopback round trip the lab's client pays per request, measured, and
each measured figure checked against the model plus it (issue 25).

The model (:func:`iolab.lab.raid.model_figures`) runs the stack on a
virtual clock with a client round trip it *assumes*
(:data:`iolab.lab.workbook.MODEL_RTT_NS`). What the client really pays
between a reply leaving the target and its next request arriving depends
on the host: :func:`measure_rtt` measures it the way the lab's client sees
it — the same transport (a Unix socket), engine (nbd), rw, block size and
real-time setting, at QD 1 — against an export that does no work: a null
device under a ``delay`` layer holding each reply as long as the model says
the test's requests take (the client and the target's reply timer then
sleep and wake as they do against the simulated array). The round trip is
the client's time per request less the target's own mean hold of it (its
record: header in to reply out), so the probe's reply lateness stays out of
it.

:func:`row_fit` then compares a measured figure with the model run again
with that round trip, and says whether it is within the tolerance, off by
what the target's reply lateness explains (the host could not hold real
time), or off for a reason the record does not show.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from iolab import _native
from iolab.lab.workbook import MODEL_RTT_NS, Test
from iolab.run.api import Job, run
from iolab.units import fmt_ns

#: A lab row's measured figure within 1 +- this of the model plus the
#: measured round trip fits (issue 25's bound for ``iolab lab raid``).
ROW_TOLERANCE = 0.10
#: The probe's export: any size the jobs cover; a null device stores nothing.
PROBE_SIZE_BYTES = 1 << 30
#: The shortest hold the probe asks for (a delay layer refuses 0).
MIN_HOLD_NS = 1_000


def _probe_hold(hold_ns: float) -> int:
    """The hold the probe asks for: ``hold_ns``, at least :data:`MIN_HOLD_NS`."""
    return max(round(hold_ns), MIN_HOLD_NS)


def lab_job(test: Test, seconds: float, **where: Any) -> Any:
    """The lab's job for ``test`` (its rw, bs and depth, time-based) at ``where``."""
    return Job(
        f"lab-{test.rw}-{test.bs}-qd{test.iodepth}",
        rw=test.rw,
        bs=test.bs,
        iodepth=test.iodepth,
        time_based=True,
        runtime=f"{round(seconds * 1000)}ms",
        **where,
    )


def probe_spec(hold_ns: float) -> str:
    """The compact spec of the probe's export: a null device whose reads and
    writes are held ``hold_ns`` (at least :data:`MIN_HOLD_NS`)."""
    h = _probe_hold(hold_ns)
    return f"rtt=null,size={PROBE_SIZE_BYTES}+delay,read={h}ns,write={h}ns"


def model_hold_ns(t: Test, model_iops: float) -> float:
    """The probe's hold for ``t``: how long the model's client waits from one
    reply to the next (``1 / IOPS``) less the round trip the model assumed —
    at QD 1 the stack's service time. The probe runs at QD 1, so a deep
    test's whole latency (``iodepth / IOPS``) would leave it a handful of
    requests and a client that sleeps far longer than the test's does."""
    return max(1e9 / model_iops - MODEL_RTT_NS, float(MIN_HOLD_NS))


def _hold_record(stats_json: str, writes: bool) -> tuple[float, float, float]:
    """(requests, mean hold ns, mean reply lateness ns) from the target's
    record of its one export (means of the whole histograms)."""
    ops = json.loads(stats_json)["exports"][0]["ops"]["write" if writes else "read"]
    lat = _native.hist_stats(ops["lat_ns"], [])
    late = _native.hist_stats(ops["hold_late_ns"], [])
    return float(lat["count"]), float(lat["mean_ns"]), float(late["mean_ns"])


def serve_and_run(
    spec: str,
    t: Test,
    seconds: float,
    size_bytes: int,
    *,
    iodepth: Optional[int] = None,
    realtime_target: bool = False,
    realtime_client: bool = False,
) -> tuple[dict[str, Any], str]:
    """Serve the export of compact ``spec`` on a private Unix socket, run
    ``t``'s job against it with iolab's nbd client for ``seconds`` (at
    ``iodepth``, by default the test's) over ``size_bytes``, and stop the
    target: (the run's summary, the target's stats JSON for the run)."""
    with tempfile.TemporaryDirectory(prefix="iolab-rtt-") as tmp:
        sock = Path(tmp) / "t.sock"
        target = _native.Target(None, [spec], listen=f"unix:{sock}", realtime=realtime_target)
        target.start()
        try:
            name = target.exports()[0][0]
            target.stats_json(reset=True)
            test = t if iodepth is None else replace(t, iodepth=iodepth)
            uri = f"nbd+unix:///{name}?socket={sock}"
            res = run(lab_job(test, seconds, ioengine="nbd", uri=uri, size=size_bytes, realtime=realtime_client))
            return res.summary, target.stats_json()
        finally:
            target.shutdown()
            target.wait()


def measure_rtt(
    t: Test, hold_ns: float, seconds: float, *, realtime_target: bool = False, realtime_client: bool = False
) -> dict[str, float]:
    """The client's round trip per request for ``t``'s rw and block size at
    QD 1 over a Unix socket, against :func:`probe_spec` (``hold_ns``):
    ``{"rtt_ns", "client_ns" (runtime / I/Os), "hold_ns" (the target's mean
    hold), "late_ns_mean" (its timer's lateness, inside the hold), "ios",
    "asked_hold_ns"}``. Raises ``RuntimeError`` when no request completed."""
    summary, record = serve_and_run(
        probe_spec(hold_ns),
        t,
        seconds,
        PROBE_SIZE_BYTES,
        iodepth=1,
        realtime_target=realtime_target,
        realtime_client=realtime_client,
    )
    d = summary["jobs"][0]["merged"]["write" if t.writes else "read"]
    ios, hold, late = _hold_record(record, t.writes)
    if not ios or not float(d["iops"]):
        raise RuntimeError(f"round-trip probe for {t.rw} {t.bs}: no request completed in {seconds:g} s")
    client = 1e9 / float(d["iops"])
    return {
        "rtt_ns": client - hold,
        "client_ns": client,
        "hold_ns": hold,
        "late_ns_mean": late,
        "ios": ios,
        "asked_hold_ns": _probe_hold(hold_ns),
    }


def row_fit(
    t: Test,
    measured_iops: float,
    model_rtt_iops: float,
    late_ns_mean: float,
    tolerance: float = ROW_TOLERANCE,
    *,
    model_iops: Optional[float] = None,
    rtt_ns: Optional[float] = None,
) -> dict[str, Any]:
    """A measured figure against the model run with the measured round trip:
    ``{"ratio" (measured / model + RTT), "late_ratio" (the same with the
    target's mean reply lateness taken out of each request's time), "verdict",
    "text"}``. ``verdict``: "ok" (within ``tolerance``), "late" (below it, and
    the lateness the target recorded accounts for the shortfall: the host
    could not hold real time, the model's column stands) or "gap" (off by
    more than the lateness explains, either way: doubt the figure).

    A figure *above* the model with the measured round trip, yet not above
    the model with its nominal round trip (``model_iops``, at
    :data:`~iolab.lab.workbook.MODEL_RTT_NS`), is "late" too: the row's
    client paid a shorter round trip than the probe's ``rtt_ns``, so the
    host slowed the probe (a busy host lengthens the probe's client
    wake-ups, which no lateness record holds); the model's column stands.
    Above the model at its nominal round trip as well, it is a gap: faster
    than the simulated drives allow."""
    ratio = measured_iops / model_rtt_iops
    # Little's law on the client's closed loop: each request took
    # iodepth / IOPS, of which the target's timer added late_ns_mean.
    per_request = t.iodepth / measured_iops * 1e9
    on_time = per_request - late_ns_mean
    late_ratio = t.iodepth / on_time * 1e9 / model_rtt_iops if on_time > 0 else float("inf")
    off = f"{ratio - 1.0:+.0%} off the model with the measured round trip"
    if abs(ratio - 1.0) <= tolerance:
        verdict, text = "ok", f"within {tolerance:.0%} of the model with the measured round trip ({ratio - 1.0:+.0%})"
    elif ratio < 1.0 and late_ratio >= 1.0 - tolerance:
        verdict = "late"
        text = (
            f"{off}; the target's replies went out {fmt_ns(late_ns_mean)} late on average, which accounts for it "
            f"({late_ratio - 1.0:+.0%} without it): the host could not hold real time, the model's column stands"
        )
    elif ratio > 1.0 and model_iops and rtt_ns is not None and measured_iops <= model_iops * (1.0 + tolerance):
        verdict = "late"
        text = (
            f"{off}: the round-trip probe ({fmt_ns(rtt_ns)}) was slowed more than this row's client (within "
            f"{tolerance:.0%} of the model with its nominal {fmt_ns(MODEL_RTT_NS)}: "
            f"{measured_iops / model_iops - 1.0:+.0%}): the host could not hold real time, the model's column stands"
        )
    else:
        verdict = "gap"
        text = (
            f"{off}, not explained by the target's reply lateness ({fmt_ns(late_ns_mean)} on average; "
            f"{late_ratio - 1.0:+.0%} without it): doubt this figure"
        )
    return {"ratio": ratio, "late_ratio": late_ratio, "verdict": verdict, "text": text}


def fit_for(t: Test, got: dict[str, Any]) -> Optional[dict[str, Any]]:
    """:func:`row_fit` for a measured simulated test (``iolab.lab.raid``'s
    record: ``"iops"``, ``"model_rtt"``, ``"rtt"``, ``"server"``), with the
    round trip it used; ``None`` where the test has no round trip measured
    (real storage, or a run recorded before the probe)."""
    model_rtt, rtt, server = got.get("model_rtt"), got.get("rtt"), got.get("server")
    if not model_rtt or not rtt or not server or not float(got.get("iops") or 0.0):
        return None
    model = float((got.get("model") or {}).get("iops") or 0.0) or None
    fit = row_fit(
        t,
        float(got["iops"]),
        float(model_rtt["iops"]),
        float(server["hold_late_ns_mean"]),
        model_iops=model,
        rtt_ns=float(rtt["rtt_ns"]),
    )
    return {**fit, "rtt_ns": float(rtt["rtt_ns"])}
