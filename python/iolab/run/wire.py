"""Wire latency: a run against an iolab target, measured at both ends.

Seed 000 (Figure 6) compares the distributions of client and server
latency: the difference at each percentile from the 10th to the 99th is
the *wire latency* — the time spent outside the server (network stacks,
the wire, the client's own protocol handling). This module:

- :class:`TargetStats`, a :class:`~iolab.run.local.RunObserver` for an
  iolab target's stats endpoint (``iolab target --stats-http``): it starts
  a new server window (``POST /reset``) just before the workers start and
  takes it (``POST /reset`` again: snapshot and reset in one step) once the
  last reply has been received, so the server counts exactly the client's
  I/Os;
- :func:`target_observer`: checks the jobs (every job ``ioengine=nbd``, no
  ``ramp_time``) and that the URL answers like an iolab target;
- :func:`wire_report`: the pure computation from the run's raw result and
  the server's window: per export and direction, client (``lat``: issue →
  reap) and server (request header received → reply written, less the
  WRITE payload's arrival) percentiles, their difference, the counts at
  both ends; the server's CPU in the client summary's form (%CPU, cycles
  per I/O, c/B, computed by the target in Rust); payload vs wire bytes.

Wire bytes are derived from NBD's framing (a 28-byte request header per
request, a 16-byte simple reply per reply — iolab's client never
negotiates structured replies), not counted on a socket; the handshake and
NBD_CMD_DISC are outside the window. tests/interop/test_wire.py checks the
formula against the bytes a counting TCP proxy sees.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any, Optional, Union

from iolab import _native
from iolab.errors import EngineError, JobError
from iolab.jobs import JobSpec
from iolab.run.local import RunOutput, prepare

Json = dict[str, Any]

#: Where the observer's window lands in ``RunOutput.observed`` and the
#: results document.
NAME = "nbd_target"
#: The section's file in a run directory (``iolab run --results``).
WIRE_FILE = "wire.json"
#: Percentiles compared, as in seed 000's Figure 6 (10th to 95th) plus the 99th.
WIRE_PERCENTILES = (10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0)
#: NBD request header and simple reply sizes: iolab-nbd's, through the native module.
NBD_REQUEST_HEADER_BYTES = _native.NBD_REQUEST_BYTES
NBD_SIMPLE_REPLY_BYTES = _native.NBD_SIMPLE_REPLY_BYTES
#: Requests the target counts; every one has a header and one simple reply.
_OPS = ("read", "write", "flush", "trim", "zero")
_DIRS = ("read", "write", "trim")

LATENCY_DEFINITIONS = {
    "client": "lat: issue to reap at the client (total latency), ns",
    "server": "request header received to reply written at the target, less the WRITE payload's arrival, ns",
    "wire": "client minus server at the same percentile, ns; negative = below the timing resolution",
}
BYTES_METHOD = (
    "derived from NBD framing (28-byte request header per request, 16-byte simple reply per reply) "
    "and the target's counts; handshake and disconnect excluded; not counted on the socket"
)


class TargetStats:
    """An iolab target's stats endpoint, bracketing a run's window."""

    name = NAME

    def __init__(self, url: str, *, option: str = "target_stats", timeout_s: float = 10.0) -> None:
        self.base = stats_base(url, option)
        self.option = option
        self.timeout_s = timeout_s

    def check(self) -> Json:
        """The current window (``GET /stats``); raises ``EngineError`` naming
        the option unless the URL answers like an iolab target."""
        return self._call("GET", "/stats")

    def begin(self) -> None:
        self._call("POST", "/reset")

    def end(self) -> Json:
        snap = self._call("POST", "/reset")
        snap["stats_url"] = self.base
        return snap

    def _call(self, method: str, path: str) -> Json:
        url = self.base + path
        req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
                doc = json.loads(r.read())
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise EngineError(f"{self.option} {self.base}: {method} {path} failed: {_reason(e)}") from None
        if not isinstance(doc, dict) or not {"iolab_version", "exports", "cpu", "window_ns"} <= doc.keys():
            raise EngineError(
                f"{self.option} {self.base}: {method} {path} did not answer like an iolab target's stats "
                "endpoint (start one with `iolab target --stats-http HOST:PORT`)"
            )
        return doc


def _reason(e: Exception) -> str:
    return str(getattr(e, "reason", None) or e)


def stats_base(url: str, option: str = "target_stats") -> str:
    """``http://h:p``, ``http://h:p/stats`` or ``h:p`` → ``http://h:p``."""
    u = url.strip()
    if "://" not in u:
        u = "http://" + u
    if not u.startswith("http://"):
        raise JobError(f"{option} '{url}': expected http://HOST:PORT (the target's --stats-http)")
    for suffix in ("/", "/stats", "/reset", "/metrics"):
        if u.endswith(suffix) and u.count("/") > 2:
            u = u[: -len(suffix)]
    return u.rstrip("/")


