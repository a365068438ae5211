"""A service-level objective (``iolab find --slo``): its grammar, and its
verdict on a point's repeats.

Grammar (clauses joined by ``and``)::

    [read.|write.][lat.|clat.]pPCT < DURATION     p99<1ms, write.clat.p99.9<=5ms, p9999<20ms
    [read.|write.]iops > NUMBER                    iops>10000, read.iops>=50k

``pPCT`` is one of the percentiles iolab records (fio's default
``percentile_list`` from p50 up: p50 p60 p70 p80 p90 p95 p99 p99.5 p99.9
p99.99; ``p999`` is p99.9, ``p9999`` p99.99). Without a direction the
clause holds over both directions together (their histograms merged);
``lat`` (from issue, the default) or ``clat`` (from submission).
Durations by the core's syntax (``500us``, ``1ms``); IOPS as a number with
an optional ``k``/``m`` (x 1000 / x 1 000 000).

A latency clause's figure is the percentile of the exact merge of every
repeat's histogram (percentiles are never averaged); an IOPS clause's is
every repeat's I/Os over the time they ran. Its 95 % interval is that
figure ± Student's t half-width over the repeats' own figures (each
repeat's percentile of its own histogram, each repeat's IOPS):
t(n-1) x sd / √n, the standard error of n repeats, which the merged
figure (n repeats' I/Os together) shares to first order. Not the bootstrap the analysis tables give percentiles: over the two to
six repeats a search spends, the bootstrap's interval is the repeats'
range, far narrower than 95 % (two repeats would "decide" anything);
t widens it by t(n-1) (12.7 at two repeats, 2.6 at six), so a decision
called confident is one more repeats would not overturn.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from iolab import _native
from iolab.analysis.samples import merged_hist
from iolab.analysis.stats import describe, t95
from iolab.errors import JobError

#: The percentiles iolab records (fio's default percentile_list), from p50 up.
RECORDED_PERCENTILES = (50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99)
DIRECTIONS = ("read", "write")
LAT_KINDS = ("lat", "clat")

_CLAUSE = re.compile(
    r"^(?:(?P<dir>read|write)\.)?(?:(?P<kind>lat|clat)\.)?(?P<what>p[0-9.]+|iops)\s*(?P<op><=|>=|<|>)\s*(?P<value>\S+)$"
)
_IOPS = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([kKmM]?)$")


class SloError(JobError):
    """An SLO that cannot be used; ``str(e)`` is one line saying what to write."""


@dataclass(frozen=True)
class Clause:
    """One condition: ``metric`` is ``"iops"`` or a latency kind (``lat``, ``clat``)."""

    text: str
    metric: str
    direction: Optional[str]  # None: both directions together
    op: str
    threshold: float  # ns for latency, I/Os per second for iops
    percentile: Optional[float] = None
    scope: str = ""  # where it is judged: "" for everything the run did, "host h1" for one host of a fleet

    @property
    def upper(self) -> bool:
        """True when the figure must stay below the threshold."""
        return self.op in ("<", "<=")

    def holds(self, value: float) -> bool:
        return {"<": value < self.threshold, "<=": value <= self.threshold, ">": value > self.threshold,
                ">=": value >= self.threshold}[self.op]  # fmt: skip


@dataclass(frozen=True)
class Slo:
    text: str
    clauses: tuple[Clause, ...]


def percentile_name(p: float) -> str:
    return f"p{p:g}"


def parse_slo(text: str) -> Slo:
    """``'p99<1ms and iops>10k'`` → :class:`Slo`. Raises :class:`SloError`."""
    parts = [p.strip() for p in re.split(r"\band\b", text.strip())]
    if not text.strip() or any(not p for p in parts):
        raise SloError(f"--slo '{text}': empty; write e.g. 'p99<1ms' or 'p99<1ms and iops>10000'")
    return Slo(text.strip(), tuple(_clause(p, text) for p in parts))


def _clause(part: str, whole: str) -> Clause:
    m = _CLAUSE.match(part)
    if m is None:
        raise SloError(
            f"--slo '{whole}': '{part}' does not parse; write [read.|write.][lat.|clat.]p99<1ms or [read.|write.]iops>10000"
        )
    d, kind, what, op, value = m.group("dir", "kind", "what", "op", "value")
    if what == "iops":
        if kind:
            raise SloError(f"--slo '{whole}': '{part}': {kind}. applies to latency percentiles, not iops")
        if op not in (">", ">="):
            raise SloError(f"--slo '{whole}': '{part}': an IOPS objective is a floor (iops>N)")
        return Clause(part, "iops", d, op, _iops(value, part, whole))
    if op not in ("<", "<="):
        raise SloError(f"--slo '{whole}': '{part}': a latency objective is a ceiling (p99<1ms)")
    pct = _percentile(what, part, whole)
    try:
        ns = _native.parse_duration_ns(value)
    except ValueError:
        raise SloError(f"--slo '{whole}': '{part}': '{value}' is not a duration (write 500us, 1ms, 2.5ms)") from None
    if ns <= 0:
        raise SloError(f"--slo '{whole}': '{part}': the latency ceiling must be above zero")
    return Clause(part, kind or "lat", d, op, float(ns), pct)


def _percentile(what: str, part: str, whole: str) -> float:
    digits = what[1:]
    try:
        pct = float(digits)
    except ValueError:
        pct = -1.0
    # p999 is p99.9 and p9999 is p99.99 (the usual shorthand); p995 is p99.5.
    if "." not in digits and len(digits) > 2 and digits.startswith("99"):
        pct = float(f"{digits[:2]}.{digits[2:]}")
    if pct not in RECORDED_PERCENTILES:
        known = " ".join(percentile_name(p) for p in RECORDED_PERCENTILES)
        raise SloError(f"--slo '{whole}': '{part}': {what} is not a percentile iolab records (one of: {known})")
    return pct


def _iops(value: str, part: str, whole: str) -> float:
    m = _IOPS.match(value)
    if m is None:
        raise SloError(f"--slo '{whole}': '{part}': '{value}' is not an IOPS figure (write 10000 or 10k)")
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6}[m.group(2).lower()]


@dataclass(frozen=True)
class DirRepeat:
    """What one repeat did in one direction: I/Os over the time they ran, and
    its latency histograms (``{"lat": b64, "clat": b64}``)."""

    ios: int
    runtime_ns: int
    hists: dict[str, str] = field(default_factory=dict)


#: One repeat of a point: direction → its figures.
Repeat = dict[str, DirRepeat]


@dataclass(frozen=True)
class ClauseVerdict:
    clause: Clause
    value: float  # the merged figure (ns or IOPS)
    ci95: Optional[tuple[float, float]]  # over the repeats; None for one repeat
    holds: bool

    @property
    def confident(self) -> bool:
        """True when the threshold lies outside the 95 % interval: the verdict
        would not change with more repeats (at that confidence)."""
        if self.ci95 is None:
            return False
        low, high = self.ci95
        return (low > self.clause.threshold or high < self.clause.threshold) and (
            self.holds == self.clause.holds(low) == self.clause.holds(high)
        )


@dataclass(frozen=True)
class Verdict:
    clauses: tuple[ClauseVerdict, ...]
    repeats: int

    @property
    def holds(self) -> bool:
        return all(c.holds for c in self.clauses)

    @property
    def confident(self) -> bool:
        """A pass needs every clause confidently met; a fail one clause confidently broken."""
        if self.holds:
            return all(c.confident for c in self.clauses)
        return any(c.confident and not c.holds for c in self.clauses)

    def deciding(self) -> ClauseVerdict:
        """The clause the statement names: for a pass the closest to its
        threshold, for a fail the most confidently broken one."""
        broken = [c for c in self.clauses if not c.holds]
        if broken:
            return sorted(broken, key=lambda c: (not c.confident, -_margin(c)))[0]
        return min(self.clauses, key=_margin)


def _margin(c: ClauseVerdict) -> float:
    """How far the figure is from the threshold, relative to it (signed: + = on the good side)."""
    t = c.clause.threshold
    return (t - c.value) / t if c.clause.upper else (c.value - t) / t


def judge(slo: Slo, repeats: Sequence[Repeat]) -> Verdict:
    """The SLO over a point's repeats (at least one)."""
    if not repeats:
        raise ValueError("judge: no repeats")
    return Verdict(tuple(_clause_verdict(c, repeats) for c in slo.clauses), len(repeats))


