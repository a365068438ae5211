"""Comparison of two analyses (``iolab compare A B``): the same table rows,
matched by their parameters and direction, each metric's difference in %
and whether it is larger than the noise between repeats.

- :func:`compare` → :class:`Comparison` (pure: two :class:`Analysis` in).
  It first checks that A and B ran the same base job (:func:`base_job`:
  rw, bs, rwmixread, ioengine, size, direct, … wherever they are not an
  axis of the study) and raises :class:`CompareMismatchError` listing every
  difference unless ``force`` is given — matching 4 KiB randrw against
  128 KiB randread by iodepth alone gives figures, not a comparison.
- :func:`welch` — Welch's unequal-variance t-test from ``(n, mean, sd)`` of
  each side, two-sided, 95 % (``scipy.stats.ttest_ind_from_stats`` with
  ``equal_var=False``, ``ttest_ind``'s form for summarised samples): the
  per-repeat values of each point are what the Stats summarise.

A comparison runs one test per matched row and metric — dozens — so at
p < 0.05 each, a run compared with itself would show "significant" rows by
chance (the same plan twice gave 4 of 24). :func:`compare` therefore adjusts
every p for the family of the comparison's tests by Holm's step-down method
(:func:`holm`; the family-wise error rate stays at 5 %, whatever the
dependence between metrics), and the verdict reads the adjusted p.

Verdicts: ``significant`` (Holm-adjusted p < 0.05), ``within noise``
(adjusted p ≥ 0.05) and ``no repeats: cannot tell`` when either side has
fewer than two repeats. :func:`diff_metric` alone gives the verdict of one
test (a family of one).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

from iolab.analysis import wording as w
from iolab.analysis.model import Analysis, Json, Row, SampleConfig, Scalar, Stat
from iolab.errors import IolabError

SIGNIFICANT = "significant"
WITHIN_NOISE = "within noise"
NO_REPEATS = "no repeats: cannot tell"
ALPHA = 0.05
#: The multiple-comparison correction :func:`compare` applies, as reports name it.
CORRECTION = "Holm"


@dataclass
class Welch:
    #: t and df are None when neither side has any spread (sd 0): the test
    #: degenerates; p is then 0 for different means and 1 for equal ones.
    t: Optional[float]
    df: Optional[float]
    p_value: float


@dataclass
class MetricDiff:
    metric: str
    unit: str
    a: Stat
    b: Stat
    #: (b - a) / a x 100 on the headline values; None when a is 0
    diff_pct: Optional[float]
    verdict: str
    test: Optional[Welch] = None
    #: the test's p adjusted for every test of the comparison (:func:`holm`); None without a test
    p_adjusted: Optional[float] = None


@dataclass
class RowDiff:
    key: str  # "iodepth=32 bs=4k" (or the job's name for a run without axes)
    params: dict[str, Scalar]
    dir: str
    metrics: dict[str, MetricDiff]


@dataclass
class Difference:
    """One option of the base job on which A and B differ (values as the
    sides ran them, several when a side's points differ among themselves)."""

    option: str
    a: list[str]
    b: list[str]

    def text(self) -> str:
        return f"{self.option} {'/'.join(self.a)} (A) vs {'/'.join(self.b)} (B)"


@dataclass
class Comparison:
    a_name: str
    b_name: str
    rows: list[RowDiff]
    #: row keys ("key / dir") present on one side only
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    #: the sources' paths, as given
    a_path: str = ""
    b_path: str = ""
    #: base-job options on which A and B differ (compared anyway: ``force``)
    differences: list[Difference] = field(default_factory=list)
    #: the multiple-comparison correction: method, tests in the family, alpha
    correction: Json = field(default_factory=dict)

    def to_json(self) -> Json:
        """The ``iolab.compare/1`` document."""
        return {"schema": "iolab.compare/1", **asdict(self)}


def welch(a: Stat, b: Stat) -> Optional[Welch]:
    """Welch's t-test of the two means; None when either side has < 2 repeats."""
    if a.n < 2 or b.n < 2 or a.sd is None or b.sd is None:
        return None
    va, vb = a.sd**2 / a.n, b.sd**2 / b.n
    se2 = va + vb
    if se2 == 0.0:
        # Both sides without any spread: any difference is beyond the noise.
        return Welch(None, None, 1.0 if a.mean == b.mean else 0.0)
    from scipy import stats as sps  # type: ignore[import-untyped]  # lazily: see iolab.analysis.stats._scipy

    res = sps.ttest_ind_from_stats(b.mean, b.sd, b.n, a.mean, a.sd, a.n, equal_var=False)
    # Welch-Satterthwaite degrees of freedom, reported beside t and p.
    df = se2**2 / (va**2 / (a.n - 1) + vb**2 / (b.n - 1))
    return Welch(float(res.statistic), df, float(res.pvalue))


def diff_metric(metric: str, a: Stat, b: Stat) -> MetricDiff:
    """One metric of one matched row: difference and verdict (of this test alone)."""
    pct = (b.value - a.value) / a.value * 100.0 if a.value else None
    test = welch(a, b)
    if test is None:
        return MetricDiff(metric, a.unit, a, b, pct, NO_REPEATS, None)
    verdict = SIGNIFICANT if test.p_value < ALPHA else WITHIN_NOISE
    return MetricDiff(metric, a.unit, a, b, pct, verdict, test, test.p_value)


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the i-th
    smallest p times (m - i + 1), made non-decreasing, capped at 1. A test
    is significant at level alpha for the whole family when its adjusted p
    is below alpha (Holm 1979; R's ``p.adjust(method = "holm")``)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


def _correct(rows: list[RowDiff]) -> Json:
    """Adjust every tested metric's p for the whole comparison (Holm) and re-read its verdict."""
    tested = [d for r in rows for d in r.metrics.values() if d.test is not None]
    for d, p in zip(tested, holm([d.test.p_value for d in tested if d.test is not None])):
        d.p_adjusted = p
        d.verdict = SIGNIFICANT if p < ALPHA else WITHIN_NOISE
    return {"method": CORRECTION.lower(), "tests": len(tested), "alpha": ALPHA}


class CompareMismatchError(IolabError, ValueError):
    """A and B ran different base jobs: their rows would be matched by axis values alone."""

    def __init__(self, a: str, b: str, differences: list[Difference]) -> None:
        self.differences = differences
        listed = "; ".join(d.text() for d in differences)
        super().__init__(
            f"A ({a}) and B ({b}) ran different jobs: {listed}; their figures are not comparable "
            "point by point (give --force to compare them anyway)"
        )


def _bs(c: SampleConfig) -> str:
    return (
        _size(c.bs_read_bytes)
        if c.bs_read_bytes == c.bs_write_bytes
        else (f"{_size(c.bs_read_bytes)},{_size(c.bs_write_bytes)}")
    )


def _size(n: Optional[int]) -> str:
    if n is None:
        return "-"
    for unit, mult in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult} {unit}"
    return f"{n} B"


#: Base-job options compared between A and B: (name as in fio, the axis
#: names that make it vary within a study, its value in a sample's config).
_BASE_OPTIONS: tuple[tuple[str, tuple[str, ...], Callable[[SampleConfig], str]], ...] = (
    ("rw", ("rw", "readwrite"), lambda c: c.rw),
    ("bs", ("bs", "blocksize", "bs_read", "bs_write", "bssplit"), _bs),
    ("rwmixread", ("rwmixread", "rwmixwrite", "rw", "readwrite"),
     lambda c: "-" if c.rwmixread_pct is None or not c.rw.endswith("rw") else f"{c.rwmixread_pct:g}%"),
    ("ioengine", ("ioengine",), lambda c: c.ioengine),
    ("size", ("size", "filesize"), lambda c: _size(c.size_bytes)),
    ("direct", ("direct", "buffered"), lambda c: str(int(c.direct))),
    ("iodepth", ("iodepth",), lambda c: str(c.iodepth)),
    ("numjobs", ("numjobs",), lambda c: str(c.numjobs)),
    ("rate", ("rate", "rate_iops", "rate_bytes_per_s"),
     lambda c: "-" if not c.rate_limited else f"{c.rate_iops or '-'} IOPS, {c.rate_bytes_per_s or '-'} B/s"),
)  # fmt: skip


def base_job(an: Analysis, axes: set[str]) -> dict[str, list[str]]:
    """Option → the values its samples ran with, for every base option that is
    not one of ``axes`` (rows are matched on those)."""
    out: dict[str, list[str]] = {}
    for name, axis_names, get in _BASE_OPTIONS:
        if axes.intersection(axis_names):
            continue
        values = [get(s.config) for p in an.dataset.points for s in p.samples]
        out[name] = sorted(set(values))
    return out


def differences(a: Analysis, b: Analysis) -> list[Difference]:
    """The base-job options on which ``a`` and ``b`` differ."""
    axes = set(a.dataset.axes) | set(b.dataset.axes)
    ja, jb = base_job(a, axes), base_job(b, axes)
    return [Difference(k, ja[k], jb[k]) for k in ja if k in jb and ja[k] != jb[k] and ja[k] and jb[k]]


def point_label(an: Analysis, point: int) -> str:
    """What names a point: its parameters, else (a run without axes) its job's name."""
    for p in an.dataset.points:
        if p.index == point:
            return w.label(p)
    return f"point {point}"


#: The key of the one point of a run without axes: two such runs are matched
#: whatever their ids (which name the point otherwise).
WHOLE_RUN = "whole run"


def _keyed(an: Analysis) -> dict[tuple[str, str], Row]:
    if not an.dataset.axes and len(an.dataset.points) == 1:
        return {(WHOLE_RUN, r.dir): r for r in an.rows}
    return {(point_label(an, r.point), r.dir): r for r in an.rows}


def compare(a: Analysis, b: Analysis, *, force: bool = False) -> Comparison:
    """Match ``a``'s and ``b``'s rows by parameters and direction; diff every
    common metric. Raises :class:`CompareMismatchError` when their base jobs
    differ, unless ``force`` (the differences are then in the comparison)."""
    diffs = differences(a, b)
    if diffs and not force:
        raise CompareMismatchError(a.dataset.path, b.dataset.path, diffs)
    ka, kb = _keyed(a), _keyed(b)
    rows = []
    for key, ra in ka.items():
        rb = kb.get(key)
        if rb is None:
            continue
        metrics = {m: diff_metric(m, sa, rb.metrics[m]) for m, sa in ra.metrics.items() if m in rb.metrics}
        rows.append(RowDiff(key[0], ra.params, key[1], metrics))
    correction = _correct(rows)
    return Comparison(
        a.dataset.name,
        b.dataset.name,
        rows,
        only_a=[f"{k} / {d}" for k, d in ka if (k, d) not in kb],
        only_b=[f"{k} / {d}" for k, d in kb if (k, d) not in ka],
        a_path=a.dataset.path,
        b_path=b.dataset.path,
        differences=diffs,
        correction=correction,
    )
