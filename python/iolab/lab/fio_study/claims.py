"""Each statement of seed 002's written analysis, verdicted against the
measured data, with the numbers behind it; and iolab's own reading of each
sweep, computed from the same figures.

Verdicts: ``supported`` (the data show it beyond the noise),
``contradicted`` (they show the opposite, or no change where one is
claimed, beyond the noise), ``inconclusive`` (the differences are within
the noise: never counted as support) and ``not testable`` (a cause inside
the SSD that end-to-end figures cannot see, or a queue-depth claim where
the engine kept one I/O in flight at every iodepth).

Figures (each verdict names its own):

- latency, on the simulated SSD: the target's own record of each request,
  its hold less its reply timer's lateness (``service_us``): the device's
  time, which a busy host's late wake-ups do not enter;
- latency elsewhere: the **median** total latency (p50 of each repeat's
  histogram; for both directions together, of their merged histograms).
  A busy host's scheduling stalls land in the tail and move the mean far
  more than the median, so the median is the client figure a loaded
  machine distorts least.
- throughput: IOPS over the time the I/Os ran (read + write for "the
  bandwidth" of a mix), the client's figure: there is no undisturbed one
  for a file, and a loaded host lowers it.

Noise: a difference counts only beyond ``max(LAB_NOISE_PCT, the
repeats' CV at either end)`` and, with two or more repeats, only when the
two 95 % intervals of the mean do not overlap; trends are classified by
:func:`iolab.analysis.trends.classify` (monotone beyond the noise, or
Kendall's tau with p < 0.05 and a straight line agreeing), and a
supported trend also needs a whole change beyond ``LAB_NOISE_PCT`` and
Kendall's tau of at least ``TAU_MIN`` in its direction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable, Optional

from iolab.analysis.stats import describe
from iolab.analysis.trends import TREND_NOISE_PCT, classify
from iolab.lab.fio_study.consistency import bs_bytes
from iolab.lab.fio_study.seed import ANALYSIS

Json = dict[str, Any]
Points = list[Json]
SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE = "supported", "contradicted", "inconclusive", "not testable"
#: Engines that keep one I/O in flight whatever iodepth says.
SYNC_ENGINES = frozenset({"sync", "psync", "vsync", "pvsync", "pvsync2", "mmap"})
#: The latency figure a verdict uses, by its key in ``per_repeat``: the
#: target's service time where the target recorded it (simulated SSD), else
#: the client's median.
LAT_FIGURES = {
    "service_us": (
        "the target's mean service time per request (µs): its hold less its reply timer's lateness, "
        "which a busy host's late wake-ups do not enter"
    ),
    "lat_p50_us": "p50 total latency (µs), median of each repeat's I/Os (the client's)",
}
LAT_TOTAL_FIGURES = {
    "service_us": "the target's mean service time per request (µs), read and write requests together",
    "lat_p50_us": "p50 total latency (µs) of read and write I/Os together (the client's)",
}
LAT_WORDS = {"service_us": "service time", "lat_p50_us": "p50 latency"}
#: The smallest difference a verdict counts (%), a chosen bound above
#: analysis/trends.py's 5 %: a point's repeats run back to back and share
#: the machine's state, so their spread understates the noise between
#: points run minutes apart (a ±3 % wiggle between points with ±1 % repeats
#: made a 5 % floor call a step, tests/lab/test_fio_study.py).
LAB_NOISE_PCT = 10.0
#: A trend verdict also needs Kendall's tau at least this strong in the
#: claimed direction: a series whose ends differ but whose points are out of
#: order (one high last point) is not "rising".
TAU_MIN = 0.6
IOPS_FIGURE = "IOPS, read + write, over the time the I/Os ran (the client's figure)"
MIB_FIGURE = "MiB/s, read + write, over the time the I/Os ran (the client's figure)"


def _values(p: Json, direction: str, key: str) -> list[float]:
    d = p["total"] if direction == "total" else p.get(direction)
    if not d:
        return []
    return [float(v) for v in d["per_repeat"][key] if v is not None]


def _mean(vs: Sequence[float]) -> float:
    return sum(vs) / len(vs)


def compare(a: Sequence[float], b: Sequence[float]) -> Json:
    """b against a: ``{"a", "b", "diff_pct", "noise_pct", "order"}`` with
    ``order`` "higher", "lower" or "same" (within the noise; see the module doc)."""
    sa, sb = describe(a, "x"), describe(b, "x")
    diff = (sb.mean / sa.mean - 1) * 100 if sa.mean else 0.0
    noise = max([LAB_NOISE_PCT, *(s.cv_pct for s in (sa, sb) if s.cv_pct is not None)])
    apart = True
    if sa.ci95_low is not None and sb.ci95_low is not None:
        assert sa.ci95_high is not None and sb.ci95_high is not None
        apart = sb.ci95_low > sa.ci95_high or sa.ci95_low > sb.ci95_high
    order = "same"
    if abs(diff) > noise and apart:
        order = "higher" if diff > 0 else "lower"
    return {"a": sa.mean, "b": sb.mean, "diff_pct": diff, "noise_pct": noise, "separated": apart, "order": order}


def _n(v: float) -> str:
    return f"{v:,.2f}" if abs(v) < 100 else f"{v:,.0f}"


def _cmp_text(c: Json, a: str, b: str, unit: str) -> str:
    """``b``'s figure against ``a``'s (``compare(a, b)``): "b B vs a A (+d%, noise n%)"."""
    sep = "" if c["separated"] else ", 95% intervals overlap"
    return (
        f"{b} {_n(c['b'])} {unit} vs {a} {_n(c['a'])} {unit} ({c['diff_pct']:+.0f}%, noise {c['noise_pct']:.0f}%{sep})"
    )


def _x(p: Json, axis: str) -> float:
    x = p["params"][axis]
    return float(bs_bytes(str(x))) if axis == "bs" else float(x)


def trend(points: Points, axis: str, direction: str, key: str) -> Optional[Json]:
    """:func:`classify` of ``key`` along ``axis`` (per-repeat values → Stats), or None."""
    xs, ys, stats, labels = [], [], [], []
    # Along the axis's values, smallest first (the mix sweep runs 100 → 0).
    points = sorted(points, key=lambda p: _x(p, axis))
    for p in points:
        vs = _values(p, direction, key)
        if not vs:
            continue
        xs.append(_x(p, axis))
        labels.append(str(p["params"][axis]))
        st = describe(vs, key)
        ys.append(st.mean)
        stats.append(st)
    if len(xs) < 2:
        return None
    return {"xs": xs, "labels": labels, "values": ys, **classify(xs, ys, stats)}


def _trend_text(t: Json, what: str, unit: str) -> str:
    vals = ", ".join(f"{lab} {_n(v)}" for lab, v in zip(t["labels"], t["values"]))
    tau = "" if t["kendall_tau"] is None else f"; Kendall tau {t['kendall_tau']:.2f} (p {t['kendall_p']:.3f})"
    noise = max(t["noise_pct"], default=TREND_NOISE_PCT)
    return f"{what} {t['trend']} ({vals} {unit}; change {t['change_pct']:+.0f}%, noise {noise:.0f}%{tau})"


def _at(points: Points, **params: Any) -> list[Json]:
    return [p for p in points if all(str(p["params"].get(k)) == str(v) for k, v in params.items())]


def _combine(parts: list[tuple[str, str]]) -> tuple[str, str]:
    """(verdict, evidence) of several (verdict, evidence) parts: contradicted
    if any part is, supported only if every part is."""
    verdicts = [v for v, _ in parts]
    text = "; ".join(e for _, e in parts)
    if CONTRADICTED in verdicts:
        return CONTRADICTED, text
    if verdicts and all(v == SUPPORTED for v in verdicts):
        return SUPPORTED, text
    if verdicts and all(v == NOT_TESTABLE for v in verdicts):
        return NOT_TESTABLE, text
    return INCONCLUSIVE, text


def _trend_verdict(t: Optional[Json], want: str, what: str, unit: str) -> tuple[str, str]:
    if t is None:
        return NOT_TESTABLE, f"{what}: not measured"
    text = _trend_text(t, what, unit)
    sign = 1.0 if want == "rises" else -1.0
    if t["trend"] == want and abs(t["change_pct"]) <= LAB_NOISE_PCT:
        return INCONCLUSIVE, f"{text}: a change within the lab's {LAB_NOISE_PCT:.0f}% noise bound"
    if t["trend"] == want and t["kendall_tau"] is not None and t["kendall_tau"] * sign < TAU_MIN:
        return INCONCLUSIVE, f"{text}: its ends differ, but its points are not in order (tau below {TAU_MIN})"
    if t["trend"] == want:
        return SUPPORTED, text
    if t["trend"] in ("rises", "falls") and t["kendall_tau"] is not None and abs(t["kendall_tau"]) < TAU_MIN:
        return INCONCLUSIVE, f"{text}: its ends differ, but its points are not in order (|tau| below {TAU_MIN})"
    if t["trend"] in ("rises", "falls", "flat"):
        return CONTRADICTED, text
    return INCONCLUSIVE, text


def _order_verdict(c: Json, want: str, text: str) -> tuple[str, str]:
    if c["order"] == want:
        return SUPPORTED, text
    if c["order"] == "same":
        return INCONCLUSIVE, text
    return CONTRADICTED, text


# -- the claims, sweep by sweep -------------------------------------------------------------


def _lat_rises(points: Points, axis: str, where: dict[str, Any], key: str) -> tuple[str, str]:
    pts = _at(points, **where)
    parts = []
    for d in ("read", "write"):
        t = trend(pts, axis, d, key)
        parts.append(_trend_verdict(t, "rises", f"{d} {LAT_WORDS[key]} along {axis}", "µs"))
    return _combine(parts)


def _lat_first_lower(points: Points, axis: str, where: dict[str, Any], key: str) -> tuple[str, str]:
    pts = _at(points, **where)
    first, last = pts[0], pts[-1]
    parts = []
    for d in ("read", "write"):
        c = compare(_values(first, d, key), _values(last, d, key))
        a, b = f"{axis} {first['params'][axis]}", f"{axis} {last['params'][axis]}"
        parts.append(_order_verdict(c, "higher", f"{d} {LAT_WORDS[key]} {_cmp_text(c, a, b, 'µs')}"))
    return _combine(parts)


def _lat_last_step_up(points: Points, axis: str, where: dict[str, Any], key: str) -> tuple[str, str]:
    pts = _at(points, **where)
    a, b = pts[-2], pts[-1]
    parts = []
    for d in ("read", "write"):
        c = compare(_values(a, d, key), _values(b, d, key))
        text = _cmp_text(c, f"{axis} {a['params'][axis]}", f"{axis} {b['params'][axis]}", "µs")
        parts.append(_order_verdict(c, "higher", f"{d} {LAT_WORDS[key]} {text}"))
    return _combine(parts)


def _read_vs_write(points: Points, key: str, unit: str, want: str) -> tuple[str, str]:
    """Read-only's read figure against write-only's write figure, at 4k."""
    ro, wo = _at(points, bs="4k", rwmixread=100), _at(points, bs="4k", rwmixread=0)
    if not ro or not wo:
        return NOT_TESTABLE, "read-only or write-only point not measured"
    c = compare(_values(wo[0], "write", key), _values(ro[0], "read", key))
    what = LAT_WORDS.get(key, "IOPS")
    return _order_verdict(c, want, f"{what} at 4k: {_cmp_text(c, 'write-only (0/100)', 'read-only (100/0)', unit)}")


def _between(points: Points, key: str, unit: str, bs: str) -> tuple[str, str]:
    """The mixes' figure (both directions) between read-only's and write-only's."""
    pts = _at(points, bs=bs)
    ro, wo = _at(pts, rwmixread=100), _at(pts, rwmixread=0)
    if not ro or not wo:
        return NOT_TESTABLE, "read-only or write-only point not measured"
    ends = compare(_values(wo[0], "total", key), _values(ro[0], "total", key))
    lo, hi = sorted((ends["a"], ends["b"]))
    parts = []
    for p in pts:
        mix = p["params"]["rwmixread"]
        if mix in (0, 100):
            continue
        v = _mean(_values(p, "total", key))
        slack = ends["noise_pct"] / 100
        inside = lo * (1 - slack) <= v <= hi * (1 + slack)
        text = f"{bs} {mix}/{100 - mix}: {_n(v)} {unit}, read-only {_n(ends['b'])}, write-only {_n(ends['a'])}"
        if not inside:
            parts.append((CONTRADICTED, f"{text} (outside by more than the noise {ends['noise_pct']:.0f}%)"))
        elif ends["order"] == "same":
            parts.append((INCONCLUSIVE, f"{text} (the ends differ by less than the noise {ends['noise_pct']:.0f}%)"))
        else:
            parts.append((SUPPORTED, text))
    return _combine(parts)


