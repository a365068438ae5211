"""The target's stats show the RAID and cache counters, per layer and per
member, counted exactly: 64 sequential 64 KiB writes through write-back
over a 6-member RAID 5 with 64 KiB strips are 64 cache writes, destaged as
12 full stripes (60 strips; the last 4 stay dirty until FLUSH), so the
members see 12 x 6 writes and no reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from iolab import _native
from iolab.run.api import Job, run


def figures(stats: dict[str, Any], path_end: str) -> dict[str, int]:
    for c in stats["counters"]:
        if c["path"].endswith(path_end):
            return {x["name"]: x["value"] for x in c["counters"]}
    raise AssertionError(f"no counters for {path_end}: {[c['path'] for c in stats['counters']]}")


def test_raid_and_cache_counters_in_the_stats(tmp_path: Path) -> None:
    sock = tmp_path / "s.sock"
    spec = "r=raid5,members=6,strip=64k,member=memory(size=1m)+cache,write=back"
    t = _native.Target(None, [spec], listen=f"unix:{sock}")
    t.start()
    try:
        t.stats_json(True)
        job = Job("w", ioengine="nbd", uri=f"nbd+unix:///r?socket={sock}", rw="write", bs="64k", size="4m")
        run(job)
        stats = json.loads(t.stats_json(False))
    finally:
        t.shutdown()
        t.wait()
    cache, raid = figures(stats, "cache"), figures(stats, "raid5")
    assert cache["write_back_writes"] == 64 and cache["destages"] == 12, cache
    assert cache["dirty_bytes"] == 4 * 65536, cache
    assert raid["full_stripe_writes"] == 12 and raid["read_modify_writes"] == 0, raid
    for i in range(6):
        assert (raid[f"member{i}.writes"], raid[f"member{i}.reads"]) == (12, 0), (i, raid)