def check_jobs(prepared: Sequence[Json], option: str = "target_stats") -> None:
    """Every job must drive an NBD target, over the whole of its run: the
    server's window cannot start at the end of a ramp, so ramp_time is refused."""
    for job in prepared:
        if job.get("ioengine") != "nbd":
            raise JobError(
                f"{option}: job {job['name']} uses ioengine={job.get('ioengine')}; server statistics "
                "need --ioengine=nbd with --uri pointing at the iolab target"
            )
        if job.get("ramp_time_ns"):
            raise JobError(
                f"{option}: job {job['name']} has ramp_time; the target would count the ramp's I/Os "
                "that the client throws away: drop ramp_time (run a separate warm-up job first)"
            )


def target_observer(url: str, jobs: Sequence[Union[JobSpec, Json]], option: str = "target_stats") -> TargetStats:
    """A checked observer for ``jobs`` (prepared, as :func:`prepare_all`
    gives them; a ``JobSpec`` is prepared here) against the target at ``url``."""
    prepared = [j if isinstance(j, dict) else prepare(j) for j in jobs]
    check_jobs(prepared, option)
    obs = TargetStats(url, option=option)
    snap = obs.check()
    for job in prepared:
        try:
            _export_name(job["nbd"]["export"], snap)
        except EngineError as e:
            raise EngineError(f"{option} {obs.base}: job {job['name']}: {e}") from None
    return obs


def wire_section(out: RunOutput) -> Optional[Json]:
    """The ``nbd_target`` section of a run observed by :class:`TargetStats`:
    the server's window and the wire report; None when it was not observed."""
    snap = out.observed.get(NAME)
    if snap is None:
        return None
    return {"server": snap, "wire": wire_report(out.result, snap)}


def wire_report(result: Json, snap: Json) -> Json:
    """Client vs server per export and direction (see the module doc)."""
    by_export: dict[str, list[Json]] = {}
    for job in result["jobs"]:
        nbd = job["job"].get("nbd") or {}
        by_export.setdefault(_export_name(nbd.get("export", ""), snap), []).append(job)
    exports = [
        {**_export_report(name, jobs, _server_ops(snap, name)), "fidelity": export_fidelity(snap, name)}
        for name, jobs in by_export.items()
    ]
    return {
        "percentiles": list(WIRE_PERCENTILES),
        "latency_definitions": LATENCY_DEFINITIONS,
        "server_window_ns": snap["window_ns"],
        "server_cpu": snap.get("cpu_summary"),
        "exports": exports,
        "ios_match": all(d["ios_match"] for e in exports for d in e["directions"].values()),
        "bytes_method": BYTES_METHOD,
    }


def _export_name(export: str, snap: Json) -> str:
    names = [e["name"] for e in snap["exports"]]
    if export in names:
        return export
    if export == "" and len(names) == 1:
        return str(names[0])  # the default export of a one-export target
    raise EngineError(f"the target's window has no export '{export}' (it serves: {', '.join(names)})")


def export_fidelity(snap: Json, name: str) -> Optional[Json]:
    """How late the target's held replies to export ``name`` went out against
    their model time (a delay layer's hold or a simulated disk's completion):
    ``{"held", "late_ns_p50", "late_ns_p99", "late_ns_max"}`` from the
    target's ``fidelity`` record (percentiles of its merged histogram);
    None when nothing was held or the target predates the record."""
    f = next((x for x in snap.get("fidelity", []) if x["export"] == name), None)
    if f is None or not f["held"]:
        return None
    return {k: f[k] for k in ("held", "late_ns_p50", "late_ns_p99", "late_ns_max")}


