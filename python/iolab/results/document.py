"""The iolab results document (schema ``iolab.result/1``, docs/results-schema.md).

``build_output(result_json, summary_json)`` joins the engine's lossless run
result and its summary (``iolab._native.summarize``) into one JSON-able dict::

    {"schema": "iolab.result/1",
     "tool": {"name": "iolab", "version": ...},
     "summary": <RunSummary>,
     "result": <RunResult, histograms as HdrHistogram V2 base64>}

The ``result`` part is the Rust ``RunResult`` exactly as serde wrote it, so
it parses back into the same value (nothing is renamed or rounded here:
Python's ``json`` keeps integers exact and floats round-trip).
"""

from __future__ import annotations

import json
from typing import Any

from iolab import _native
from iolab.errors import ResultFormatError

Json = dict[str, Any]

#: The schema ids, from the Rust crates that write them.
RESULT_SCHEMA: str = _native.RESULT_SCHEMA
SUMMARY_SCHEMA: str = _native.SUMMARY_SCHEMA


def _parse(text: str, what: str, schema: str) -> Json:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ResultFormatError(f"{what} is not JSON: {e}") from e
    if not isinstance(value, dict):
        raise ResultFormatError(f"{what} is not a JSON object")
    got = value.get("schema")
    if got != schema:
        raise ResultFormatError(
            f"{what} has schema {got!r}; this iolab reads {schema!r} (re-run with a matching iolab)"
        )
    return value


def build_output(result_json: str, summary_json: str) -> Json:
    """The results document from a run result and its summary (both JSON text)."""
    result = _parse(result_json, "run result", RESULT_SCHEMA)
    summary = _parse(summary_json, "summary", SUMMARY_SCHEMA)
    if summary.get("tool_version") != result.get("tool_version"):
        raise ResultFormatError(
            f"summary (iolab {summary.get('tool_version')}) was not made from this result "
            f"(iolab {result.get('tool_version')})"
        )
    return {
        "schema": RESULT_SCHEMA,
        "tool": {"name": "iolab", "version": result["tool_version"]},
        "summary": summary,
        "result": result,
    }


def check_document(doc: Json) -> Json:
    """Return ``doc`` if it is a results document this iolab reads, else raise."""
    if not isinstance(doc, dict) or doc.get("schema") != RESULT_SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise ResultFormatError(f"not an {RESULT_SCHEMA} document (schema {got!r})")
    for key in ("tool", "summary", "result"):
        if key not in doc:
            raise ResultFormatError(f"{RESULT_SCHEMA} document lacks {key!r}")
    if doc["summary"].get("schema") != SUMMARY_SCHEMA:
        raise ResultFormatError(f"summary has schema {doc['summary'].get('schema')!r}, not {SUMMARY_SCHEMA!r}")
    return doc
