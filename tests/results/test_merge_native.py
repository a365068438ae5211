"""``_native.merge_results``: several hosts' results merged exactly, whose
summary's group figures are the fleet's totals; and an older summary made
again from the result when a run directory is read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from iolab import _native
from iolab.errors import IolabError
from iolab.results.rundir import RESULT_FILE, read_document


def _as_host(result_json: str, host: str) -> str:
    r = json.loads(result_json)
    for h in r["hosts"]:
        h["hostname"] = host
    for j in r["jobs"]:
        for w in j["workers"]:
            w["host"] = host
    for c in r["cpu"]:
        c["host"] = host
    return json.dumps(r)


def test_two_hosts_merge_into_exact_group_totals(result_json: str) -> None:
    one = json.loads(_native.summarize(result_json))
    merged = _native.merge_results([_as_host(result_json, "h1"), _as_host(result_json, "h2")])
    both = json.loads(_native.summarize(merged))
    for g1, g2 in zip(one["groups"], both["groups"]):
        assert g2["total"]["ios"] == 2 * g1["total"]["ios"]
        assert g2["total"]["iops"] == pytest.approx(2 * g1["total"]["iops"], rel=1e-12)
        # The same samples twice: the same percentiles, twice the count.
        assert g2["read"]["clat"]["percentiles"] == g1["read"]["clat"]["percentiles"]
        assert g2["read"]["clat"]["count"] == 2 * g1["read"]["clat"]["count"]
        assert len(g2["cpu"]) == 2


def test_group_iops_is_ios_over_the_longest_runtime(summary_json: str) -> None:
    for g in json.loads(summary_json)["groups"]:
        for d in ("read", "write", "total"):
            x = g[d]
            want = x["ios"] * 1e9 / x["runtime_max_ns"] if x["runtime_max_ns"] else 0.0
            assert x["iops"] == pytest.approx(want, rel=1e-12)


def test_results_of_other_versions_are_refused(result_json: str) -> None:
    other = json.loads(result_json)
    other["tool_version"] = "0.0.0-other"
    with pytest.raises(IolabError, match="same iolab"):
        _native.merge_results([result_json, json.dumps(other)])
    with pytest.raises(IolabError, match="not an iolab result"):
        _native.merge_results(["{}"])


def test_an_older_summary_is_made_again(tmp_path: Path, doc: dict[str, Any]) -> None:
    for g in doc["summary"]["groups"]:
        del g["total"]
    (tmp_path / RESULT_FILE).write_text(json.dumps(doc))
    again = read_document(tmp_path)
    assert all("total" in g for g in again["summary"]["groups"])
    del again["summary"]["jobs"][0]["merged"]["iops"]
    (tmp_path / RESULT_FILE).write_text(json.dumps(again))
    assert "iops" in read_document(tmp_path)["summary"]["jobs"][0]["merged"]
