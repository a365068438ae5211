"""``iolab pts`` end to end on a memory export (shrunk), and bad input in one line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from iolab import _native
from iolab.analysis.load import run_samples
from iolab.errors import RefusedError
from iolab.pts import purge as purging
from iolab.pts.procedure import run_pts
from iolab.pts.settings import PtsSettings

from tests.pts.served import served


def _pts(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "iolab.cli.main", "pts", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=cwd)


def test_latency_quick_on_a_memory_export(tmp_path: Path) -> None:
    with served(tmp_path, mem="memory,size=4m") as uris:
        out = _pts("latency", "--uri", uris["mem"], "--quick", "--round-time", "100ms", "--max-rounds", "5",
                   "--results", "res", cwd=tmp_path)  # fmt: skip
        assert out.returncode == 0, out.stderr
        again = _pts("latency", "--uri", uris["mem"], "--results", "res", cwd=tmp_path)
        assert "pts-latency exists: a PTS test starts from a purge; give --restart" in _one_line(again)
    assert "SHRUNK, not a conforming PTS run: rounds of 100ms per cell (the spec: 60s); at most 5 rounds" in out.stdout
    assert "Latency, mean µs" in out.stdout and "latency: steady-state rounds (tracking 4k 0/100)" in out.stdout
    directory = tmp_path / "res" / "pts-latency"
    doc = json.loads((directory / "pts.json").read_text())
    assert doc["purge"] == {"how": "nbd TRIM", "bytes": 4 << 20}
    assert (directory / "precondition" / "run.json").exists()  # the 2x capacity fill
    (stage,) = doc["stages"]
    assert [c["label"] for c in stage["cells"]] == ["4k 100/0", "4k 0/100"]
    assert len(stage["rounds"]) == 5 and stage["metric"] == "lat_mean_ns"  # --max-rounds 5
    # the window's histogram is the exact merge of its rounds' run directories
    m = stage["measurement"]["4k 0/100"]
    dirs = [directory / r["cells"]["4k 0/100"]["directory"] for r in stage["rounds"] if r["round"] in m["rounds"]]
    hists = [s.write.lat.hist for d in dirs for s in run_samples(d)[:1] if s.write.lat is not None]
    assert len(hists) == 5 and m["lat_write"]["hist"] == _native.hist_merge(hists)
    ios = sum(run_samples(d)[0].write.ios for d in dirs)
    assert m["lat_write"]["count"] == ios
    assert (directory / "pts.html").read_text().count('class="chart"') == 1
    again = _pts("report", str(directory), "--format", "md", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout.startswith("# SNIA PTS Latency (T1Q1)"), again.stderr


def _one_line(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode != 0 and out.stdout == ""
    line = out.stderr.strip()
    assert "\n" not in line and line.startswith("iolab: "), out.stderr
    return line


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    assert "unknown PTS test 'speed': choose one of iops" in _one_line(_pts("speed", "f", cwd=tmp_path))
    line = _one_line(_pts("latency", "--uri", "nbd://x/y", "--percentiles", "99,99.42", cwd=tmp_path))
    assert "'99.42' is not a percentile iolab records" in line
    line = _one_line(_pts("iops", "--uri", "nbd://x/y", "--purge-device", "/dev/x", cwd=tmp_path))
    assert "--purge-device /dev/x: only for a block device; --uri names an NBD export" in line
    line = _one_line(_pts("iops", "--uri", f"nbd+unix:///x?socket={tmp_path}/none.sock", cwd=tmp_path))
    # The line says what to start, not only what failed (session 12: README's pts example named a
    # socket nothing served, and the error gave no next step).
    sock = f"{tmp_path}/none.sock"
    assert f"cannot reach the NBD server at {sock}: No such file or directory; start one there first" in line
    assert f"iolab target --unix {sock} --export 'x=sim-ssd,capacity=16m,channels=1,dies=1,planes=2' &" in line


def _block_device() -> str:
    for name in ("/dev/loop0", "/dev/loop1", "/dev/ram0"):
        if os.path.exists(name) and stat.S_ISBLK(os.stat(name).st_mode):
            return name
    pytest.skip("no block device node to name (refused before it is opened)")


def test_a_device_purge_without_confirmation_is_refused(tmp_path: Path) -> None:
    dev = _block_device()
    line = _one_line(_pts("iops", dev, "--results", str(tmp_path), cwd=tmp_path))
    assert f"{dev}: purging erases every byte of it: confirm with --purge-device {dev} --allow-overwrite" in line


def test_a_mounted_device_is_refused(tmp_path: Path) -> None:
    dev = _block_device()
    name = Path(os.path.realpath(dev)).name
    (tmp_path / "mounts").write_text(f"{dev} /mnt/data ext4 rw 0 0\n")
    (tmp_path / "swaps").write_text("Filename\n")
    tables = purging.SystemTables(tmp_path / "mounts", tmp_path / "swaps", tmp_path / "sys")
    settings = PtsSettings("iops", purge_device=dev, allow_overwrite=True)
    with pytest.raises(RefusedError, match=rf"{dev}: {dev} is mounted on /mnt/data: .*unmount it first") as e:
        run_pts(settings, dev, None, tmp_path / "res", tables=tables)
    assert "\n" not in str(e.value) and name
    assert not (tmp_path / "res").exists()
