"""write_iolog and read_iolog (fio's I/O logs): a log written by iolab
replays the same I/O, and each replay_* option does what it says, checked
on what the replay itself issued (its own write_iolog)."""

from __future__ import annotations

from pathlib import Path

from iolab import _native

from tests.run.iolog_lines import iolab_run, ios, replay


def write_log(path: Path, body: str) -> Path:
    path.write_text("fio version 3 iolog\n" + body)
    return path


def test_a_written_log_replays_the_same_offsets_sizes_and_directions(tmp_path: Path) -> None:
    data, first, again = tmp_path / "data", tmp_path / "first.log", tmp_path / "again.log"
    job = [f"--filename={data}", "--size=256k", "--rw=randrw", "--bsrange=4k-16k", "--ioengine=io_uring"]
    r = iolab_run("--name=w", *job, "--iodepth=4", f"--write_iolog={first}")
    assert r.returncode == 0, r.stderr
    issued = ios(first)
    assert {d for _, d, _, _ in issued} == {"read", "write"}
    assert len({n for _, _, _, n in issued}) > 1, "bsrange gave several sizes"
    assert sum(n for _, _, _, n in issued) == 256 << 10
    assert [io for _, io in replay(first, again, "--iodepth=4", "--ioengine=io_uring")] == issued


def test_a_logged_trimwrite_replays_its_trims(tmp_path: Path) -> None:
    data, first, again = tmp_path / "data", tmp_path / "first.log", tmp_path / "again.log"
    r = iolab_run("--name=l", f"--filename={data}", "--size=256k", "--rw=write", "--bs=64k")
    assert r.returncode == 0, r.stderr
    job = [f"--filename={data}", "--size=256k", "--rw=randtrimwrite", "--bs=16k"]
    r = iolab_run("--name=t", *job, f"--write_iolog={first}")
    assert r.returncode == 0, r.stderr
    issued = ios(first)
    assert [d for _, d, _, _ in issued] == ["trim", "write"] * 16
    assert [io for _, io in replay(first, again)] == issued
    assert (tmp_path / "data").stat().st_size == 256 << 10


def test_write_iolog_appends_as_fio_does(tmp_path: Path) -> None:
    data, log = tmp_path / "data", tmp_path / "a.log"
    for _ in range(2):
        r = iolab_run("--name=w", f"--filename={data}", "--size=16k", "--rw=read", "--bs=4k", f"--write_iolog={log}")
        assert r.returncode == 0, r.stderr
    text = log.read_text()
    assert text.count("fio version 3 iolog") == 2
    assert text.count(" read ") == 8
    assert text.splitlines()[1:3] == [f"0 {data} add", f"0 {data} open"]


# A log whose I/Os are due 0, 100, 200 and 300 ms after the replay starts
# (fio's rule: no wait after a line stamped 0).
PACED = "0 {f} add\n0 {f} open\n5 {f} write 0 4096\n100005 {f} write 4096 4096\n200005 {f} read 0 4096\n300005 {f} read 4096 4096\n"
DUE_US = [0, 100_000, 200_000, 300_000]


def test_the_replay_keeps_the_logs_timestamps(tmp_path: Path) -> None:
    log = write_log(tmp_path / "in.log", PACED.format(f=tmp_path / "data"))
    got = replay(log, tmp_path / "out.log")
    assert [io[1:] for _, io in got] == [
        ("write", 0, 4096),
        ("write", 4096, 4096),
        ("read", 0, 4096),
        ("read", 4096, 4096),
    ]
    for (ts, _), due in zip(got, DUE_US):
        assert ts >= due, (ts, due, got)


# Ten seconds between I/Os: a replay that keeps to the log takes 30 s.
SLOW = "0 {f} add\n1 {f} write 0 4096\n10000001 {f} write 4096 4096\n20000001 {f} read 0 4096\n30000001 {f} read 4096 4096\n"


def test_replay_time_scale_and_no_stall_change_the_pace(tmp_path: Path) -> None:
    log = write_log(tmp_path / "in.log", SLOW.format(f=tmp_path / "data"))
    # 1000 %: due at 0, 1, 2 and 3 s — never earlier, and well before 10 s.
    got = replay(log, tmp_path / "fast.log", "--replay_time_scale=1000")
    for (ts, _), due in zip(got, [0, 1_000_000, 2_000_000, 3_000_000]):
        assert due <= ts < due + 7_000_000, got
    got = replay(log, tmp_path / "nostall.log", "--replay_no_stall=1")
    assert len(got) == 4 and got[-1][0] < 7_000_000, got