def _per_bs(points: Points, fn: Callable[[list[Json], str], tuple[str, str]]) -> tuple[str, str]:
    sizes = list(dict.fromkeys(str(p["params"]["bs"]) for p in points))
    return _combine([fn(_at(points, bs=bs), bs) for bs in sizes])


def _iops_trend(pts: list[Json], axis: str, want: str, bs: str, key: str = "iops") -> tuple[str, str]:
    t = trend(pts, axis, "total", key)
    unit = "IOPS" if key == "iops" else "MiB/s"
    what = f"{'' if axis == 'bs' else bs + ' '}{unit} (read + write) along {axis}"
    return _trend_verdict(t, want, what, unit)


def _levels_out(pts: list[Json], axis: str, key: str, bs: str = "") -> tuple[str, str]:
    """Rises beyond the noise up to its peak, and the last step falls or stays within the noise."""
    unit = "IOPS" if key == "iops" else "MiB/s"
    vals = [_values(p, "total", key) for p in pts]
    means = [_mean(v) for v in vals]
    peak = means.index(max(means))
    rise = compare(vals[0], vals[peak])
    last = compare(vals[-2], vals[-1])

    def name(p: Json) -> str:
        return f"{axis} {p['params'][axis]}"

    text = (
        f"{bs + ' ' if bs else ''}{unit} rise {_cmp_text(rise, name(pts[0]), name(pts[peak]), unit)}; "
        f"last step {_cmp_text(last, name(pts[-2]), name(pts[-1]), unit)}"
    )
    if rise["order"] != "higher":
        return (CONTRADICTED if rise["order"] == "lower" else INCONCLUSIVE), text
    if last["order"] == "higher":
        return CONTRADICTED, text + ": still rising"
    if last["order"] == "same" and abs(last["diff_pct"]) > last["noise_pct"]:
        # A step beyond the noise whose intervals overlap: neither a rise nor a level shown.
        return INCONCLUSIVE, text + ": the last step is neither a rise nor level beyond the noise"
    return SUPPORTED, text


