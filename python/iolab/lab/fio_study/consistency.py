"""The seed's printed figures read, and checked against its own columns.

Seed 002 heads its completion-latency columns "ns" but writes cells such
as ``1791k`` beside a total of 1820.3 µs, and heads its large-size
bandwidth "MB/s". Every cell is read as headed (``k`` = 10^3, ``M`` =
10^6 of the column's unit) and then checked against the figures fio's
definitions tie it to:

- completion latency: fio's total latency of an I/O is its submission
  plus its completion latency, so the means add exactly
  (``lat avg = slat avg + clat avg``, within :data:`AVG_TOL`); the largest
  completion lies between ``lat max - slat max`` and ``lat max``; the
  smallest is at most the smallest total. A cell that fails as headed is
  tried as µs (the unit of the table's other columns); if that reading
  holds it is reported as the consistent one, else the cell is reported
  as consistent with no reading.
- bandwidth: IOPS x block size = the rate; the printed "MB/s" is tried as
  MiB/s (2^20, fio's own) and as MB/s (10^6), within :data:`BW_TOL`.
- a bandwidth row that repeats another row of the same table exactly is
  named (a copy is more likely than two equal measurements).
"""

from __future__ import annotations

from typing import Any, Optional

from iolab.lab.fio_study.seed import BW_TABLES, LAT_GROUPS, LAT_TABLES, STATS, BwRow, LatRow

#: Means that add up within this share of the total (the seed prints 2 decimals).
AVG_TOL = 0.01
#: IOPS x block size within this share of the printed rate (the seed rounds to 3 digits).
BW_TOL = 0.03
_SUFFIX = {"k": 1e3, "M": 1e6, "G": 1e9}
_NS_PER = {"ns": 1.0, "us": 1e3}
KIB = 1024
MIB = 1 << 20


def us_text(v: float) -> str:
    """A figure in µs as the notes print it: ``1,791.79``, ``206,848``
    (two decimals below 100 000 µs, the seed's own precision)."""
    return f"{v:,.2f}" if abs(v) < 100_000 else f"{v:,.0f}"


def cell_value(text: str) -> Optional[float]:
    """A cell as headed: ``1791k`` → 1791000.0, ``1117.6M`` → 1.1176e9, ``n/a`` → None."""
    if text == "n/a":
        return None
    mult = _SUFFIX.get(text[-1], 1.0)
    return float(text[:-1] if text[-1] in _SUFFIX else text) * mult


def bs_bytes(text: str) -> int:
    """fio's block size: ``130k`` = 130 KiB = 133120 bytes."""
    return int(float(text[:-1]) * KIB) if text.endswith("k") else int(text)


def _us(text: str, unit: str) -> Optional[float]:
    v = cell_value(text)
    return None if v is None else v * _NS_PER[unit] / 1e3


def row_us(row: LatRow) -> dict[str, dict[str, Optional[float]]]:
    """Every cell of ``row`` in µs, read as its column is headed:
    ``{"lat": {"Avg": ..}, "slat": {..}, "clat": {..}}``."""
    out: dict[str, dict[str, Optional[float]]] = {}
    for g, (_, unit, kind) in enumerate(LAT_GROUPS):
        out[kind] = {s: _us(row.cells[g * 3 + i], unit) for i, s in enumerate(STATS)}
    return out


def _holds(
    stat: str, clat: float, lat: dict[str, Optional[float]], slat: dict[str, Optional[float]]
) -> tuple[bool, str]:
    """Whether completion ``stat`` = ``clat`` µs fits the row's total and
    submission figures, and the figure it was held against (in words)."""
    if stat == "Avg":
        la, sa = lat["Avg"], slat["Avg"]
        assert la is not None and sa is not None
        want = la - sa
        return abs(
            want - clat
        ) <= AVG_TOL * la, f"total {us_text(la)} µs - submission {us_text(sa)} µs = {us_text(want)} µs"
    if stat == "Max":
        lm, sm = lat["Max"], slat["Max"]
        assert lm is not None and sm is not None
        lo = lm - sm
        ok = lo * (1 - AVG_TOL) <= clat <= lm * (1 + AVG_TOL)
        return ok, f"between total max - submission max = {us_text(max(lo, 0))} µs and total max {us_text(lm)} µs"
    lmin = lat["Min"]
    assert lmin is not None
    return clat <= lmin * (1 + AVG_TOL), f"at most total min {us_text(lmin)} µs"


