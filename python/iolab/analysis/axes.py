"""A study's rows cut into series along one numeric axis: the points that
share every other axis value, ordered by the axis, per direction. Knees
and trends are found within a series, so a QD sweep repeated at several
block sizes gives one curve per block size rather than one jagged line.
"""

from __future__ import annotations

from dataclasses import dataclass

from iolab.analysis import wording as w
from iolab.analysis.model import Dataset, Row, Scalar
from iolab.analysis.tables import figure

#: Axes on which throughput is naturally read as bandwidth (IOPS falls as blocks grow).
BANDWIDTH_AXES = ("bs", "blocksize", "bs_read", "bs_write")


@dataclass
class Series:
    axis: str
    dir: str
    #: the other axes' values that every point of the series shares
    fixed: dict[str, Scalar]
    xs: list[float]
    rows: list[Row]

    @property
    def where(self) -> str:
        """``" (bs=4k)"``, or "" when nothing else varies."""
        shown = {k: v for k, v in self.fixed.items() if v != "-"}  # "-": without effect here
        if not shown:
            return ""
        return " (" + ", ".join(f"{k}={w.value(v)}" for k, v in shown.items()) + ")"

    def throughput(self) -> tuple[str, list[float]]:
        """(metric, values): bandwidth along a block-size axis, else IOPS."""
        name = "bw_bytes_per_s" if self.axis in BANDWIDTH_AXES else "iops"
        return name, [figure(r, name) or 0.0 for r in self.rows]

    def x_text(self, i: int) -> str:
        return f"{self.axis}={w.value(self.rows[i].params.get(self.axis, self.xs[i]))}"


def numeric_axes(ds: Dataset) -> list[str]:
    """Axes with a number at every point and at least two distinct numbers:
    the one rule for knees, trends and the report's charts (an axis whose
    points all sit at one number, ``bs=4k`` beside ``bs=4096``, is no axis
    to draw or read a trend along)."""
    out = []
    for a in ds.axes:
        vals = [p.values.get(a) for p in ds.points]
        if all(v is not None for v in vals) and len(set(vals)) > 1:
            out.append(a)
    return out


def series(ds: Dataset, rows: list[Row], axis: str) -> list[Series]:
    """Every series along ``axis`` with two or more points, per direction."""
    values = {p.index: p.values.get(axis) for p in ds.points}
    groups: dict[tuple[str, str], Series] = {}
    for r in rows:
        x = values.get(r.point)
        if x is None:
            continue
        fixed = {k: v for k, v in r.params.items() if k != axis}
        key = (r.dir, repr(sorted((k, str(v)) for k, v in fixed.items())))
        s = groups.setdefault(key, Series(axis, r.dir, fixed, [], []))
        s.xs.append(x)
        s.rows.append(r)
    out = []
    for s in groups.values():
        order = sorted(range(len(s.xs)), key=lambda i: s.xs[i])
        s.xs, s.rows = [s.xs[i] for i in order], [s.rows[i] for i in order]
        if len(set(s.xs)) >= 2:
            out.append(s)
    return out
