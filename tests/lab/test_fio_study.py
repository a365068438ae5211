"""``iolab lab fio-study`` (seed 002, issue 24): the seed's commands run as
written (only size and runtime shrunk), its own figures checked against its
columns (the 4k row's "1791k" in a column headed ns), each statement of its
analysis verdicted on recorded data with the numbers named — and never
"supported" on noise — and one shrunk end-to-end run of the command.

Recorded data: tests/lab/data/fio_study_sim_quick.json, the ``measured``
and ``plans`` of one ``iolab lab fio-study --quick --sim`` run on the shared
2-core VM.
"""

from __future__ import annotations

import copy
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from iolab.lab.fio_study.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    LAT_FIGURES,
    NOT_TESTABLE,
    SUPPORTED,
    compare,
    lat_key,
    verdicts,
)
from iolab.lab.fio_study.consistency import bandwidth_checks, latency_cells, latency_notes
from iolab.lab.fio_study.plans import QUICK_RUNTIME, QUICK_SIZE, Shrink, build_plan, plan_toml
from iolab.lab.fio_study.render import RENDERERS
from iolab.lab.fio_study.report import build_report
from iolab.lab.fio_study.seed import ANALYSIS, COMMANDS, LAT_TABLES, VARIED
from iolab.plans.model import load_plan
from iolab.plans.points import resolve

from tests.report.chromium_check import check_rendered

DATA = Path(__file__).parent / "data"


def recorded(name: str = "fio_study_sim_quick.json") -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / name).read_text())
    return doc


def _report(measured: dict[str, Any]) -> dict[str, Any]:
    meta = {"target": "recorded", "quick": True, "sim": True, "shrink": {}, "repeats": 3, "additions": []}
    return build_report(measured, meta)


# -- the seed's commands, as written ---------------------------------------------------------


@pytest.mark.parametrize("sweep", sorted(COMMANDS))
def test_plans_carry_the_seed_command_exactly_and_quick_shrinks_only_size_and_runtime(
    sweep: str, tmp_path: Path
) -> None:
    words = shlex.split(COMMANDS[sweep])[1:]
    varied = f"--{VARIED[sweep]}=[Variable]"
    assert varied in words
    written = [w[2:].split("=", 1) for w in words if w != varied and not w.startswith("--name=")]
    want = [(kv[0], kv[1] if len(kv) == 2 else True) for kv in written]
    plan = build_plan(sweep, repeats=1, shrink=Shrink(QUICK_SIZE, QUICK_RUNTIME))
    assert list(plan.base) == want  # every option of the command, in its order, nothing added
    assert VARIED[sweep] in [a.name for a in plan.axes]
    quick = resolve(plan, quick=True)
    changed = {k: v for k, v in quick.base if dict(plan.base).get(k) != v}
    assert changed == {"size": QUICK_SIZE, "runtime": QUICK_RUNTIME}
    # The plan file the sweep keeps reads back to the same plan.
    path = tmp_path / "plan.toml"
    path.write_text(plan_toml(plan), encoding="utf-8")
    assert load_plan(path) == plan


def test_additions_are_appended_and_an_nbd_target_drops_only_filename() -> None:
    plan = build_plan("qd", repeats=1, additions=(("ioengine", "nbd"), ("uri", "nbd://x/y")), drop=("filename",))
    keys = [k for k, _ in plan.base]
    assert "filename" not in keys and keys[-2:] == ["ioengine", "uri"]


# -- the seed's own figures ------------------------------------------------------------------


def test_the_4k_completion_latency_1791k_is_read_in_one_unit_and_said_consistent() -> None:
    row = next(r for r in LAT_TABLES if r.sweep == "bs" and r.direction == "read" and r.label == "4k")
    avg = next(c for c in latency_cells(row) if c["stat"] == "Avg")
    assert avg["seed_text"] == "1791k" and avg["seed_unit"] == "ns"
    assert avg["as_headed_us"] == pytest.approx(1791.0) and avg["reading"] == "as headed"
    assert "1791k ns = 1,791.00 µs" in avg["note"] and "1,791.79 µs" in avg["note"], avg["note"]
    # The 4k row's max (20624k ns = 20.6 ms beside a total max of 206.8 ms) fits no reading.
    mx = next(c for c in latency_cells(row) if c["stat"] == "Max")
    assert mx["reading"] is None and "doubtful" in mx["note"]


