"""Run directories: files written, series as Parquet, host facts, load()."""

from __future__ import annotations

import json
from pathlib import Path

import iolab
import pyarrow.parquet as pq
import pytest
from iolab.results.rundir import figure_rows, is_complete, load, series_rows, write_run_dir
from iolab.run.hostfacts import host_facts


def _write(tmp_path: Path, result_json: str, summary_json: str) -> Path:
    d = tmp_path / "run"
    write_run_dir(d, result_json, summary_json, run_meta={"id": "r1"}, config={"jobs": []}, host={"hostname": "h"})
    return d


def test_directory_is_complete_and_self_describing(tmp_path: Path, result_json: str, summary_json: str) -> None:
    d = _write(tmp_path, result_json, summary_json)
    assert sorted(p.name for p in d.iterdir()) == [
        "config.json",
        "host.json",
        "result.json",
        "run.json",
        "timeseries.parquet",
    ]
    assert is_complete(d)
    meta = json.loads((d / "run.json").read_text())
    assert meta["id"] == "r1" and meta["tool_version"] == json.loads(result_json)["tool_version"]


def test_series_parquet_matches_summary(tmp_path: Path, result_json: str, summary_json: str) -> None:
    d = _write(tmp_path, result_json, summary_json)
    table = pq.read_table(d / "timeseries.parquet").to_pylist()
    summary = json.loads(summary_json)
    intervals = sum(len(j["series"]) for j in summary["jobs"])
    assert len(table) == 2 * intervals
    first = summary["jobs"][0]["series"][0]["read"]
    assert table[0]["dir"] == "read" and table[0]["iops"] == first["iops"]
    assert table[0]["lat_p99_ns"] == first["lat_p99_ns"]


def test_figures_skip_idle_directions(tmp_path: Path, result_json: str, summary_json: str) -> None:
    doc = {"summary": json.loads(summary_json)}
    rows = list(figure_rows(doc))
    merged = doc["summary"]["jobs"][0]["merged"]
    assert rows[0]["iops"] == merged["read"]["iops"]
    assert rows[0]["lat_p99_ns"] == 1598463
    assert all(r["ios"] > 0 for r in rows)
    assert len(series_rows({"summary": doc["summary"]})) > 0


def test_load_one_row_per_job_and_direction(tmp_path: Path, result_json: str, summary_json: str) -> None:
    d = _write(tmp_path, result_json, summary_json)
    frame = iolab.load(d)
    assert len(frame) == len(list(figure_rows(json.loads((d / "result.json").read_text()))))
    assert {"run", "job", "dir", "iops", "bw_bytes_per_s", "clat_p99_ns", "lat_mean_ns"} <= set(frame.columns)


def test_load_refuses_other_directories(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not an iolab run or sweep directory"):
        load(tmp_path)


def test_host_facts_name_the_filesystem(tmp_path: Path) -> None:
    facts = host_facts(tmp_path / "not-yet.dat")
    assert facts["kernel"] and facts["cpu"]["logical_cores"] >= 1 and facts["memory_bytes"] > 0
    assert facts["storage"]["fstype"], facts
    assert facts["storage"]["mount_point"], facts
    assert isinstance(facts["virtualization"]["virtualized"], bool)
