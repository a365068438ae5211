"""``analyze(ds)``: a :class:`Dataset` → its :class:`Analysis` — tables,
consistency checks, knees, the bottleneck verdict, trend statements and
methodology warnings, findings ranked by score (errors in the data first,
then knees, the bottleneck, Little's law, trends).
"""

from __future__ import annotations

from iolab.analysis.bottleneck import bottleneck
from iolab.analysis.consistency import bandwidth_identity, littles_law
from iolab.analysis.knee import knees
from iolab.analysis.model import Analysis, Dataset, Finding
from iolab.analysis.tables import build_rows
from iolab.analysis.trends import trends
from iolab.analysis.warnings import methodology_warnings


def _ranked(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: -f.score)


def analyze(ds: Dataset) -> Analysis:
    """Everything analysis says about ``ds``; pure (reads no files)."""
    rows = build_rows(ds)
    knee_map, knee_findings = knees(ds, rows)
    verdict, bottleneck_findings = bottleneck(ds)
    findings = bandwidth_identity(ds) + littles_law(ds) + knee_findings + bottleneck_findings + trends(ds, rows)
    return Analysis(
        dataset=ds,
        rows=rows,
        findings=_ranked(findings),
        warnings=methodology_warnings(ds, rows),
        knees=knee_map,
        bottleneck=verdict,
    )
