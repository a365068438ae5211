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
    job = [f"--filename={data}", "--size=256k", "--rw=randrw", "--bsrange=4k-16k", "--ioengine=psync"]
    subprocess.run([fio, "--name=w", *job, f"--write_iolog={captured}", "--output=/dev/null"], check=True)
    logged = ios(captured)
    assert {d for _, d, _, _ in logged} == {"read", "write"} and len(logged) > 16
    assert [io for _, io in replay(captured, replayed, "--replay_no_stall=1")] == logged