def latency_cells(row: LatRow) -> list[dict[str, Any]]:
    """The completion cells of ``row`` checked (module doc): ``{"stat",
    "seed_text", "seed_unit", "as_headed_us", "reading", "consistent_us",
    "against", "note"}``; ``reading`` is "as headed", "µs" or None (no
    reading is consistent); ``note`` is None for a plain cell that holds as headed."""
    us = row_us(row)
    lat, slat = us["lat"], us["slat"]
    out = []
    for i, stat in enumerate(STATS):
        text = row.cells[6 + i]
        headed = us["clat"][stat]
        if headed is None or lat[stat] is None or slat[stat] is None:
            continue
        raw = cell_value(text)
        assert raw is not None
        ok, against = _holds(stat, headed, lat, slat)
        reading: Optional[str] = "as headed" if ok else None
        value: Optional[float] = headed if ok else None
        if not ok and _holds(stat, raw, lat, slat)[0]:
            reading, value = "µs", raw
        where = f"{row.label} {row.direction} completion {stat.lower()}"
        shown = f"'{text}' in a column headed ns"
        note: Optional[str] = None
        if reading == "as headed" and text[-1] in _SUFFIX:
            note = f"{where}: the seed prints {shown}: {text} ns = {us_text(headed)} µs, consistent ({against})"
        elif reading == "µs":
            note = (
                f"{where}: the seed prints {shown} ({us_text(headed)} µs as headed), inconsistent; read as µs "
                f"({us_text(raw)} µs) it is consistent ({against}): the column's unit is wrong for this cell"
            )
        elif reading is None:
            copy = " — it equals the total's" if text == row.cells[i] else ""
            note = (
                f"{where}: the seed prints {shown}: neither as ns ({us_text(headed)} µs) nor as µs ({us_text(raw)} µs) "
                f"is it consistent with its row ({against}){copy}; the value is doubtful"
            )
        out.append(
            {
                "stat": stat,
                "seed_text": text,
                "seed_unit": "ns",
                "as_headed_us": headed,
                "reading": reading,
                "consistent_us": value,
                "against": against,
                "note": note,
            }
        )
    return out


def _partner(row: BwRow) -> Optional[BwRow]:
    for r in BW_TABLES:
        if r.sweep == row.sweep and r.bs == row.bs and r.value == row.value and r.unit != row.unit:
            return r
    return None


def bandwidth_checks() -> list[dict[str, Any]]:
    """Each IOPS row with a rate row beside it: the rate IOPS x bs gives,
    the reading of "MB/s" that agrees (MiB/s, MB/s or None), and a note;
    plus a note for every row that repeats another row of its table."""
    out = []
    for r in (r for r in BW_TABLES if r.unit == "IOPS"):
        rate = _partner(r)
        if rate is None:
            continue
        for direction, iops_text, rate_text in (("read", r.read, rate.read), ("write", r.write, rate.write)):
            iops, printed = cell_value(iops_text), cell_value(rate_text)
            if iops is None or printed is None:
                continue
            bps = iops * bs_bytes(r.bs)
            reading = next(
                (name for name, div in (("MiB/s", MIB), ("MB/s", 1e6)) if abs(bps / div / printed - 1) <= BW_TOL), None
            )
            label = f"{r.bs} {r.value}" if r.sweep != "bs" else r.bs
            calc = f"{iops_text} IOPS x {r.bs} = {bps / MIB:.1f} MiB/s = {bps / 1e6:.1f} MB/s"
            note = (
                f"{label} {direction}: {calc}; the seed prints {rate_text} 'MB/s': consistent read as {reading}"
                if reading
                else f"{label} {direction}: {calc}; the seed prints {rate_text} 'MB/s': inconsistent in either reading"
            )
            out.append({"sweep": r.sweep, "label": label, "direction": direction, "reading": reading, "note": note})
    for i, r in enumerate(BW_TABLES):
        for other in BW_TABLES[:i]:
            same_table = other.sweep == r.sweep and other.unit == r.unit
            if same_table and (other.read, other.write) == (r.read, r.write) and "n/a" not in (r.read, r.write):
                out.append(
                    {
                        "sweep": r.sweep,
                        "label": r.value,
                        "direction": "both",
                        "reading": None,
                        "note": f"{r.value}: the seed's {r.read} / {r.write} {r.unit} repeat its {other.value} row exactly",
                    }
                )
    return out


def latency_notes() -> list[dict[str, Any]]:
    """Every completion cell that needs a note, table by table, with its row."""
    out = []
    for row in LAT_TABLES:
        for c in latency_cells(row):
            if c["note"]:
                out.append({"sweep": row.sweep, "direction": row.direction, "label": row.label, **c})
    return out
