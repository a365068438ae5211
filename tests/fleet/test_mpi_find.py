"""``iolab fleet -n 2 find``: real MPI ranks on this machine, each against
its own export of one target (the hosts table's uri, over the job's), one fast (5 ms a read)
and one slow (40 ms). ``p50 < 20 ms`` holds on the total — the fast host
does eight times the I/Os, so the merged median is its — and on the fast
host, but not on the slow one: the fleet breaks it at QD 1, and the
statement names the host.

The holds are 5 and 40 ms, not 1 and 8: beside CPU-bound work a held
reply and the client's wake-up each can wait ~2 ms for a time slice, and
with a 1 ms fast host that put the total's p50 at ~8 ms against a 4 ms SLO
(a run beside two busy loops and other builds). Now the fast host has 5 ms
of room over its hold and the slow one can only be slower."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.target.test_target_cli import start, stop

from .faults import RUN_LIMIT_S
from .test_mpi import _require_mpi, iolab


def test_a_fleet_find_holds_the_slo_per_host_and_on_the_total(tmp_path: Path) -> None:
    _require_mpi()
    proc, sock = start(iolab(), tmp_path, "--export", "fast=memory,size=4m+delay,read=5ms",
                       "--export", "slow=memory,size=4m+delay,read=40ms")  # fmt: skip
    table = tmp_path / "hosts.toml"
    table.write_text(
        f'[[host]]\nrank = 0\nuri = "nbd+unix:///fast?socket={sock}"\n\n'
        f'[[host]]\nrank = 1\nuri = "nbd+unix:///slow?socket={sock}"\n'
    )
    env = {**os.environ, "IOLAB_FLEET_SPOOL": str(tmp_path / "spool")}
    try:
        r = subprocess.run(
            iolab("fleet", "-n", "2", "--hosts", str(table), "find", "--slo", "p50<20ms", "--limit", "4",
                  "--repeats", "1", "--max-repeats", "2", "--results", str(tmp_path / "res"), "--name=f",
                  "--ioengine=nbd", f"--uri=nbd+unix:///fast?socket={sock}", "--rw=randread", "--bs=4k", "--runtime=600ms", "--time_based"),
            capture_output=True, text=True, timeout=RUN_LIMIT_S, cwd=tmp_path, env=env, check=False,
        )  # fmt: skip
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr[-3000:]
    found = json.loads((tmp_path / "res" / "find-f-iodepth" / "find.json").read_text())
    assert found["best"] is None and found["first_fail"] == 1, r.stdout
    clauses = {c["scope"]: c for c in found["evaluations"][0]["clauses"]}
    assert len(clauses) == 3 and clauses["total"]["holds"], clauses
    slow = [c for s, c in clauses.items() if s != "total" and not c["holds"]]
    fast = [c for s, c in clauses.items() if s != "total" and c["holds"]]
    assert len(slow) == 1 and len(fast) == 1, clauses
    assert 39e6 <= slow[0]["value"] and fast[0]["value"] <= 10e6 and clauses["total"]["value"] <= 10e6
    assert r.stdout.count("no point meets 'p50<20ms'") == 1, r.stdout  # rank 0 alone reports
    assert f"breaks it: {slow[0]['scope']}: p50 " in r.stdout, r.stdout
    point = tmp_path / "res" / "find-f-iodepth" / "points" / "p001-r1"
    assert sorted(p.name for p in (point / "hosts").iterdir()) == ["rank-0.json", "rank-1.json"]
