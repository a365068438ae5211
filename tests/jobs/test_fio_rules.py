"""fio's own rules that users' job files rely on, each checked by its effect
on a run (issue 26 item 4), against what fio 3.33 does:

- a bare IEC prefix (``16Ki``, ``4Gi``) is a power of ``kb_base``;
- ``nrfiles`` beside a ``filename`` list: the first ``nrfiles`` names, or
  all the names when it is larger (fio runs ``nrfiles=3`` with one name
  as one file holding the whole size);
- ``time_based`` without ``runtime`` does the job's size once, as fio 3.33
  does (its manual suggests running on; fio ends after one pass);
- two jobs of one run draw different offsets (fio seeds by job number),
  and a run repeats itself (``randrepeat=1``);
- ``log_unix_epoch=1``: the logs' times are Unix epoch ms;
- ``direct=1`` with ``bs=1`` runs where the filesystem takes unaligned
  O_DIRECT (tmpfs here, as FUSE), and a misaligned ``bs`` on ext4/xfs is
  one line naming the alignment the filesystem needs.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable

import pytest

NULL = ["--ioengine=null", "--output-format=json"]


def _summary_job(r: Any, i: int = 0) -> dict[str, Any]:
    assert r.exit_code == 0, r.output
    return dict(json.loads(r.stdout)["summary"]["jobs"][i]["merged"])


@pytest.mark.parametrize(("size", "kb_base", "nbytes"), [("16Ki", 1024, 16 << 10), ("1Mi", 1000, 10**6)])
def test_bare_iec_sizes_run_as_fio_computes_them(cli: Callable[..., Any], size: str, kb_base: int, nbytes: int) -> None:
    r = cli("run", "--name=s", f"--kb_base={kb_base}", f"--size={size}", "--bs=1000", "--rw=read", *NULL)
    assert _summary_job(r)["read"]["bytes"] == nbytes // 1000 * 1000
    assert "fio's manual" in r.stderr, r.stderr


@pytest.mark.parametrize(
    ("names", "nrfiles", "sizes"),
    [
        ("f1", 3, {"f1": 3 << 20}),
        ("f1:f2:f3", 2, {"f1": 3 << 19, "f2": 3 << 19}),
        ("f1:f2", 5, {"f1": 3 << 19, "f2": 3 << 19}),
    ],
)
def test_nrfiles_beside_filename_uses_the_files_fio_uses(
    cli: Callable[..., Any], workdir: Path, names: str, nrfiles: int, sizes: dict[str, int]
) -> None:
    r = cli("run", "--name=n", f"--filename={names}", f"--nrfiles={nrfiles}", "--size=3m", "--rw=write", "--bs=64k",
            "--output-format=json")  # fmt: skip
    assert _summary_job(r)["write"]["bytes"] == 3 << 20
    assert {p.name: p.stat().st_size for p in workdir.iterdir() if p.name.startswith("f")} == sizes
    assert "as fio does" in r.stderr, r.stderr


def test_time_based_without_runtime_does_the_size_once_as_fio(cli: Callable[..., Any]) -> None:
    """fio 3.33 (null engine, size=4g, time_based, no runtime) ends after one
    pass: 1048576 I/Os of 4 KiB. A job file that ends under fio must end here."""
    r = cli("run", "--name=t", "--size=1m", "--bs=4k", "--rw=randread", "--time_based", *NULL)
    assert _summary_job(r)["read"]["bytes"] == 1 << 20
    assert "time_based without runtime has no effect" in r.stderr, r.stderr


def _offsets(path: Path) -> list[int]:
    return [int(line.split(", ")[4]) for line in path.read_text().splitlines()]


def test_two_jobs_draw_different_offsets_and_a_run_repeats(cli: Callable[..., Any], workdir: Path) -> None:
    """fio seeds each job by its number: two identical jobs of one run draw
    different offsets (a cache would otherwise serve the second), and the
    next run draws the same ones again (randrepeat=1, the default); an
    explicit randseed keeps the jobs apart too."""
    job = "[global]\nioengine=null\nrw=randread\nbs=4k\nsize=64m\nnumber_ios=200\nwrite_lat_log=x\nlog_offset=1\n[a]\n[b]\n"
    runs = []
    for extra in ("", "", "randseed=7\n"):
        Path("j.fio").write_text(job.replace("[global]\n", "[global]\n" + extra))
        r = cli("run", "j.fio", "--output-format=json")
        assert r.exit_code == 0, r.output
        runs.append([_offsets(workdir / f"x_lat.{n}.log") for n in (1, 2)])
    (a1, b1), (a2, b2), (a3, b3) = runs
    assert len(a1) == len(b1) == 200
    assert a1 != b1 and a3 != b3, "two jobs of one run drew the same offsets"
    assert (a1, b1) == (a2, b2), "randrepeat=1: the next run repeats the offsets"
    assert a3 != a1, "another randseed, other offsets"


def test_log_unix_epoch_writes_wall_clock_ms(cli: Callable[..., Any], workdir: Path) -> None:
    before_ms = time.time_ns() // 10**6
    r = cli("run", "--name=u", "--rw=randread", "--bs=4k", "--size=1m", "--time_based", "--runtime=600ms",
            "--write_iops_log=w", "--write_lat_log=p", "--log_avg_msec=200", "--log_unix_epoch=1", *NULL)  # fmt: skip
    after_ms = time.time_ns() // 10**6
    assert r.exit_code == 0, r.output
    start_ms = json.loads(r.stdout)["result"]["start_unix_ns"] // 10**6
    times = [int(line.split(",")[0]) for line in (workdir / "w_iops.1.log").read_text().splitlines()]
    assert times and before_ms <= start_ms and times[0] == start_ms + 200 and max(times) <= after_ms, times
    lat_times = [int(line.split(",")[0]) for line in (workdir / "p_lat.1.log").read_text().splitlines()]
    assert lat_times and all(before_ms <= t <= after_ms for t in lat_times)


def _takes_unaligned_direct(directory: str) -> bool:
    """Independent of iolab: does an O_DIRECT read of 1 byte at offset 1 work here?"""
    import mmap

    path = os.path.join(directory, ".iolab-test-dio")
    try:
        Path(path).write_bytes(b"x" * 8192)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:
        return False
    try:
        buf = mmap.mmap(-1, 4096)
        return os.preadv(fd, [memoryview(buf)[:1]], 1) == 1
    except OSError:
        return False
    finally:
        os.close(fd)
        os.remove(path)


def test_direct_bs_1_runs_where_the_filesystem_allows_it(cli: Callable[..., Any], tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    if not (shm.is_dir() and _takes_unaligned_direct(str(shm))):
        pytest.skip("no filesystem here takes unaligned O_DIRECT (tmpfs does from Linux 6.6)")
    target = shm / f"iolab-test-{os.getpid()}"
    try:
        r = cli("run", "--name=d", f"--filename={target}", "--size=4k", "--bs=1", "--direct=1", "--rw=write",
                "--output-format=json")  # fmt: skip
        assert _summary_job(r)["write"]["ios"] == 4096
    finally:
        target.unlink(missing_ok=True)


def test_a_misaligned_bs_names_the_alignment_the_filesystem_needs(cli: Callable[..., Any], workdir: Path) -> None:
    if _takes_unaligned_direct(str(workdir)):
        pytest.skip("this filesystem takes unaligned O_DIRECT")
    r = cli("run", "--name=m", "--filename=f", "--size=1m", "--bs=1000", "--direct=1", "--rw=read")
    assert r.exit_code != 0
    (line,) = [ln for ln in r.stderr.splitlines() if "direct=1" in ln]
    assert "bs to be a multiple of" in line and "the O_DIRECT alignment here" in line and "1000" in line, r.stderr
