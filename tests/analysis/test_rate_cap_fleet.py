"""The rate cap a fleet run is judged against is the sum of every host's
and every worker's caps (the bug: ``iolab report`` on a fleet sweep said
"688 IOPS measured against a configured cap of 120" — one job's cap).

Truth: synthetic per-host results (tests/fleet/synth.py) with known caps
and I/O counts, merged as a fleet run merges them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from fleet.synth import hosts
from iolab import _native
from iolab.analysis.bottleneck import rate_limit
from iolab.analysis.load import run_samples
from iolab.analysis.model import Point
from iolab.fleet.merge import merge_results
from iolab.results import build_output
from iolab.results.rundir import RunRecord, write_record

Json = dict[str, Any]
RUNTIME_S = 1.0  # synth's hosts run 1 s (plus a few µs)


def _capped(per_host: list[tuple[str, Json]], caps: list[int], workers: int) -> list[Json]:
    """Each host's result with ``workers`` workers of a job capped at ``caps[i]`` IOPS per worker."""
    out = []
    for (_, r), cap in zip(per_host, caps):
        r = copy.deepcopy(r)
        job = r["jobs"][0]
        job["job"]["rate_iops"] = [cap, cap]  # fio's rate_iops=N: N per direction
        job["job"]["rw"] = {"pattern": "random", "read_pct": 100}  # synth's hosts only read
        job["job"]["numjobs"] = workers
        w0 = job["workers"][0]
        job["workers"] = [{**copy.deepcopy(w0), "worker": k} for k in range(workers)]
        out.append(r)
    return out


def _doc(result: Json) -> Json:
    rj = json.dumps(result)
    return build_output(rj, _native.summarize(rj))


def _point(directory: Path) -> Point:
    (s,) = run_samples(directory)
    return Point(1, {}, {}, [s])


def _record(directory: Path, merged: Json, ranks: list[Json]) -> Path:
    files = {f"hosts/rank-{i}.json": _doc(r) for i, r in enumerate(ranks)}
    write_record(directory, RunRecord(_doc(merged), {"jobs": [], "prepared": []}, {}, {"id": "fleet"}, files))
    return directory


def test_cap_is_summed_over_hosts_and_workers(tmp_path: Path) -> None:
    # 4 hosts x 2 workers, each worker capped at 100 IOPS: the fleet's cap is 800 IOPS.
    per_host, _ = hosts(4, 400)
    ranks = _capped(per_host, [100] * 4, workers=2)
    merged = merge_results(ranks)
    # The merged result alone (no per-rank documents): cap x every worker it holds.
    s = _point(_record(tmp_path / "merged-only", merged, []))
    assert s.samples[0].config.rate_iops == 800
    measured = s.samples[0].read.iops
    assert 4 * 2 * 400 / 1.01 <= measured <= 4 * 2 * 400 / RUNTIME_S  # 3,200 I/Os in about a second
    got = rate_limit(s)
    # 3,200 IOPS is 4x the cap: a verdict against 800, never against one worker's 100 or one host's 200.
    assert got is not None and got["evidence"]["cap"] == 800, got
    assert "cap of 800 IOPS" in got["text"], got["text"]


def test_per_host_caps_from_each_ranks_document(tmp_path: Path) -> None:
    # A hosts table gives each host its own cap; the merged result keeps rank 0's spec only.
    per_host, _ = hosts(3, 300)
    ranks = _capped(per_host, [100, 400, 1000], workers=1)
    merged = merge_results(ranks)
    p = _point(_record(tmp_path / "run", merged, ranks))
    assert p.samples[0].config.rate_iops == 1500
    got = rate_limit(p)  # 900 I/Os in ~1 s: 60 % of 1,500 — not a cap reached (against 3 x 100 it would be)
    assert got is None


def test_only_the_directions_the_job_issues_are_capped(tmp_path: Path) -> None:
    per_host, _ = hosts(2, 100)
    ranks = _capped(per_host, [100, 100], workers=1)
    # A read-only job's write cap is not part of its cap (it was: 2x the true cap).
    assert _point(_record(tmp_path / "read", merge_results(ranks), [])).samples[0].config.rate_iops == 200
    # A mix whose writes run uncapped (fio's rate_iops=100,0) is not capped as a whole.
    for r in ranks:
        r["jobs"][0]["job"].update(rw={"pattern": "random", "read_pct": 70}, rate_iops=[100, None])
    assert _point(_record(tmp_path / "mix", merge_results(ranks), [])).samples[0].config.rate_iops is None
