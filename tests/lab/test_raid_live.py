"""A RAID member failed and restored while the target serves (the stats
endpoint's ``POST /member``), checked by a real peer: fio's nbd engine
writes with crc32c verify headers and reads them back across each
transition — a failure while fio is reading, degraded writes, a restore
(which rebuilds what the member missed), then another member failed so
that the rebuilt member's data is what the reconstruction uses.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from iolab import _native

from tests.lab.test_raid_integrity import JOB, passes
from tests.peers import require_peer
from tests.waits import wait_until

SPEC = "r=raid5,members=4,strip=4k,member=memory(size=2m)"


def post(http: str, query: str) -> tuple[int, str]:
    req = urllib.request.Request(f"http://{http}/member?{query}", method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return int(r.status), r.read().decode()
    except urllib.error.HTTPError as e:
        return int(e.code), e.read().decode()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, _native.Target]]:
    sock = tmp_path / "t.sock"
    t = _native.Target(None, [SPEC], listen=f"unix:{sock}", stats_http="127.0.0.1:0")
    t.start()
    http = t.addresses()["stats_http"]
    assert http is not None
    yield f"nbd+unix:///r?socket={sock}", http, t
    t.shutdown()
    t.wait()


def reads_so_far(t: _native.Target) -> int:
    ops = json.loads(t.stats_json(reset=False))["exports"][0]["ops"]
    return int(_native.hist_stats(ops["read"]["lat_ns"], [])["count"])


def test_raid5_member_fails_and_is_restored_while_serving(served: tuple[str, str, _native.Target]) -> None:
    uri, http, t = served
    passes(uri, "--do_verify=0")  # healthy: every member written
    # Fail member 2 while fio is reading everything back.
    reader = subprocess.Popen(
        [require_peer("fio"), *JOB, f"--uri={uri}", "--verify_only=1", "--loops=50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_until(lambda: reads_so_far(t) > 0, 60, "fio's first reads", reader)
    code, body = post(http, "export=r&member=2&state=failed")
    assert code == 200 and "member 2 failed" in body, body
    assert reader.poll() is None, "fio had finished before the failure: make it read longer"
    out = reader.communicate(timeout=300)[0]
    assert reader.returncode == 0 and "verify failed" not in out, out
    # Degraded: new data (another seed) written and verified.
    passes(uri, "--do_verify=1", "--randseed=8")
    # Restore: member 2 gets the rows it missed rebuilt, then serves again.
    code, body = post(http, "export=r&member=2&state=working")
    assert code == 200 and "working again" in body and " 0 bytes" not in body, body
    # With member 0 failed, member 2's rebuilt strips feed every reconstruction.
    assert post(http, "export=r&member=0&state=failed")[0] == 200
    passes(uri, "--verify_only=1", "--randseed=8")
    stats = json.loads(t.stats_json(reset=False))
    raid = next(d for d in stats["counters"] if d["path"].endswith("raid5"))
    degraded = {c["name"]: c["value"] for c in raid["counters"]}
    assert degraded["degraded_reads"] > 0 and degraded["degraded_writes"] > 0, degraded


def test_changes_that_would_lose_data_are_refused(served: tuple[str, str, _native.Target]) -> None:
    _, http, _ = served
    assert post(http, "export=r&member=1&state=failed")[0] == 200
    code, body = post(http, "export=r&member=3&state=failed")
    assert code == 409 and "member 1 has failed already" in body, body
    code, body = post(http, "export=nope&member=0&state=failed")
    assert code == 409 and "no export named 'nope'" in body, body
    code, body = post(http, "export=r&member=0&state=broken")
    assert code == 400 and "not failed or working" in body, body
