"""Verdicts on seed 004's findings, each a pure function of measured
points (the dicts :func:`iolab.lab.pacing.run.measure_point` returns):
``{"claim", "statement", "verdict", "evidence", "numbers"}`` with verdict
``held``, ``not held`` or ``not testable`` and the numbers it used."""

from __future__ import annotations

import statistics
from typing import Any, Optional

from iolab.lab.pacing.seed import BY_NUMBER, T8_HANG_QD

Json = dict[str, Any]
HELD, NOT_HELD, UNTESTABLE = "held", "not held", "not testable"
#: Pacing "costs nothing": the paced BW at least this share of the unpaced (each QD).
FREE_RATIO = 0.93
#: "Keeps" the bandwidth: the issue's 5 % between QD 32 and QD 256.
KEEP_RATIO = 0.95
#: "Falls": at least the seed's own ratio (test 3, QD 256 over QD 32).
SEED_FALL = 145.1 / 178.2
#: A cache of 1 "degrades": deep-QD BW below this share of cache 6's.
DEGRADE_RATIO = 0.9
#: The knee: the fewest buffers whose BW is within this share of the best.
KNEE_SHARE = 0.95
#: "Stable": BW sd over repeats within this share of the mean at every QD.
STABLE_CV = 0.05


def _ok(p: Json) -> bool:
    return p.get("starved") is None and p.get("total") is not None


def curve(points: list[Json], test: int, variant: str = "") -> dict[int, float]:
    """x → mean total BW (MiB/s) over the repeats that ran to the end."""
    by: dict[int, list[float]] = {}
    for p in points:
        pt = p["point"]
        if pt["test"] == test and pt["variant"] == variant and _ok(p):
            by.setdefault(pt["x"], []).append(p["total"]["bw_mib_s"])
    return {x: statistics.fmean(v) for x, v in sorted(by.items())}


def _first_variant(test: int) -> str:
    return BY_NUMBER[test].variants[0].label


def _claim(claim: str, statement: str, verdict: str, evidence: str, numbers: Json) -> Json:
    return {"claim": claim, "statement": statement, "verdict": verdict, "evidence": evidence, "numbers": numbers}


def pacing_free_on_null(points: list[Json]) -> Json:
    """Tests 4 vs 2: pacing (96 buffers) costs no bandwidth on null devices."""
    s = "Pacing (96 buffers) costs nothing on null devices (test 4 vs test 2)."
    a, b = curve(points, 2), curve(points, 4)
    common = sorted(set(a) & set(b))
    if not common:
        return _claim("pacing_free_on_null", s, UNTESTABLE, "tests 2 and 4 share no QD", {})
    ratios = {q: b[q] / a[q] for q in common}
    worst = min(ratios, key=lambda q: ratios[q])
    v = HELD if ratios[worst] >= FREE_RATIO else NOT_HELD
    ev = f"paced/unpaced BW from {min(ratios.values()):.3f} (QD {worst}) to {max(ratios.values()):.3f}; held at ≥ {FREE_RATIO}"
    return _claim("pacing_free_on_null", s, v, ev, {"ratio_by_qd": ratios, "test2": a, "test4": b})


def pacing_holds_deep_qd(points: list[Json]) -> Json:
    """Tests 5 vs 3: with pacing 96/6 BW at QD 256 stays within 5 % of QD 32;
    without pacing it falls by at least the seed's ratio."""
    s = "Pacing holds bandwidth at deep queues where none drops (test 5 vs test 3)."
    c3, c5 = curve(points, 3), curve(points, 5)
    if not all(q in c for c in (c3, c5) for q in (32, 256)):
        return _claim("pacing_holds_deep_qd", s, UNTESTABLE, "needs QD 32 and 256 of tests 3 and 5", {})
    r3, r5 = c3[256] / c3[32], c5[256] / c5[32]
    v = HELD if r5 >= KEEP_RATIO and r3 <= SEED_FALL else NOT_HELD
    ev = (
        f"paced QD 256/QD 32 = {c5[256]:.1f}/{c5[32]:.1f} = {r5:.3f} (held at ≥ {KEEP_RATIO}); "
        f"unpaced {c3[256]:.1f}/{c3[32]:.1f} = {r3:.3f} (held at ≤ the seed's 145.1/178.2 = {SEED_FALL:.3f})"
    )
    return _claim("pacing_holds_deep_qd", s, v, ev, {"paced_ratio": r5, "unpaced_ratio": r3, "test3": c3, "test5": c5})


