"""The pacing lab's report (schema ``iolab.lab.pacing/1``) from measured
points: per test and table the seed's rows beside the measured ones (the
seed's BW and wire BW in Gb/s, iolab's in MiB/s: a time-scaled stack, so
shapes compare, not magnitudes — each row also carries its share of the
table's QD 32 value, or 96 buffers'), per-host rows in test.sh's layout, BW sd where a
point was repeated, the target's CPU per byte, per-export shares, the
starvation record where a point starved, JSON rows with the seed's label,
column, unit and value beside the measured value, and the verdicts."""

from __future__ import annotations

import statistics
from typing import Any, Optional

from iolab.lab.pacing import run as R
from iolab.lab.pacing.seed import BY_NUMBER, COLUMNS, T8_HANG_QD, SeedRow
from iolab.lab.pacing.verdicts import all_verdicts

SCHEMA = "iolab.lab.pacing/1"
Json = dict[str, Any]


def _mean(xs: list[float]) -> Optional[float]:
    return statistics.fmean(xs) if xs else None


def _merge(ps: list[Json]) -> Json:
    """One table row from a point's repeats: means, BW sd over repeats, the
    first repeat's host rows, starvation if any repeat starved."""
    ok = [p for p in ps if p.get("total")]
    bws = [p["total"]["bw_mib_s"] for p in ok]
    row: Json = {
        "repeats": len(ps),
        "bw_mib_s": _mean(bws),
        "wire_mib_s": _mean([p["total"]["wire_mib_s"] for p in ok]),
        "lat_us": _mean([p["total"]["lat_us"] for p in ok if p["total"]["lat_us"] is not None]),
        "kiops": _mean([p["total"]["kiops"] for p in ok]),
        "bw_sd_mib_s": statistics.stdev(bws) if len(bws) > 1 else None,
        "bw_runs_mib_s": bws,
        "hosts": ok[0]["hosts"] if ok else [],
        "cycles_per_byte": _mean([p["server"]["cycles_per_byte"] for p in ok if p["server"]["cycles_per_byte"]]),
        "fast_share": _mean([p["server"]["fast_share"] for p in ok]),
        "slow_hold_share": _mean([p["server"]["slow_hold_share"] for p in ok]),
        "export_share": _shares(ok[0]) if ok else {},
        "pacing": ok[0]["server"].get("pacing") if ok else None,
        "late_ms_p99": max((p["server"].get("late_ms_p99", 0.0) for p in ok), default=None),
        "starved": next((p["starved"] for p in ps if p.get("starved")), None),
        "error": next((p["error"] for p in ps if p.get("error")), None),
    }
    return row


def _shares(p: Json) -> dict[str, float]:
    eb = p["server"]["export_bytes"]
    total = sum(eb.values()) or 1.0
    return {k: v / total for k, v in eb.items()}


def _seed_cells(r: SeedRow) -> Json:
    return {k: getattr(r, k) for k, _, _ in COLUMNS}


def build_report(points: list[Json], meta: Json) -> Json:
    tests = []
    json_rows = []
    for n in sorted({p["point"]["test"] for p in points}):
        t = BY_NUMBER[n]
        tables = []
        for v in t.variants:
            mine = [p for p in points if p["point"]["test"] == n and p["point"]["variant"] == v.label]
            if not mine:
                continue
            xs = sorted({p["point"]["x"] for p in mine} | ({r.x for r in v.rows} if n != 6 else set()))
            seed_by_x: dict[int, list[SeedRow]] = {}
            for sr0 in v.rows:
                seed_by_x.setdefault(sr0.x, []).append(sr0)
            rows: list[Json] = []
            for x in xs:
                m = (
                    _merge([p for p in mine if p["point"]["x"] == x])
                    if any(p["point"]["x"] == x for p in mine)
                    else None
                )
                sr = seed_by_x.get(x, [])
                seed = _seed_cells(sr[0]) if len(sr) == 1 else None
                if len(sr) > 1:  # test 6: the seed's ten runs
                    bw = [s0.bw for s0 in sr]
                    seed = {"bw": statistics.fmean(bw), "wire": None, "lat": None, "sd": statistics.stdev(bw)}
                hung = n == 8 and v.label == "cache 0" and x >= T8_HANG_QD
                rows.append(
                    {"x": x, "seed": seed, "measured": m, "seed_note": "the seed's test hung" if hung else None}
                )
            ref = next((r for r in rows if r["x"] == (32 if t.axis == "qd" else 96)), None)
            for r in rows:
                r["seed_rel"] = _rel(r, ref, "seed", "bw")
                r["measured_rel"] = _rel(r, ref, "measured", "bw_mib_s")
                label = f"test {n}{' ' + v.label if v.label else ''} {t.axis} {r['x']}"
                for key, col, unit in COLUMNS:
                    mkey = {"bw": "bw_mib_s", "wire": "wire_mib_s", "lat": "lat_us", "sd": "bw_sd_mib_s"}[key]
                    mv = r["measured"][mkey] if r["measured"] else None
                    sv = r["seed"][key] if r["seed"] else None
                    if sv is None and mv is None:
                        continue
                    json_rows.append(
                        {
                            "label": label,
                            "column": col,
                            "unit": unit,
                            "seed": sv,
                            "measured": mv,
                            "measured_unit": "us" if key == "lat" else "MiB/s",
                        }
                    )
            tables.append({"variant": v.label, "axis": t.axis, "pacing": v.pacing, "cores": v.cores, "rows": rows})
        tests.append(
            {"number": n, "pacing": t.pacing, "disks": t.disks, "description": t.description, "tables": tables}
        )
    return {
        "schema": SCHEMA,
        **meta,
        "stack": {
            "nvme": R.NVME,
            "ceiling_mib_s": R.CEILING_MIB_S,
            "time_scale": R.TIME_SCALE,
            "delay": R.DELAY,
            "null_rate_mib_s": R.NULL_WIRE_MIB_S,
            "retry": R.RETRY,
        },
        "tests": tests,
        "rows": json_rows,
        "verdicts": all_verdicts(points),
        "points": points,
    }


def _rel(r: Json, ref: Optional[Json], side: str, key: str) -> Optional[float]:
    if ref is None or r[side] is None or ref[side] is None:
        return None
    a, b = r[side].get(key), ref[side].get(key)
    return a / b if a is not None and b else None
