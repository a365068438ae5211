"""A write_iolog captured from fio 3.33 replays in iolab with the same
offsets, sizes and directions (iolab records its replay with its own
write_iolog)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.peers import require_peer
from tests.run.iolog_lines import iolab_run, ios, replay


def test_a_fio_iolog_replays_the_same_io(tmp_path: Path) -> None:
    fio = require_peer("fio")
    data, captured, replayed = tmp_path / "data", tmp_path / "fio.log", tmp_path / "iolab.log"
    # iolab lays the file out, so the replay may write to it.
    r = iolab_run("--name=layout", f"--filename={data}", "--size=256k", "--rw=read", "--bs=64k")
    assert r.returncode == 0, r.stderr
    job = [f"--filename={data}", "--size=256k", "--rw=randrw", "--bsrange=4k-16k", "--ioengine=psync", "--fsync=3"]
    subprocess.run([fio, "--name=w", *job, f"--write_iolog={captured}", "--output=/dev/null"], check=True)
    logged = ios(captured)
    assert {d for _, d, _, _ in logged} == {"read", "write"} and len(logged) > 16
    assert [io for _, io in replay(captured, replayed, "--replay_no_stall=1")] == logged
    # fio's sync lines (fsync=3) come back after the same I/Os.
    assert " sync " in captured.read_text()
    assert actions(replayed) == actions(captured)


def actions(log: Path) -> list[tuple[str, str]]:
    """(file, action) of every line after the version line but add/open/close."""
    rows = [line.split() for line in log.read_text().splitlines()[1:]]
    return [(r[1], r[2]) for r in rows if r[2] not in ("add", "open", "close")]
