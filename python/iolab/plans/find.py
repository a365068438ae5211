"""``iolab find``: the highest load along one axis that still meets an SLO.

The search (:func:`search`) is a bracketing one: from ``start`` the axis
grows geometrically (x ``growth``) until the SLO breaks (or ``limit`` is
reached), then bisects between the last value that met it and the first
that broke it, until the two are within the stated resolution (an
absolute step, or a percentage of the value met). It assumes what an
axis of load means: more of it never makes the latency better.

Each value is measured ``repeats`` times; while the decision is close (an
SLO threshold inside the 95 % interval of its figure over the repeats:
:attr:`iolab.plans.slo.Verdict.confident`) it gets more repeats, up to
``max_repeats``. Repeats are spent only there.

The measuring is injected (``measure(value, repeat) → Repeat``): the CLI's
runs every repeat as a point of a sweep directory through the run pipeline
(:mod:`iolab.plans.find_run`); the tests give a model whose curve is known.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable, Optional

from iolab import _native
from iolab.errors import JobError
from iolab.plans.slo import ClauseVerdict, Repeat, Slo, Verdict, judge, percentile_name
from iolab.units import fmt_bytes_exact, fmt_iops, fmt_ns

#: The axes find searches: name → (quantum, default start, default limit).
#: bs steps by 4 KiB, the block a direct=1 job on any common device accepts.
SEARCH_AXES: dict[str, tuple[int, int, int]] = {
    "iodepth": (1, 1, 4096),
    "numjobs": (1, 1, 256),
    "rate_iops": (1, 1000, 10_000_000),
    "bs": (4096, 4096, 64 << 20),
}


class FindError(JobError):
    """A search that cannot be set up (axis, bounds, resolution); one line."""


@dataclass(frozen=True)
class AxisSpace:
    """Where the search moves: ``name`` from ``start`` to at most ``limit``,
    on multiples of ``quantum``, stopping when the bracket is within
    ``resolution`` (absolute, in the axis's unit) or ``resolution_pct``."""

    name: str
    start: int
    limit: int
    quantum: int = 1
    growth: float = 2.0
    resolution: Optional[int] = None
    resolution_pct: Optional[float] = 5.0

    def snap(self, x: float) -> int:
        q = self.quantum
        return max(q, round(x / q) * q)

    def step(self, v: int) -> int:
        """The resolution at ``v``: the smallest difference the search tells apart."""
        if self.resolution is not None:
            return max(self.quantum, self.resolution)
        pct = self.resolution_pct or 0.0
        return max(self.quantum, math.ceil(v * pct / 100.0 / self.quantum) * self.quantum)

    def resolved(self, lo: int, hi: int) -> bool:
        return hi - lo <= self.step(lo)

    def full_sweep_values(self, end: int) -> list[int]:
        """The values a full sweep from ``start`` to ``end`` at the same resolution runs."""
        values, v = [], self.start
        while v < end:
            values.append(v)
            v += self.step(v)
        return [*values, end]


def axis_space(
    name: str,
    *,
    start: Optional[str] = None,
    limit: Optional[str] = None,
    resolution: str = "5%",
    growth: float = 2.0,
) -> AxisSpace:
    """The search space from the CLI's words. Raises :class:`FindError`."""
    if name not in SEARCH_AXES:
        raise FindError(
            f"--axis {name}: not a numeric job option find can search; give one of {', '.join(SEARCH_AXES)}"
        )
    quantum, default_start, default_limit = SEARCH_AXES[name]
    lo = _axis_number(name, "--start", start) if start is not None else default_start
    hi = _axis_number(name, "--limit", limit) if limit is not None else default_limit
    if lo % quantum or hi % quantum:
        raise FindError(f"--start/--limit for {name}: must be multiples of {quantum}")
    if not 0 < lo < hi:
        raise FindError(f"--start {lo} / --limit {hi}: need 0 < start < limit")
    if not growth > 1.0:
        raise FindError(f"--growth {growth}: must be above 1 (the factor the axis grows by while the SLO holds)")
    res_abs, res_pct = None, None
    text = resolution.strip()
    try:
        if text.endswith("%"):
            res_pct = float(text[:-1])
            if not 0 < res_pct < 100:
                raise ValueError
        else:
            res_abs = _axis_number(name, "--resolution", text)
    except ValueError:
        raise FindError(f"--resolution {resolution}: give a percentage (5%) or a step in {name}'s unit") from None
    return AxisSpace(name, lo, hi, quantum, growth, res_abs, res_pct)


def _axis_number(axis: str, option: str, text: str) -> int:
    try:
        value = _native.parse_size(text) if axis == "bs" else int(float(text))
    except ValueError:
        raise FindError(f"{option} {text}: not a number for {axis}") from None
    if value <= 0:
        raise FindError(f"{option} {text}: must be above zero")
    return int(value)


@dataclass
class Evaluation:
    """One value of the axis, its repeats and the SLO's verdict on them."""

    value: int
    repeats: list[Repeat]
    verdict: Verdict


@dataclass
class FindOutcome:
    slo: Slo
    space: AxisSpace
    evaluations: list[Evaluation]  # in the order they ran
    best: Optional[Evaluation]  # the highest value meeting the SLO
    first_fail: Optional[Evaluation]  # the lowest value breaking it
    repeats: int
    runs: int = field(init=False)

    def __post_init__(self) -> None:
        self.runs = sum(len(e.repeats) for e in self.evaluations)

    @property
    def full_sweep_runs(self) -> int:
        """Runs a full sweep at the same resolution and repeats would need to
        reach the same bracket (from ``start`` to the first value breaking
        the SLO, or to the highest one run)."""
        end = self.first_fail.value if self.first_fail else max(e.value for e in self.evaluations)
        return len(self.space.full_sweep_values(end)) * self.repeats


Measure = Callable[[int, int], Repeat]


def check_repeats(repeats: int, max_repeats: int) -> None:
    """Raises :class:`FindError` unless 1 ≤ repeats ≤ max_repeats."""
    if repeats < 1 or max_repeats < repeats:
        raise FindError(f"--repeats {repeats} / --max-repeats {max_repeats}: need 1 ≤ repeats ≤ max-repeats")


def search(measure: Measure, slo: Slo, space: AxisSpace, *, repeats: int = 2, max_repeats: int = 5) -> FindOutcome:
    """Bracket, then bisect (see the module doc)."""
    check_repeats(repeats, max_repeats)
    done: list[Evaluation] = []

    def evaluate(value: int) -> Evaluation:
        reps = [measure(value, r) for r in range(1, repeats + 1)]
        verdict = judge(slo, reps)
        while not verdict.confident and len(reps) < max_repeats:
            reps.append(measure(value, len(reps) + 1))
            verdict = judge(slo, reps)
        done.append(Evaluation(value, reps, verdict))
        return done[-1]

    best: Optional[Evaluation] = None
    fail: Optional[Evaluation] = None
    value = space.start
    while True:
        ev = evaluate(value)
        if not ev.verdict.holds:
            fail = ev
            break
        best = ev
        if value >= space.limit:
            break
        value = min(space.limit, max(value + space.quantum, space.snap(value * space.growth)))
    while best is not None and fail is not None and not space.resolved(best.value, fail.value):
        mid = space.snap((best.value + fail.value) / 2)
        if not best.value < mid < fail.value:
            break
        ev = evaluate(mid)
        if ev.verdict.holds:
            best = ev
        else:
            fail = ev
    return FindOutcome(slo, space, done, best, fail, repeats)


# -- the statement ----------------------------------------------------------


def axis_value_text(axis: str, value: float) -> str:
    if axis == "iodepth":
        return f"QD {value:g}"
    if axis == "bs":
        return f"bs {fmt_bytes_exact(int(value))}"
    if axis == "rate_iops":
        return f"rate_iops {value:g}"
    return f"{axis} {value:g}"


def figure_text(c: ClauseVerdict, value: float) -> str:
    return fmt_iops(value) if c.clause.metric == "iops" else fmt_ns(value)


def _name(c: ClauseVerdict) -> str:
    cl = c.clause
    where = f"{cl.direction} " if cl.direction else ""
    if cl.metric == "iops":
        return f"{where}IOPS"
    kind = "" if cl.metric == "lat" else "clat "
    assert cl.percentile is not None
    return f"{where}{kind}{percentile_name(cl.percentile)}"


def _figure(c: ClauseVerdict, repeats: int) -> str:
    """``p99 0.93 ms ± 0.04 ms`` (± half the 95 % interval over the repeats)."""
    text = f"{_name(c)} {figure_text(c, c.value)}"
    if c.ci95 is None:
        return f"{text} (1 repeat: no interval)"
    half = (c.ci95[1] - c.ci95[0]) / 2
    return f"{text} ± {figure_text(c, half)} ({repeats} repeats)"


def statement(out: FindOutcome) -> list[str]:
    """The answer in words, every figure computed from the verdicts."""
    ax = out.space.name
    lines: list[str] = []
    if out.best is None:
        assert out.first_fail is not None
        f = out.first_fail
        lines.append(f"no point meets '{out.slo.text}': {axis_value_text(ax, f.value)} (the --start) breaks it")
    else:
        b = out.best
        c = b.verdict.deciding()
        sure = (
            "with 95 % confidence"
            if b.verdict.confident
            else "but not with 95 % confidence (threshold inside the interval)"
        )
        lines.append(
            f"{_figure(c, b.verdict.repeats)} at {axis_value_text(ax, b.value)}: meets '{out.slo.text}' {sure}"
        )
    if out.first_fail is not None and out.best is not None:
        f = out.first_fail
        c = f.verdict.deciding()
        sure = "with 95 % confidence" if f.verdict.confident else "but not with 95 % confidence"
        lines.append(f"{axis_value_text(ax, f.value)} breaks it {sure}: {_figure(c, f.verdict.repeats)}")
    elif out.first_fail is None:
        lines.append(f"the SLO still holds at --limit {out.space.limit}: the highest load meeting it lies above")
    lines.append(
        f"{out.runs} runs over {len(out.evaluations)} values of {ax} "
        f"(a full sweep at the same resolution: {out.full_sweep_runs} runs)"
    )
    return lines


def outcome_json(out: FindOutcome) -> dict[str, object]:
    """find.json: the SLO, the search settings, every value and its verdict, the answer."""

    def ev_json(e: Evaluation) -> dict[str, object]:
        return {
            "value": e.value,
            "repeats": len(e.repeats),
            "holds": e.verdict.holds,
            "confident_95": e.verdict.confident,
            "clauses": [
                {
                    "clause": c.clause.text,
                    "value": c.value,
                    "unit": "iops" if c.clause.metric == "iops" else "ns",
                    "ci95": list(c.ci95) if c.ci95 else None,
                    "holds": c.holds,
                }
                for c in e.verdict.clauses
            ],
        }

    s = out.space
    return {
        "slo": out.slo.text,
        "axis": s.name,
        "start": s.start,
        "limit": s.limit,
        "growth": s.growth,
        "resolution": s.resolution,
        "resolution_pct": s.resolution_pct,
        "repeats": out.repeats,
        "evaluations": [ev_json(e) for e in out.evaluations],
        "best": None if out.best is None else out.best.value,
        "first_fail": None if out.first_fail is None else out.first_fail.value,
        "runs": out.runs,
        "full_sweep_runs": out.full_sweep_runs,
        "statement": statement(out),
    }


def values_of(evaluations: Sequence[Evaluation]) -> list[int]:
    return sorted({e.value for e in evaluations})
