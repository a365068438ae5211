"""A fleet sweep's point directory keeps each host's own results and
``fleet.json`` (without MPI: a synthetic point of three hosts), and the
report reads them back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iolab.fleet.report import fleet_json, fleet_section, fleet_sweep_html, format_fleet, sweep_table
from iolab.fleet.runner import FleetConfig, FleetOutcome, HostPart
from iolab.fleet.sweep import merged_output
from iolab.report.fleet_lines import rows_spread
from iolab.results.rundir import observed_files, write_run_dir

from .synth import hosts


def _point(n: int) -> FleetOutcome:
    per_host, _ = hosts(n, 300)
    clock = {
        "ranks": [
            {"rank": r, "host": label, "offset_ns": 1_000 * r, "round_trip_ns": 0}
            for r, (label, _) in enumerate(per_host)
        ],
        "start_skew_ns": 1_500_000,
        "round_trip_median_ns": 40_000,
    }
    parts = [HostPart(r, label, result_json=json.dumps(res)) for r, (label, res) in enumerate(per_host)]
    return FleetOutcome(parts, clock, [], False, (), FleetConfig())


def test_point_directory_keeps_each_host_and_the_report_reads_them(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    kiops: dict[str, list[float]] = {}
    for name, n in (("p001-r1", 3), ("p002-r1", 2)):
        out = merged_output(_point(n))
        point = sweep / "points" / name
        write_run_dir(point, out.result_json, out.summary_json, run_meta={"id": name}, config={}, host={},
                      extra=observed_files(out.observed))  # fmt: skip
        own = [json.loads((point / "hosts" / f"rank-{r}.json").read_text()) for r in range(n)]
        total = json.loads(out.summary_json)["jobs"][0]["merged"]["read"]["ios"]
        assert total == sum(d["summary"]["jobs"][0]["merged"]["read"]["ios"] for d in own) == n * 300
        fleet = json.loads((point / "fleet.json").read_text())
        assert [h["host"] for h in fleet["hosts"]] == [f"h{r}" for r in range(n)]
        assert len(fleet["alignment"]["ranks"]) == n
        assert not list((point / "hosts").glob("*.tmp"))
        kiops[name] = [d["summary"]["groups"][0]["total"]["iops"] / 1e3 for d in own]
    text = fleet_section(sweep)
    for name, per in kiops.items():  # each host's figure is its own group total (both directions)
        line = next(x for x in text.splitlines() if f"{name}: kIOPS per host:" in x)
        assert line.endswith(", ".join(f"h{r} {v:.2f}" for r, v in enumerate(per))), (line, per)
    assert "Fleet sweep: 2 points" in text, text
    assert "p001-r1: kIOPS per host: h0 " in text and ", h2 " in text, text
    assert "p002-r1: kIOPS per host: h0 " in text and ", h2 " not in text.split("p002-r1")[1], text
    assert text.count("start skew 1.500 ms") == 2, text


def test_a_directory_without_fleet_files_has_no_section(tmp_path: Path) -> None:
    (tmp_path / "points" / "p001-r1").mkdir(parents=True)
    assert fleet_section(tmp_path) == ""


def _sweep(root: Path, points: tuple[tuple[str, int], ...]) -> dict[str, list[float]]:
    """A synthetic fleet sweep under ``root``; each point's hosts' own IOPS (group totals)."""
    iops: dict[str, list[float]] = {}
    for name, n in points:
        out = merged_output(_point(n))
        point = root / "points" / name
        write_run_dir(point, out.result_json, out.summary_json, run_meta={"id": name}, config={}, host={},
                      extra=observed_files(out.observed))  # fmt: skip
        own = [json.loads((point / "hosts" / f"rank-{r}.json").read_text()) for r in range(n)]
        iops[name] = [d["summary"]["groups"][0]["total"]["iops"] for d in own]
    return iops


def test_the_per_host_block_is_in_json_and_html_as_in_text(tmp_path: Path) -> None:
    # Issue 21: the fleet sweep's per-host block was in text and Markdown only.
    iops = _sweep(tmp_path, (("p001-r1", 3), ("p002-r1", 2)))
    doc = fleet_json(tmp_path)
    assert doc is not None and doc["kind"] == "sweep"
    assert [p["point"] for p in doc["points"]] == ["p001-r1", "p002-r1"]
    for p in doc["points"]:
        assert [h["host"] for h in p["hosts"]] == [f"h{r}" for r in range(len(iops[p["point"]]))]
        assert [h["iops"] for h in p["hosts"]] == iops[p["point"]]
        assert p["start_skew_ns"] == 1_500_000 and p["incomplete"] is False
        assert p["spread"]["max_over_min"] == pytest.approx(max(iops[p["point"]]) / min(iops[p["point"]]))
    table = sweep_table(tmp_path)
    assert table is not None
    assert table.header == ["point", "h0 kIOPS", "h1 kIOPS", "h2 kIOPS", "max/min", "CV (%)", "start skew (ms)"]
    assert table.rows[0][1:4] == [f"{v / 1e3:.2f}" for v in iops["p001-r1"]]
    assert table.rows[1][3] == "-" and table.rows[1][-1] == "1.500"  # h2 did not run p002
    html = fleet_sweep_html(tmp_path)
    assert html.startswith("<h2>Fleet: 3 hosts</h2>") and f"<td class='num'>{table.rows[0][1]}</td>" in html
    assert fleet_json(tmp_path / "points") is None and fleet_sweep_html(tmp_path / "nothing") == ""


def test_one_host_says_hosts_1_in_every_format(tmp_path: Path) -> None:
    """The header's host count outside a fleet (issue 21: no report said how many hosts ran)."""
    from iolab.analysis import analyze, load_dataset
    from iolab.cli.report import ReportFormat, render_analysis
    from iolab.report.html import render_html

    an = analyze(load_dataset(Path(__file__).parents[1] / "analysis" / "data" / "fio" / "groups_plus.json"))
    assert "\nhosts: 1\n" in render_analysis(an, ReportFormat.text)
    assert "\n- hosts: 1\n" in render_analysis(an, ReportFormat.md)
    assert json.loads(render_analysis(an, ReportFormat.json))["hosts"] == 1
    assert "<li>hosts: 1</li>" in render_html(an)