def _dirs(clause: Clause, rep: Repeat) -> list[DirRepeat]:
    return [rep[d] for d in ([clause.direction] if clause.direction else DIRECTIONS) if d in rep and rep[d].ios]


def _clause_verdict(clause: Clause, repeats: Sequence[Repeat]) -> ClauseVerdict:
    per: list[float] = []
    if clause.metric == "iops":
        ios = [sum(d.ios for d in _dirs(clause, r)) for r in repeats]
        runtimes = [max((d.runtime_ns for d in _dirs(clause, r)), default=0) for r in repeats]
        per = [i / (t / 1e9) if t else 0.0 for i, t in zip(ios, runtimes)]
        value = sum(ios) / (sum(runtimes) / 1e9) if sum(runtimes) else 0.0
        return ClauseVerdict(clause, value, _t_interval(per, value), clause.holds(value))
    assert clause.percentile is not None
    hists: list[str] = []
    for r in repeats:
        mine = [d.hists[clause.metric] for d in _dirs(clause, r) if clause.metric in d.hists]
        if mine:
            one = merged_hist(mine)
            assert one is not None
            hists.append(one)
            per.append(float(_native.hist_stats(one, [clause.percentile])["percentiles"][clause.percentile]))
    if not hists:
        # No I/O in that direction: the objective cannot be met by nothing.
        return ClauseVerdict(clause, float("inf"), None, False)
    union = merged_hist(hists)
    assert union is not None
    value = float(_native.hist_stats(union, [clause.percentile])["percentiles"][clause.percentile])
    return ClauseVerdict(clause, value, _t_interval(per, value), clause.holds(value))


def _t_interval(per_repeat: Sequence[float], value: float) -> Optional[tuple[float, float]]:
    """``value`` ± Student's t 95 % half-width of the repeats' figures
    (t(n-1) x sd / √n); None for one repeat."""
    st = describe(per_repeat, "")
    if st.sd is None:
        return None
    half = t95(st.n - 1) * st.sd / math.sqrt(st.n)
    return (value - half, value + half)
