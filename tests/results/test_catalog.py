"""The SQLite catalog: runs and sweeps, figures, listing, forgetting."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from iolab.results.catalog import Catalog
from iolab.results.rundir import write_run_dir


def _run(root: Path, name: str, result_json: str, summary_json: str) -> dict:
    d = root / name
    return write_run_dir(d, result_json, summary_json, run_meta={"id": name}, config={}, host={})


def test_runs_and_sweeps_listed(tmp_path: Path, result_json: str, summary_json: str) -> None:
    cat = Catalog(tmp_path)
    doc = _run(tmp_path, "run-a", result_json, summary_json)
    cat.add_run("run-a", "job", tmp_path / "run-a", doc, interrupted=False)
    (tmp_path / "sw").mkdir()
    cat.add_sweep({"id": "sw", "started_unix_ns": 1, "plan_hash": "ab" * 32}, tmp_path / "sw")
    for point in (1, 2):
        meta = {"id": f"sw/p00{point}-r1", "sweep": "sw", "point": point, "repeat": 1, "params": {"bs": f"{point}k"}}
        cat.add_point(meta, tmp_path / "sw", doc)
    entries = {e["id"]: e for e in Catalog(tmp_path).entries()}
    assert set(entries) == {"run-a", "sw"}
    assert entries["sw"]["kind"] == "sweep" and entries["sw"]["runs"] == 2 and entries["sw"]["status"] == "running"
    jobs = doc["summary"]["jobs"]
    total_iops = sum(j["merged"][d]["iops"] for j in jobs for d in ("read", "write") if j["merged"][d]["ios"])
    assert abs(entries["run-a"]["iops"] - total_iops) < 1e-6
    # The figure is the core's group total (one job per group here, so the same).
    groups = doc["summary"]["groups"]
    assert abs(entries["run-a"]["iops"] - sum(g["total"]["iops"] for g in groups)) < 1e-6
    bw = sum(g["total"]["bw_bytes_per_s"] for g in groups)
    assert abs(entries["run-a"]["bw_bytes_per_s"] - bw) < 1e-6 * bw
    figures = cat.figures("sw")
    assert sorted({json.loads(f["params"])["bs"] for f in figures}) == ["1k", "2k"]
    assert {f["point"] for f in figures} == {1, 2}


def test_point_rewritten_once_and_forget(tmp_path: Path, result_json: str, summary_json: str) -> None:
    cat = Catalog(tmp_path)
    doc = _run(tmp_path, "sw", result_json, summary_json)
    cat.add_sweep({"id": "sw", "started_unix_ns": 1, "plan_hash": "x"}, tmp_path / "sw")
    meta = {"id": "sw/p001-r1", "sweep": "sw", "point": 1, "repeat": 1, "params": {}}
    cat.add_point(meta, tmp_path / "sw", doc)
    n = len(cat.figures("sw"))
    cat.add_point(meta, tmp_path / "sw", doc)
    assert len(cat.figures("sw")) == n
    cat.set_status("sw", "complete")
    assert cat.find("sw")["status"] == "complete"
    cat.forget("sw")
    assert cat.find("sw") is None and cat.figures("sw") == []


def test_deleted_directories_are_not_listed(tmp_path: Path, result_json: str, summary_json: str) -> None:
    cat = Catalog(tmp_path)
    doc = _run(tmp_path, "gone", result_json, summary_json)
    cat.add_run("gone", "job", tmp_path / "gone", doc, interrupted=True)
    assert cat.find("gone")["status"] == "interrupted"
    shutil.rmtree(tmp_path / "gone")
    assert cat.entries() == []
