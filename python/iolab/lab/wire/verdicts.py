"""Seed 000's claims judged on measured steps: pure functions of the
lab's points (:func:`iolab.lab.wire.measure.point`), each returning
``{"claim", "verdict", "numbers", "text"}`` with a verdict of
:data:`HELD`, :data:`NOT_HELD` or :data:`NOT_MEASURABLE`.

Thresholds (stated, not fitted to any run):

- near-constant wire latency: the wire's p50 at every size within
  :data:`WIRE_SPREAD_MAX` x the smallest (the paper's Figure 6 band is
  ~30-60 µs: a factor 2);
- saturation: the first step whose throughput rose less than
  :data:`FLAT_GAIN` while the outstanding I/Os doubled;
- the bottleneck at that step: the link when it carried
  :data:`LINK_BUSY` of its bandwidth, else the CPU side (client or server)
  with the higher use of the CPUs it may run on, when that is at least
  :data:`CPU_MARGIN` x the other side's and either at least
  :data:`CPU_BUSY` or the host's CPUs were all busy (less than
  :data:`HOST_IDLE` idle: on a shared host no process gets all of its
  CPUs, and the one that needs the most CPU per I/O is the one that waits);
- the knee: at saturation p90 latency rose by :data:`KNEE_LAT` x or more,
  in the small-I/O series (Tables 2 and 3, where the paper states it;
  large I/O's latency is the queueing claim's);
- 8 KiB c/B close to local storage's: within :data:`LOCAL_CLOSE` of the
  same load's c/B on a local file (the paper: 6.4 against 6.0-6.5);
- queueing: Q·S/B within :data:`QUEUE_TOL` of the measured rise of the
  median latency (the step's p50 less the single I/O's p50 without its
  own transmit time S/B).
"""

from __future__ import annotations

from typing import Any, Optional

from iolab.lab.wire.paper import CLAIMS

Json = dict[str, Any]
HELD, NOT_HELD, NOT_MEASURABLE = "held", "did not hold", "not measurable here"
WIRE_SPREAD_MAX = 2.0
FLAT_GAIN = 0.25
LINK_BUSY = 0.85
CPU_BUSY = 0.5
CPU_FULL = 0.9
CPU_MARGIN = 1.15
HOST_IDLE = 10.0
KNEE_LAT = 1.5
QUEUE_TOL = 0.15
LOCAL_CLOSE = 0.25


def _v(key: str, verdict: str, text: str, **numbers: Any) -> Json:
    return {"claim": key, "statement": CLAIMS[key], "verdict": verdict, "text": text, "numbers": numbers}


def _p(point: Json, d: str, side: str, pct: str) -> Optional[int]:
    v = point.get("directions", {}).get(d, {}).get(f"{side}_ns", {}).get(pct)
    return None if v is None else int(v)


def wire_constant(single: list[Json], d: str = "read") -> Json:
    """Near-constant wire latency across sizes, from the QD 1 points."""
    if not single:
        return _v("wire_constant", NOT_MEASURABLE, "Table 1 (single I/O) not run")
    wires = {p["bs_bytes"]: _p(p, d, "wire", "p50") for p in single if p["rw"].endswith(d)}
    known = {k: v for k, v in wires.items() if v is not None}
    if len(known) < 2:
        return _v("wire_constant", NOT_MEASURABLE, "no server-side latency: the wire cannot be known")
    lo, hi = min(known.values()), max(known.values())
    if lo <= 0:
        return _v("wire_constant", NOT_MEASURABLE, f"wire p50 {lo} ns is below the timing resolution")
    spread = hi / lo
    us = {f"{k // 1024} KiB": round(v / 1000, 1) for k, v in sorted(known.items())}
    verdict = HELD if spread <= WIRE_SPREAD_MAX else NOT_HELD
    text = f"{d} wire p50 by size (us): {us}; largest / smallest = {spread:.2f} (near-constant: <= {WIRE_SPREAD_MAX:g})"
    return _v("wire_constant", verdict, text, wire_p50_us=us, spread=spread)


