"""``iolab lab pacing``: seed 004 (SPDK NVMe-oF target, IO pacing, two
initiators) re-run against iolab targets built to match each test, the
seed's tables beside the measured ones, and a verdict on each finding
(docs/labs.md, "lab pacing").

- :mod:`.seed`: the seed's tests and tables as data;
- :mod:`.run`: the stacks, the two initiators' jobs, a point run to its deadline;
- :mod:`.verdicts`: the findings, each a pure function of measured points;
- :mod:`.report`, :mod:`.render`: the report and its formats.
"""

from __future__ import annotations

from typing import Any

from iolab.lab.pacing.report import build_report
from iolab.lab.pacing.run import Progress, Settings, measure

INITIATORS = "two client job groups (h1, h2) in one iolab run, one NBD connection per export each"


def run_lab(s: Settings, progress: Progress = lambda _: None) -> dict[str, Any]:
    """Run the tests the settings name; the report."""
    points = measure(s, progress)
    meta = {
        "quick": s.quick,
        "runtime_s": s.seconds,
        "repeats6": s.test6_repeats,
        "initiators": INITIATORS,
        "tests_run": list(s.tests),
    }
    return build_report(points, meta)


__all__ = ["Settings", "build_report", "run_lab"]
