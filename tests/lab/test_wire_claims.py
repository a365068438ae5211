"""``iolab lab wire``'s verdicts, each a pure function of measured points,
on a recorded quick run (tests/lab/data/wire_quick_points.json: the
simulated server, link 1 GiB/s + 50 us, a loaded 2-core host) and on
counterexamples built from it that must not give "held"; the report's
rows (the paper's label, column, unit and value beside the measured one);
the renderers; the CLI's one-line errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest
from iolab.lab.wire import WireSettings
from iolab.lab.wire.paper import TABLES
from iolab.lab.wire.render import RENDERERS
from iolab.lab.wire.run import build_report, claims
from iolab.lab.wire.verdicts import (
    HELD,
    NOT_HELD,
    NOT_MEASURABLE,
    bottleneck,
    cb_falls,
    cb_local,
    knee,
    queueing,
    saturation,
    server_cpu_limit,
    wire_constant,
)

from tests.conftest import Ran
from tests.report.chromium_check import check_rendered

DATA = json.loads((Path(__file__).parent / "data" / "wire_quick_points.json").read_text())
POINTS: dict[str, list[dict[str, Any]]] = DATA["points"]
BW: int = DATA["link_bw_bytes_per_s"]
KIB = 1024


def _verdicts(points: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    return {c["claim"]: c for c in claims(points, BW)}


def _series(key: str, bs: int) -> list[dict[str, Any]]:
    return sorted((p for p in POINTS[key] if p["bs_bytes"] == bs), key=lambda p: p["threads"])


def test_recorded_run_verdicts_with_their_numbers() -> None:
    v = _verdicts(POINTS)
    assert set(v) == {"wire_constant", "server_cpu_limit", "cb_falls", "cb_local", "knee", "queueing"}
    assert v["cb_local"]["verdict"] == NOT_MEASURABLE  # the recorded run predates the local reference
    # 512 KiB at 1 GiB/s spends 488 us on the link alone: the wire is not constant here.
    assert v["wire_constant"]["verdict"] == NOT_HELD and v["wire_constant"]["numbers"]["spread"] > 10
    assert v["cb_falls"]["verdict"] == HELD
    assert v["knee"]["verdict"] == HELD
    q = v["queueing"]
    assert q["verdict"] == HELD and q["numbers"]["predicted_ms"] == pytest.approx(40 * 512 * KIB / BW * 1e3)
    assert abs(q["numbers"]["error"]) <= 0.15
    # 8 KiB reads ran the 1 GiB/s link 87 % busy: the link is named, not the server.
    assert v["server_cpu_limit"]["numbers"]["bottleneck"]["8 KiB read"] == "link"
    assert v["server_cpu_limit"]["numbers"]["bottleneck"]["1 KiB read"] == "server CPU"
    assert v["server_cpu_limit"]["verdict"] == NOT_HELD


def test_wire_constant_holds_on_a_flat_wire_and_not_on_a_growing_one() -> None:
    flat = copy.deepcopy(POINTS["table1"])
    for p in flat:
        if "read" in p["directions"]:
            p["directions"]["read"]["wire_ns"]["p50"] = 60_000 + p["bs_bytes"] // 1024
    assert wire_constant(flat)["verdict"] == HELD
    assert wire_constant(POINTS["table1"])["verdict"] == NOT_HELD
    blind = copy.deepcopy(POINTS["table1"])
    for p in blind:
        for d in p["directions"].values():
            d.pop("wire_ns"), d.pop("server_ns")
    assert wire_constant(blind)["verdict"] == NOT_MEASURABLE


def test_bottleneck_names_the_busier_side_and_never_a_side_that_is_idle() -> None:
    p = copy.deepcopy(_series("table2", KIB)[-1])
    p["link_util"] = 0.1
    p["client"]["cpu_pct"], p["server"]["cpu_pct"] = 95.0, 40.0
    assert bottleneck(p)["side"] == "client CPU"
    p["client"]["cpu_pct"], p["server"]["cpu_pct"] = 40.0, 95.0
    assert bottleneck(p)["side"] == "server CPU"
    p["client"]["cpu_pct"], p["server"]["cpu_pct"] = 30.0, 32.0
    assert bottleneck(p)["side"] is None
    # A shared host with no idle CPU: other work distorts both shares, so only
    # a side that kept its CPUs all but full (>= 90 %) is named.
    p["client"]["cpu_pct"], p["server"]["cpu_pct"] = 30.0, 45.0
    assert bottleneck(p)["side"] is None
    p["server"]["host_idle_pct"] = 2.0
    b = bottleneck(p)
    assert b["side"] is None and b["text"].startswith("undetermined: the host had no idle CPU"), b
    p["client"]["cpu_pct"], p["server"]["cpu_pct"] = 48.0, 60.0  # seen: the client starved beside a busy loop
    assert bottleneck(p)["side"] is None
    p["server"]["cpu_pct"] = 95.0
    assert bottleneck(p)["side"] == "server CPU"
    p["client"]["cpu_pct"] = 90.0
    assert bottleneck(p)["side"] is None, "within the margin: undetermined"
    p["link_util"] = 0.9
    assert bottleneck(p)["side"] == "link"
    # Counterexample: the client saturated in every series -> the paper's claim did not hold.
    small = {"s": copy.deepcopy(_series("table2", KIB))}
    for q in small["s"]:
        q["client"]["cpu_pct"], q["server"]["cpu_pct"], q["link_util"] = 99.0, 20.0, 0.1
    v = server_cpu_limit(small)
    assert v["verdict"] == NOT_HELD and v["numbers"]["bottleneck"] == {"s": "client CPU"}


def test_saturation_and_knee() -> None:
    s = _series("table2", KIB)
    assert saturation(s) == 2  # +16 % from 2 to 4 threads
    rising = copy.deepcopy(s)
    for i, p in enumerate(rising):
        p["bw_bytes_per_s"] = 1e8 * 2**i
    assert saturation(rising) is None
    assert knee({"r": rising})["verdict"] == NOT_MEASURABLE
    # Flat throughput with flat latency: a saturation without the jump.
    flat = copy.deepcopy(s)
    for p in flat:
        p["directions"]["read"]["client_ns"]["p90"] = 400_000
    assert knee({"f": flat})["verdict"] == NOT_HELD


def test_cb_falls_and_queueing_counterexamples() -> None:
    assert cb_falls({1024: 10.0, 8192: 2.0, 65536: 1.0})["verdict"] == HELD
    assert cb_falls({1024: 10.0, 8192: 12.0, 65536: 1.0})["verdict"] == NOT_HELD
    assert cb_falls({1024: None, 8192: None})["verdict"] == NOT_MEASURABLE
    assert cb_local(6.4, 6.25)["verdict"] == HELD  # the paper's own figures
    assert cb_local(1.78, 0.88)["verdict"] == NOT_HELD
    assert cb_local(None, 0.88)["verdict"] == NOT_MEASURABLE
    single = next(p for p in POINTS["table1"] if p["bs_bytes"] == 512 * KIB and p["rw"] == "randread")
    loaded = _series("table4", 512 * KIB)[1]
    assert queueing(single, loaded, BW)["verdict"] == HELD
    # The same latencies on a link 4x faster: Q·S/B is a quarter of the rise.
    assert queueing(single, loaded, 4 * BW)["verdict"] == NOT_HELD
    assert queueing(single, loaded, None)["verdict"] == NOT_MEASURABLE


def test_report_rows_carry_the_papers_label_column_unit_and_value() -> None:
    r = build_report(POINTS, WireSettings(quick=True), "recorded", [], BW)
    assert [t["key"] for t in r["tables"]] == [t.key for t in TABLES]
    for t, paper in zip(r["tables"], TABLES):
        assert len(t["rows"]) == len(paper.rows) * len(paper.columns)
        row = t["rows"][0]
        assert (row["label"], row["column"], row["unit"], row["paper"]) == (
            paper.rows[0].label,
            paper.columns[0].heading,
            paper.columns[0].unit,
            paper.rows[0].values[0],
        )
    t2 = {(x["label"], x["column"]): x for x in r["tables"][1]["rows"]}
    assert t2[("1 (20 I/O)", "8 KiB IOPS")]["paper"] == 64500
    assert t2[("1 (20 I/O)", "8 KiB IOPS")]["measured"] == pytest.approx(_series("table2", 8 * KIB)[0]["iops"])
    assert t2[("16 (320 I/O)", "8 KiB IOPS")]["measured"] is None  # not run at this scale
    t1 = {(x["label"], x["column"]): x for x in r["tables"][0]["rows"]}
    one = next(p for p in POINTS["table1"] if p["bs_bytes"] == KIB and p["rw"] == "randread")
    assert t1[("1 KiB", "read wire")]["measured"] == one["directions"]["read"]["wire_ns"]["p90"] / 1000
    for fmt, render in RENDERERS.items():
        out = render(r)
        assert "did not hold" in out and "Table 4" in out, fmt
    assert json.loads(RENDERERS["json"](r))["claims"][0]["verdict"] == NOT_HELD


def test_html_draws_the_papers_figures(tmp_path: Path) -> None:
    r = build_report(POINTS, WireSettings(quick=True), "recorded", [], BW)
    page = tmp_path / "wire.html"
    page.write_text(RENDERERS["html"](r), encoding="utf-8")
    # 4 CDFs (Figure 5), the wire by percentile (6), the large-read CDF (10),
    # throughput and p90 per scaling table (7, 9, 11/12).
    assert 'data-charts-expected="12"' in page.read_text()
    opened = check_rendered(page, tmp_path, png_rows=800)
    assert "client vs server" in opened.dom and "wire latency at the 10th-95th" in opened.dom


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--uri", "nbd://127.0.0.1:1/x"], "--uri nbd://127.0.0.1:1/x: "),
        (["--threads", "4,2"], "--threads '4,2': expected rising"),
        (["--table", "table9"], "--table: 'table9' is not one of"),
        (["--bw", "fast"], "--bw 'fast'"),
        (["--target-stats", "127.0.0.1:1"], "give it with --uri"),
        (["--server-cpus", "99"], "--server-cpus '99': this process may run on CPUs"),
        (["--client-cpus", "0"], "--client-cpus: give it twice"),
        (["-o", "/nonexistent/dir/x.json"], "--output: directory /nonexistent/dir does not exist"),
    ],
)
def test_bad_input_is_one_line_and_nothing_is_written(
    cli: Callable[..., Ran], tmp_path: Path, args: list[str], words: str
) -> None:
    r: Ran = cli("lab", "wire", *args)
    assert r.exit_code == 2, r.stderr
    assert words in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert r.stdout == "" and not list(tmp_path.iterdir())


def test_a_quick_run_of_every_table(cli: Callable[..., Ran], tmp_path: Path) -> None:
    out = tmp_path / "wire.json"
    r: Ran = cli("lab", "wire", "--runtime", "0.2", "--threads", "1,2", "-o", str(out))
    assert r.exit_code == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["simulated"] and len(doc["stacks"]) == 5 and all("link(wire" in s for s in doc["stacks"])
    t1 = doc["tables"][0]["rows"]
    assert all(x["measured"] is not None for x in t1), t1
    for t in doc["tables"][1:]:
        for x in t["rows"]:
            if x["label"].startswith(("1 ", "2 ")):
                assert x["measured"] is not None and x["measured"] > 0, x
    assert {c["verdict"] for c in doc["claims"]} <= {HELD, NOT_HELD, NOT_MEASURABLE}
    # The link adds 50 us to every request: the wire is at least that at every size and percentile.
    for p in doc["points"]["table1"]:
        for d in p["directions"].values():
            assert min(d["wire_ns"].values()) >= 50_000, d["wire_ns"]


def test_against_a_real_nbd_server_reads_only_and_server_figures_only_with_its_stats(
    cli: Callable[..., Ran], tmp_path: Path
) -> None:
    from iolab import _native

    sock = tmp_path / "t.sock"
    target = _native.Target(None, ["m=memory,size=16m"], listen=f"unix:{sock}", stats_http="127.0.0.1:0")
    target.start()
    try:
        uri, stats = f"nbd+unix:///m?socket={sock}", str(target.addresses()["stats_http"])
        docs = []
        for extra in ([], ["--target-stats", stats]):
            out = tmp_path / f"w{len(extra)}.json"
            r: Ran = cli("lab", "wire", "--uri", uri, *extra, "--table", "table1", "--runtime", "0.2", "-o", str(out))
            assert r.exit_code == 0, r.stderr
            docs.append(json.loads(out.read_text()))
    finally:
        target.shutdown()
        target.wait()
    blind, seen = docs
    assert not blind["simulated"] and {p["rw"] for p in blind["points"]["table1"]} == {"randread"}
    assert any("not measurable here" in n for n in blind["notes"])
    cells = {x["column"]: x["measured"] for x in blind["tables"][0]["rows"] if x["label"] == "8 KiB"}
    assert cells["read client"] is not None and cells["read server"] is None and cells["read wire"] is None
    assert blind["claims"][0]["verdict"] == "not measurable here"
    cells = {x["column"]: x["measured"] for x in seen["tables"][0]["rows"] if x["label"] == "8 KiB"}
    assert cells["read server"] is not None and cells["read wire"] is not None, cells
    assert cells["write client"] is None  # never written


def test_the_jobs_of_a_step_split_threads_over_the_instances_and_drive_every_share() -> None:
    from iolab.lab.wire.measure import Load, jobs_for, split_threads

    assert split_threads(1, 2) == [1, 0] and split_threads(3, 2) == [2, 1] and split_threads(8, 2) == [4, 4]
    uris = [f"nbd+unix:///s{i}?socket=/x" for i in range(5)]
    jobs = jobs_for(Load("randrw", 8 * KIB, threads=3, rwmixread=60), uris, ["0", "1"], 1.0)
    opts = [dict(j.options) for j in jobs]
    assert len(jobs) == 10 and {o["uri"] for o in opts} == set(uris)
    assert sorted((o["cpus_allowed"], o["numjobs"]) for o in opts) == [("0", "2")] * 5 + [("1", "1")] * 5
    assert all(o["iodepth"] == "4" and o["rwmixread"] == "60" and o["size"] == "64m" for o in opts)
    # 3 threads x 4 per share x 5 shares = 60 outstanding, as the paper's "20 per thread".
    assert Load("randread", 8 * KIB, threads=3).outstanding == 60
    reads = [dict(j.options) for j in jobs_for(Load("randread", KIB, threads=1), uris, [None, None], 1.0)]
    assert len(reads) == 5 and not any("size" in o or "cpus_allowed" in o for o in reads)
