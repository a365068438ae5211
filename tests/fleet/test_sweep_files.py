"""A fleet sweep's point directory keeps each host's own results and
``fleet.json`` (without MPI: a synthetic point of three hosts), and the
report reads them back."""

from __future__ import annotations

import json
from pathlib import Path

from iolab.fleet.report import fleet_section
from iolab.fleet.runner import FleetConfig, FleetOutcome, HostPart
from iolab.fleet.sweep import merged_output
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