def test_replay_scale_align_redirect_and_skip(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "in.log",
        "0 /nonexistent/a add\n0 /nonexistent/b add\n1 /nonexistent/a read 1000000 4096\n"
        "2 /nonexistent/b write 8191 512\n3 /nonexistent/a trim 0 4096\n4 /nonexistent/b read 40960 8192\n",
    )
    target = tmp_path / "target"
    opts = [f"--replay_redirect={target}", "--replay_skip=trim", "--replay_no_stall=1"]
    got = [io for _, io in replay(log, tmp_path / "a.log", *opts)]
    t = str(target)
    assert got == [(t, "read", 1000000, 4096), (t, "write", 8191, 512), (t, "read", 40960, 8192)]
    # scale divides, then align rounds down: 1000000/10 = 100000 -> 98304.
    got = [io for _, io in replay(log, tmp_path / "b.log", *opts, "--replay_scale=10", "--replay_align=4k")]
    assert got == [(t, "read", 98304, 4096), (t, "write", 0, 512), (t, "read", 4096, 8192)]
    got = [
        io for _, io in replay(log, tmp_path / "c.log", *opts[:2], "--replay_skip=trim,write", "--replay_no_stall=1")
    ]
    assert [d for _, d, _, _ in got] == ["read", "read"]


def test_sync_lines_are_replayed_after_the_io_before_them(tmp_path: Path) -> None:
    f = tmp_path / "data"
    log = write_log(
        tmp_path / "in.log",
        f"0 {f} add\n1 {f} write 0 4096\n2 {f} write 4096 4096\n3 {f} sync 4096 0\n"
        f"4 {f} write 8192 4096\n5 {f} datasync 0 0\n6 {f} read 0 4096\n",
    )
    out = tmp_path / "out.log"
    replay(log, out, "--replay_no_stall=1")
    acts = [line.split()[2] for line in out.read_text().splitlines()[1:]]
    assert acts == ["add", "open", "write", "write", "sync", "write", "datasync", "read", "close"]
    replay(log, tmp_path / "skip.log", "--replay_no_stall=1", "--replay_skip=sync")
    assert " sync " not in (tmp_path / "skip.log").read_text()


def test_a_bad_log_line_is_one_clear_error(tmp_path: Path) -> None:
    log = write_log(tmp_path / "in.log", "0 /f add\n7 /f write x 4096\n")
    r = iolab_run("--name=r", f"--read_iolog={log}")
    assert r.returncode != 0
    assert f"'{log}' for option 'read_iolog': line 3: offset 'x' is not a whole number" in r.stderr, r.stderr
    log = write_log(tmp_path / "t.log", "0 /f add\n7 /f trim 0 4096\n")
    r = iolab_run("--name=r", "--size=1m", "--numjobs=2", f"--write_iolog={tmp_path / 'w.log'}")
    assert r.returncode != 0 and "numjobs=2" in r.stderr, r.stderr
    r = iolab_run("--name=r", f"--read_iolog={log}", "--replay_align=3000")
    assert r.returncode != 0 and "must be a power of 2" in r.stderr, r.stderr


def test_a_replay_onto_an_nbd_export_sends_the_logs_io_there(tmp_path: Path) -> None:
    log = write_log(tmp_path / "in.log", PACED.format(f="/dev/recorded"))
    sock = tmp_path / "t.sock"
    target = _native.Target(None, ["d=memory,size=64m"], listen=f"unix:{sock}")
    target.start()
    uri = f"nbd+unix:///d?socket={sock}"
    try:
        got = replay(log, tmp_path / "out.log", "--ioengine=nbd", f"--uri={uri}", "--replay_no_stall=1")
    finally:
        target.shutdown()
        target.wait()
    assert [io for _, io in got] == [
        (uri, "write", 0, 4096),
        (uri, "write", 4096, 4096),
        (uri, "read", 0, 4096),
        (uri, "read", 4096, 4096),
    ]


def test_what_the_log_replaces_and_options_without_a_log_are_said(tmp_path: Path) -> None:
    log = write_log(tmp_path / "in.log", PACED.format(f=tmp_path / "data"))
    r = iolab_run("--name=r", f"--read_iolog={log}", "--rw=randwrite", "--bs=8k", "--dry-run")
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert "rw is replaced by what read_iolog's log does" in out and "bs is replaced" in out, out
    assert "rw: sequential, 50% reads" in out and "size: 8192 bytes" in out, out
    r = iolab_run("--name=r", "--size=1m", "--replay_time_scale=50", "--dry-run")
    assert "replay_time_scale has no effect without read_iolog" in r.stdout + r.stderr
