"""Synthetic per-host results with known samples, for merge tests.

Each host is the example result (tests/results/data) cut to its first job
and one worker, with the read direction's histograms rebuilt from a known
list of latency samples, so a test knows the union of every host's samples
exactly."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from iolab import _native

DATA = Path(__file__).parents[1] / "results" / "data" / "example_result.json"
BS = 4096


def base() -> dict[str, Any]:
    r = json.loads(DATA.read_text())
    r["jobs"] = r["jobs"][:1]
    r["jobs"][0]["workers"] = r["jobs"][0]["workers"][:1]
    r["cpu"] = [c for c in r["cpu"] if c.get("group", 0) == 0][:1]
    return r


def host_result(template: dict[str, Any], host: str, samples_ns: list[int], runtime_ns: int) -> dict[str, Any]:
    r = copy.deepcopy(template)
    r["hosts"][0]["hostname"] = host
    for c in r["cpu"]:
        c["host"] = host
    w = r["jobs"][0]["workers"][0]
    w["host"] = host
    w["runtime_ns"] = runtime_ns
    h = _native.hist_from_counts(sorted(Counter(samples_ns).items()))
    empty = _native.hist_from_counts([])
    w["dirs"][0].update(ios=len(samples_ns), bytes=len(samples_ns) * BS, errors=0, slat_ns=empty, clat_ns=h, lat_ns=h)
    w["dirs"][1].update(ios=0, bytes=0, errors=0, slat_ns=empty, clat_ns=empty, lat_ns=empty, lat_intended_ns=None)
    w["dirs"][0]["lat_intended_ns"] = None
    w["syncs"] = 0
    w["series"] = []
    return r


def hosts(n: int, per_host: int, seed: int = 7) -> tuple[list[tuple[str, dict[str, Any]]], list[int]]:
    """``n`` hosts with different latency distributions; also every sample."""
    rnd = random.Random(seed)
    template = base()
    out, union = [], []
    for i in range(n):
        scale = 20_000 * (1 + i % 5)  # hosts differ: averaging percentiles would be wrong
        samples = [int(rnd.expovariate(1 / scale)) + 1_000 for _ in range(per_host)]
        union += samples
        out.append((f"h{i}", host_result(template, f"h{i}", samples, 1_000_000_000 + i * 1_000)))
    return out, union


def fleet_results(per_host: list[tuple[str, dict[str, Any]]]) -> Any:
    """What rank 0 reports (``FleetResults``) for these hosts' results, merged exactly."""
    from iolab.fleet.merge import merge_results, table_rows
    from iolab.fleet.output import FleetResults
    from iolab.fleet.runner import FleetConfig, FleetOutcome, HostPart
    from iolab.run.local import RunOutput

    total = merge_results([r for _, r in per_host])
    tj = json.dumps(total)
    outcome = FleetOutcome(
        [HostPart(i, label, result_json=json.dumps(r)) for i, (label, r) in enumerate(per_host)],
        {"ranks": [], "start_skew_ns": 0, "round_trip_median_ns": 0},
        [],
        False,
        (),
        FleetConfig(),
    )
    return FleetResults(outcome, RunOutput(tj, _native.summarize(tj), False, ()), per_host, table_rows(per_host, total))