def test_a_thousand_host_run_reports_its_spread_not_a_bar_per_host() -> None:
    # Issue 29: above 24 hosts the report shows the histogram of host kIOPS,
    # the slowest hosts and the stragglers; the quantiles are the hosts' own.
    n = 1_000
    rows = [
        {
            "host": f"h{i:04d}",
            "group": 0,
            "dir": "read",
            "iops": 100.0 if i % 97 == 13 else 10_000.0 + i,
            "lat_p99_ns": 50_000 + i,
        }
        for i in range(n)
    ]
    doc = {
        "hosts": [{"rank": i, "host": f"h{i:04d}"} for i in range(n)],
        "clock": {"ranks": [{"rank": 0, "offset_ns": 0}], "start_skew_ns": 0, "round_trip_median_ns": 0},
        "table": [*rows, {"host": "Total", "group": 0, "dir": "read", "iops": 1.0, "lat_p99_ns": 1}],
    }
    text = format_fleet(doc)
    lines = text.splitlines()
    assert len(lines) < 40, text
    assert "  group 0 read: 1000 hosts" in lines
    strag = [f"h{i:04d}" for i in range(13, n, 97)]  # 11 hosts at 100 IOPS
    slow_at = next(i for i, x in enumerate(lines) if x.startswith("    slowest 10 hosts"))
    assert [x.split()[0] for x in lines[slow_at + 1 : slow_at + 11]] == strag[:10]
    assert any(x.startswith("    stragglers (11, below 75% of the median host's kIOPS): h0013 0.10") for x in lines)
    assert any(x.endswith("(stragglers)") and "     11 hosts" in x for x in lines)
    sp = rows_spread(rows)
    assert sp is not None and sum(b["hosts"] for b in sp["bins"]) == n and sp["bins"][0]["hosts"] == 11
    assert sp["quantiles_iops"]["max"] == 10_999.0 and sp["quantiles_iops"]["min"] == 100.0
    assert sp["quantiles_iops"]["p50"] == sorted(r["iops"] for r in rows)[499]


def test_a_sweep_of_many_hosts_gives_their_quantiles_not_a_column_each(tmp_path: Path) -> None:
    # Issue 29: above 24 hosts a sweep's point shows the hosts' kIOPS
    # quantiles and the slowest host, read one host's file at a time.
    iops = _sweep(tmp_path, (("p001-r1", 30),))["p001-r1"]
    table = sweep_table(tmp_path)
    assert table is not None
    assert table.header[:8] == [
        "point",
        "hosts",
        "min kIOPS",
        "p10 kIOPS",
        "median kIOPS",
        "p90 kIOPS",
        "max kIOPS",
        "slowest",
    ]
    s = sorted(iops)
    slowest = f"h{iops.index(s[0])}"
    assert table.rows[0][1:8] == [
        "30",
        f"{s[0] / 1e3:.2f}",
        f"{s[2] / 1e3:.2f}",
        f"{s[14] / 1e3:.2f}",
        f"{s[26] / 1e3:.2f}",
        f"{s[-1] / 1e3:.2f}",
        slowest,
    ]
    text = fleet_section(tmp_path)
    assert f"  p001-r1: 30 hosts, host kIOPS: min {s[0] / 1e3:.2f}" in text and f"slowest: {slowest} " in text
    assert fleet_sweep_html(tmp_path).startswith("<h2>Fleet: 30 hosts</h2>")