def _qd_testable(points: Points) -> Optional[str]:
    engines = {p["config"]["ioengine"] for p in points}
    depths = {p["config"]["iodepth"] for p in points}
    if len(depths) == 1 and engines & SYNC_ENGINES:
        return (
            f"ioengine={'/'.join(sorted(engines))} keeps {depths.pop()} I/O in flight at every iodepth "
            "(the seed's command names no engine; fio's default on Linux is psync): queue depth had no effect "
            "here; add --ioengine io_uring (or libaio) to test it"
        )
    return None


def _reason(section: str, point: str) -> Optional[Callable[[Json], tuple[str, str]]]:
    """The testable part of a reason, where it has one."""
    if (section, point) == ("mix-lat", "mixed"):
        return lambda m: _combine(
            [_trend_verdict(trend(_at(m["rwmix"], bs="4k"), "rwmixread", "total", m["lat"]), "falls",
                            f"{LAT_WORDS[m['lat']]} (read and write) at 4k along rwmixread", "µs")]
        )  # fmt: skip
    if (section, point) == ("mix-bw", "mixed"):
        return lambda m: _per_bs(m["rwmix"], lambda pts, bs: _iops_trend(pts, "rwmixread", "rises", bs))
    if (section, point) == ("size-bw", "large"):
        return lambda m: _levels_out(m["bs"], "bs", "mib_per_s")
    return None


