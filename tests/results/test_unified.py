"""unified_rw_reporting (fio's none/mixed/both): the "mixed" direction of
a null randrw run against its truth, the same run's reads plus writes, and
its percentiles against the read and write histograms merged here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from iolab import _native
from iolab.results import to_fio_json

Json = dict[str, Any]
RUN = ["--name=u", "--ioengine=null", "--size=4m", "--rw=randrw", "--numjobs=2"]


def _run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", *RUN, *args]
    out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out


def _doc(tmp: Path, mode: str, *args: str) -> Json:
    out = _run(tmp, f"--unified_rw_reporting={mode}", "--output-format=json", *args)
    return dict(json.loads(out.stdout))


@pytest.mark.parametrize("mode", ["mixed", "1", "both", "2"])
def test_mixed_is_reads_plus_writes_with_the_merged_histograms_percentiles(tmp_path: Path, mode: str) -> None:
    doc = _doc(tmp_path, mode)
    job = doc["summary"]["jobs"][0]
    raw = doc["result"]["jobs"][0]["workers"]
    pcts = job["config"]["percentile_list"]
    entries = [(job["merged"], raw)] + [(w["stats"], [raw[k]]) for k, w in enumerate(job["workers"])]
    for stats, workers in entries:
        m = stats["mixed"]
        assert m["ios"] == stats["read"]["ios"] + stats["write"]["ios"] > 0
        assert m["bytes"] == stats["read"]["bytes"] + stats["write"]["bytes"]
        assert m["runtime_ns"] == max(stats["read"]["runtime_ns"], stats["write"]["runtime_ns"])
        for lat in ("clat", "lat"):
            merged = _native.hist_merge([w["dirs"][d][f"{lat}_ns"] for w in workers for d in (0, 1)])
            truth = _native.hist_stats(merged, pcts)
            assert m[lat]["count"] == truth["count"] == m["ios"]
            got = {p["percentile"]: p["value_ns"] for p in m[lat]["percentiles"]}
            assert got == {float(p): v for p, v in truth["percentiles"].items()}, lat


def test_no_mixed_without_the_option(tmp_path: Path) -> None:
    doc = _doc(tmp_path, "none")
    assert "mixed" not in doc["summary"]["jobs"][0]["merged"]
    assert "mixed" not in doc["summary"]["jobs"][0]["workers"][0]["stats"]


def test_fio_json_has_mixed_in_place_of_the_directions_or_after_them(tmp_path: Path) -> None:
    for mode in ("mixed", "both"):
        doc = _doc(tmp_path, mode, "--group_reporting")
        fio = to_fio_json(doc["result"], doc["summary"])["jobs"]
        assert len(fio) == 1, "group_reporting: one entry"
        e = fio[0]
        reported = doc["summary"]["groups"][0]["reported"]
        assert e["mixed"]["total_ios"] == reported["read"]["ios"] + reported["write"]["ios"]
        assert e["mixed"]["clat_ns"]["N"] == e["mixed"]["total_ios"]
        keys = [k for k in e if k in ("read", "write", "trim", "mixed", "sync")]
        # fio: mixed alone before sync; both: the directions, sync, then mixed.
        assert keys == (["mixed", "sync"] if mode == "mixed" else ["read", "write", "trim", "sync", "mixed"])


def test_text_and_terse_show_mixed(tmp_path: Path) -> None:
    text = _run(tmp_path, "--unified_rw_reporting=mixed").stdout
    assert "  mixed: IOPS=" in text and "  read: IOPS=" not in text and "  write: IOPS=" not in text
    assert "  MIXED: bw=" in text and " READ: bw=" not in text
    text = _run(tmp_path, "--unified_rw_reporting=both").stdout
    assert all(f"  {d}: IOPS=" in text for d in ("read", "write", "mixed"))
    assert " READ: bw=" in text and "  MIXED: bw=" in text

    # terse v3, as fio's: both adds one direction's block after read and
    # write; mixed alone is one block where read and write were two.
    def fields(*args: str) -> int:
        return len(_run(tmp_path, "--output-format=terse", *args).stdout.splitlines()[0].split(";"))

    none = fields()
    block = fields("--unified_rw_reporting=both") - none
    assert block > 0
    assert fields("--unified_rw_reporting=mixed") == none - block


def test_bad_value_names_the_choices(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "iolab.cli.main", "run", "--dry-run", *RUN, "--unified_rw_reporting=yes"]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 2 and "expected none (0), mixed (1) or both (2)" in out.stderr, out.stderr
