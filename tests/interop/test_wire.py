"""Wire latency (``iolab run --target-stats``) against a real iolab target.

- Truth of the window: the target counts exactly the client's I/Os.
- Loopback: wire latency stays in a narrow band across QD 1-32 on an export
  whose 2 ms delay layer dominates (as the storage does in seed 000).
- Wire bytes: the NBD-framing formula against the bytes a counting TCP
  proxy moved (the handshake, the same in every run, cancels out).
- Network namespaces joined through a router namespace by veth pairs, then
  a network delay (``tc netem`` where the kernel has it, else the router
  holds the bytes): wire p50 grows by the injected delay within 10 %.
- The CLI: report block, JSON section, wire.json, and its errors.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest
from iolab import _native
from iolab.run.api import Job, run
from iolab.run.wire import wire_section
from iolab.units import fmt_num

from tests.host_load import SPARE_OTHERS_PCT, others_busy_pct
from tests.peers import require_peer
from tests.waits import wait_until

DELAY_NS = 2_000_000


@pytest.fixture
def target() -> Iterator[dict[str, Any]]:
    """An in-process target on loopback TCP: export ``m`` (memory) and
    ``d`` (memory + 2 ms delay), with its stats endpoint."""
    t = _native.Target(
        None,
        ["m=memory,size=16m", "d=memory,size=16m+delay,read=2ms,write=2ms"],
        listen="127.0.0.1:0",
        stats_http="127.0.0.1:0",
    )
    t.start()
    try:
        yield t.addresses()
    finally:
        t.shutdown()
        t.wait()


def _wire(addrs: dict[str, Any], export: str, **opts: Any) -> dict[str, Any]:
    job = Job("w", ioengine="nbd", uri=f"nbd://{addrs['nbd']}/{export}", bs="4k", size="16m", **opts)
    section = wire_section(run(job, target_stats=addrs["stats_http"]))
    assert section is not None
    return section["wire"]


def _p(direction: dict[str, Any], pct: float, key: str = "wire_ns") -> int:
    return int(next(r[key] for r in direction["rows"] if r["percentile"] == pct))


def test_loopback_wire_latency_band_across_queue_depths(target: dict[str, Any]) -> None:
    # The server holds each I/O 2 ms, so the client is far from busy at any
    # QD and what is left — two TCP stacks on loopback, the client's reap,
    # the target's reply path — should not depend on the QD. Measured
    # 30-50 µs at every QD on a 2-core VM with CPU to spare: the band is
    # every p50 under 200 µs, and no two QDs more than 100 µs apart. (A
    # delay timer that spun instead of yielding its CPU pushed the reader
    # and client off it: 30 → 330 µs from QD 1 to 32, caught here; its spin
    # ran in the last stretch of each hold, ~1 % of the process's CPU, so
    # only the latency shows it.)
    #
    # The band is a truth about iolab only where the host has CPU to spare.
    # Beside CPU-bound work the same build reads 17/57/130/235 µs (a
    # fresh-clone run on an overloaded machine) and 18/20/135/336 µs at
    # QD 1/4/16/32 beside two busy loops: each wake-up of the client and
    # of the reply timer waits for a time slice, and at QD 32 replies come
    # in bursts whose reaping a starved client stretches. That is the
    # machine's load, not iolab, so the band is asserted over the runs
    # whose own window (the target's CPU record: the host's busy time less
    # this process's, tests/host_load.py) shows other work kept at most SPARE_OTHERS_PCT of the
    # CPUs busy; load only adds time, so each QD keeps its best of up to
    # five runs. Beside load the same holds for the reply timer: a held
    # reply waits for a CPU too (late p50 ~1.9 ms at QD 4-32 beside two busy
    # loops, recorded by the target's fidelity), so "server p50 within 10 %
    # of the delay" is asserted on those runs alone.
    #
    # What load cannot move is asserted on every run: the counts match, no
    # hold ends early (server p50 >= the delay), and the hold is exactly
    # the delay plus the lateness the target recorded: a reply's latency and
    # its lateness are read at the same instant (conn/write.rs), so server
    # p50 less fidelity's late p50 is the hold, within 2 % of the delay
    # (0.1-2 µs off in every run above, loaded or not: the histograms keep
    # 3 digits, and the hold starts a few µs after the request is read). A
    # delay layer holding the wrong time, or a late reply the fidelity
    # record missed, fails here on any machine.
    p50: dict[int, int] = {}
    server: dict[int, int] = {}
    others: dict[int, list[float]] = {}
    for qd in (1, 4, 16, 32):
        for _ in range(5):
            w = _wire(target, "d", rw="randread", iodepth=qd, time_based=True, runtime="500ms")
            e = w["exports"][0]
            d = e["directions"]["read"]
            assert d["ios_match"] and d["client_ios"] == d["server_ios"] > 0, d
            s50 = _p(d, 50.0, "server_ns")
            assert s50 >= DELAY_NS, d
            assert abs(s50 - e["fidelity"]["late_ns_p50"] - DELAY_NS) <= 0.02 * DELAY_NS, (s50, e["fidelity"])
            busy = others_busy_pct(w["server_cpu"])
            others.setdefault(qd, []).append(round(busy, 1))
            if busy > SPARE_OTHERS_PCT:
                continue
            server[qd] = min(server.get(qd, s50), s50)
            p50[qd] = min(p50.get(qd, _p(d, 50.0)), _p(d, 50.0))
            if p50[qd] <= 100_000 and server[qd] <= 1.1 * DELAY_NS:
                break
    print(f"loopback wire p50 by QD (ns), runs with CPU to spare: {p50}; others' CPU % per run: {others}")
    if len(p50) < 4:
        # Every run of some QD had the host's CPUs taken by other work:
        # the band cannot tell iolab from the load there (the checks above
        # still ran on every run).
        return
    assert all(v <= 1.1 * DELAY_NS for v in server.values()), server
    assert all(0 < v < 200_000 for v in p50.values()), p50
    assert max(p50.values()) - min(p50.values()) <= 100_000, p50


def test_held_replies_lateness_comes_with_the_wire_section(target: dict[str, Any]) -> None:
    # The 2 ms export: every reply was held, and none went out early; the
    # memory export held none, so it has no record.
    d = _wire(target, "d", rw="randread", iodepth=4, number_ios=64)["exports"][0]
    f = d["fidelity"]
    assert f["held"] == d["directions"]["read"]["server_ios"] == 64, f
    assert 0 <= f["late_ns_p50"] <= f["late_ns_p99"] <= f["late_ns_max"], f
    assert _wire(target, "m", rw="randread", number_ios=64)["exports"][0]["fidelity"] is None


def test_counts_at_both_ends_and_server_cpu(target: dict[str, Any]) -> None:
    w = _wire(target, "m", rw="randrw", iodepth=8, fsync=16)
    e = w["exports"][0]
    r, wr = e["directions"]["read"], e["directions"]["write"]
    assert (r["client_ios"], wr["client_ios"]) == (r["server_ios"], wr["server_ios"])
    assert r["client_ios"] + wr["client_ios"] == 4096 and w["ios_match"]
    assert e["client_syncs"] == e["server_flushes"] > 0
    cpu = w["server_cpu"]
    assert cpu["ios"] == 4096 and cpu["bytes"] == 16 << 20
    assert cpu["proc_cpu_pct"] > 0 and cpu["cycles_per_byte"] > 0


def test_trims_are_counted_at_both_ends(target: dict[str, Any]) -> None:
    e = _wire(target, "m", rw="randtrimwrite", iodepth=4)["exports"][0]
    t, wr = e["directions"]["trim"], e["directions"]["write"]
    assert t["client_ios"] == t["server_ios"] == wr["client_ios"] == wr["server_ios"] == 4096
    assert t["ios_match"] and "read" not in e["directions"]


class CountingProxy:
    """Forwards TCP to ``upstream`` and counts the bytes each way."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.addr = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.counts = {"to_target": 0, "from_target": 0}
        self.lock = threading.Lock()
        self.open = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            with self.lock:
                self.open += 2
            for a, b, key in ((client, server, "to_target"), (server, client, "from_target")):
                threading.Thread(target=self._pump, args=(a, b, key), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, key: str) -> None:
        while data := src.recv(1 << 16):
            dst.sendall(data)
            with self.lock:
                self.counts[key] += len(data)
        dst.shutdown(socket.SHUT_WR)
        with self.lock:
            self.open -= 1

    def take(self) -> dict[str, int]:
        """The counts once every connection has closed; then zero them."""
        wait_until(lambda: self.open == 0, 10, "every proxied connection to close")
        with self.lock:
            assert self.open == 0, "connections still open"
            out, self.counts = self.counts, {"to_target": 0, "from_target": 0}
        return out


