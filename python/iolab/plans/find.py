"""``iolab find``: the highest load along one axis that still meets an SLO.

The search (:func:`search`) brackets, then narrows. From ``start`` (or a
``guess``) the axis grows geometrically (x ``growth``) while the SLO holds
(or goes down by the same factor while it breaks), until a value meeting
it and one breaking it bracket the answer; then it narrows the bracket
until the two are within the stated resolution (an absolute step, or a
percentage of the value met). It assumes what an axis of load means: more
of it never makes the latency better.

Where to measure next comes from the latency-load curve fitted as it goes
(:mod:`iolab.plans.find_model`): inside the bracket, the highest value on
the resolution's grid below where the curve crosses the threshold (then
its neighbour, which resolves the bracket when the fit was right); an
end the guesses keep leaving where it is weighs less each time (the
Illinois rule), and once one end has stayed through more than four
guesses the search bisects. Above the highest value met it goes to the
crossing the curve extrapolates to, where that is nearer than the next
geometric step and the fit predicts the value below within 15 %.

Each value is measured ``repeats`` times, and the verdict along the way
is the figure's. Repeats are spent where they decide the answer: once the
bracket is resolved, the value met and the one broken get more repeats
(up to ``max_repeats``) while an SLO threshold lies inside the 95 %
interval of their figure (:attr:`iolab.plans.slo.Verdict.confident`); if
a verdict turns, the bracket moves and the search goes on. A value far
below the answer never needs its own confidence: a value above it met
the SLO.

The measuring is injected (``measure(value, repeat) → Repeat``): the CLI's
runs every repeat as a point of a sweep directory through the run pipeline
(:mod:`iolab.plans.find_run`); the tests give a model whose curve is known.
So is the verdict (``judge_fn``): :func:`iolab.plans.slo.judge`, or on a
fleet :func:`iolab.fleet.slo.judge_fleet` (each host and the total).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from iolab import _native
from iolab.errors import JobError
from iolab.plans.find_model import CurvePoint, badness, predict
from iolab.plans.slo import ClauseVerdict, Slo, Verdict, judge, percentile_name
from iolab.units import fmt_bytes_exact, fmt_iops, fmt_ns

#: The axes find searches: name → (quantum, default start, default limit).
#: bs steps by 4 KiB, the block a direct=1 job on any common device accepts.
SEARCH_AXES: dict[str, tuple[int, int, int]] = {
    "iodepth": (1, 1, 4096),
    "numjobs": (1, 1, 256),
    "rate_iops": (1, 1000, 10_000_000),
    "bs": (4096, 4096, 64 << 20),
}


#: An extrapolation above the highest value met is followed only where the
#: fitted shape predicts the value below those it was fitted on this
#: closely (relative): noise or a shape neither fits then falls back to growth.
EXTRAPOLATE_WITHIN = 0.15
#: ... and at most this many times in a search (a curve the shapes keep underestimating: growth again).
MAX_EXTRAPOLATED = 3
#: After this many values in a row left one end of the bracket where it was, bisect.
MAX_KEPT = 4


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
    lo = axis_number(name, "--start", start) if start is not None else default_start
    hi = axis_number(name, "--limit", limit) if limit is not None else default_limit
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
            res_abs = axis_number(name, "--resolution", text)
    except ValueError:
        raise FindError(f"--resolution {resolution}: give a percentage (5%) or a step in {name}'s unit") from None
    return AxisSpace(name, lo, hi, quantum, growth, res_abs, res_pct)


def axis_number(axis: str, option: str, text: str) -> int:
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
    repeats: list[Any]  # each a Repeat; on a fleet a FleetRepeat (iolab.fleet.slo)
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


#: ``measure(value, repeat)`` → what ``judge`` reads: a Repeat, or a fleet's FleetRepeat.
Measure = Callable[[int, int], Any]
#: The SLO's verdict on a value's repeats: :func:`iolab.plans.slo.judge`, or a fleet's.
Judge = Callable[[Slo, Sequence[Any]], Verdict]


def check_repeats(repeats: int, max_repeats: int) -> None:
    """Raises :class:`FindError` unless 1 ≤ repeats ≤ max_repeats."""
    if repeats < 1 or max_repeats < repeats:
        raise FindError(f"--repeats {repeats} / --max-repeats {max_repeats}: need 1 ≤ repeats ≤ max-repeats")


@dataclass
class _Search:
    """The state of one search: every value measured, by value."""

    measure: Measure
    slo: Slo
    space: AxisSpace
    repeats: int
    max_repeats: int
    judge: Judge = judge
    done: dict[int, Evaluation] = field(default_factory=dict)
    extrapolated: int = 0  # values guessed above the highest met
    guessed: Optional[int] = None  # the last of them
    neighbour: Optional[int] = None  # the value a step above it, measured next

    def evaluate(self, value: int) -> Evaluation:
        if value not in self.done:
            reps = [self.measure(value, r) for r in range(1, self.repeats + 1)]
            self.done[value] = Evaluation(value, reps, self.judge(self.slo, reps))
        return self.done[value]

    def confirm(self, ev: Evaluation) -> bool:
        """More repeats while the verdict is not confident (up to max_repeats);
        True when the verdict turned."""
        before = ev.verdict.holds
        while not ev.verdict.confident and len(ev.repeats) < self.max_repeats:
            ev.repeats.append(self.measure(ev.value, len(ev.repeats) + 1))
            ev.verdict = self.judge(self.slo, ev.repeats)
        return ev.verdict.holds != before

    def bracket(self) -> tuple[Optional[Evaluation], Optional[Evaluation]]:
        """The lowest value breaking the SLO and the highest meeting it below that."""
        fails = [e for e in self.done.values() if not e.verdict.holds]
        fail = min(fails, key=lambda e: e.value, default=None)
        met = [e for e in self.done.values() if e.verdict.holds and (fail is None or e.value < fail.value)]
        return max(met, key=lambda e: e.value, default=None), fail

    def curve(self) -> list[CurvePoint]:
        pts = [(e.value, b) for e in self.done.values() if (b := badness(e.verdict)) is not None]
        return sorted(pts)

    def snap_down(self, x: float) -> int:
        q = self.space.quantum
        return max(q, math.floor(x / q) * q)

    def above(self, best: Evaluation) -> int:
        """The next value above the highest met (none broken yet): x growth,
        or nearer where the curve fitted so far crosses the threshold."""
        s = self.space
        grown = min(s.limit, max(best.value + s.quantum, s.snap(best.value * s.growth)))
        if best.value == self.guessed:
            # A guessed value met the SLO: its neighbour next, which resolves the bracket if the guess was right.
            self.neighbour = min(grown, best.value + s.step(best.value))
            return self.neighbour
        if best.value == self.neighbour:
            # The neighbour met it too: the fit underestimates this curve; grow from here.
            self.extrapolated = MAX_EXTRAPOLATED
        met = [p for p in self.curve() if p[0] <= best.value]
        if self.extrapolated >= MAX_EXTRAPOLATED or len(met) < 2:
            return grown
        x = predict((met[-2], met[-1]), met[:-2], within=EXTRAPOLATE_WITHIN)
        if x is None or x >= grown:
            return grown
        self.extrapolated += 1
        self.guessed = min(grown, max(self.snap_down(x), best.value + s.step(best.value)))
        return self.guessed

    def inside(self, best: Evaluation, fail: Evaluation, kept: tuple[int, int]) -> int:
        """A value strictly between: where the fitted curve crosses the
        threshold (the highest value on the resolution's grid at or below
        it), or the middle. ``kept``: how many values in a row left the
        met end and the broken end where they were. An end kept twice or
        more has its distance from the threshold halved for each (the
        Illinois rule): a fit that keeps landing on one side is pulled to
        the other, instead of creeping up to the answer a step at a time."""
        s = self.space
        mid = s.snap((best.value + fail.value) / 2)
        pts = {v: b for v, b in self.curve()}
        x = None
        if max(kept) <= MAX_KEPT and best.value in pts and fail.value in pts:
            lo, hi = (
                (e.value, 1 + (pts[e.value] - 1) * 0.5 ** max(0, k - 1)) for e, k in ((best, kept[0]), (fail, kept[1]))
            )
            x = predict((lo, hi), [(v, b) for v, b in pts.items() if v not in (best.value, fail.value)])
        if x is None:
            return mid if best.value < mid < fail.value else best.value + s.quantum
        # The highest grid value at or below the crossing, but not within a step of either end:
        # a guess one step above the value met (or below the one broken) resolves the bracket if it holds.
        low, high = best.value + s.step(best.value), fail.value - s.step(fail.value)
        guess = min(max(self.snap_down(x), low), high) if low <= high else low
        return guess if best.value < guess < fail.value else mid


def search(
    measure: Measure,
    slo: Slo,
    space: AxisSpace,
    *,
    repeats: int = 2,
    max_repeats: int = 5,
    guess: Optional[int] = None,
    judge_fn: Judge = judge,
) -> FindOutcome:
    """Bracket, then narrow (see the module doc). ``guess``: the first value
    measured (default ``space.start``); the search goes down from it by
    the growth factor while it breaks the SLO."""
    check_repeats(repeats, max_repeats)
    st = _Search(measure, slo, space, repeats, max_repeats, judge_fn)
    value = space.start if guess is None else min(space.limit, max(space.start, space.snap(guess)))
    history: list[tuple[int, int]] = []  # the brackets, each time a value inside was chosen
    while True:
        st.evaluate(value)
        best, fail = st.bracket()
        nxt = _next(st, best, fail, history)
        if nxt is not None:
            value = nxt
            continue
        # Resolved (or at an end of the axis): the verdicts that decide the answer get the repeats
        # their confidence needs; if one turns, the bracket has moved and the search goes on.
        if (fail is not None and st.confirm(fail)) or (best is not None and st.confirm(best)):
            continue
        return FindOutcome(slo, space, list(st.done.values()), best, fail, repeats)


def _next(
    st: _Search, best: Optional[Evaluation], fail: Optional[Evaluation], history: list[tuple[int, int]]
) -> Optional[int]:
    """The next value to measure; None when the bracket is resolved or an end of the axis is reached."""
    s = st.space
    if fail is None:
        assert best is not None
        if best.value == st.neighbour and st.confirm(best):
            return best.value  # a guess's neighbour met the SLO only by chance: measured again, it breaks it
        return st.above(best) if best.value < s.limit else None
    if best is None:
        if fail.value <= s.start:
            return None
        return max(s.start, min(fail.value - s.quantum, s.snap(fail.value / s.growth)))
    if s.resolved(best.value, fail.value):
        return None
    if history:
        a, b = history[-1]
        kept = (kept_count(history, 0) if best.value == a else 0, kept_count(history, 1) if fail.value == b else 0)
    else:
        kept = (0, 0)
    history.append((best.value, fail.value))
    return st.inside(best, fail, kept)


def kept_count(history: list[tuple[int, int]], end: int) -> int:
    """How many brackets in a row, back from the last, kept that end (0: the met one, 1: the broken one) where it is."""
    last = history[-1][end]
    n = 0
    for h in reversed(history):
        if h[end] != last:
            break
        n += 1
    return n


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
    where = (f"{cl.scope}: " if cl.scope else "") + (f"{cl.direction} " if cl.direction else "")
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
        c = f.verdict.deciding()
        lines.append(
            f"no point meets '{out.slo.text}': {axis_value_text(ax, f.value)} (the --start) breaks it: "
            f"{_figure(c, f.verdict.repeats)}"
        )
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
                    "scope": c.clause.scope or "total",
                    "value": c.value,
                    "unit": "iops" if c.clause.metric == "iops" else "ns",
                    "threshold": c.clause.threshold,
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
