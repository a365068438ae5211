"""``iolab target`` as a subprocess: announce, nbdinfo, stats, signals, errors."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.peers import require_peer
from tests.waits import read_until, wait_until


def wait_for(path: Path, proc: subprocess.Popen[str], timeout_s: float = 20.0) -> None:
    wait_until(path.exists, timeout_s, f"{path} to appear", proc)


def start(iolab_cmd: list[str], tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], Path]:
    sock = tmp_path / "nbd.sock"
    cmd = [*iolab_cmd, "target", "--unix", str(sock), *args]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    wait_for(sock, proc)
    return proc, sock


def stop(proc: subprocess.Popen[str], sig: int = signal.SIGTERM) -> str:
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    return err


def test_nbdinfo_sees_the_exports_and_sigterm_exits_0(iolab_cmd: list[str], tmp_path: Path) -> None:
    nbdinfo = require_peer("nbdinfo")
    proc, sock = start(
        iolab_cmd,
        tmp_path,
        "--export",
        "disk=memory,size=1m",
        "--export",
        "ro=null,size=64m",
        "--read-only",
    )
    try:
        out = subprocess.run(
            [nbdinfo, "--json", f"nbd+unix:///disk?socket={sock}"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    finally:
        err = stop(proc)
    info = json.loads(out)
    exp = info["exports"][0]
    assert exp["export-name"] == "disk"
    assert exp["export-size"] == 1 << 20
    assert exp["is_read_only"] is True
    assert f"listening on unix:{sock}" in err
    assert "export disk: 1 MiB (read-only)" in err
    assert "SIGTERM, shutting down" in err


def test_stats_http_and_sigint(iolab_cmd: list[str], tmp_path: Path) -> None:
    proc, _ = start(
        iolab_cmd,
        tmp_path,
        "--export",
        "m=memory,size=1m",
        "--stats-http",
        "127.0.0.1:0",
        "--pacing",
        "buffers=8,cache=1",
    )
    try:
        assert proc.stderr is not None
        line = read_until(proc, proc.stderr, "stats on", 20)
        url = line.split("stats on ", 1)[1].strip()
        with urllib.request.urlopen(url, timeout=10) as r:
            stats = json.load(r)
    finally:
        stop(proc, signal.SIGINT)
    assert stats["exports"][0]["name"] == "m"
    assert stats["pacing"]["params"]["buffers"] == 8


def test_sigterm_finishes_in_flight_writes(iolab_cmd: list[str], tmp_path: Path) -> None:
    qemu_io = require_peer("qemu-io")
    img = tmp_path / "d.img"
    proc, sock = start(
        iolab_cmd,
        tmp_path,
        "--export",
        f"d=file,path={img},size=4m+delay,write=2s",
    )
    writer = subprocess.Popen(
        [qemu_io, "-f", "raw", "-c", "write -P 0x5a 0 64k", f"nbd+unix:///d?socket={sock}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # The delay counts from when the file has the data: once it is there,
    # the reply is held for 2 s — the write is in flight.
    pattern = b"\x5a" * (64 << 10)
    wait_until(lambda: img.read_bytes()[: 64 << 10] == pattern, 20, "the write to reach the file", proc)
    t0 = time.monotonic()
    stop(proc)
    assert time.monotonic() - t0 < 10
    out, err = writer.communicate(timeout=20)
    assert writer.returncode == 0, out + err
    assert img.read_bytes()[: 64 << 10] == b"\x5a" * (64 << 10)


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (["--export", "m=memory,size=1m,colour=red"], "colour"),
        (["--export", "m=memory,size=1m", "--pacing", "cache=2"], "pacing.buffers"),
        (["--tcp", "8.8.8.8:10809", "--export", "m=memory,size=1m"], "loopback"),
        (["--tcp", "0.0.0.0:10809", "--export", "m=memory,size=1m"], "pass --listen-any"),
        (["--export", "memory,size=1m"], "the export name is missing: write NAME=memory,size=1m"),
        (["--export", "m=memory,size=1m+delay,raed=1ms"], "(delay).raed: unknown key (known here: flush, read,"),
        (["--export", "m=memory,size=1m", "--max-request", "128m"], "--max-request: '128m' is more than"),
        ([], "--export: no exports"),
        (
            ["--export", "m=memory,size=1m", "--conn-io", "epoll"],
            "--conn-io: 'epoll' is not one of auto, uring, threads",
        ),
        (["--export", "m=memory,size=1m", "--zero-copy", "yes"], "--zero-copy: 'yes' is not one of auto, on, off"),
        (
            ["--tcp", "127.0.0.1:0", "--export", "m=memory,size=1m", "--zero-copy", "on"],
            'server.zero_copy: "on" needs a Unix socket listener',
        ),
    ],
)
def test_bad_config_is_one_line_exit_2(iolab_cmd: list[str], tmp_path: Path, args: list[str], key: str) -> None:
    r = subprocess.run([*iolab_cmd, "target", *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert key in lines[0]


def _without_sys_nice() -> list[str]:
    """A command prefix that runs without CAP_SYS_NICE and with no real-time rlimit."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() == 0 and setpriv is None:
        pytest.skip("root and no setpriv to drop CAP_SYS_NICE")
    drop = [setpriv, "--inh-caps=-sys_nice", "--bounding-set=-sys_nice"] if os.geteuid() == 0 else []
    return [*[x for x in drop if x], "prlimit", "--rtprio=0", "--"]