def test_wire_bytes_match_socket_counts(target: dict[str, Any]) -> None:
    proxy = CountingProxy(target["nbd"])
    rest = []
    for size, size_bytes in (("1m", 1 << 20), ("3m", 3 << 20)):
        job = Job("b", ioengine="nbd", uri=f"nbd://{proxy.addr}/m", rw="randrw", bs="4k", size=size, iodepth=4)
        section = wire_section(run(job, target_stats=target["stats_http"]))
        assert section is not None
        b = section["wire"]["exports"][0]["bytes"]
        seen = proxy.take()
        assert b["payload_bytes"] == size_bytes
        rest.append((seen["to_target"] - b["to_target_wire_bytes"], seen["from_target"] - b["from_target_wire_bytes"]))
    # What the formula leaves out (probe and worker handshakes, NBD_CMD_DISC)
    # is the same whatever the number of I/Os, and small.
    assert rest[0] == rest[1], rest
    assert all(0 < x < 4096 for x in rest[0]), rest


def test_cli_prints_and_stores_the_wire_section(
    target: dict[str, Any], cli: Callable[..., Any], tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    uri = f"--uri=nbd://{target['nbd']}/m"
    r = cli("run", "--ioengine=nbd", uri, "--rw=randread", "--size=1m", "--name=x",
            f"--target-stats={target['stats_http']}", "-o", str(out), "--output-format=json",
            "--results", str(tmp_path / "res"))  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "wire latency vs iolab target" in r.stdout and "wire (" in r.stdout
    assert "derived from NBD framing" in r.stdout and "server CPU: process" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["nbd_target"]["wire"]["exports"][0]["directions"]["read"]["server_ios"] == 256
    # The server's c/B is the privileged one (sys+irq+softirq of all CPUs), and says so: beside
    # "cycles per I/O ... (system), ... (process)" a bare "c/B" read as one of those per byte.
    c = doc["nbd_target"]["wire"]["server_cpu"]
    assert f"; c/B (privileged cycles per byte) {fmt_num(c['cycles_per_byte'])}\n" in r.stdout, r.stdout
    (run_dir,) = (tmp_path / "res").glob("run-*")
    assert json.loads((run_dir / "wire.json").read_text()) == doc["nbd_target"]


@pytest.mark.parametrize(
    ("args", "status", "words"),
    [
        (["--ioengine=null", "--size=1m"], 2, "ioengine=null"),
        (["--ioengine=nbd", "--uri=nbd://127.0.0.1:1/m", "--ramp_time=1s", "--runtime=2s"], 2, "ramp_time"),
        (["--ioengine=nbd", "--uri=nbd://127.0.0.1:1/m"], 1, "Connection refused"),
    ],
)
def test_cli_errors_name_the_option(cli: Callable[..., Any], args: list[str], status: int, words: str) -> None:
    r = cli("run", *args, "--rw=read", "--name=x", "--target-stats=127.0.0.1:1")
    assert r.exit_code == status, r.output
    assert "--target-stats" in r.stderr and words in r.stderr, r.output


def test_no_server_at_the_uri_says_what_to_start(cli: Callable[..., Any], tmp_path: Path) -> None:
    # Session 12, a fio user's first hour: "cannot connect to 127.0.0.1:1: Connection refused" said
    # what failed but not what to do.
    r = cli("run", "--ioengine=nbd", "--uri=nbd://127.0.0.1:1/m", "--rw=read", "--name=x", "--size=1m")
    assert r.exit_code == 1, r.output
    assert (
        "cannot connect to 127.0.0.1:1: Connection refused (os error 111); start an NBD server there first "
        "(iolab's own: iolab target --tcp 127.0.0.1:1 --export 'm=memory,size=1g' &) or correct --uri"
    ) in r.stderr, r.output
    sock = tmp_path / "none.sock"
    r = cli("run", "--ioengine=nbd", f"--uri=nbd+unix:///?socket={sock}", "--rw=read", "--name=x", "--size=1m")
    assert f"iolab target --unix {sock} --export 'd=memory,size=1g' &" in r.stderr, r.output


def test_cli_refuses_a_url_that_is_not_an_iolab_target(target: dict[str, Any], cli: Callable[..., Any]) -> None:
    r = cli("run", "--ioengine=nbd", f"--uri=nbd://{target['nbd']}/nosuch", "--rw=read", "--name=x",
            f"--target-stats={target['stats_http']}")  # fmt: skip
    assert r.exit_code == 1 and "--target-stats" in r.stderr and "no export 'nosuch'" in r.stderr, r.output


# ---- network namespaces, netem or a delaying router ----
#
# Three namespaces: the target (10.213.0.1), a router and the client
# (10.213.1.2), joined by veth pairs. The router relays the NBD port and
# the stats port (tests/interop/delay_router.py). The injected network
# delay is ``tc netem`` on the router's veths where the kernel has
# sch_netem; where it has not (this workplace's kernels: "Specified qdisc
# kind is unknown"), the router itself holds each chunk for the delay. The
# baseline goes through the same router without delay either way.

ROUTER = Path(__file__).with_name("delay_router.py")
NBD_PORT, STATS_PORT = 10809, 10810


def _unavailable(why: str) -> None:
    """Skip here, fail under CI=true (CI runs as root with iproute2 installed)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(why + " (CI=true: this must work there)")
    pytest.skip(why)


def _sh(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


@pytest.fixture
def netns_trio() -> Iterator[tuple[str, str, str]]:
    """``(target_ns, router_ns, client_ns)``: target 10.213.0.1 (wt0) ↔
    router 10.213.0.254 (wr0); router 10.213.1.254 (wr1) ↔ client
    10.213.1.2 (wc0). Removed afterwards."""
    ip = require_peer("ip")
    tag = f"iolabw{os.getpid()}"
    ns_t, ns_r, ns_c = f"{tag}t", f"{tag}r", f"{tag}c"
    steps = [[ip, "netns", "add", ns] for ns in (ns_t, ns_r, ns_c)]
    for a_ns, a_dev, a_ip, b_dev, b_ip in (
        (ns_t, "wt0", "10.213.0.1/24", "wr0", "10.213.0.254/24"),
        (ns_c, "wc0", "10.213.1.2/24", "wr1", "10.213.1.254/24"),
    ):
        steps += [
            [ip, "link", "add", a_dev, "netns", a_ns, "type", "veth", "peer", "name", b_dev, "netns", ns_r],
            [ip, "-n", a_ns, "addr", "add", a_ip, "dev", a_dev],
            [ip, "-n", ns_r, "addr", "add", b_ip, "dev", b_dev],
            [ip, "-n", a_ns, "link", "set", a_dev, "up"],
            [ip, "-n", ns_r, "link", "set", b_dev, "up"],
        ]
    # A process reaches its own namespace's addresses over lo: the target's
    # stats endpoint wakes its accept loop that way at shutdown.
    steps += [[ip, "-n", ns, "link", "set", "lo", "up"] for ns in (ns_t, ns_r, ns_c)]
    try:
        for step in steps:
            r = _sh(*step)
            if r.returncode != 0:
                _unavailable(f"network namespaces/veth unavailable ({' '.join(step[1:4])}: {r.stderr.strip()})")
        yield ns_t, ns_r, ns_c
    finally:
        for ns in (ns_t, ns_r, ns_c):
            _sh(ip, "netns", "del", ns)


def _in_ns(ns: str, *args: str) -> list[str]:
    return ["ip", "netns", "exec", ns, sys.executable, *args]


def _started(cmd: list[str], banner: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stream = proc.stderr if banner == "listening on" else proc.stdout
    assert stream is not None
    line = stream.readline()
    if banner not in line:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"{cmd[4:]} did not start: {line}{err}")
    return proc


def _stop(proc: subprocess.Popen[str]) -> str:
    """Terminate ``proc``; what it printed on stdout since it started."""
    proc.terminate()
    try:
        out, _ = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out


def _router_late_ns(out: str) -> int:
    """The router's own lateness from its last line (delay_router.py): the
    sum over the directions it held of their p75 late time, ns. A read at
    QD 1 crosses each direction once, so the p50 of its round trip's holds
    is at most the delays plus this sum."""
    report = json.loads(out.strip().splitlines()[-1])
    return sum(int(d["late_ns_p75"]) for d in report.values())


def _router(ns_r: str, up_ns: int, down_ns: int) -> subprocess.Popen[str]:
    """The relay: NBD with the given delays, stats without."""
    args = [f"10.213.1.254:{NBD_PORT}", f"10.213.0.1:{NBD_PORT}", str(up_ns), str(down_ns)]
    args += [f"10.213.1.254:{STATS_PORT}", f"10.213.0.1:{STATS_PORT}", "0", "0"]
    return _started(_in_ns(ns_r, str(ROUTER), *args), "listening")


def _wire_p50_through_router(ns_c: str, tmp_path: Path) -> int:
    out = tmp_path / "w.json"
    cmd = _in_ns(ns_c, "-m", "iolab.cli.main", "run", "--ioengine=nbd", f"--uri=nbd://10.213.1.254:{NBD_PORT}/m",
                 "--rw=randread", "--bs=4k", "--size=16m", "--iodepth=1", "--time_based", "--runtime=1s",
                 "--name=x", f"--target-stats=10.213.1.254:{STATS_PORT}", "-o", str(out),
                 "--output-format=json")  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())["nbd_target"]["wire"]["exports"][0]["directions"]["read"]
    assert d["ios_match"], d
    return _p(d, 50.0)


def _has_netem(ns_r: str, tc: str) -> bool:
    r = _sh("ip", "netns", "exec", ns_r, tc, "qdisc", "add", "dev", "wr0", "root", "netem", "delay", "0ms")
    if r.returncode == 0:
        _sh("ip", "netns", "exec", ns_r, tc, "qdisc", "del", "dev", "wr0", "root")
        return True
    return False


def test_network_delay_adds_to_wire_latency(netns_trio: tuple[str, str, str], tmp_path: Path) -> None:
    tc = require_peer("tc")
    ns_t, ns_r, ns_c = netns_trio
    target = _started(_in_ns(ns_t, "-m", "iolab.cli.main", "target", "--tcp", f"10.213.0.1:{NBD_PORT}",
                             "--stats-http", f"10.213.0.1:{STATS_PORT}", "--listen-any",
                             "--export", "m=memory,size=16m"), "listening on")  # fmt: skip
    netem = _has_netem(ns_r, tc)
    router = _router(ns_r, 0, 0)
    try:
        base = _wire_p50_through_router(ns_c, tmp_path)
        print(f"wire p50 through the router, no delay: {base} ns; injector: {'netem' if netem else 'router'}")
        # First the client → target direction only, then both: a read's
        # round trip crosses each direction once.
        #
        # The wire p50 is never below the delay (1 % for the histogram's
        # buckets: a hold is never short, so a wire figure that lost part of
        # the delay fails; a lower bound on the growth would also have to
        # hold against a baseline that load inflated), and it grows by the
        # delay within 10 % plus at most what the injector itself was late
        # (P(up late > its p75) + P(down late > its p75) <= 1/2). netem's is
        # the kernel's, 0 here. The router is a Python process whose threads
        # wait for a CPU on a loaded machine (beside two busy loops the
        # both-ways growth once read 6.0 ms for 4 ms, when it held from the
        # moment it read a chunk): it now holds from the kernel's receive
        # time and reports how late it wrote. A wire figure that counted a
        # hold twice still fails unless the router was that late itself.
        for up_ns, down_ns in ((DELAY_NS, 0), (DELAY_NS, DELAY_NS)):
            if netem:
                for dev, ns in (("wr0", up_ns), ("wr1", down_ns)):
                    if ns:
                        r = _sh("ip", "netns", "exec", ns_r, tc, "qdisc", "replace", "dev", dev, "root", "netem",
                                "delay", f"{ns // 1000}us")  # fmt: skip
                        assert r.returncode == 0, r.stderr
            else:
                _stop(router)
                router = _router(ns_r, up_ns, down_ns)
            expected_ns = up_ns + down_ns
            grown = _wire_p50_through_router(ns_c, tmp_path) - base
            late_ns = 0 if netem else _router_late_ns(_stop(router))
            print(
                f"delay {up_ns} ns up, {down_ns} ns down: wire p50 grew by {grown} ns "
                f"(expected {expected_ns} ns; the injector's own p75 lateness {late_ns} ns)"
            )
            assert base + grown >= 0.99 * expected_ns, (base, grown, expected_ns)
            assert grown <= 1.1 * expected_ns + late_ns, (grown, expected_ns, late_ns)
    finally:
        _stop(router)
        _stop(target)
