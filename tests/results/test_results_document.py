"""The iolab.result/1 document (iolab.results.build_output)."""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

import pytest
from iolab.results import RESULT_SCHEMA, ResultFormatError, build_output, check_document


def test_document_layout(doc: dict[str, Any], result_json: str, summary_json: str) -> None:
    assert list(doc) == ["schema", "tool", "summary", "result"]
    assert doc["schema"] == RESULT_SCHEMA == "iolab.result/1"
    assert doc["tool"] == {"name": "iolab", "version": json.loads(result_json)["tool_version"]}
    assert doc["summary"] == json.loads(summary_json)
    assert check_document(doc) is doc


def test_raw_result_is_kept_exactly(doc: dict[str, Any], result_json: str) -> None:
    # Lossless: the raw part re-serialises to the same JSON value the engine wrote.
    assert json.loads(json.dumps(doc["result"])) == json.loads(result_json)
    assert doc["result"]["cpu"][0]["clock_hz"] == 2.5e9


def test_histograms_are_hdr_v2_deflate_base64(doc: dict[str, Any]) -> None:
    raw = base64.b64decode(doc["result"]["jobs"][0]["workers"][0]["dirs"][0]["clat_ns"])
    # V2 compressed cookie (0x1c849314), then the length and a zlib stream
    # whose payload starts with the V2 encoding cookie (0x1c849313).
    assert int.from_bytes(raw[:4], "big") == 0x1C849314
    length = int.from_bytes(raw[4:8], "big")
    payload = zlib.decompress(raw[8 : 8 + length])
    assert int.from_bytes(payload[:4], "big") == 0x1C849313


def test_histograms_decode_with_hdrh(doc: dict[str, Any]) -> None:
    hdrh = pytest.importorskip("hdrh.histogram", reason="PyPI package 'hdrhistogram' not installed")
    w = doc["result"]["jobs"][0]["workers"][0]
    h = hdrh.HdrHistogram.decode(w["dirs"][0]["clat_ns"])
    s = doc["summary"]["jobs"][0]["workers"][0]["stats"]["read"]["clat"]
    assert h.get_total_count() == s["count"] == w["dirs"][0]["ios"]
    # The summary's extremes are the exact ones kept beside the histogram;
    # the V2 buckets alone give the edges of the buckets holding them.
    assert [s["min_ns"], s["max_ns"]] == w["dirs"][0]["exact_ns"]["clat"]
    assert h.get_max_value() == h.get_highest_equivalent_value(s["max_ns"])
    assert h.get_min_value() == h.get_lowest_equivalent_value(s["min_ns"])
    for p in s["percentiles"]:
        assert h.get_value_at_percentile(p["percentile"]) == p["value_ns"]


@pytest.mark.parametrize(
    ("result_edit", "summary_edit", "message"),
    [
        ({"schema": "iolab.result/99"}, {}, "this iolab reads 'iolab.result/1'"),
        ({}, {"schema": "other"}, "summary has schema 'other'"),
        ({}, {"tool_version": "9.9.9"}, "was not made from this result"),
    ],
)
def test_mismatches_are_errors(
    result_json: str, summary_json: str, result_edit: Any, summary_edit: Any, message: str
) -> None:
    r = {**json.loads(result_json), **result_edit}
    s = {**json.loads(summary_json), **summary_edit}
    with pytest.raises(ResultFormatError, match=message):
        build_output(json.dumps(r), json.dumps(s))


def test_not_json_is_an_error(summary_json: str) -> None:
    with pytest.raises(ResultFormatError, match="run result is not JSON"):
        build_output("{", summary_json)
    with pytest.raises(ResultFormatError, match="not a JSON object"):
        build_output("[]", summary_json)
    with pytest.raises(ResultFormatError, match=r"not an iolab\.result/1 document"):
        check_document({"schema": "x"})