def saturation(steps: list[Json]) -> Optional[int]:
    """Index of the first step whose throughput rose less than FLAT_GAIN
    over the step before it (at least twice the load); None if every step gained."""
    for i in range(1, len(steps)):
        a, b = steps[i - 1], steps[i]
        if b["outstanding"] >= 2 * a["outstanding"] and b["bw_bytes_per_s"] < (1 + FLAT_GAIN) * a["bw_bytes_per_s"]:
            return i
    return None


def bottleneck(p: Json) -> Json:
    """What limited one step: ``{"side": "link"|"server CPU"|"client CPU"|None, "text"}``."""
    link = p.get("link_util")
    c = (p.get("client") or {}).get("cpu_pct")
    s = (p.get("server") or {}).get("cpu_pct")
    parts = [f"client CPU {c:.0f} % of {p['client']['cpus']}" if c is not None else "client CPU unknown"]
    parts.append(f"server CPU {s:.0f} % of {p['server']['cpus']}" if s is not None else "server CPU unknown")
    parts.append(f"link {100 * link:.0f} % busy" if link is not None else "link bandwidth unknown")
    idle = [x.get("host_idle_pct") for x in (p.get("client"), p.get("server")) if x]
    idle_known = [x for x in idle if x is not None]
    host_busy = bool(idle_known) and max(idle_known) < HOST_IDLE
    if idle_known:
        parts.append(f"host {max(idle_known):.0f} % idle")
    used = ", ".join(parts)
    if link is not None and link >= LINK_BUSY:
        return {"side": "link", "text": f"the link ({used})"}
    if c is not None and s is not None:
        hi, lo, side = (s, c, "server CPU") if s >= c else (c, s, "client CPU")
        # With no idle CPU, other work takes CPU from both sides, and a side
        # pinned beside it gets less than its CPUs whatever it needs (a
        # process's share does not show how long it waited to run): a side
        # is named then only when it kept its own CPUs all but full.
        busy_enough = hi >= 100 * (CPU_FULL if host_busy else CPU_BUSY)
        if busy_enough and hi >= CPU_MARGIN * lo:
            return {"side": side, "text": f"the {side} ({used})"}
        if host_busy:
            return {"side": None, "text": f"undetermined: the host had no idle CPU ({used})"}
    return {"side": None, "text": f"undetermined ({used})"}


def _series_text(steps: list[Json], i: Optional[int]) -> str:
    if i is None:
        last = steps[-1]
        return f"no step flattened (last: {last['threads']} threads, {last['iops']:,.0f} IOPS)"
    a, b = steps[i - 1], steps[i]
    gain = 100 * (b["bw_bytes_per_s"] / a["bw_bytes_per_s"] - 1)
    return f"saturated at {b['threads']} threads ({b['outstanding']} I/O): throughput {gain:+.0f} % over {a['threads']}"


def server_cpu_limit(series: dict[str, list[Json]]) -> Json:
    """IOPS limited by server CPU: the bottleneck named at each small-I/O
    series' saturation step (or its last step when none flattened)."""
    named, texts = {}, []
    for name, steps in series.items():
        if not steps:
            continue
        i = saturation(steps)
        b = bottleneck(steps[i if i is not None else -1])
        named[name] = b["side"]
        texts.append(f"{name}: {_series_text(steps, i)}; limit: {b['text']}")
    if not named or all(v is None for v in named.values()):
        return _v("server_cpu_limit", NOT_MEASURABLE, "; ".join(texts) or "no scaling series", bottleneck=named)
    # A series whose limit could not be told (a host with no idle CPU) is
    # left out of the verdict; its text says so.
    verdict = HELD if all(v in ("server CPU", None) for v in named.values()) else NOT_HELD
    return _v("server_cpu_limit", verdict, "; ".join(texts), bottleneck=named)


