"""The chart of an ``iolab find`` directory: the SLO's figure along the
axis with its interval, the SLO line, the chosen and first breaking point
(and for a grid one curve per row and the best point), drawn from the
search's own record — checked against the model searches' known answers,
and in headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from analysis_fixtures import sweep
from chromium_check import check_rendered
from iolab.analysis.model import Analysis
from iolab.plans.find import axis_space, outcome_json, search
from iolab.plans.find_grid import grid_axis, grid_json, search_grid
from iolab.plans.slo import parse_slo
from iolab.report.find_chart import find_charts
from iolab.report.html import render_html

from tests.plans.test_find import Model, saturated
from tests.plans.test_find_grid import Busy


def _with_find(doc: dict[str, object]) -> Analysis:
    an = sweep(repeats=2)
    an.dataset.plan["find"] = json.loads(json.dumps(doc))  # as find.json reads back
    return an


def _one_axis() -> Analysis:
    # A saturated 150k IOPS device: p99 < 1 ms holds up to QD 150 and breaks at 151.
    out = search(Model(saturated(150_000.0), n=300), parse_slo("p99<1ms"), axis_space("iodepth", resolution="1"),
                 repeats=2, max_repeats=3)  # fmt: skip
    return _with_find(outcome_json(out))


def test_the_curve_the_slo_line_and_the_two_points() -> None:
    an = _one_axis()
    (chart,) = find_charts(an)
    assert chart.title == "SLO search: p99<1ms vs iodepth"
    by_name = {t["name"]: t for t in chart.data}
    curve = by_name["measured (± 95 % interval)"]
    found = an.dataset.plan["find"]
    evs = sorted(found["evaluations"], key=lambda e: e["value"])
    assert curve["x"] == [e["value"] for e in evs] and curve["x"] == sorted(curve["x"])
    # The y axis is in µs (lat_unit_for the figures): each figure is the search's, scaled.
    assert curve["y"] == pytest.approx([e["clauses"][0]["value"] / 1e3 for e in evs])
    assert chart.layout["yaxis"]["title"]["text"] == "p99 (µs)"
    assert by_name["SLO: p99<1ms"]["y"] == [1000.0, 1000.0]  # the threshold, across the axis
    assert by_name["SLO: p99<1ms"]["x"] == [1, max(curve["x"])]
    assert by_name["meets: 150"]["x"] == [150] and by_name["first breaking: 151"]["x"] == [151]
    assert by_name["meets: 150"]["y"][0] < 1000.0 < by_name["first breaking: 151"]["y"][0]
    # The interval bars: ± Student's t from find.json, never below zero.
    bars = curve["error_y"]
    for e, y, up, down in zip(evs, curve["y"], bars["array"], bars["arrayminus"]):
        low, high = e["clauses"][0]["ci95"]
        assert up == pytest.approx(high / 1e3 - y) and down == pytest.approx(min(y - low / 1e3, y))
    assert chart.layout["xaxis"]["type"] == "log"  # QD 1 to 300


def test_a_grid_draws_a_curve_per_row_and_its_best_point() -> None:
    g = search_grid(Busy(), parse_slo("p99<1ms"), axis_space("iodepth", limit="1024", resolution="1"),
                    grid_axis("numjobs=1,2,4", "iodepth"), repeats=1, max_repeats=1)  # fmt: skip
    (chart,) = find_charts(_with_find(grid_json(g)))
    names = [t["name"] for t in chart.data]
    for n, qd in ((1, 95), (2, 45), (4, 20)):
        assert f"numjobs={n} measured (± 95 % interval)" in names
        assert f"numjobs={n} meets: {qd}" in names and f"numjobs={n} first breaking: {qd + 1}" in names
    assert "best over the grid: iodepth=95 numjobs=1" in names
    assert "SLO: p99<1ms" in names


def test_no_chart_for_a_plain_sweep() -> None:
    assert find_charts(sweep(repeats=2)) == []


def test_the_find_report_renders_in_chromium(tmp_path: Path) -> None:
    page = tmp_path / "find.html"
    page.write_text(render_html(_one_axis()), encoding="utf-8")
    opened = check_rendered(page, tmp_path)
    assert "SLO search: p99&lt;1ms vs iodepth" in opened.dom or "SLO search: p99<1ms vs iodepth" in opened.dom
    assert "first breaking: 151" in opened.dom and "meets: 150" in opened.dom


def test_a_fleet_search_draws_the_total_and_each_host() -> None:
    from iolab.fleet.slo import FleetRepeat, judge_fleet

    from tests.plans.test_find import _repeat

    def measure(qd: int, repeat: int) -> FleetRepeat:
        fast, slow = [qd * 10_000.0] * 100, [qd * 20_000.0] * 5
        return FleetRepeat(_repeat(fast + slow, 105), {"fast": _repeat(fast, 100), "slow": _repeat(slow, 5)})

    out = search(measure, parse_slo("p99<1ms"), axis_space("iodepth", resolution="1"), repeats=1, max_repeats=1,
                 judge_fn=judge_fleet)  # fmt: skip
    (chart,) = find_charts(_with_find(outcome_json(out)))  # one clause: one chart
    names = [t["name"] for t in chart.data]
    for scope in ("total", "host fast", "host slow"):
        assert f"{scope} measured (± 95 % interval)" in names
    # The fleet's answer is the slow host's: QD 49 (2 x 49 x 10 µs < 1 ms), QD 50 breaks it there.
    assert "host slow meets: 49" in names and "host slow first breaking: 50" in names
