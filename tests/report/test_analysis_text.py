"""Terminal and Markdown reports of an analysis and of a comparison, on
synthetic analyses with known figures (tests/report/analysis_fixtures.py)."""

from __future__ import annotations

import re

from analysis_fixtures import single_run, stat, sweep
from iolab.analysis.compare import compare
from iolab.report.analysis_text import (
    bottleneck_line,
    fmt_stat,
    format_analysis_text,
    format_comparison_text,
    tables,
)
from iolab.report.markdown import format_analysis_markdown, format_comparison_markdown


def test_fmt_stat_shows_the_ci_half_width_only_with_repeats() -> None:
    an = sweep(repeats=3)
    iops = an.rows[3].metrics["iops"]
    assert iops.ci95_high is not None and iops.ci95_low is not None
    half = (iops.ci95_high - iops.ci95_low) / 2
    assert fmt_stat(iops) == f"80000 ± {half:.0f}"
    lat = single_run().rows[0].metrics["lat_p99_ns"]
    assert fmt_stat(lat, 1e3) == f"{lat.value / 1e3:.1f}" and "±" not in fmt_stat(lat, 1e3)


def test_every_figure_column_names_its_unit() -> None:
    for an in (sweep(), single_run()):
        for t in tables(an):
            for title in t.header[t.label_cols :]:
                assert title in ("IOPS", "unstable") or re.search(r"\((ns|µs|ms|s|MB/s|%|cycles/B)\)$", title), title


def test_main_table_says_what_its_cpu_columns_measure() -> None:
    # Session 12: "usr CPU (%)", "sys CPU (%)" and "c/B (cycles/B)" sat side by side, the first two
    # the worker threads' and c/B the whole machine's privileged cycles, with nothing saying so.
    an = sweep()
    assert "c/B (cycles/B)" not in tables(an)[0].header
    assert tables(an)[0].notes[-1] == "usr/sys CPU = % of one CPU per worker thread"
    for r in an.rows:
        r.metrics["cycles_per_byte"] = stat([2.5], "cycles_per_byte")
    main = tables(an)[0]
    assert "c/B (cycles/B)" in main.header
    assert main.notes[-1] == (
        "usr/sys CPU = % of one CPU per worker thread; c/B = privileged (sys+irq+softirq) cycles of all CPUs "
        "per byte moved"
    ), main.notes
    assert f"({main.notes[-1]})" in format_analysis_text(an)


def test_main_table_of_a_sweep_has_the_known_figures() -> None:
    an = sweep(repeats=3)
    main = tables(an)[0]
    assert main.header[:2] == ["iodepth", "dir"]
    assert [r[0] for r in main.rows] == ["1", "2", "4", "8", "16", "32", "64"]
    p99 = main.header.index("lat p99 (µs)")
    # The merged histogram's p99: 2x the base latency (qd/IOPS), in µs, 4 significant digits.
    assert main.rows[0][p99].startswith("200.1") and main.rows[6][p99].startswith("1601")
    assert "unstable" not in main.header
    an.rows[2].unstable = True
    flagged = tables(an)[0]
    assert flagged.header[-1] == "unstable" and [r[-1] for r in flagged.rows] == ["", "", "!", "", "", "", ""]


def test_text_report_of_a_sweep() -> None:
    out = format_analysis_text(sweep())
    assert out.startswith("iolab analysis: qd-sweep\n")
    assert "read IOPS stop growing at iodepth=8" in out
    assert "! only one target file" in out
    assert "iodepth: knee at iodepth=8: 80.0k IOPS at the knee" in out
    assert "Bottleneck: device busy (util_pct=99.50)" in out
    assert "repeats per point: 3" in out and "± " in out


def test_text_report_of_a_single_run_labels_points_by_job() -> None:
    out = format_analysis_text(single_run())
    assert "axes: none, repeats per point: 1" in out
    assert re.search(r"^rand-read-4k-qd1\s+read\s+9000\s", out, re.M), out
    assert re.search(r"^rand-write-4k-qd1\s+write\s+7000\s", out, re.M), out
    assert "±" not in out.split("Throughput and latency")[1].split("(value")[0]
    assert "Findings: none" in out and "Bottleneck: not determined" in out