def test_realtime_refused_is_one_line_exit_2(iolab_cmd: list[str], tmp_path: Path) -> None:
    sock = tmp_path / "nbd.sock"
    cmd = [*_without_sys_nice(), *iolab_cmd, "target", "--realtime", "--unix", str(sock), "--export", "m=null,size=1m"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "server.realtime: SCHED_FIFO refused" in lines[0] and "CAP_SYS_NICE" in lines[0]


def test_realtime_where_permitted_serves(iolab_cmd: list[str], tmp_path: Path) -> None:
    r = subprocess.run(["chrt", "-f", "1", "true"], capture_output=True)
    if r.returncode != 0:
        pytest.skip("this host refuses SCHED_FIFO (the refusal is tested above)")
    proc, _ = start(iolab_cmd, tmp_path, "--realtime", "--export", "m=memory,size=1m+delay,read=1ms")
    stop(proc)


@pytest.mark.parametrize(
    "path", [("--conn-io", "uring"), ("--conn-io", "threads"), ("--zero-copy", "on"), ("--zero-copy", "off")]
)
def test_each_receive_and_send_path_serves_verified_writes(
    iolab_cmd: list[str], tmp_path: Path, path: tuple[str, str]
) -> None:
    """``--conn-io``: both receive paths, ``--zero-copy``: spliced and copied replies, carry
    pipelined writes and the reads that verify them."""
    proc, sock = start(iolab_cmd, tmp_path, *path, "--export", "m=memory,size=8m")
    uri = f"nbd+unix:///m?socket={sock}"
    try:
        job = ["run", "--ioengine=nbd", f"--uri={uri}", "--rw=randwrite", "--bs=4k,64k", "--size=8m",
               "--iodepth=32", "--verify=crc32c", "--name=x", "--output-format=fio-json"]  # fmt: skip
        r = subprocess.run([*iolab_cmd, *job], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        j = json.loads(r.stdout)["jobs"][0]
        assert j["error"] == 0 and j["write"]["io_bytes"] == 8 << 20, r.stdout[:2000]
    finally:
        stop(proc)


def test_bad_config_file_names_the_key(iolab_cmd: list[str], tmp_path: Path) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text('pacing = { buffers = 0 }\n[[export]]\nname = "n"\nbackend = "null"\nsize = "1g"\n')
    r = subprocess.run([*iolab_cmd, "target", "--config", str(cfg)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert "pacing" in r.stderr and str(cfg) in r.stderr


def test_flushed_writes_survive_kill_9(iolab_cmd: list[str], tmp_path: Path) -> None:
    qemu_io = require_peer("qemu-io")
    img = tmp_path / "d.img"
    proc, sock = start(iolab_cmd, tmp_path, "--export", f"d=file,path={img},size=4m")
    uri = f"nbd+unix:///d?socket={sock}"
    cmds = ["-c", "write -P 0xa5 0 1m", "-c", "write -P 0x3c 2m 64k", "-c", "flush"]
    try:
        r = subprocess.run([qemu_io, "-f", "raw", *cmds, uri], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "wrote 1048576/1048576 bytes" in r.stdout
    finally:
        proc.kill()  # SIGKILL: no shutdown, no final flush
        proc.communicate(timeout=20)
    assert proc.returncode == -signal.SIGKILL
    data = img.read_bytes()
    assert data[: 1 << 20] == b"\xa5" * (1 << 20)
    assert data[2 << 20 : (2 << 20) + (64 << 10)] == b"\x3c" * (64 << 10)


def _nbdinfo_max_payload(nbdinfo: str, uri: str) -> int:
    out = subprocess.run([nbdinfo, "--json", uri], capture_output=True, text=True, timeout=30, check=True).stdout
    return int(json.loads(out)["exports"][0]["block_size_maximum"])


def test_48_mib_requests_work_against_the_default_64_mib_maximum(iolab_cmd: list[str], tmp_path: Path) -> None:
    nbdinfo = require_peer("nbdinfo")
    proc, sock = start(iolab_cmd, tmp_path, "--export", "big=memory,size=96m")
    uri = f"nbd+unix:///big?socket={sock}"
    try:
        assert _nbdinfo_max_payload(nbdinfo, uri) == 64 << 20
        job = ["run", "--ioengine=nbd", f"--uri={uri}", "--bs=48m", "--size=96m", "--name=x",
               "--output-format=fio-json"]  # fmt: skip
        for rw in ("write", "read"):
            r = subprocess.run([*iolab_cmd, *job, f"--rw={rw}"], capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, r.stderr
            j = json.loads(r.stdout)["jobs"][0][rw]
            assert (j["total_ios"], j["io_bytes"]) == (2, 96 << 20)
    finally:
        stop(proc)


def test_max_request_is_what_nbdinfo_sees(iolab_cmd: list[str], tmp_path: Path) -> None:
    nbdinfo = require_peer("nbdinfo")
    proc, sock = start(iolab_cmd, tmp_path, "--export", "m=memory,size=8m", "--max-request", "1m")
    try:
        assert _nbdinfo_max_payload(nbdinfo, f"nbd+unix:///m?socket={sock}") == 1 << 20
    finally:
        stop(proc)
