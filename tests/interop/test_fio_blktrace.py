"""read_iolog with blktrace's binary input: a trace written here record by
record (Linux's blk_io_trace layout) is read the same way by blkparse (the
blktrace package's own reader, the independent truth of what it holds), by
fio 3.33 and by iolab — the same offsets, sizes and directions, in order.
blktrace itself cannot capture here (its debugfs files are refused in a
container), so the trace is made rather than recorded."""

from __future__ import annotations

import random
import struct
import subprocess
from pathlib import Path

from tests.peers import require_peer
from tests.run.iolog_lines import iolab_run, ios, replay

MAGIC_V7 = 0x65617407
TA_QUEUE, TA_ISSUE, TA_COMPLETE = 1, 7, 8
TC_WRITE, TC_QUEUE, TC_ISSUE, TC_COMPLETE, TC_NOTIFY = (1 << (b + 16) for b in (1, 4, 6, 7, 10))
DEVICE = (8 << 20) | 16  # 8:16, as the kernel packs dev_t in a trace


def record(seq: int, t_ns: int, sector: int, nbytes: int, action: int, cpu: int = 0, pdu: bytes = b"") -> bytes:
    head = struct.pack("<IIQQIIIIIHH", MAGIC_V7, seq, t_ns, sector, nbytes, action, 4242, DEVICE, cpu, 0, len(pdu))
    return head + pdu


def make_trace(path: Path, n: int = 40, idle_ns: int = 30_000) -> None:
    """n requests at random sectors of the first MiB, each queued, issued and
    completed 90 µs later (only the queue events are I/O to replay), the
    next queued idle_ns after that completion; and a process notify with a
    payload to skip."""
    rng = random.Random(7)
    out, seq, t = [record(0, 1_000, 0, 0, TC_NOTIFY, pdu=b"db-writer\0")], 1, 1_000_000
    for _ in range(n):
        w = TC_WRITE if rng.random() < 0.4 else 0
        sector, nbytes = rng.randrange(0, 2048 - 32, 8), rng.choice((4096, 8192, 16384))
        for dt, act in ((0, TA_QUEUE | TC_QUEUE), (3_000, TA_ISSUE | TC_ISSUE), (90_000, TA_COMPLETE | TC_COMPLETE)):
            out.append(record(seq, t + dt, sector, nbytes, act | w))
            seq += 1
        t += 90_000 + idle_ns
    path.write_bytes(b"".join(out))


def lay_out(data: Path) -> None:
    """A 1 MiB file iolab created, so the replay may write to it."""
    r = iolab_run("--name=layout", f"--filename={data}", "--size=1m", "--rw=read", "--bs=64k")
    assert r.returncode == 0, r.stderr


def blkparse_queued(blkparse: str, trace: Path) -> list[tuple[str, int, int]]:
    """(direction, offset, length) of every queue event, as blkparse reads them."""
    fmt = "%a %d %S %N\n"
    r = subprocess.run([blkparse, "-q", "-i", "-", "-f", fmt], stdin=trace.open("rb"), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()]
    return [
        ("write" if "W" in d else "read", int(s) * 512, int(n)) for a, d, s, n in (x[:4] for x in rows if x) if a == "Q"
    ]


def test_a_blktrace_trace_replays_as_blkparse_and_fio_read_it(tmp_path: Path) -> None:
    fio, blkparse = require_peer("fio"), require_peer("blkparse")
    trace, data = tmp_path / "trace.bin", tmp_path / "data"
    make_trace(trace)
    lay_out(data)
    truth = blkparse_queued(blkparse, trace)
    assert len(truth) == 40 and {d for d, _, _ in truth} == {"read", "write"}

    got = [
        (d, off, n)
        for _, d, off, n in (
            io for _, io in replay(trace, tmp_path / "iolab.log", f"--replay_redirect={data}", "--replay_no_stall=1")
        )
    ]
    assert got == truth
    assert all(f == str(data) for f, _, _, _ in ios(tmp_path / "iolab.log"))

    # fio writes no iolog while it reads one: its per-I/O latency log
    # (log_offset=1) says what it issued: direction, size, offset.
    subprocess.run(
        [
            fio,
            "--name=r",
            f"--read_iolog={trace}",
            f"--replay_redirect={data}",
            "--replay_no_stall=1",
            f"--write_lat_log={tmp_path / 'fio'}",
            "--log_offset=1",
            "--output=/dev/null",
        ],
        check=True,
        cwd=tmp_path,
    )
    rows = [line.split(", ") for line in (tmp_path / "fio_lat.1.log").read_text().splitlines()]
    fio_issued = [("write" if r[2] == "1" else "read", int(r[4]), int(r[3])) for r in rows]
    assert fio_issued == truth


def test_a_blktrace_trace_keeps_its_pace_and_forces_direct(tmp_path: Path) -> None:
    trace, data = tmp_path / "trace.bin", tmp_path / "data"
    # fio's delay is the gap since the record before (the previous
    # request's completion): 5 ms here, so 10 queue events span 45 ms.
    make_trace(trace, n=10, idle_ns=5_000_000)
    lay_out(data)
    stamps = [t for t, _ in replay(trace, tmp_path / "a.log", f"--replay_redirect={data}")]
    # Due times are from the replay's start (0, 5, ..., 45 ms): the last
    # is not issued before 45 ms, however late the first went out.
    assert stamps[-1] >= 45_000, stamps
    fast = [t for t, _ in replay(trace, tmp_path / "b.log", f"--replay_redirect={data}", "--replay_no_stall=1")]
    assert fast[-1] < stamps[-1]
    r = iolab_run("--name=r", f"--read_iolog={trace}", f"--replay_redirect={data}", "--direct=0")
    assert r.returncode == 0, r.stderr
    assert "blktrace trace replays with direct=1, as in fio" in r.stderr
