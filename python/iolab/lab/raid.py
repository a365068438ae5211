"""``iolab lab raid``: seed 003's labs against a simulated 6-drive RAID 5.

For every array configuration the labs need (read policy, write policy,
disk cache), iolab starts its own target on a private Unix socket serving
a RAID 5 of six simulated drives under a controller cache, runs the tests
with iolab's nbd client (real requests over a real socket, timed by the
client), and shuts the target down. With ``device`` or ``uri`` the same
jobs run against real storage instead; the array's settings are then the
controller's own, so only lab 1's read tests run there (nothing is written).

Each simulated test also carries the model's figures (the stack on a
virtual clock) and the target's own record of its requests; the answers
come from the model and the gaps between the client's figures and the
model's are explained from the record (:mod:`iolab.lab.answers`). After
each simulated test the client's loopback round trip is measured in the
same minute (:func:`iolab.lab.rtt.measure_rtt`), the model is run again
with it, and each row gets a verdict against that (:mod:`iolab.lab.rtt`).

The result is a plain dict (schema ``iolab.lab.raid/1``) that the
renderers in :mod:`iolab.lab.render` print.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from iolab import _native
from iolab.lab.answers import answers, fidelity, gaps
from iolab.lab.rtt import fit_for, lab_job, measure_rtt, model_hold_ns
from iolab.lab.workbook import BS_BYTES, LAB1, MODEL_RTT_NS, ROWS, TITLES, ArrayConfig, Test, all_tests
from iolab.run.api import run

SCHEMA = "iolab.lab.raid/1"
MIB = 1 << 20
#: Members, strip and drive of the simulated array (the workbook's: six
#: SATA drives, RAID 5, the controller's default 64 KiB strip).
MEMBERS = 6
STRIP = "64k"
#: ``{wcache}`` is the workbook's Disk Cache Policy; ``{i}`` (the member's
#: index, filled in by the target) gives each drive its own platter phase.
DEFAULT_MEMBER = "sim-hdd(wcache={wcache},seed={i})"
#: Sequential writes wrap within this region (the data is kept in memory).
WRITE_REGION_BYTES = 1 << 30
FULL_RUNTIME_S = 10.0  # as the workbook: "wait for 10 seconds"
#: The model's runs (virtual time; the client round trip they assume is
#: workbook.MODEL_RTT_NS).
MODEL_RUNTIME_NS = 1_000_000_000
QUICK_RUNTIME_S = 1.5
#: The round-trip probe after each simulated test runs this share of the
#: test's time, within these bounds (a mean over a few hundred requests).
PROBE_SHARE = 0.2
PROBE_MIN_S, PROBE_MAX_S = 0.2, 1.0

Progress = Callable[[str], None]


@dataclass(frozen=True)
class LabSettings:
    quick: bool = False
    runtime_s: Optional[float] = None
    member: str = DEFAULT_MEMBER
    device: Optional[str] = None
    uri: Optional[str] = None
    #: Client workers (``realtime=1``) and, on the simulated array, the
    #: target's serving threads under SCHED_FIFO.
    realtime: bool = False

    @property
    def seconds(self) -> float:
        if self.runtime_s is not None:
            return self.runtime_s
        return QUICK_RUNTIME_S if self.quick else FULL_RUNTIME_S

    @property
    def probe_seconds(self) -> float:
        return min(max(self.seconds * PROBE_SHARE, PROBE_MIN_S), PROBE_MAX_S)

    @property
    def real(self) -> bool:
        return self.device is not None or self.uri is not None


def export_spec(name: str, array: ArrayConfig, member: str) -> str:
    """The compact target spec of the simulated array in configuration ``array``."""
    m = member.replace("{wcache}", "on" if array.disk_cache else "off")
    cache = f"cache,write={array.write_policy},read={array.read_policy}"
    return f"{name}=raid5,members={MEMBERS},strip={STRIP},member={m}+{cache}"


def _figures(summary: dict[str, Any], test: Test) -> dict[str, float]:
    d = summary["jobs"][0]["merged"]["write" if test.writes else "read"]
    bw = float(d["bw_bytes_per_s"])
    return {"iops": float(d["iops"]), "bw_bytes_per_s": bw, "mib_per_s": bw / MIB}


def server_hold(stats_json: str, test: Test) -> dict[str, float]:
    """What the target recorded for the job's requests: the mean time it
    held each (``lat_ns``, header in to reply out) and how late its reply
    timer woke past the model's completion (``hold_late_ns``). Their
    difference is the stack's own service time as the target ran it, free
    of the wake-up lateness a loaded machine adds (docs/raid-lab.md).
    Means of the whole histograms, never percentiles averaged; the
    lateness's p50 and p99 from its histogram (the target's ``fidelity``
    record: how well the host held the model's real time)."""
    op = "write" if test.writes else "read"
    ops = json.loads(stats_json)["exports"][0]["ops"][op]
    lat = _native.hist_stats(ops["lat_ns"], [])
    late = _native.hist_stats(ops["hold_late_ns"], [50.0, 99.0])
    mean_lat, mean_late = float(lat["mean_ns"]), float(late["mean_ns"])
    pct = {float(p): float(v) for p, v in late["percentiles"].items()}
    return {
        "ios": float(lat["count"]),
        "lat_ns_mean": mean_lat,
        "hold_late_ns_mean": mean_late,
        "service_ns_mean": mean_lat - mean_late,
        "held": float(late["count"]),
        "late_ns_p50": pct[50.0],
        "late_ns_p99": pct[99.0],
    }