def _md_tables(md: str) -> list[list[list[str]]]:
    found, cur = [], []
    for line in md.splitlines():
        if line.startswith("|"):
            cur.append([c.strip() for c in line.strip("|").split("|")])
        elif cur:
            found.append(cur)
            cur = []
    return found + ([cur] if cur else [])


def test_markdown_tables_are_well_formed() -> None:
    md = format_analysis_markdown(sweep())
    assert md.startswith("# iolab analysis: qd-sweep\n")
    assert "## Findings" in md and "## Warnings" in md and "## Knees" in md
    md_tables = _md_tables(md)
    assert len(md_tables) == len(tables(sweep()))
    for t in md_tables:
        assert all(len(r) == len(t[0]) for r in t), t
        assert all(re.fullmatch(r":?-{3}:?", c) for c in t[1]), t[1]
    assert len(md_tables[0]) == 2 + 7


def test_comparison_text_and_markdown() -> None:
    c = compare(sweep(noise=0.01), sweep(repeats=1, name="one"))
    text = format_comparison_text(c)
    assert "iolab compare: B vs A" in text and "no repeats: cannot tell" in text
    assert "A: /results/qd-sweep (qd-sweep)" in text and "B: /results/one (one)" in text
    md = format_comparison_markdown(c)
    rows = _md_tables(md)[0]
    assert rows[0] == ["point", "dir", "metric", "A", "B", "B vs A (%)", "p (Welch)", "p (Holm)", "verdict"]
    assert ["iodepth=8", "read", "IOPS"] == rows[2 + 3][:3]
    assert all(r[-1] == "no repeats: cannot tell" for r in rows[2:])
    # headline figures by default (IOPS, MB/s, p50, p99, CPU); --all adds the mean and every percentile
    metrics = {r[2] for r in rows[2:]}
    assert metrics == {"IOPS", "bandwidth (MB/s)", "lat p50 (µs)", "lat p99 (µs)", "usr CPU (%)"}, metrics
    every = {r[2] for r in _md_tables(format_comparison_markdown(c, everything=True))[0][2:]}
    assert every - metrics == {"lat mean (µs)", "lat p99.9 (µs)"}, every


def test_nested_evidence_is_flattened_and_unknowns_left_out() -> None:
    an = single_run()
    an.bottleneck = {"verdict": "not_determined", "evidence": {"cpu": {"usr_pct": 50.0, "steal_pct": None}, "n": 2}}
    assert bottleneck_line(an) == "not determined (cpu.usr_pct=50, n=2)"


def _scaled(an, factor: float):  # type: ignore[no-untyped-def]
    """The same analysis with every latency ``factor`` times larger (a slower device, the same job)."""
    import copy

    out = copy.deepcopy(an)
    for r in out.rows:
        for m, s in r.metrics.items():
            if m.endswith("_ns"):
                r.metrics[m] = stat([s.value * factor], "ns")
    return out


def test_every_latency_column_of_every_table_has_one_fixed_unit() -> None:
    # Issue 21 item 8: "p90 (ns) 17215 | p95 (µs) 21.77" side by side, and a p99 column in ms in one run and
    # µs in the next. The same job at 1000x the latency (ns-scale vs ms-scale) gets the same headers.
    an = single_run()
    for a, b in ((an, _scaled(an, 1e-3)), (an, _scaled(an, 1e3))):
        ta, tb = tables(a), tables(b)
        assert [t.header for t in ta] == [t.header for t in tb]
        lat_titles = [h for t in ta for h in t.header if re.search(r"\((ns|µs|ms|s)\)$", h)]
        assert lat_titles and all(h.endswith("(µs)") for h in lat_titles), lat_titles


def test_findings_name_rows_as_the_tables_do() -> None:
    # Issue 21 item 8: a finding said "point 5" where the table named the row rand-write-4k-qd1.
    from iolab.analysis import wording as w

    an = single_run()
    labels = {r[0] for t in tables(an) for r in t.rows}
    assert {w.label(p) for p in an.dataset.points} == labels == {"rand-read-4k-qd1", "rand-write-4k-qd1"}
    sw = sweep()
    assert w.label(sw.dataset.points[3]) == "iodepth=8"