#: Placeholders for the latency figures, resolved by :func:`verdicts` (:data:`LAT_FIGURES`).
LAT, LAT_TOTAL = "<latency>", "<latency, both directions>"

#: (section, kind, point) → (the figure, the check).
CHECKS: dict[tuple[str, str, str], tuple[str, Callable[[Json], tuple[str, str]]]] = {
    ("size-lat", "trend", "small"): (LAT, lambda m: _lat_first_lower(m["bs"], "bs", {}, m["lat"])),
    ("size-lat", "trend", "large"): (LAT, lambda m: _lat_rises(m["bs"], "bs", {}, m["lat"])),
    ("mix-lat", "trend", "read"): (LAT, lambda m: _read_vs_write(m["rwmix"], m["lat"], "µs", "lower")),
    ("mix-lat", "trend", "write"): (LAT, lambda m: _read_vs_write(m["rwmix"], m["lat"], "µs", "lower")),
    ("mix-lat", "trend", "mixed"): (LAT_TOTAL, lambda m: _between(m["rwmix"], m["lat"], "µs", "4k")),
    ("qd-lat", "trend", "low"): (LAT, lambda m: _lat_first_lower(m["qd"], "iodepth", {"bs": "4k"}, m["lat"])),
    ("qd-lat", "trend", "moderate"): (LAT, lambda m: _lat_rises(m["qd"], "iodepth", {"bs": "4k"}, m["lat"])),
    ("qd-lat", "trend", "high"): (LAT, lambda m: _lat_last_step_up(m["qd"], "iodepth", {"bs": "4k"}, m["lat"])),
    ("size-bw", "trend", "small"): (IOPS_FIGURE, lambda m: _iops_trend(m["bs"], "bs", "falls", "")),
    ("size-bw", "trend", "large"): (MIB_FIGURE, lambda m: _levels_out(m["bs"], "bs", "mib_per_s")),
    ("mix-bw", "trend", "read"): (IOPS_FIGURE, lambda m: _read_vs_write(m["rwmix"], "iops", "IOPS", "higher")),
    ("mix-bw", "trend", "write"): (IOPS_FIGURE, lambda m: _read_vs_write(m["rwmix"], "iops", "IOPS", "higher")),
    ("mix-bw", "trend", "mixed"): (
        IOPS_FIGURE,
        lambda m: _per_bs(m["rwmix"], lambda pts, bs: _between(pts, "iops", "IOPS", bs)),
    ),
    ("qd-bw", "trend", "low"): (
        IOPS_FIGURE,
        lambda m: _per_bs(m["qd"], lambda pts, bs: _order_verdict(*_low_qd(pts, bs))),
    ),
    ("qd-bw", "trend", "moderate"): (
        IOPS_FIGURE,
        lambda m: _per_bs(m["qd"], lambda pts, bs: _order_verdict(*_low_qd(pts, bs))),
    ),
    ("qd-bw", "trend", "high"): (
        IOPS_FIGURE,
        lambda m: _per_bs(m["qd"], lambda pts, bs: _levels_out(pts, "iodepth", "iops", bs)),
    ),
}