def _server_ops(snap: Json, name: str) -> Json:
    ops: Json = next(e["ops"] for e in snap["exports"] if e["name"] == name)
    return ops


def _export_report(name: str, jobs: list[Json], ops: Json) -> Json:
    directions = {}
    for i, d in enumerate(_DIRS):
        # A worker's dirs hold a trim slot only when it trimmed.
        dirs = [w["dirs"][i] for j in jobs for w in j["workers"] if len(w["dirs"]) > i]
        client_ios = sum(x["ios"] + x["errors"] for x in dirs)
        if (client_ios == 0 and ops[d]["ios"] == 0) or not dirs:
            continue
        directions[d] = wire_latency(dirs, client_ios, ops[d])
    syncs = sum(w.get("syncs", 0) for j in jobs for w in j["workers"])
    return {
        "export": name,
        "jobs": [j["name"] for j in jobs],
        "directions": directions,
        "client_syncs": syncs,
        "server_flushes": ops["flush"]["ios"],
        "bytes": wire_bytes(ops),
    }


def wire_latency(dirs: list[Json], client_ios: int, server: Json) -> Json:
    """Wire latency of one direction at each of :data:`WIRE_PERCENTILES`:
    the client's total latency (every worker's histogram merged exactly)
    minus the server's, percentile by percentile — the one place it is
    computed (docs/architecture.md)."""
    client_p = _percentiles(_native.hist_merge([x["lat_ns"] for x in dirs]))
    server_p = _percentiles(server["lat_ns"])
    rows = []
    for p in WIRE_PERCENTILES:
        c, s = client_p.get(p), server_p.get(p)
        wire = None if c is None or s is None else c - s
        # Each percentile is exact to 3 significant digits (the histogram's
        # precision); the difference inherits both errors.
        bound = None if wire is None else -(-(int(c or 0) + int(s or 0)) // 1000)
        rows.append({"percentile": p, "client_ns": c, "server_ns": s, "wire_ns": wire, "error_bound_ns": bound})
    return {
        "client_ios": client_ios,
        "server_ios": server["ios"],
        "ios_match": client_ios == server["ios"],
        "rows": rows,
        "negative_at": [r["percentile"] for r in rows if r["wire_ns"] is not None and r["wire_ns"] < 0],
    }


def _percentiles(hist: str) -> dict[float, int]:
    stats = _native.hist_stats(hist, list(WIRE_PERCENTILES))
    if stats["count"] == 0:
        return {}
    return {float(p): int(v) for p, v in stats["percentiles"].items()}


def wire_bytes(ops: Json) -> Json:
    """Payload vs wire bytes each way, from the target's counts and NBD's
    framing (see the module doc). Failed requests count their header and
    reply; their payload is not in the target's byte counts."""
    requests = sum(ops[o]["ios"] for o in _OPS)
    to_payload, from_payload = ops["write"]["bytes"], ops["read"]["bytes"]
    to_wire = to_payload + requests * NBD_REQUEST_HEADER_BYTES
    from_wire = from_payload + requests * NBD_SIMPLE_REPLY_BYTES
    total_payload, total_wire = to_payload + from_payload, to_wire + from_wire
    return {
        "requests": requests,
        "to_target_payload_bytes": to_payload,
        "to_target_wire_bytes": to_wire,
        "from_target_payload_bytes": from_payload,
        "from_target_wire_bytes": from_wire,
        "payload_bytes": total_payload,
        "wire_bytes": total_wire,
        "overhead_pct": 100.0 * (total_wire - total_payload) / total_wire if total_wire else 0.0,
    }


__all__ = [
    "NAME",
    "NBD_REQUEST_HEADER_BYTES",
    "NBD_SIMPLE_REPLY_BYTES",
    "WIRE_PERCENTILES",
    "TargetStats",
    "check_jobs",
    "stats_base",
    "target_observer",
    "wire_bytes",
    "wire_report",
    "wire_section",
]