def _t8(points: list[Json], cache: int) -> list[Json]:
    return [p for p in points if p["point"]["test"] == 8 and p["point"]["variant"] == f"cache {cache}"]


def cache_starvation(points: list[Json]) -> Json:
    """Test 8: a cache of 0 starves at QD ≥ 128 (reported, not hung); a cache of 1 degrades at deep QD."""
    s = "A buffer cache of 0 starves threads at QD ≥ 128; a cache of 1 degrades at deep queues (test 8)."
    zero, c6 = _t8(points, 0), curve(points, 8, "cache 6")
    c1 = curve(points, 8, "cache 1")
    deep0 = [p for p in zero if p["point"]["qd"] >= T8_HANG_QD]
    if not deep0:
        return _claim("cache_starvation", s, UNTESTABLE, f"no cache 0 point at QD ≥ {T8_HANG_QD}", {})
    starved = sorted(p["point"]["qd"] for p in zero if p.get("starved"))
    all_deep = all(p.get("starved") for p in deep0)
    common = sorted(q for q in set(c1) & set(c6) if q >= T8_HANG_QD)
    deg = {q: c1[q] / c6[q] for q in common}
    degrades: Optional[bool] = min(deg.values()) < DEGRADE_RATIO if deg else None
    waits = [w for p in zero if p.get("starved") for w in p["starved"]["waiting"]]
    v = HELD if all_deep and degrades is not False else NOT_HELD
    parts = [f"cache 0 starved at QD {starved or 'none'} (of {sorted(p['point']['qd'] for p in zero)})"]
    if waits:
        longest = max(waits, key=lambda w: w["waited_ms"])
        parts.append(
            f"{len(waits)} requests waiting at the deadline, longest {longest['waited_ms']:.0f} ms "
            f"(connection {longest['conn']}, group {longest['group']}, export {longest['export']}, "
            f"{longest['buffers']} buffer(s), its group holding {longest['group_in_use']})"
        )
    if deg:
        parts.append("cache 1 / cache 6 BW " + ", ".join(f"QD {q}: {r:.3f}" for q, r in deg.items()))
    else:
        parts.append("cache 1 vs 6 at deep QD not measured")
    if starved and min(starved) < T8_HANG_QD:
        parts.append(f"starvation also below the seed's QD {T8_HANG_QD}")
    return _claim("cache_starvation", s, v, "; ".join(parts), {"starved_qds": starved, "cache1_over_cache6": deg})


def knee(rows: dict[int, float]) -> Optional[int]:
    """The fewest buffers whose BW is within :data:`KNEE_SHARE` of the best."""
    if not rows:
        return None
    best = max(rows.values())
    return min(b for b, bw in rows.items() if bw >= KNEE_SHARE * best)


def buffers_knee(points: list[Json], test: int) -> Json:
    """Tests 9, 10: too few buffers cut BW; where the knee lies, beside the seed's."""
    s = f"Too few buffers cut bandwidth; the knee (test {test}, QD 256)."
    m = curve(points, test, _first_variant(test))
    seed_rows = {r.x: r.bw for r in BY_NUMBER[test].variants[0].rows}
    if len(m) < 2:
        return _claim(f"buffers_knee_{test}", s, UNTESTABLE, "fewer than two buffer counts measured", {})
    lo, hi = min(m), max(m)
    cut = m[lo] / max(m.values())
    k, ks = knee(m), knee(seed_rows)
    v = HELD if cut < 0.9 else NOT_HELD
    ev = f"{lo} buffers give {m[lo]:.1f} MiB/s = {cut:.3f} of the best; knee at {k} buffers (seed's: {ks}); measured {lo}..{hi}"
    return _claim(f"buffers_knee_{test}", s, v, ev, {"bw": m, "knee": k, "seed_knee": ks, "cut": cut})


def _delay_point(points: list[Json], test: int, qd: int) -> Optional[Json]:
    ps = [p for p in points if p["point"]["test"] == test and p["point"]["qd"] == qd and _ok(p)]
    return ps[0] if ps else None


