"""Our own job files with priorities and placement (tests/jobs/data/
priorities.fio, placement.fio): each runs as written and shows its effect.

Truths: the I/Os of each priority add up to the run's (fio json ``prios``),
the per-I/O log has one line per I/O with the priority column matching
those counts, and the cmdprio_bssplit job gives the hinted priority to
exactly its 4 KiB reads (their bytes account for the rest).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

DATA = Path(__file__).parent / "data"


def _run(cli: Callable[..., Any], name: str) -> dict[str, Any]:
    r = cli("run", str(DATA / name), "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    return dict(json.loads(r.stdout))


def _prios(entry: dict[str, Any]) -> dict[tuple[int, int, int], int]:
    return {(p["prioclass"], p["prio"], p["priohint"]): p["clat_ns"]["N"] for p in entry["read"]["prios"]}


def test_priorities_file_splits_reads_by_priority(cli: Callable[..., Any], workdir: Path) -> None:
    Path("prio-target.dat").write_bytes(os.urandom(2 << 20))
    tagged, by_size = _run(cli, "priorities.fio")["jobs"]
    counts = _prios(tagged)
    assert set(counts) == {(2, 0, 0), (3, 0, 0)} and sum(counts.values()) == tagged["read"]["total_ios"] == 2048
    assert 0.15 * 2048 < counts[(2, 0, 0)] < 0.35 * 2048
    column = [line.split(", ")[-1] for line in Path("qos_lat.1.log").read_text().splitlines()]
    assert column.count("0x4000") == counts[(2, 0, 0)] and column.count("0x6000") == counts[(3, 0, 0)]
    sizes = _prios(by_size)
    small, big = sizes[(2, 1, 3)], sizes[(2, 7, 0)]
    assert small + big == by_size["read"]["total_ios"]
    assert by_size["read"]["io_bytes"] == 4096 * small + 16384 * big
    assert len(Path("qos_lat.2.log").read_text().splitlines()) == small + big


def test_placement_file_runs_with_memory_policies_and_a_sorting_burner(cli: Callable[..., Any], workdir: Path) -> None:
    doc = _run(cli, "placement.fio")
    names = [j["jobname"] for j in doc["jobs"]]
    assert names == ["bound", "spread", "burn", "reader-beside-it"]
    assert [j["read"]["total_ios"] for j in doc["jobs"][:2]] == [16, 16]
    burn = doc["jobs"][2]
    # It burned CPU (how much a loaded host grants is not asserted here: the
    # share is tested on the thread's own CPU clock in the engine's cpuio tests).
    assert burn["usr_cpu"] + burn["sys_cpu"] > 0
