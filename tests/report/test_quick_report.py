"""`iolab quick` ends with its HTML report (beside the JSON results) and
its three most important findings; the report renders in Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

from chromium_check import check_rendered
from iolab.analysis.model import Finding
from iolab.report.quick import _with_device
from iolab.run.quick import QUICK_JOBS


def test_quick_writes_the_html_report_and_top_findings(cli, workdir: Path) -> None:
    target = workdir / "t"
    target.mkdir()
    r = cli("quick", str(target), "--runtime-per-job", "200ms", "--size", "8M", "-o", "q.json")
    assert r.exit_code == 0, r.output
    page = workdir / "q.html"
    assert page.is_file() and "report written to q.html" in r.stderr, r.output
    # The table is still there, then the findings.
    for name, *_ in QUICK_JOBS:
        assert name in r.stdout.split("Top findings:")[0], r.output
    findings = r.stdout.split("Top findings:\n")[1].splitlines()
    assert 1 <= len(findings) <= 3 and all(line.startswith(("  * ", "  ! ")) for line in findings), r.output
    # Issue 21 item 8: a finding about one job names it as the table above does, never as "point 5".
    assert not any(re.search(r"point \d", line) for line in findings), findings
    assert json.loads((workdir / "q.json").read_text())["summary"]["jobs"]
    html = page.read_text()
    for line in findings:
        assert line[4:40] in html.replace("&#x27;", "'").replace("&quot;", '"'), line
    where = re.search(r"bottleneck (?:not determined )?at ([^:]+):", html)
    assert where is not None and where.group(1) in {name for name, *_ in QUICK_JOBS}, html[:2000]
    opened = check_rendered(page, workdir, png_rows=800)
    assert "rand-read-4k-qd32" in opened.dom or "iodepth=32" in opened.dom


def _too_few(pct: float, count: int) -> Finding:
    return Finding("warn_too_few_samples", "warning", f"too few samples for p{pct:g}", {"percentile": pct,
                   "count": count}, score=35.0)  # fmt: skip


def test_a_tail_the_table_does_not_print_is_no_top_finding() -> None:
    # Session 12: under a table of p50 and p99, quick's third top finding was "too few samples for
    # p99.99: seq-read-1m-qd8 has 1823 latencies" (enough for p99). Kept in the report, not on top.
    beyond = SimpleNamespace(warnings=[_too_few(99.99, 1823)])
    _with_device(beyond, [])  # type: ignore[arg-type]
    assert beyond.warnings[0].score == 0.0
    # Too few for p99 itself (999 latencies: 9.99 beyond it), or about p99: still ranked.
    for w in (_too_few(99.99, 999), _too_few(99.0, 500)):
        shown = SimpleNamespace(warnings=[w])
        _with_device(shown, [])  # type: ignore[arg-type]
        assert shown.warnings[0].score == 35.0, w