def slow_parts_hog(points: list[Json], paced: int, unpaced: int, base: int = 12) -> Json:
    """Tests 14/16 (paced) vs 13/15 (unpaced) and 12 (paced, no delay): the
    delayed parts hold most of the pool and the fast parts' bandwidth falls."""
    s = f"Slow (delayed) parts hog the pool and starve the fast ones (test {paced} vs {base} and {unpaced})."
    qds = sorted(
        {p["point"]["qd"] for p in points if p["point"]["test"] == paced and _ok(p)}
        & {p["point"]["qd"] for p in points if p["point"]["test"] == base and _ok(p)}
    )
    if not qds:
        return _claim(f"slow_parts_hog_{paced}", s, UNTESTABLE, f"tests {paced} and {base} share no QD", {})
    q = qds[-1]
    d, b = _delay_point(points, paced, q), _delay_point(points, base, q)
    assert d is not None and b is not None
    slow_parts = {"delay1": 1, "delay2": 2}[BY_NUMBER[paced].stack]
    fast = [n for n in d["server"]["export_bytes"] if int(n.rsplit("p", 1)[1]) >= slow_parts]
    win_d = d["server"]["fast_mib_s"]
    fast_base = sum(b["server"]["export_bytes"][n] for n in fast) / (1 << 20) / b["server"]["window_s"]
    hold = d["server"]["slow_hold_share"]
    u = _delay_point(points, unpaced, q)
    v = HELD if hold > 0.5 and win_d < 0.9 * fast_base else NOT_HELD
    ev = (
        f"QD {q}: delayed parts hold {hold:.0%} of the buffer-time; fast parts {win_d:.1f} MiB/s "
        f"({d['server']['fast_share']:.0%} of bytes) against {fast_base:.1f} MiB/s for the same parts undelayed (test {base})"
    )
    if u is not None:
        ev += f"; without pacing (test {unpaced}) fast parts {u['server']['fast_mib_s']:.1f} MiB/s ({u['server']['fast_share']:.0%})"
    return _claim(
        f"slow_parts_hog_{paced}",
        s,
        v,
        ev,
        {"qd": q, "slow_hold_share": hold, "fast_mib_s": win_d, "fast_mib_s_undelayed": fast_base},
    )


def stability(points: list[Json]) -> Json:
    """Test 6: BW sd over repeats within 5 % of the mean at every QD (the seed's: ≤ 2 %)."""
    s = "Results are stable across repeats (test 6: BW standard deviation)."
    by: dict[int, list[float]] = {}
    for p in points:
        if p["point"]["test"] == 6 and _ok(p):
            by.setdefault(p["point"]["x"], []).append(p["total"]["bw_mib_s"])
    by = {q: v for q, v in by.items() if len(v) >= 2}
    if not by:
        return _claim("stability", s, UNTESTABLE, "fewer than two repeats", {})
    cv = {q: statistics.stdev(v) / statistics.fmean(v) for q, v in sorted(by.items())}
    seed_cv = {}
    for q in cv:
        runs = [r.bw for r in BY_NUMBER[6].variants[0].rows if r.x == q]
        seed_cv[q] = statistics.stdev(runs) / statistics.fmean(runs) if len(runs) > 1 else None
    v = HELD if max(cv.values()) <= STABLE_CV else NOT_HELD
    ev = ", ".join(
        f"QD {q}: sd {c:.1%} of the mean over {len(by[q])} runs (seed {seed_cv[q]:.1%})" for q, c in cv.items()
    )
    return _claim("stability", s, v, ev, {"cv": cv, "seed_cv": seed_cv, "runs": {q: len(v) for q, v in by.items()}})


def all_verdicts(points: list[Json]) -> list[Json]:
    tests = {p["point"]["test"] for p in points}
    out = []
    if {2, 4} <= tests:
        out.append(pacing_free_on_null(points))
    if {3, 5} <= tests:
        out.append(pacing_holds_deep_qd(points))
    if 8 in tests:
        out.append(cache_starvation(points))
    for t in (9, 10):
        if t in tests:
            out.append(buffers_knee(points, t))
    for paced, unpaced in ((14, 13), (16, 15)):
        if {paced, 12} <= tests:
            out.append(slow_parts_hog(points, paced, unpaced))
    if 6 in tests:
        out.append(stability(points))
    return out
