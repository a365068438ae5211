"""The engine's progress carries the last interval's latency histograms
(``lat_ns``, per direction) that the fleet merges across hosts: their
percentiles are the progress's own p50/p99 (the same histogram)."""

from __future__ import annotations

from typing import Any

from iolab import _native
from iolab.run.api import Job
from iolab.run.local import run_jobs


class Sink:
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    def note(self, line: str) -> None:
        pass

    def update(self, progress: dict[str, Any]) -> None:
        self.updates.append(progress)

    def close(self) -> None:
        pass


def test_progress_histograms_match_its_percentiles() -> None:
    sink = Sink()
    job = Job("r", ioengine="null", rw="randread", bs="4k", size="16m", time_based=True, runtime="3s")
    run_jobs([job], interval_ns=500_000_000, progress=sink)
    with_ios = [u for u in sink.updates if u["iops"][0] > 0]
    assert with_ios, sink.updates[-3:]
    for u in with_ios:
        stats = _native.hist_stats(u["lat_ns"][0], [50.0, 99.0])
        assert stats["count"] > 0
        assert (stats["percentiles"][50.0], stats["percentiles"][99.0]) == (u["p50_ns"][0], u["p99_ns"][0])
        assert _native.hist_stats(u["lat_ns"][1], [50.0])["count"] == 0  # no writes