def _low_qd(pts: list[Json], bs: str) -> tuple[Json, str, str]:
    """QD 1's IOPS against the best of QD 16 and 32 (want: higher)."""
    one = _values(pts[0], "total", "iops")
    mids = [p for p in pts if p["params"]["iodepth"] in (16, 32)]
    best = max(mids, key=lambda p: _mean(_values(p, "total", "iops")))
    c = compare(one, _values(best, "total", "iops"))
    return c, "higher", f"{bs} IOPS {_cmp_text(c, 'QD 1', 'QD ' + str(best['params']['iodepth']), 'IOPS')}"


def _section_sweep(section: str) -> str:
    return {"size": "bs", "mix": "rwmix", "qd": "qd"}[section.split("-")[0]]


def lat_key(measured: dict[str, Points]) -> str:
    """``service_us`` where the target recorded every run (the simulated
    SSD), else ``lat_p50_us``."""
    dirs = [p[d] for pts in measured.values() for p in pts for d in ("read", "write") if p.get(d)]
    if dirs and all("service_us" in d["per_repeat"] for d in dirs):
        return "service_us"
    return "lat_p50_us"


def verdicts(measured: dict[str, Points]) -> list[Json]:
    """One claim per statement of the seed's analysis: ``{"section",
    "kind", "statement", "verdict", "figure", "evidence"}``."""
    key = lat_key(measured)
    m: Json = {**measured, "lat": key}
    resolve = {LAT: LAT_FIGURES[key], LAT_TOTAL: LAT_TOTAL_FIGURES[key]}
    out = []
    for section, kind, point, statement in ANALYSIS:
        sweep = _section_sweep(section)
        check = CHECKS.get((section, kind, point))
        reason = _reason(section, point) if kind == "reason" else None
        figure: Optional[str] = None
        if sweep not in measured or not measured[sweep]:
            verdict, evidence = NOT_TESTABLE, f"the {sweep} sweep was not run"
        elif sweep == "qd" and (why := _qd_testable(measured["qd"])) and (check or reason):
            verdict, evidence = NOT_TESTABLE, why
        elif check is not None:
            figure = resolve.get(check[0], check[0])
            verdict, evidence = check[1](m)
        elif reason is not None:
            figure = resolve[LAT_TOTAL] if section.endswith("lat") else (MIB_FIGURE if sweep == "bs" else IOPS_FIGURE)
            verdict, evidence = reason(m)
            evidence = f"its testable part only: {evidence}; the cause it names is inside the device"
        else:
            verdict = NOT_TESTABLE
            evidence = (
                "a cause inside the SSD (cells, controller, internal parallelism): end-to-end figures show "
                "the effect, not the cause"
            )
        out.append(
            {
                "section": section,
                "kind": kind,
                "statement": statement,
                "verdict": verdict,
                "figure": figure,
                "evidence": evidence,
            }
        )
    return out


