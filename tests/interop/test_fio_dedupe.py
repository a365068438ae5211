"""fio and iolab write the same dedupe jobs; the blocks on disk agree.

fio 3.33 and iolab each write 4 MiB with ``dedupe_percentage=50`` in both
``dedupe_mode``s, and two 2 MiB files with ``dedupe_global=1``. Every 4 KiB
block is hashed: the share of blocks repeating an earlier one, the last
unique page a duplicate repeats (``working_set`` draws only from the first
``dedupe_working_set_percentage`` of the region's pages; ``repeat`` from
anywhere), and how many of the second file's blocks appear in the first.
Both tools draw independently, so each figure must agree within its
binomial spread, not exactly.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.peers import require_peer

IOLAB = [sys.executable, "-m", "iolab.cli.main", "run"]
COMMON = ["--rw=write", "--bs=4k", "--ioengine=psync", "--dedupe_percentage=50"]


def _blocks(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [data[i : i + 4096] for i in range(0, len(data), 4096)]


def _shape(path: Path) -> tuple[float, int]:
    """(share of blocks that repeat an earlier one, last unique page repeated)."""
    first: dict[bytes, int] = {}
    repeated = -1
    blocks = _blocks(path)
    for b in blocks:
        if b in first:
            repeated = max(repeated, first[b])
        else:
            first[b] = len(first)
    return 1 - len(first) / len(blocks), repeated


@pytest.mark.parametrize("mode", ["repeat", "working_set"])
def test_dedupe_modes_match_fio(tmp_path: Path, mode: str) -> None:
    fio = require_peer("fio")
    opts = [*COMMON, "--size=4m", f"--dedupe_mode={mode}", "--dedupe_working_set_percentage=10"]
    subprocess.run([fio, "--name=f", f"--filename={tmp_path / 'f.dat'}", *opts], check=True, capture_output=True)
    subprocess.run(
        [*IOLAB, "--name=i", f"--filename={tmp_path / 'i.dat'}", "--allow-overwrite", *opts],
        check=True,
        capture_output=True,
    )
    (fio_share, fio_last), (iol_share, iol_last) = _shape(tmp_path / "f.dat"), _shape(tmp_path / "i.dat")
    # Binomial(1024, 0.5): sd 1.6 points each; 7 points apart is over 3 sd of the difference.
    assert abs(fio_share - iol_share) < 0.07, (fio_share, iol_share)
    if mode == "working_set":
        # 10 % of 1024 pages: both repeat only pages 0..101.
        assert fio_last <= 101 and iol_last <= 101, (fio_last, iol_last)
    else:
        assert fio_last > 400 and iol_last > 400, (fio_last, iol_last)


def test_dedupe_global_shares_blocks_across_files_as_fio(tmp_path: Path) -> None:
    fio = require_peer("fio")
    shared = {}
    for tool in ("fio", "iolab"):
        job = tmp_path / f"{tool}.fio"
        lines = ["[global]", *(o.removeprefix("--") for o in COMMON), "size=2m", "dedupe_mode=working_set"]
        lines += ["dedupe_working_set_percentage=20", "dedupe_global=1"]
        for name in ("a", "b"):
            lines += [f"[{name}]", f"filename={tmp_path / f'{tool}-{name}.dat'}"]
        job.write_text("\n".join(lines) + "\n")
        cmd = [fio, str(job)] if tool == "fio" else [*IOLAB, str(job), "--allow-overwrite"]
        subprocess.run(cmd, check=True, capture_output=True)
        a = set(_blocks(tmp_path / f"{tool}-a.dat"))
        shared[tool] = sum(1 for b in _blocks(tmp_path / f"{tool}-b.dat") if b in a)
    # About 300 of b's 512 blocks (its duplicates and the first pages of
    # its own stream that a repeats); measured 293 (fio) and 306 (iolab).
    assert abs(shared["fio"] - shared["iolab"]) < 60, shared
    assert shared["fio"] > 200 and shared["iolab"] > 200, shared