def cb_falls(by_size: dict[int, Optional[float]]) -> Json:
    """Client c/B falls as the I/O size grows (each size's figure at its
    highest-throughput step)."""
    known = sorted((k, v) for k, v in by_size.items() if v is not None)
    if len(known) < 2:
        return _v("cb_falls", NOT_MEASURABLE, "client CPU time not measured")
    falls = all(b[1] < a[1] for a, b in zip(known, known[1:]))
    cb = {f"{k // 1024} KiB": round(v, 2) for k, v in known}
    return _v("cb_falls", HELD if falls else NOT_HELD, f"client c/B by size: {cb}", client_c_per_b=cb)


def cb_local(remote: Optional[float], local: Optional[float]) -> Json:
    """8 KiB client c/B against the same load on a local file."""
    if not remote or not local:
        return _v("cb_local", NOT_MEASURABLE, "no 8 KiB client c/B or no local run")
    ratio = remote / local
    verdict = HELD if abs(ratio - 1) <= LOCAL_CLOSE else NOT_HELD
    text = (
        f"8 KiB random read, client c/B {remote:.2f} over NBD against {local:.2f} on a local file: "
        f"x{ratio:.2f} (close: within {100 * LOCAL_CLOSE:.0f} %)"
    )
    return _v("cb_local", verdict, text, remote_c_per_b=remote, local_c_per_b=local, ratio=ratio)


def knee(series: dict[str, list[Json]]) -> Json:
    """At saturation latency jumps while throughput flattens."""
    seen, texts, jumps = 0, [], []
    for name, steps in series.items():
        i = saturation(steps)
        if i is None:
            continue
        seen += 1
        a, b = steps[i - 1], steps[i]
        la = _p(a, "read", "client", "p90") or _p(a, "write", "client", "p90")
        lb = _p(b, "read", "client", "p90") or _p(b, "write", "client", "p90")
        if not la or not lb:
            continue
        rise = lb / la
        jumps.append(rise >= KNEE_LAT)
        texts.append(f"{name}: {_series_text(steps, i)}, p90 x{rise:.2f}")
    if not jumps:
        return _v("knee", NOT_MEASURABLE, "no series reached saturation at these loads", saturated=seen)
    verdict = HELD if all(jumps) else NOT_HELD
    return _v("knee", verdict, "; ".join(texts) + f" (a jump: p90 x{KNEE_LAT:g} or more)", saturated=seen)


def queueing(single: Optional[Json], loaded: Optional[Json], link_bw: Optional[int]) -> Json:
    """Q·S/B against the measured rise of the median latency at the loaded step."""
    if single is None or loaded is None or not link_bw:
        return _v("queueing", NOT_MEASURABLE, "needs the link's bandwidth and the single and loaded steps")
    s, q = loaded["bs_bytes"], loaded["outstanding"]
    base, at = _p(single, "read", "client", "p50"), _p(loaded, "read", "client", "p50")
    if base is None or at is None:
        return _v("queueing", NOT_MEASURABLE, "no read latency at one of the steps")
    own_ns = s / link_bw * 1e9
    predicted_ns = q * s / link_bw * 1e9
    measured_ns = at - (base - own_ns)
    err = abs(measured_ns - predicted_ns) / predicted_ns
    link = loaded.get("link_util")
    busy = "" if link is None else f"; link {100 * link:.0f} % busy"
    lo, hi = _p(loaded, "read", "client", "p10"), _p(loaded, "read", "client", "p90")
    if lo is not None and hi is not None:
        busy += f"; latency spread p10 {lo / 1e6:.2f} ms to p90 {hi / 1e6:.2f} ms"
    text = (
        f"{q} x {s // 1024} KiB / {link_bw / 1e9:.3g} GB/s = {predicted_ns / 1e6:.2f} ms transmit time; "
        f"measured median rise {measured_ns / 1e6:.2f} ms ({100 * err:.0f} % off, within {100 * QUEUE_TOL:.0f} %: held){busy}"
    )
    verdict = HELD if err <= QUEUE_TOL else NOT_HELD
    return _v("queueing", verdict, text, predicted_ms=predicted_ns / 1e6, measured_ms=measured_ns / 1e6, error=err)