def test_cells_consistent_only_in_us_and_copied_cells_are_named() -> None:
    notes = {(n["sweep"], n["direction"], n["label"], n["stat"]): n for n in latency_notes()}
    assert notes[("bs", "read", "32k", "Avg")]["reading"] == "µs"  # 1531.61 "ns" = total - submission in µs
    assert notes[("bs", "read", "32k", "Avg")]["consistent_us"] == pytest.approx(1531.61)
    assert "equals the total" in notes[("bs", "read", "16k", "Avg")]["note"]
    # QD 1's 107141 ns = 107.141 µs = 160.73 - 53.59: consistent as headed, no note.
    assert ("qd", "read", "1", "Avg") not in notes


def test_bandwidth_checks_read_mb_as_mib_and_name_the_copied_256k_row() -> None:
    checks = bandwidth_checks()
    by = {(c["sweep"], c["label"], c["direction"]): c for c in checks}
    assert by[("qd", "130k 1", "read")]["reading"] == "MiB/s"  # 419 x 130 KiB = 53.2 MiB/s
    assert by[("bs", "130k", "read")]["reading"] is None  # 1551 IOPS x 130k is 197 MiB/s, not 24.2
    assert any("256k" in c["note"] and "repeat its 32k row" in c["note"] for c in checks)


# -- the measured figures against known truths ----------------------------------------------


def test_reduced_figures_obey_littles_law() -> None:
    """Every point's IOPS (mean over repeats) x its mean total latency (over
    every I/O of every repeat) is the I/Os the client kept in flight: iodepth."""
    for sweep, points in recorded()["measured"].items():
        for p in points:
            dirs = [p[d] for d in ("read", "write") if p[d]]
            iops = sum(d["iops"] for d in dirs)
            lat_s = sum(d["iops"] * d["lat_us"]["avg"] for d in dirs) / iops / 1e6
            assert iops * lat_s == pytest.approx(p["config"]["iodepth"], rel=0.03), (sweep, p["params"])


def test_the_target_record_gives_the_simulated_ssd_service_times() -> None:
    """sim-ssd's defaults (docs/simulation.md): a 4 KiB write is done once in
    its DRAM buffer, overhead 10 µs; a 4 KiB read takes a flash page read
    (75 µs) and the overhead at least."""
    m = recorded()["measured"]["rwmix"]
    (wo,) = [p for p in m if p["params"] == {"bs": "4k", "rwmixread": 0}]
    (ro,) = [p for p in m if p["params"] == {"bs": "4k", "rwmixread": 100}]
    assert all(10.0 <= v < 15.0 for v in wo["write"]["per_repeat"]["service_us"]), wo["write"]["per_repeat"]
    assert all(v >= 85.0 for v in ro["read"]["per_repeat"]["service_us"]), ro["read"]["per_repeat"]


# -- verdicts on recorded data ---------------------------------------------------------------


def _claim(claims: list[dict[str, Any]], section: str, kind: str, point: str) -> dict[str, Any]:
    statement = next(st for sec, k, p, st in ANALYSIS if (sec, k, p) == (section, kind, point))
    return next(c for c in claims if c["statement"] == statement)


def test_every_statement_gets_a_verdict_naming_its_numbers_and_figure() -> None:
    claims = verdicts(recorded()["measured"])
    assert len(claims) == len(ANALYSIS)
    for c in claims:
        assert c["verdict"] in (SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE)
        if c["verdict"] != NOT_TESTABLE:
            assert c["figure"] and any(ch.isdigit() for ch in c["evidence"]), c
            assert "noise" in c["evidence"], c
    # The simulated SSD's latency verdicts use the target's record, and say so.
    size = _claim(claims, "size-lat", "trend", "large")
    assert size["figure"] == LAT_FIGURES["service_us"] and "service time" in size["evidence"], size
    assert size["verdict"] == SUPPORTED and "Kendall tau 1.00" in size["evidence"], size
    # Its DRAM buffer acknowledges 4k writes in ~11 µs while reads wait for flash (75 µs a page):
    # read-only is not the faster, and write latency does not grow with the queue.
    rd = _claim(claims, "mix-lat", "trend", "read")
    assert rd["verdict"] == CONTRADICTED and "read-only (100/0)" in rd["evidence"], rd
    qd = _claim(claims, "qd-lat", "trend", "moderate")
    assert qd["verdict"] == CONTRADICTED and "write service time along iodepth flat" in qd["evidence"], qd
    assert "read service time along iodepth rises" in qd["evidence"], qd
    iops = _claim(claims, "size-bw", "trend", "small")
    assert iops["verdict"] == SUPPORTED and "IOPS" in iops["figure"], iops