def model_figures(test: Test, spec: str, size: int, rtt_ns: float = MODEL_RTT_NS) -> dict[str, float]:
    """The stack's own figures for ``test`` on a virtual clock (no socket, no
    scheduling noise), its client paying ``rtt_ns`` per request (by default
    the round trip the model assumes)."""
    region = min(size, WRITE_REGION_BYTES) if test.writes else size
    bs = BS_BYTES[test.bs]
    rtt = max(round(rtt_ns), 0)
    ios, nbytes, ns = _native.lab_model(spec, test.rw, bs, test.iodepth, region, MODEL_RUNTIME_NS, rtt)
    return {"iops": ios / ns * 1e9, "mib_per_s": nbytes / ns * 1e9 / MIB}


def _measure_simulated(tests: list[Test], s: LabSettings, progress: Progress) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    arrays: dict[str, ArrayConfig] = {t.array.key: t.array for t in tests}
    with tempfile.TemporaryDirectory(prefix="iolab-lab-") as tmp:
        for key, array in arrays.items():
            sock = Path(tmp) / f"{key}.sock"
            spec = export_spec("r5", array, s.member)
            target = _native.Target(None, [spec], listen=f"unix:{sock}", realtime=s.realtime)
            target.start()
            try:
                size = target.exports()[0][1]
                uri = f"nbd+unix:///r5?socket={sock}"
                for t in (t for t in tests if t.array.key == key):
                    progress(f"{t.key} ({s.seconds:g} s)")
                    region = min(size, WRITE_REGION_BYTES) if t.writes else size
                    target.stats_json(reset=True)
                    res = run(lab_job(t, s.seconds, ioengine="nbd", uri=uri, size=region, realtime=s.realtime))
                    server = server_hold(target.stats_json(), t)
                    model = model_figures(t, spec, size)
                    # Interleaved with the test: the round trip the client
                    # paid in the same minute, against an export that does no work.
                    rtt = measure_rtt(
                        t,
                        model_hold_ns(t, model["iops"]),
                        s.probe_seconds,
                        realtime_target=s.realtime,
                        realtime_client=s.realtime,
                    )
                    out[t.key] = {
                        **_figures(res.summary, t),
                        "export": spec,
                        "model": model,
                        "server": server,
                        "rtt": rtt,
                        "model_rtt": model_figures(t, spec, size, rtt["rtt_ns"]),
                    }
            finally:
                target.shutdown()
                target.wait()
    return out


def _measure_real(tests: list[Test], s: LabSettings, progress: Progress) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    where: dict[str, Any] = (
        {"ioengine": "nbd", "uri": s.uri} if s.uri else {"filename": s.device, "direct": True, "ioengine": "io_uring"}
    )
    for t in tests:
        # The controller's settings are its own: only lab 1's (read) tests
        # apply, and iolab never writes to storage it did not create here.
        if t.array != LAB1 or t.writes:
            continue
        progress(f"{t.key} ({s.seconds:g} s)")
        res = run(lab_job(t, s.seconds, realtime=s.realtime, **where))
        out[t.key] = {**_figures(res.summary, t), "target": s.uri or s.device}
    return out


def run_lab(s: LabSettings, progress: Progress = lambda _: None) -> dict[str, Any]:
    """Run the labs; the report as a dict (see the module doc)."""
    tests = all_tests()
    measured = _measure_real(tests, s, progress) if s.real else _measure_simulated(tests, s, progress)
    return build_report(measured, s)


def build_report(measured: dict[str, dict[str, Any]], s: LabSettings) -> dict[str, Any]:
    """The report from the measured tests (``{test key: {"iops", "mib_per_s", ...}}``)."""
    tables: list[dict[str, Any]] = []
    tests = {t.key: t for t in all_tests()}
    for lab, title in TITLES.items():
        rows = []
        for r in (r for r in ROWS if r.lab == lab):
            m = measured.get(r.test.key) or {}
            key = "iops" if r.unit == "IOPS" else "mib_per_s"
            value = m.get(key)
            model = (m.get("model") or {}).get(key)
            model_rtt = (m.get("model_rtt") or {}).get(key)
            rows.append(
                {
                    "label": r.label,
                    "column": r.column,
                    "unit": r.unit,
                    "measured": value,
                    "model": model,
                    "model_rtt": model_rtt,
                    "reference": r.reference,
                    "ratio": None if value is None else value / r.reference,
                    "test": r.test.key,
                    "fidelity": fidelity(tests[r.test.key], m) if m else None,
                    "fit": fit_for(tests[r.test.key], m) if m else None,
                }
            )
        tables.append({"lab": lab, "title": title, "rows": rows})
    where = (
        s.uri or s.device or f"simulated RAID 5: {MEMBERS} x {s.member.replace('{wcache}', 'on|off')}, strip {STRIP}"
    )
    return {
        "schema": SCHEMA,
        "target": where,
        "simulated": not s.real,
        "quick": s.quick,
        "runtime_s": s.seconds,
        "realtime": s.realtime,
        "tables": tables,
        "answers": answers(measured),
        "gaps": gaps(measured),
        "tests": measured,
    }
