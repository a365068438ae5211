"""The fio-study report as a plain dict (schema ``iolab.lab.fio-study/1``):
the seed's tables with its value beside the measured one, cell by cell
(label, column, unit, the seed's text, its value as headed, the reading
that makes it consistent, the measured value), the seed's consistency
findings, the seed's analysis beside iolab's, and a verdict per statement.
Every latency is in µs, every rate in IOPS or MiB/s."""

from __future__ import annotations

from typing import Any, Optional

from iolab.lab.fio_study.claims import SYNC_ENGINES, observations, verdicts
from iolab.lab.fio_study.consistency import bandwidth_checks, cell_value, latency_cells, latency_notes, row_us
from iolab.lab.fio_study.seed import (
    ANALYSIS,
    BW_TABLES,
    COMMANDS,
    LAT_GROUPS,
    LAT_TABLES,
    ROW_HEADINGS,
    SECTION_TITLES,
    STATS,
    TITLES,
    VM_NOTE,
    BwRow,
    LatRow,
)

SCHEMA = "iolab.lab.fio-study/1"
Json = dict[str, Any]
_GROUP_NAMES = {"lat": "total", "slat": "submission", "clat": "completion"}
MB_NOTE = "the seed's 'MB/s' are MiB/s wherever its IOPS x block size can tell (consistency below); iolab prints MiB/s"


def _point(measured: dict[str, list[Json]], sweep: str, label: str, bs: str = "4k") -> Optional[Json]:
    """The measured point behind a seed row label."""
    want: dict[str, str] = {
        "bs": {"bs": label},
        "rwmix": {"bs": bs, "rwmixread": label.split("/")[0]},
        "qd": {"bs": bs, "iodepth": label},
    }[sweep]
    for p in measured.get(sweep, []):
        if all(str(p["params"].get(k)) == v for k, v in want.items()):
            return p
    return None


def _lat_table(measured: dict[str, list[Json]], sweep: str, direction: str) -> Json:
    rows = []
    for r in (r for r in LAT_TABLES if r.sweep == sweep and r.direction == direction):
        p = _point(measured, sweep, r.label)
        d = None if p is None else p.get(direction)
        seed_us = row_us(r)
        checks = {c["stat"]: c for c in latency_cells(r)}
        for g, (column, unit, kind) in enumerate(LAT_GROUPS):
            fig = None if d is None else d.get(f"{kind}_us")
            for i, stat in enumerate(STATS):
                c = checks.get(stat) if kind == "clat" else None
                rows.append(
                    {
                        "label": r.label,
                        "column": f"{direction.capitalize()} {column} {stat}",
                        "figure": kind,
                        "stat": stat.lower(),
                        "unit": "µs",
                        "seed_text": r.cells[g * 3 + i],
                        "seed_unit": unit,
                        "seed_value": seed_us[kind][stat],
                        "seed_reading": None if c is None else c["reading"],
                        "seed_consistent_value": None if c is None else c["consistent_us"],
                        "measured": None if fig is None else fig[stat.lower()],
                    }
                )
    title = f"{TITLES[sweep]} on Latency: {direction} ({ROW_HEADINGS[sweep]})"
    return {"sweep": sweep, "direction": direction, "title": title, "heading": ROW_HEADINGS[sweep], "rows": rows}


def _bw_value(p: Optional[Json], direction: str, unit: str) -> Optional[float]:
    d = None if p is None else p.get(direction)
    if d is None:
        return None
    return float(d["iops"] if unit == "IOPS" else d["mib_per_s"])


def _bw_notes(sweep: str) -> dict[tuple[str, str], str]:
    """(label, direction) → the consistency note on a cell of the seed's
    bandwidth table that no reading makes consistent, or that copies another row."""
    out = {}
    for c in bandwidth_checks():
        if c["sweep"] == sweep and c["reading"] is None:
            for d in ("read", "write") if c["direction"] == "both" else (c["direction"],):
                out[(c["label"], d)] = c["note"]
    return out


