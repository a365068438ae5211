"""Fixtures of tests/results: the example run the Rust tests write.

``data/example_result.json`` and ``data/example_summary.json`` are the
output of crates/iolab-core/tests/integration/summary.rs (``example_run``); that test
fails when they are stale, so these tests always see the real layout
without needing the native module.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"
# tests/peers.py (require_peer) lives one level up.
sys.path.insert(0, str(Path(__file__).parents[1]))


@pytest.fixture
def result_json() -> str:
    return (DATA / "example_result.json").read_text()


@pytest.fixture
def summary_json() -> str:
    return (DATA / "example_summary.json").read_text()


@pytest.fixture
def doc(result_json: str, summary_json: str) -> dict[str, Any]:
    from iolab.results import build_output

    return build_output(result_json, summary_json)


@pytest.fixture
def summary(summary_json: str) -> dict[str, Any]:
    return dict(json.loads(summary_json))
