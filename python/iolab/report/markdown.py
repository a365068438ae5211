"""Markdown reports: of one analysis (``iolab report --format md``) and of a
comparison (``iolab compare --format md``).

The same tables as the terminal report (:mod:`iolab.report.analysis_text`),
as pipe tables with figures right-aligned, after the findings, warnings,
knees and bottleneck as lists — ready to paste into an issue or a wiki.
"""

from __future__ import annotations

from iolab.analysis.compare import Comparison
from iolab.analysis.model import Analysis
from iolab.report.analysis_text import (
    Table,
    bottleneck_line,
    comparison_header,
    comparison_table,
    find_statement,
    knee_lines,
    summary_lines,
    tables,
)


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


def md_table(t: Table, level: str = "##") -> str:
    """A Markdown pipe table with a heading and its notes."""
    align = [":---" if i < t.label_cols else "---:" for i in range(len(t.header))]
    lines = [f"{level} {t.title}", ""]
    lines.append("| " + " | ".join(_escape(h) for h in t.header) + " |")
    lines.append("|" + "|".join(align) + "|")
    lines += ["| " + " | ".join(_escape(c) for c in r) + " |" for r in t.rows]
    if t.notes:
        lines += ["", *(f"_{n}_" for n in t.notes)]
    return "\n".join(lines)


def _bullets(items: list[str]) -> list[str]:
    return [f"- {_escape(i)}" for i in items] if items else ["- none"]


def format_analysis_markdown(an: Analysis) -> str:
    """The whole analysis as one Markdown document."""
    out = [f"# iolab analysis: {an.dataset.name}", ""]
    out += [f"- {line}" for line in summary_lines(an)] + [""]
    out += ["## Findings", "", *_bullets([f.text for f in an.findings]), ""]
    out += ["## Warnings", "", *_bullets([f.text for f in an.warnings]), ""]
    if an.knees:
        out += ["## Knees", "", *_bullets(knee_lines(an)), ""]
    out += ["## Bottleneck", "", _escape(bottleneck_line(an)), ""]
    found = find_statement(an)
    if found is not None:
        out += [f"## {_escape(found[0])}", "", *_bullets(found[1]), ""]
    out += [md_table(t) + "\n" for t in tables(an)]
    return "\n".join(out).rstrip() + "\n"


def format_comparison_markdown(c: Comparison, everything: bool = False) -> str:
    """A comparison as one Markdown document (``everything``: every percentile)."""
    out = ["# iolab compare: B vs A", ""]
    out += [f"- {line}" for line in comparison_header(c)] + [""]
    out.append(md_table(comparison_table(c, everything)))
    return "\n".join(out).rstrip() + "\n"