def _bw_table(measured: dict[str, list[Json]], sweep: str) -> Json:
    rows = []
    notes = _bw_notes(sweep)
    for r in (r for r in BW_TABLES if r.sweep == sweep):
        p = _point(measured, sweep, r.value, r.bs)
        unit = "IOPS" if r.unit == "IOPS" else "MiB/s"
        for direction, text in (("read", r.read), ("write", r.write)):
            rows.append(
                {
                    "label": r.value if sweep == "bs" else f"{r.bs} {r.value}",
                    "bs": r.bs,
                    "column": f"{direction.capitalize()} Bandwidth ({r.unit})",
                    "unit": unit,
                    "seed_text": text,
                    "seed_value": cell_value(text),
                    "seed_note": notes.get((r.value if sweep == "bs" else f"{r.bs} {r.value}", direction)),
                    "measured": _bw_value(p, direction, r.unit),
                }
            )
    return {"sweep": sweep, "title": f"{TITLES[sweep]} on Bandwidth", "rows": rows}


def _analysis(measured: dict[str, list[Json]], claims: list[Json]) -> list[Json]:
    obs = observations(measured)
    out = []
    for section, title in SECTION_TITLES.items():
        seed = [{"kind": kind, "statement": st, **_claim(claims, st)} for s, kind, _, st in ANALYSIS if s == section]
        out.append(
            {
                "section": section,
                "title": title,
                "seed": seed,
                "iolab": [o["text"] for o in obs if o["section"] == section],
            }
        )
    return out


def _claim(claims: list[Json], statement: str) -> Json:
    c = next(c for c in claims if c["statement"] == statement)
    return {"verdict": c["verdict"], "figure": c["figure"], "evidence": c["evidence"]}


def _notes(measured: dict[str, list[Json]], meta: Json) -> list[str]:
    out = [f"The seed says: {VM_NOTE.removeprefix('Note: ')}."]
    configs = [p["config"] for pts in measured.values() for p in pts]
    engines = sorted({c["ioengine"] for c in configs})
    if engines and not any(k == "ioengine" for k, _ in meta.get("additions", [])) and not meta.get("sim"):
        out.append(
            f"The seed's commands name no ioengine: they ran with iolab's default, as fio's on Linux "
            f"({', '.join(engines)}). The seed's tables show submission latency and latency that grows with "
            "iodepth, which a synchronous engine does not give, so its fio used an asynchronous default "
            "(posixaio on macOS, windowsaio on Windows)."
        )
    if meta.get("sim"):
        out.append(
            "The simulated SSD is one sim-ssd (docs/simulation.md) for the three sweeps, written once over the "
            "jobs' size first, as fio lays out testfile; ioengine=nbd and the export's URI take --filename's "
            "place. Latency verdicts use the target's own record (service time per request), not the client's."
        )
    if engines and set(engines) <= SYNC_ENGINES:
        out.append(
            f"{', '.join(engines)} submits each I/O in the call that completes it: there is no submission "
            "latency to measure (fio reports none either), so iolab's submission columns print n/a."
        )
    if configs and not any(c["direct"] for c in configs) and not meta.get("sim"):
        out.append(
            "The seed's commands do not set direct: I/O is buffered, through the page cache; "
            "with a file smaller than the free memory most reads and writes never reach the device."
        )
    return out


def build_report(measured: dict[str, list[Json]], meta: Json) -> Json:
    """The report from the measured points (``{sweep: [run.point_figures]}``)
    and ``meta``: ``target``, ``quick``, ``sim``, ``shrink`` ({size, runtime}),
    ``repeats``, ``additions`` ([[option, value]]), ``plans``."""
    claims = verdicts(measured)
    counts = {v: sum(1 for c in claims if c["verdict"] == v) for v in dict.fromkeys(c["verdict"] for c in claims)}
    return {
        "schema": SCHEMA,
        **{k: meta.get(k) for k in ("target", "quick", "sim", "shrink", "repeats", "additions", "plans")},
        "commands": COMMANDS,
        "notes": _notes(measured, meta),
        "latency_tables": [_lat_table(measured, s, d) for s in COMMANDS for d in ("read", "write")],
        "bandwidth_tables": [_bw_table(measured, s) for s in COMMANDS],
        "consistency": {"latency": latency_notes(), "bandwidth": bandwidth_checks(), "mb_note": MB_NOTE},
        "analysis": _analysis(measured, claims),
        "claims": claims,
        "verdict_counts": counts,
        "measured": measured,
    }


__all__ = ["SCHEMA", "BwRow", "LatRow", "build_report"]