def test_a_busy_host_moves_the_client_latency_but_not_the_latency_verdicts() -> None:
    """Two recorded --quick --sim runs, the second beside two busy loops: the
    client's mean latency differs by up to several times, the target's
    service time far less, and every latency verdict (from the service time)
    is the same; throughput verdicts (the client's IOPS) may lose their
    margin under load but never turn to the opposite."""
    calm, busy = recorded()["measured"], recorded("fio_study_sim_quick_busy_loops.json")["measured"]
    pairs = [(p["read"], q["read"]) for sw in calm for p, q in zip(calm[sw], busy[sw]) if p["read"] and q["read"]]
    client = [q["lat_us"]["avg"] / p["lat_us"]["avg"] for p, q in pairs]
    service = [sum(q["per_repeat"]["service_us"]) / sum(p["per_repeat"]["service_us"]) for p, q in pairs]
    assert max(client) > 2.0 and max(abs(s - 1) for s in service) < max(abs(c - 1) for c in client)
    for a, b in zip(verdicts(calm), verdicts(busy)):
        if a["section"].endswith("-lat"):
            assert a["verdict"] == b["verdict"], (a, b)
        assert {a["verdict"], b["verdict"]} != {SUPPORTED, CONTRADICTED}, (a, b)


def test_without_the_target_record_latency_verdicts_use_the_client_median() -> None:
    m = copy.deepcopy(recorded()["measured"])
    assert lat_key(m) == "service_us"
    for pts in m.values():
        for p in pts:
            for d in ("read", "write", "total"):
                if p.get(d):
                    p[d]["per_repeat"].pop("service_us")
    assert lat_key(m) == "lat_p50_us"
    size = _claim(verdicts(m), "size-lat", "trend", "large")
    assert size["figure"] == LAT_FIGURES["lat_p50_us"] and "p50 latency" in size["evidence"], size


def _flatten_noise(measured: dict[str, Any], sweep: str, *keys: str) -> dict[str, Any]:
    """A counterexample: every point's ``keys`` replaced by one level
    wiggled ±3 % from point to point, ±1 % between repeats (noise, no trend)."""
    m = copy.deepcopy(measured)
    wiggle = (1.0, 1.03, 0.97, 1.02, 0.98, 1.01, 0.99)
    for i, p in enumerate(m[sweep]):
        for d in ("read", "write", "total"):
            for key in keys:
                if p.get(d) and key in p[d]["per_repeat"]:
                    f = wiggle[i % len(wiggle)]
                    p[d]["per_repeat"][key] = [None if v is None else 100.0 * f * g for v, g in
                                               zip(p[d]["per_repeat"][key], (1.0, 1.01, 0.99))]  # fmt: skip
    return m


def test_noise_never_supports_a_trend() -> None:
    m = _flatten_noise(recorded()["measured"], "bs", "lat_p50_us", "service_us", "iops")
    m = _flatten_noise(m, "qd", "lat_p50_us", "service_us")
    claims = {(c["section"], c["statement"][:20]): c for c in verdicts(m)}
    for (section, _), c in claims.items():
        if section in ("size-lat", "qd-lat") or (section == "size-bw" and "small" in c["statement"][:20].lower()):
            assert c["verdict"] != SUPPORTED, c


def test_compare_needs_more_than_the_noise_and_separate_intervals() -> None:
    assert compare([100, 101, 99], [104, 105, 103])["order"] == "same"  # 4 % < the 5 % floor
    assert compare([100, 101, 99], [120, 121, 119])["order"] == "higher"
    assert compare([100, 140, 60], [130, 170, 90])["order"] == "same"  # +30 %, but the intervals overlap


def test_a_synchronous_engine_makes_queue_depth_claims_not_testable() -> None:
    m = copy.deepcopy(recorded()["measured"])
    for p in m["qd"]:
        p["config"].update(ioengine="psync", iodepth=1)
    qd = [c for c in verdicts(m) if c["section"].startswith("qd") and c["kind"] == "trend"]
    assert qd and all(c["verdict"] == NOT_TESTABLE and "psync" in c["evidence"] for c in qd)


