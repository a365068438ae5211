"""``iolab lab fleet`` (seed 001): each verdict computed on a recorded run
(tests/lab/data/fleet_lab_measured.json: ``--quick``, 8 VMs on 4 nodes,
network namespaces) and on counterexamples that must not give "held"; the live
view's rows; the report's rows and renderers; the CLI's refusals; and one
shrunk ``--quick`` run end to end (MPI ranks, seconds).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from iolab import _native
from iolab.errors import JobError
from iolab.fleet.hosts import parse_hosts, read_hosts
from iolab.fleet.live import HostRow
from iolab.fleet.spool import Spool
from iolab.lab.fleet_lab.claims import (
    HELD,
    NOT_HELD,
    NOT_MEASURABLE,
    device_mean_ns,
    exact_total,
    latency_within,
    limits_held,
)
from iolab.lab.fleet_lab.post import POST_AVG_LAT_NS, post_consistency
from iolab.lab.fleet_lab.render import RENDERERS
from iolab.lab.fleet_lab.report import build_report, node_series
from iolab.lab.fleet_lab.run import server_figures
from iolab.lab.fleet_lab.topology import MEMBER, Layout, hostfile_hosts, hosts_table, limits, target_specs
from iolab.lab.fleet_lab.watch import SpoolWatch, cluster_view

from tests.conftest import Ran
from tests.fleet.test_mpi import _require_mpi
from tests.report.chromium_check import check_rendered

DATA = Path(__file__).parent / "data" / "fleet_lab_measured.json"  # netns, all three held
META = {
    "mode": "netns",
    "vm_count": 8,
    "node_count": 4,
    "quick": True,
    "runtime_s": 10.0,
    "limit_iops": 60,
    "served_by": ["n0v0: split(...) <- raid1(32 MiB) <- 3 x sim-ssd(32 MiB)"],
}


def recorded(name: str = "fleet_lab_measured.json") -> dict[str, Any]:
    m: dict[str, Any] = json.loads((DATA.parent / name).read_text())
    return m


#: The same --quick run at a load average of 14 on the 2 cores (other sessions' builds and tests).
LOADED = "fleet_lab_measured_loaded.json"


# --- the total is the exact sum of the VMs


def test_the_recorded_total_is_the_exact_merge_of_its_vms() -> None:
    c = exact_total(recorded())
    assert c["verdict"] == HELD, c
    n = c["numbers"]
    assert n["vms"] == 8 and n["sum_ios"] == n["total_ios"] > 0 and n["merged_p99_ns"] == n["total_p99_ns"]


def test_a_total_whose_p99_averages_the_vms_p99s_does_not_hold() -> None:
    m = recorded()
    # what a tool that averages percentiles would print
    m["total"]["lat_p99_ns"] = sum(v["lat_p99_ns"] for v in m["vms"]) / len(m["vms"])
    c = exact_total(m)
    assert c["verdict"] == NOT_HELD and "p99" in c["text"], c


def test_a_total_missing_a_vm_does_not_hold() -> None:
    m = recorded()
    m["vms"] = m["vms"][1:]
    c = exact_total(m)
    assert c["verdict"] == NOT_HELD and "I/Os" in c["text"] and "bytes" in c["text"], c


def test_a_vm_without_a_result_makes_the_total_not_measurable() -> None:
    m = recorded()
    m["vms"][3]["lat_hist"] = None
    assert exact_total(m)["verdict"] == NOT_MEASURABLE


# --- each VM holds its limit


def test_every_recorded_vm_held_its_own_limit_within_3_percent() -> None:
    m = recorded()
    assert [v["limit_iops"] for v in m["vms"]] == limits(8, 60)
    c = limits_held(m)
    assert c["verdict"] == HELD, c
    assert all(abs(v["deviation"]) <= 0.03 for v in c["numbers"]["vms"])


@pytest.mark.parametrize("share", [0.96, 1.04])
def test_a_vm_4_percent_off_its_limit_does_not_hold(share: float) -> None:
    m = recorded()
    vm = m["vms"][5]
    vm["ios"] = round(vm["limit_iops"] * share * vm["runtime_ns"] / 1e9)
    c = limits_held(m)
    assert c["verdict"] == NOT_HELD and c["numbers"]["worst_rank"] == 5, c
    assert "1 of 8 VMs" in c["text"], c


def test_a_vm_3_percent_under_still_holds_and_no_limits_is_not_measurable() -> None:
    m = recorded()
    vm = m["vms"][2]
    vm["ios"] = int(vm["limit_iops"] * 0.975 * vm["runtime_ns"] / 1e9)
    assert limits_held(m)["verdict"] == HELD
    for v in m["vms"]:
        v["limit_iops"] = None
    assert limits_held(m)["verdict"] == NOT_MEASURABLE


# --- latency within the post's bound, scaled


def test_the_recorded_average_is_under_the_posts_bound() -> None:
    m = recorded()
    c = latency_within(m, POST_AVG_LAT_NS)
    assert c["verdict"] == HELD and c["numbers"]["mean_ns"] == m["total"]["lat_mean_ns"] < POST_AVG_LAT_NS, c


def test_on_a_loaded_host_the_limits_and_total_hold_and_the_latency_verdict_does_not() -> None:
    m = recorded(LOADED)
    assert exact_total(m)["verdict"] == HELD and limits_held(m)["verdict"] == HELD
    c = latency_within(m, POST_AVG_LAT_NS)
    assert c["verdict"] == NOT_HELD and c["numbers"]["mean_ns"] > POST_AVG_LAT_NS, c
    # the device's own time stayed where it was: the host, not the storage, made the difference
    assert c["numbers"]["device_mean_ns"] < 0.5e6 < POST_AVG_LAT_NS < c["numbers"]["mean_ns"]


def test_an_average_over_the_bound_does_not_hold() -> None:
    m = recorded()
    assert latency_within(m, m["total"]["lat_mean_ns"] * 0.99)["verdict"] == NOT_HELD
    # equal to the bound is not "under" it
    assert latency_within(m, m["total"]["lat_mean_ns"])["verdict"] == NOT_HELD
    m["total"]["ios"] = 0
    assert latency_within(m, POST_AVG_LAT_NS)["verdict"] == NOT_MEASURABLE


def test_the_targets_own_time_is_the_reads_weighted_mean_and_named_in_the_verdict() -> None:
    m = recorded()
    servers = [v["server"] for v in m["vms"]]
    want = sum(x["ios"] * x["service_mean_ns"] for x in servers) / sum(x["ios"] for x in servers)
    assert device_mean_ns(m["vms"]) == pytest.approx(want)
    c = latency_within(m, POST_AVG_LAT_NS)
    assert c["numbers"]["device_mean_ns"] == pytest.approx(want)
    assert f"target's own service time {want / 1e6:.3f} ms" in c["text"], c
    # a 512 KiB read of the simulated SSD: 128 pages over 8 channels at 333 MB/s (197 µs) and 75 µs page reads
    assert 0.2e6 < want < 0.5e6
    m["vms"][2]["server"] = None  # a VM the target did not record: no figure rather than a partial one
    assert device_mean_ns(m["vms"]) is None


def test_server_figures_are_the_hold_less_the_reply_lateness() -> None:
    lat = _native.hist_from_counts([(500_000, 30), (700_000, 10)])
    late = _native.hist_from_counts([(100_000, 40)])
    stats = {
        "exports": [
            {"name": "other", "ops": {}},
            {"name": "n1v0", "ops": {"read": {"lat_ns": lat, "hold_late_ns": late}}},
        ]
    }
    f = server_figures(json.dumps(stats), "n1v0")
    assert f is not None and f["ios"] == 40
    assert f["lat_mean_ns"] == pytest.approx(550_000, rel=1e-3) and f["hold_late_mean_ns"] == pytest.approx(
        100_000, rel=1e-3
    )
    assert f["service_mean_ns"] == pytest.approx(f["lat_mean_ns"] - f["hold_late_mean_ns"])
    assert server_figures(json.dumps(stats), "n9v9") is None


def test_the_posts_figures_agree_by_littles_law() -> None:
    c = post_consistency()
    # 3 x 512 KiB / 1.5 ms and 83 GB/s / 80 VMs: within 1.1 % of each other
    a, b = c["per_vm_bytes_per_s_from_latency"], c["per_vm_bytes_per_s_from_aggregate"]
    assert a == pytest.approx(3 * 524288 / 1.5e-3) and b == pytest.approx(83e9 / 80)
    assert abs(a / b - 1) < 0.011 and c["outstanding_at_post_figures"] == pytest.approx(2.97, abs=0.01)


# --- the report


def test_report_rows_carry_the_posts_label_unit_value_scaled_and_measured() -> None:
    m = recorded()
    r = build_report(m, META)
    f = r["scale"]["bandwidth_factor"]
    assert f == pytest.approx(60 * 524288 / 1e9)
    rows = {x["key"]: x for x in r["tables"][0]["rows"]}
    assert rows["aggregate"]["value"] == 83.0 and rows["aggregate"]["unit"] == "GB/s"
    assert rows["aggregate"]["scaled"] == pytest.approx(83.0 * f * 8 / 80)
    assert rows["aggregate"]["measured"] == pytest.approx(m["total"]["bw_bytes_per_s"] / 1e9)
    assert rows["per_vm"]["scaled"] == pytest.approx(f)
    assert rows["avg_lat"]["value"] == 1.5 and rows["avg_lat"]["scaled"] == 1.5
    assert rows["p99_lat"]["value"] is None and rows["p99_lat"]["measured"] == m["total"]["lat_p99_ns"] / 1e6
    assert [c["key"] for c in r["claims"]] == ["exact_total", "limits", "latency"]
    # a node's latency comes from its VMs' histograms merged
    node0 = [v["lat_hist"] for v in m["vms"] if v["node"] == "node0"]
    st = _native.hist_stats(_native.hist_merge(node0), [99.0])
    assert r["nodes"][0]["node"] == "node0" and r["nodes"][0]["lat_p99_ms"] == st["percentiles"][99.0] / 1e6
    assert sum(n["vms"] for n in r["nodes"]) == 8 and len(r["vms"]) == 8


def test_every_format_renders_the_tables_and_verdicts() -> None:
    r = build_report(recorded(), META)
    text = RENDERERS["text"](r)
    assert "Aggregate bandwidth" in text and "> 83" in text and "HELD" in text and "vm7" in text and "node3" in text
    assert "HELD" in RENDERERS["md"](r) and "| vm0 |" in RENDERERS["md"](r)
    assert json.loads(RENDERERS["json"](r))["schema"] == "iolab.lab.fleet/1"
    page = RENDERERS["html"](r)
    assert 'data-charts-expected="2"' in page and "Per-VM bandwidth against its QoS limit" in page


def test_the_html_draws_every_chart(tmp_path: Path) -> None:
    page = tmp_path / "fleet.html"
    page.write_text(RENDERERS["html"](build_report(recorded(LOADED), META)), encoding="utf-8")
    opened = check_rendered(page, tmp_path)
    assert "Read bandwidth per node over time" in opened.dom


def test_node_series_adds_a_nodes_vms_per_interval_over_its_length() -> None:
    m = {
        "vms": [
            {"host": "n0/0", "node": "node0"},
            {"host": "n0/1", "node": "node0"},
            {"host": "n1/2", "node": "node1"},
        ],
        "series": {
            "n0/0": [[0, 10**9, 10_000_000, 20], [10**9, 2 * 10**9, 5_000_000, 10], [2 * 10**9, 2 * 10**9, 0, 0]],
            "n0/1": [[0, 10**9, 30_000_000, 60], [10**9, 15 * 10**8, 5_000_000, 10]],
            "n1/2": [[0, 10**9, 1_000_000, 2]],
        },
    }
    got = node_series(m)
    # 10 + 30 MB in the first second; then 5 MB/s and 5 MB over half a second (10 MB/s); an empty window is left out
    assert got == {"node0": [(0.0, 40.0), (1.0, 15.0)], "node1": [(0.0, 1.0)]}
    rec = build_report(recorded(LOADED), META)["node_series"]
    assert sorted(rec) == ["node0", "node1", "node2", "node3"] and all(len(p) >= 9 for p in rec.values())


# --- the live view


def _rows(m: dict[str, Any]) -> dict[int, HostRow]:
    return {
        v["rank"]: HostRow(v["host"], v["rank"], iops=100.0 + v["rank"], bw_bytes_per_s=1e6, lat_hist=v["lat_hist"])
        for v in m["vms"]
    }


def test_the_live_view_has_a_row_per_vm_and_per_node_and_an_exact_total() -> None:
    m = recorded()
    layout = Layout(8, 4)
    view = cluster_view(3, 3_000_000_000, _rows(m), 8, lambda r, _l: layout.node_name(layout.node_of(r)))
    names = [r.host for r in view.rows]
    assert names[:8] == [f"vm{r} (node{r // 2})" for r in range(8)]
    assert names[8:] == [f"node{k} (2 VMs)" for k in range(4)]
    assert view.rows[8].iops == 100.0 + 101.0 and view.total.iops == sum(100.0 + r for r in range(8))
    merged = _native.hist_stats(_native.hist_merge([v["lat_hist"] for v in m["vms"]]), [99.0])
    assert view.total.lat_p99_ns == int(merged["percentiles"][99.0])


def test_a_vm_not_heard_from_shows_late_and_stays_out_of_its_node_and_the_total() -> None:
    rows = _rows(recorded())
    del rows[1]
    view = cluster_view(1, 1_000_000_000, rows, 8, lambda r, _l: f"node{r // 2}")
    assert view.rows[1].late and view.rows[8].iops == 100.0
    assert "vm1 (node0)" in view.late_hosts


def test_the_spool_watch_shows_the_newest_interval_of_the_ranks_spools(tmp_path: Path) -> None:
    m = recorded()
    rows = _rows(m)
    shown: list[Any] = []
    watch = SpoolWatch(tmp_path, 4, lambda r, label: label.split("/")[0], shown.append, 3600.0)
    for rank in range(4):
        spool = Spool(tmp_path / "run-1", rank)
        for seq in (1, 2):
            spool.write("interval", {"seq": seq, "rank": rank, "elapsed_ns": seq * 10**9, "row": rows[rank].__dict__})
        spool.close()
    watch.poll()
    watch.poll()  # nothing new: not shown again
    assert len(shown) == 1 and shown[0].seq == 2
    # nodes from the host each rank ran on (its label, host/rank)
    assert [r.host for r in shown[0].rows] == [
        "vm0 (node0)",
        "vm1 (node0)",
        "vm2 (node1)",
        "vm3 (node1)",
        "node0 (2 VMs)",
        "node1 (2 VMs)",
    ]
    assert watch.complete is not None and watch.complete.seq == 2


def test_the_lab_keeps_the_newest_interval_every_vm_reported(tmp_path: Path) -> None:
    """A run's last interval is often partial (VMs end a little apart): the
    newest is shown live, the newest every VM reached is the one kept."""
    rows = _rows(recorded())
    shown: list[Any] = []
    watch = SpoolWatch(tmp_path, 4, lambda r, label: label.split("/")[0], shown.append, 3600.0)
    for rank in range(4):
        spool = Spool(tmp_path / "run-1", rank)
        for seq in (1, 2, 3) if rank == 0 else (1, 2):
            spool.write("interval", {"seq": seq, "rank": rank, "elapsed_ns": seq * 10**9, "row": rows[rank].__dict__})
        spool.close()
    watch.poll()
    assert shown[-1].seq == 3 and sum(not r.late for r in shown[-1].rows[:4]) == 1
    assert watch.complete is not None and watch.complete.seq == 2
    assert not any(r.late for r in watch.complete.rows)


# --- topology and refusals


def test_each_node_serves_a_3_way_mirror_split_into_its_vms_parts() -> None:
    layout = Layout(5, 2)
    assert [layout.export_of(r) for r in range(5)] == ["n0v0", "n0v1", "n0v2", "n1v0", "n1v1"]
    target = _native.Target(None, target_specs(layout, "4m"), listen="127.0.0.1:0")
    exports = {name: (size, stack) for name, size, stack, _ro in target.exports()}
    assert set(exports) == {"n0v0", "n0v1", "n0v2", "n1v0", "n1v1"}
    assert all(size == 4 << 20 for size, _ in exports.values())
    assert "raid1" in exports["n0v0"][1] and "3 x sim-ssd" in exports["n0v0"][1]
    assert len(set(limits(80, 60))) == 80


def test_the_example_plan_and_hosts_table_are_the_labs_default_run() -> None:
    """examples/fleet/seed001-lab*: what `iolab fleet ... sweep` re-runs is what the lab generates."""
    from iolab.plans import load_plan

    examples = Path(__file__).parents[2] / "examples" / "fleet"
    layout = Layout(8, 4)
    uris = [f"nbd+unix:///{layout.export_of(r)}?socket=/tmp/s001-lab.sock" for r in range(8)]
    table = read_hosts(examples / "seed001-lab-hosts.toml")
    generated = parse_hosts(hosts_table(uris, limits(8, 60)))
    assert [table.options_for(r, "h") for r in range(8)] == [generated.options_for(r, "h") for r in range(8)]
    plan = load_plan(examples / "seed001-lab.toml")
    base = dict(plan.base)
    assert (base["ioengine"], base["rw"], base["bs"]) == ("nbd", "randread", "512k")
    assert 3 in next(a.values for a in plan.axes if a.name == "iodepth")
    # the commands in its header serve the lab's mirrors (32 MiB per VM, two VMs a node)
    head = (examples / "seed001-lab.toml").read_text()
    assert MEMBER.format(capacity="64m") in head and "raid1,members=3," in head and "split=2" in head


def test_a_hostfile_with_one_host_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "hosts.txt"
    f.write_text("# one node\nnode1 slots=8\nnode1 slots=4\n")
    with pytest.raises(JobError, match="names one host"):
        hostfile_hosts(f)
    f.write_text("node1 slots=2\nnode2\n")
    assert hostfile_hosts(f) == [("node1", 2), ("node2", 1)]


@pytest.mark.parametrize(
    "args",
    [
        ("--hostfile", "{one}", "--uri", "nbd://127.0.0.1:9/x"),
        ("--uri", "nbd+unix:///x?socket={tmp}/no.sock"),
        ("--nodes", "1"),
        ("--vm-size", "1m"),
        ("--hostfile", "{one}", "--nodes", "3", "--uri", "nbd://127.0.0.1:9/x"),
        ("--uri", "nbd://127.0.0.1:9/x", "--no-netns"),
    ],
)
def test_bad_input_is_one_line_a_nonzero_exit_and_nothing_written(
    cli: Callable[..., Ran], tmp_path: Path, args: tuple[str, ...]
) -> None:
    one = tmp_path / "one.txt"
    one.write_text("node1 slots=8\n")
    out = tmp_path / "lab.json"
    r = cli("lab", "fleet", *[a.format(one=one, tmp=tmp_path) for a in args], "-o", str(out))
    assert r.exit_code != 0 and r.stdout == "", r.output
    assert len(r.stderr.strip().splitlines()) == 1, r.output
    assert not out.exists()


# --- end to end, shrunk


MODES = {"--no-netns": "local", "--netns": "netns", "--uri": "real"}


@pytest.mark.parametrize("where", list(MODES))
def test_a_shrunk_quick_run_computes_every_verdict(tmp_path: Path, where: str) -> None:
    """4 VMs on 2 nodes, 4 s of load, 4 MiB each: the whole lab in seconds
    (MPI's start-up is most of it); namespaces where root; ``--uri``
    against an iolab target this test serves (memory exports, one a VM)."""
    _require_mpi()
    if where == "--netns" and (os.geteuid() != 0 or shutil.which("ip") is None):
        pytest.skip("network namespaces need root and ip(8)")
    out = tmp_path / "lab.json"
    cmd = [sys.executable, "-m", "iolab.cli.main", "lab", "fleet", "--quick", "--runtime", "4", "--vms", "4"]
    cmd += ["--nodes", "2", "--limit-iops", "40", "-o", str(out)]
    target = None
    if where == "--uri":
        sock = tmp_path / "t.sock"
        target = _native.Target(None, ["vm=memory,size=4m,count=4"], listen=f"unix:{sock}")
        target.start()
        cmd += ["--uri", f"nbd+unix:///vm{{rank}}?socket={sock}"]
    else:
        cmd += ["--vm-size", "4m", where]
    try:
        ran = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False)
    finally:
        if target is not None:
            target.shutdown()
            target.wait()
    assert ran.returncode == 0, ran.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["mode"] == MODES[where] and doc["node_count"] == 2
    verdicts = {c["key"]: c["verdict"] for c in doc["claims"]}
    assert verdicts["exact_total"] == HELD, doc["claims"]
    # 160-280 I/Os a VM: one I/O is under 0.7 %. The limits are 40-70 IOPS
    # of 512 KiB, not 100-175: beside two busy loops the 2 CPUs could not
    # move the 275 MB/s those ask through NBD, and every VM fell 12-17 %
    # short (3 of 3 runs); at 110 MB/s they hold, and a limiter that lets a
    # VM run over its limit, or holds it below, still fails this claim.
    assert verdicts["limits"] == HELD, doc["claims"]
    assert verdicts["latency"] in (HELD, NOT_HELD), doc["claims"]
    assert [v["limit_iops"] for v in doc["vms"]] == [40, 50, 60, 70]
    # the target's own record where iolab served the exports, none from a "real" server
    assert all((v["device_ms"] is None) == (where == "--uri") for v in doc["vms"]), doc["vms"]
    # the live view ran: its last interval has a row per VM and per node
    kinds = [r["kind"] for r in doc["live"]["rows"]]
    assert kinds == ["vm"] * 4 + ["node"] * 2, doc["live"]
    m = copy.deepcopy(doc["measured"])
    assert exact_total(m) == next(c for c in doc["claims"] if c["key"] == "exact_total")
