"""The latency_target search's outcome in reports: the depth each worker
settled at (fio's ``latency_depth``), with the target, window and
percentile it was searched under, read from the raw result (the job's
``control`` options and each worker's ``latency_depth``)."""

from __future__ import annotations

from typing import Any, Optional

Json = dict[str, Any]


def control(raw_job: Optional[Json]) -> Optional[Json]:
    """The job's flow/latency/submit options, or None when it has no latency_target."""
    c = (raw_job or {}).get("job", {}).get("control")
    if not c or not c.get("latency_target_ns"):
        return None
    return c  # type: ignore[no-any-return]


def depth(raw_job: Optional[Json], worker: Optional[int]) -> Optional[int]:
    """The depth worker ``worker`` settled at; for a merged entry (None) the
    lowest of the workers' (the depth every one of them met)."""
    depths = [w.get("latency_depth") for w in (raw_job or {}).get("workers", [])]
    found = [d for d in depths if d is not None]
    if not found:
        return None
    if worker is None:
        return int(min(found))
    d = depths[worker] if worker < len(depths) else None
    return None if d is None else int(d)


def text_lines(raw_job: Json, worker: Optional[int]) -> list[str]:
    """fio's "latency : target=..., depth=N" line, in iolab's units."""
    c = control(raw_job)
    d = depth(raw_job, worker)
    if c is None or d is None:
        return []
    return [
        f"  latency target: target={c['latency_target_ns'] / 1000:g} us, window={c['latency_window_ns'] / 1000:g} us, "
        f"percentile={c['latency_percentile']:.2f}%, depth={d} I/Os"
    ]


def fio_fields(raw_job: Optional[Json], worker: Optional[int], iodepth: int) -> Json:
    """fio's JSON fields: the depth found, or fio's values with the search off."""
    c = control(raw_job)
    d = depth(raw_job, worker)
    if c is None or d is None:
        return {"latency_depth": iodepth, "latency_target": 0, "latency_percentile": 100.0, "latency_window": 0}
    return {
        "latency_depth": d,
        "latency_target": c["latency_target_ns"],
        "latency_percentile": float(c["latency_percentile"]),
        "latency_window": c["latency_window_ns"] // 1000,
    }
