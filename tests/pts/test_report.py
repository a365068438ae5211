"""The report's layout per test, on recorded rounds built by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from iolab import _native
from iolab.pts.matrix import pts_test
from iolab.pts.procedure import CellRound, StageOutcome, outcome_json
from iolab.pts.purge import Purged
from iolab.pts.report import format_pts_html, format_pts_markdown, format_pts_text
from iolab.pts.settings import PtsSettings, Resolved, Target
from iolab.pts.steady import window

from tests.report.chromium_check import check_rendered


def _doc(
    name: str, value: Callable[[int, int], float], rounds: int = 5, capacity_bytes: int = 1 << 30
) -> dict[str, Any]:
    test = pts_test(name, quick=True)
    stages = []
    first = 1
    for st in test.stages:
        out = StageOutcome(st, first)
        first += len(st.cells)
        for r in range(1, rounds + 1):
            this = {}
            for i, c in enumerate(st.cells):
                v = value(i, r)
                ios = round(v / 2)  # the I/Os the figure stands for, over the round's 1 s
                h = _native.hist_from_counts([(10_000 * (i + 1), 1000)])
                this[c.label] = CellRound(r, f"points/p{i + 1:03d}-r{r}", v, v * 4096, 10_000.0 * (i + 1),
                                          1_000_000_000, {"read": ios, "write": ios}, {"read": ios * 4096,
                                          "write": ios * 4096}, {"read": h, "write": h})  # fmt: skip
            out.rounds.append(this)
            out.written_bytes += sum(c.bytes["write"] for c in this.values())
            out.windows.append(window(out.tracking()))
        stages.append(out)
    settings = PtsSettings(name, quick=True)
    resolved = Resolved("2s", 10, capacity_bytes, 4.0, ["rounds of 2s per cell (the spec: 60s)"])
    target = Target("nbd", "nbd://h/e", capacity_bytes)
    return outcome_json(test, settings, target, resolved, Purged("nbd TRIM", capacity_bytes), stages, 0)


def test_iops_table_is_mix_by_block_size() -> None:
    doc = _doc("iops", lambda i, r: 1000.0 * (i + 1))
    text = format_pts_text(doc)
    lines = text.splitlines()
    at = lines.index("IOPS (R/W mix x block size)")
    assert lines[at + 1].split() == ["R/W", "mix", "%", "128k", "4k"]
    assert lines[at + 2].split() == ["100/0", "1000", "2000"]  # I/Os over the 5 s they ran
    assert "iops: steady state at round 5 (window rounds 1-5, tracking 4k 0/100 IOPS: mean 6000" in text
    assert "SHRUNK, not a conforming PTS run" in text
    assert format_pts_markdown(doc).startswith("# SNIA PTS IOPS")
    json.dumps(doc)  # pts.json is plain JSON


def test_dirth_tables_and_histograms() -> None:
    doc = _doc("dirth", lambda i, r: 100.0)
    text = format_pts_text(doc)
    lines = text.splitlines()
    at = lines.index("DIRTH: IOPS (threads x QD)")
    assert lines[at + 1].split() == ["threads", "QD", "4", "QD", "2", "QD", "1"]
    assert [row.split()[0] for row in lines[at + 2 : at + 5]] == ["4", "2", "1"]
    assert "DIRTH: 99.999th percentile µs" in text
    html = format_pts_html(doc)
    assert html.count('class="chart"') == 2  # the steady-state rounds and the histograms


def test_a_window_that_never_settles_is_said_with_why() -> None:
    doc = _doc("throughput", lambda i, r: 100.0 + 40 * (r % 2))
    text = format_pts_text(doc)
    # 140, 100, 140, 100, 140: range 40 over mean 124 = 32.3 %; the line is flat
    assert "1024k seq write: NOT steady after 5 rounds (data excursion 32.3 % > 20 %)" in text
    assert "Throughput, MB/s" in text


def test_the_html_page_draws_its_charts(tmp_path: Path) -> None:
    page = tmp_path / "pts.html"
    page.write_text(format_pts_html(_doc("dirth", lambda i, r: 100.0 + i)))
    check_rendered(page, tmp_path)  # the steady-state plot and the histograms, drawn, no JS error


def test_wsat_says_why_it_ended() -> None:
    """WSAT ends at 4x the capacity written or at its round limit; the line says which."""
    # 500 writes of 4 KiB a round: 2,048,000 bytes; 4 rounds of a 2,000,000-byte capacity is 4.10x.
    text = format_pts_text(_doc("wsat", lambda i, r: 1000.0, rounds=4, capacity_bytes=2_000_000))
    assert "wsat: 4 rounds, 8192000 bytes written (4.10x the capacity; ended at 4x the capacity written)" in text
    text = format_pts_text(_doc("wsat", lambda i, r: 1000.0, rounds=10))
    assert "(0.02x the capacity; ended at the 10-round limit, before 4x)" in text
    text = format_pts_text(_doc("wsat", lambda i, r: 1000.0, rounds=3))
    assert "(0.01x the capacity); fresh" in text  # neither: an interrupted run says no reason
