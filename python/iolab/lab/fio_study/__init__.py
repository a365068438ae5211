"""``iolab lab fio-study``: seed 002 (fio on one SSD: block size, read/write
mix, queue depth) re-run with its commands as written, its tables printed
beside the measured figures, its own figures checked for consistency, and
each statement of its analysis verdicted (docs/labs.md).

- :mod:`.seed`: the seed's commands, tables and analysis as data;
- :mod:`.consistency`: the seed's cells read and checked against its columns;
- :mod:`.plans`: the commands as sweep plans;
- :mod:`.run`: the sweeps run and reduced to the tables' figures;
- :mod:`.evidence`: figures compared and trends classified beyond the noise;
- :mod:`.claims`: verdicts on the seed's statements and iolab's own reading;
- :mod:`.report`, :mod:`.render`: the report and its formats.
"""

from __future__ import annotations

from typing import Any

from iolab.lab.fio_study.report import build_report
from iolab.lab.fio_study.run import StudySettings, run_study


def run_lab(s: StudySettings) -> dict[str, Any]:
    """Run the study; the report (:func:`build_report`)."""
    measured, plans = run_study(s)
    shrink = s.shrink()
    meta = {
        "target": s.where,
        "quick": s.quick,
        "sim": s.sim,
        "shrink": {"size": shrink.size, "runtime": shrink.runtime},
        "repeats": s.repeats,
        "additions": [list(kv) for kv in s.additions],
        "plans": plans,
    }
    return build_report(measured, meta)


__all__ = ["StudySettings", "build_report", "run_lab"]
