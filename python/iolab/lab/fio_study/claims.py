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

Noise: each comparison and trend is judged by :mod:`.evidence` (a
difference beyond ``LAB_NOISE_PCT`` or the repeats' CV with separated
95 % intervals; a trend by :func:`iolab.analysis.trends.classify` with
Kendall's tau of at least ``TAU_MIN``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from iolab.lab.fio_study.evidence import (
    CONTRADICTED,
    INCONCLUSIVE,
    LAB_NOISE_PCT,
    NOT_TESTABLE,
    SUPPORTED,
    TAU_MIN,
    Json,
    Points,
    at,
    cmp_text,
    combine,
    compare,
    mean_of,
    num,
    order_verdict,
    trend,
    trend_text,
    trend_verdict,
    values,
)
from iolab.lab.fio_study.seed import ANALYSIS

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
IOPS_FIGURE = "IOPS, read + write, over the time the I/Os ran (the client's figure)"
MIB_FIGURE = "MiB/s, read + write, over the time the I/Os ran (the client's figure)"


def _lat_rises(points: Points, axis: str, where: dict[str, Any], key: str) -> tuple[str, str]:
    pts = at(points, **where)
    parts = []
    for d in ("read", "write"):
        t = trend(pts, axis, d, key)
        parts.append(trend_verdict(t, "rises", f"{d} {LAT_WORDS[key]} along {axis}", "µs"))
    return combine(parts)


def _lat_first_lower(points: Points, axis: str, where: dict[str, Any], key: str) -> tuple[str, str]:
    pts = at(points, **where)
    first, last = pts[0], pts[-1]
    parts = []
    for d in ("read", "write"):
        c = compare(values(first, d, key), values(last, d, key))
        a, b = f"{axis} {first['params'][axis]}", f"{axis} {last['params'][axis]}"
        parts.append(order_verdict(c, "higher", f"{d} {LAT_WORDS[key]} {cmp_text(c, a, b, 'µs')}"))
    return combine(parts)


def _lat_last_step_up(points: Points, axis: str, where: dict[str, Any], key: str) -> tuple[str, str]:
    pts = at(points, **where)
    a, b = pts[-2], pts[-1]
    parts = []
    for d in ("read", "write"):
        c = compare(values(a, d, key), values(b, d, key))
        text = cmp_text(c, f"{axis} {a['params'][axis]}", f"{axis} {b['params'][axis]}", "µs")
        parts.append(order_verdict(c, "higher", f"{d} {LAT_WORDS[key]} {text}"))
    return combine(parts)


def _read_vs_write(points: Points, key: str, unit: str, want: str) -> tuple[str, str]:
    """Read-only's read figure against write-only's write figure, at 4k."""
    ro, wo = at(points, bs="4k", rwmixread=100), at(points, bs="4k", rwmixread=0)
    if not ro or not wo:
        return NOT_TESTABLE, "read-only or write-only point not measured"
    c = compare(values(wo[0], "write", key), values(ro[0], "read", key))
    what = LAT_WORDS.get(key, "IOPS")
    return order_verdict(c, want, f"{what} at 4k: {cmp_text(c, 'write-only (0/100)', 'read-only (100/0)', unit)}")


def _between(points: Points, key: str, unit: str, bs: str) -> tuple[str, str]:
    """The mixes' figure (both directions) between read-only's and write-only's."""
    pts = at(points, bs=bs)
    ro, wo = at(pts, rwmixread=100), at(pts, rwmixread=0)
    if not ro or not wo:
        return NOT_TESTABLE, "read-only or write-only point not measured"
    ends = compare(values(wo[0], "total", key), values(ro[0], "total", key))
    lo, hi = sorted((ends["a"], ends["b"]))
    parts = []
    for p in pts:
        mix = p["params"]["rwmixread"]
        if mix in (0, 100):
            continue
        v = mean_of(values(p, "total", key))
        slack = ends["noise_pct"] / 100
        inside = lo * (1 - slack) <= v <= hi * (1 + slack)
        text = f"{bs} {mix}/{100 - mix}: {num(v)} {unit}, read-only {num(ends['b'])}, write-only {num(ends['a'])}"
        if not inside:
            parts.append((CONTRADICTED, f"{text} (outside by more than the noise {ends['noise_pct']:.0f}%)"))
        elif ends["order"] == "same":
            parts.append((INCONCLUSIVE, f"{text} (the ends differ by less than the noise {ends['noise_pct']:.0f}%)"))
        else:
            parts.append((SUPPORTED, text))
    return combine(parts)