# -- the report ------------------------------------------------------------------------------


def test_json_rows_carry_label_column_unit_seed_and_measured_values() -> None:
    report = _report(recorded()["measured"])
    row = next(
        r
        for r in report["latency_tables"][0]["rows"]
        if r["label"] == "4k" and r["column"].endswith("(Completion) lat(ns) Avg")
    )
    assert row["seed_text"] == "1791k" and row["unit"] == "µs" and row["seed_value"] == pytest.approx(1791.0)
    assert row["seed_reading"] == "as headed" and row["measured"] > 0
    bw = next(
        r for t in report["bandwidth_tables"] for r in t["rows"] if r["label"] == "130k 1" and r["unit"] == "MiB/s"
    )
    assert bw["seed_value"] == pytest.approx(53.2) and bw["measured"] > 0 and bw["seed_note"] is None
    bad = next(
        r for t in report["bandwidth_tables"] for r in t["rows"] if r["label"] == "130k" and r["unit"] == "MiB/s"
    )
    assert bad["seed_text"] == "24.2" and "inconsistent in either reading" in bad["seed_note"], bad
    assert all({"statement", "verdict", "evidence"} <= set(c) for c in report["claims"])
    json.loads(RENDERERS["json"](report))


def test_text_and_html_show_the_tables_the_finding_and_the_charts(tmp_path: Path) -> None:
    report = _report(recorded()["measured"])
    text = RENDERERS["text"](report)
    assert "1791k ns = 1,791.00 µs" in text and "(µs)" in text and "SUPPORTED" in text
    page = tmp_path / "study.html"
    page.write_text(RENDERERS["html"](report), encoding="utf-8")
    assert 'data-charts-expected="3"' in page.read_text()
    # The seed's three charts draw in Chromium, with no script error.
    opened = check_rendered(page, tmp_path, png_rows=800)
    assert "Latency vs data access size" in opened.dom and "I/O Queue Depth" in opened.dom


# -- end to end ------------------------------------------------------------------------------


def test_the_command_end_to_end_shrunk(tmp_path: Path) -> None:
    out = tmp_path / "study.json"
    cmd = [sys.executable, "-m", "iolab.cli.main", "lab", "fio-study", "--quick", "--runtime", "100ms",
           "--size", "4m", "--repeats", "1", "--dir", str(tmp_path), "-o", str(out)]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["shrink"] == {"size": "4m", "runtime": "100ms"}
    assert {p["config"]["ioengine"] for pts in report["measured"].values() for p in pts} == {"psync"}
    assert len(report["measured"]["bs"]) == 7 and len(report["measured"]["qd"]) == 12
    assert "1791k" in json.dumps(report["consistency"])
    # As written the jobs run on psync: said, and the queue-depth statements are not testable.
    assert any("no submission latency" in n for n in report["notes"]), report["notes"]
    qd = [c for c in report["claims"] if c["section"].startswith("qd") and c["kind"] == "trend"]
    assert all(c["verdict"] == NOT_TESTABLE for c in qd), qd


def test_bad_options_are_one_clear_line(tmp_path: Path) -> None:
    base = [sys.executable, "-m", "iolab.cli.main", "lab", "fio-study"]
    for extra, want in (
        (["--device", str(tmp_path / "f")], "--allow-overwrite"),
        (["--ioengine", "psync"], "--ioengine: 'psync'"),
        (["--sim", "--dir", str(tmp_path)], "give one of the three"),
        (["--sweep", "size"], "--sweep: 'size'"),
        (["--sim", "--size", "2g"], "larger than the simulated SSD (1g)"),
    ):
        res = subprocess.run(base + extra, capture_output=True, text=True, timeout=60)
        assert res.returncode != 0 and want in res.stderr, res.stderr


def test_parts_that_disagree_each_say_their_verdict() -> None:
    """A claim contradicted in one direction and inconclusive in the other
    names which part did what; parts that agree read as before."""
    from iolab.lab.fio_study.evidence import CONTRADICTED, INCONCLUSIVE, SUPPORTED, combine

    v, text = combine([(CONTRADICTED, "read IOPS falls"), (INCONCLUSIVE, "write IOPS flat")])
    assert v == CONTRADICTED
    assert text == "read IOPS falls [contradicted]; write IOPS flat [inconclusive]"
    assert combine([(SUPPORTED, "a"), (SUPPORTED, "b")]) == (SUPPORTED, "a; b")
