"""Fixtures of tests/report: the results document of the example run that
crates/iolab-core/tests/integration/summary.rs writes (and keeps current) under
tests/results/data."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parents[1] / "results" / "data"


@pytest.fixture(scope="session")
def _doc() -> dict[str, Any]:
    from iolab.results import build_output

    return build_output((DATA / "example_result.json").read_text(), (DATA / "example_summary.json").read_text())


@pytest.fixture
def doc(_doc: dict[str, Any]) -> dict[str, Any]:
    """A fresh copy each test, so tests may edit it."""
    return copy.deepcopy(_doc)