def _per_bs(points: Points, fn: Callable[[list[Json], str], tuple[str, str]]) -> tuple[str, str]:
    sizes = list(dict.fromkeys(str(p["params"]["bs"]) for p in points))
    return combine([fn(at(points, bs=bs), bs) for bs in sizes])


def _iops_trend(pts: list[Json], axis: str, want: str, bs: str, key: str = "iops") -> tuple[str, str]:
    t = trend(pts, axis, "total", key)
    unit = "IOPS" if key == "iops" else "MiB/s"
    what = f"{'' if axis == 'bs' else bs + ' '}{unit} (read + write) along {axis}"
    return trend_verdict(t, want, what, unit)


def _levels_out(pts: list[Json], axis: str, key: str, bs: str = "") -> tuple[str, str]:
    """Rises beyond the noise up to its peak, and the last step falls or stays within the noise."""
    unit = "IOPS" if key == "iops" else "MiB/s"
    vals = [values(p, "total", key) for p in pts]
    means = [mean_of(v) for v in vals]
    peak = means.index(max(means))
    rise = compare(vals[0], vals[peak])
    last = compare(vals[-2], vals[-1])

    def name(p: Json) -> str:
        return f"{axis} {p['params'][axis]}"

    text = (
        f"{bs + ' ' if bs else ''}{unit} rise {cmp_text(rise, name(pts[0]), name(pts[peak]), unit)}; "
        f"last step {cmp_text(last, name(pts[-2]), name(pts[-1]), unit)}"
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
        return lambda m: combine(
            [trend_verdict(trend(at(m["rwmix"], bs="4k"), "rwmixread", "total", m["lat"]), "falls",
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
        lambda m: _per_bs(m["qd"], lambda pts, bs: order_verdict(*_low_qd(pts, bs))),
    ),
    ("qd-bw", "trend", "moderate"): (
        IOPS_FIGURE,
        lambda m: _per_bs(m["qd"], lambda pts, bs: order_verdict(*_low_qd(pts, bs))),
    ),
    ("qd-bw", "trend", "high"): (
        IOPS_FIGURE,
        lambda m: _per_bs(m["qd"], lambda pts, bs: _levels_out(pts, "iodepth", "iops", bs)),
    ),
}


def _low_qd(pts: list[Json], bs: str) -> tuple[Json, str, str]:
    """QD 1's IOPS against the best of QD 16 and 32 (want: higher)."""
    one = values(pts[0], "total", "iops")
    mids = [p for p in pts if p["params"]["iodepth"] in (16, 32)]
    best = max(mids, key=lambda p: mean_of(values(p, "total", "iops")))
    c = compare(one, values(best, "total", "iops"))
    return c, "higher", f"{bs} IOPS {cmp_text(c, 'QD 1', 'QD ' + str(best['params']['iodepth']), 'IOPS')}"


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
        groups = [("", pts)] if sweep == "bs" else [(bs, at(pts, bs=bs)) for bs in ("4k", "16k", "130k")]
        for bs, gp in groups:
            if not gp or (section.endswith("lat") and bs not in ("", "4k")):
                continue
            head = f"{bs} " if bs else ""
            if section.endswith("lat"):
                for d in ("read", "write"):
                    t = trend(gp, axis, d, key)
                    if t is not None:
                        text = trend_text(t, f"{head}{d} {LAT_WORDS[key]}", "µs")
                        out.append({"section": section, "text": text})
            else:
                t = trend(gp, axis, "total", "iops")
                if t is not None:
                    text = trend_text(t, f"{head}IOPS (read + write)", "IOPS")
                    out.append({"section": section, "text": text})
    return out


__all__ = [
    "CONTRADICTED",
    "INCONCLUSIVE",
    "LAB_NOISE_PCT",
    "NOT_TESTABLE",
    "SUPPORTED",
    "TAU_MIN",
    "compare",
    "lat_key",
    "observations",
    "verdicts",
]
