"""tests/jobs/data/data-shape.fio run as written: the effect of each of its
data-shape options, read from fio-json and from the files it wrote
(sequence distributions, sprandom, dedupe_global working sets, a verified
read/write mix with serialize_overlap)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

DATA = Path(__file__).parent / "data"


def _blocks(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [data[i : i + 4096] for i in range(0, len(data), 4096)]


def test_data_shape_job_file_shows_each_effect(cli: Callable[..., Any], workdir: Path) -> None:
    r = cli("run", str(DATA / "data-shape.fio"), "--output-format=json")
    assert r.exit_code == 0, r.output
    # Each job's own figures (group_reporting merges a group's jobs in the
    # fio outputs, as fio does; the document keeps every job).
    jobs = {j["name"]: j["merged"] for j in json.loads(r.stdout)["summary"]["jobs"]}
    # 16 blocks, strided rounds of 3: 3,1,2 ... 15,13,14; the next round would pass the end.
    assert jobs["order"]["read"]["ios"] == 15
    assert jobs["order-fixed"]["read"]["ios"] == 10
    # sprandom: every block of 2 MiB (512) plus about 20 % rewrites, at most 2.4 MiB.
    pre = jobs["precondition"]["write"]["ios"]
    assert 560 <= pre <= 615, pre
    written = sum(1 for b in _blocks(workdir / "precondition.dat") if b == b"\x5a" * 4096)
    assert written >= 480, written
    # dedupe_global: b repeats blocks that a wrote.
    a = set(_blocks(workdir / "dedupe-a.dat"))
    b = _blocks(workdir / "dedupe-b.dat")
    shared = sum(1 for blk in b if blk in a)
    assert 100 <= shared <= 400, shared
    mix = jobs["mix-verify"]
    assert mix["write"]["ios"] > 0 and mix["read"]["ios"] > mix["write"]["ios"] // 2
    assert mix["read"]["errors"] == mix["write"]["errors"] == 0