def observations(measured: dict[str, Points]) -> list[Json]:
    """iolab's own "observed trend" per section, from the data: ``{"section", "text"}``."""
    key = lat_key(measured)
    out = []
    for section in ("size-lat", "mix-lat", "qd-lat", "size-bw", "mix-bw", "qd-bw"):
        sweep = _section_sweep(section)
        pts = measured.get(sweep) or []
        if not pts:
            continue
        axis = {"bs": "bs", "rwmix": "rwmixread", "qd": "iodepth"}[sweep]
        groups = [("", pts)] if sweep == "bs" else [(bs, _at(pts, bs=bs)) for bs in ("4k", "16k", "130k")]
        for bs, gp in groups:
            if not gp or (section.endswith("lat") and bs not in ("", "4k")):
                continue
            head = f"{bs} " if bs else ""
            if section.endswith("lat"):
                for d in ("read", "write"):
                    t = trend(gp, axis, d, key)
                    if t is not None:
                        text = _trend_text(t, f"{head}{d} {LAT_WORDS[key]}", "µs")
                        out.append({"section": section, "text": text})
            else:
                t = trend(gp, axis, "total", "iops")
                if t is not None:
                    text = _trend_text(t, f"{head}IOPS (read + write)", "IOPS")
                    out.append({"section": section, "text": text})
    return out
