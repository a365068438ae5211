"""Tier 2: hosts as network namespaces (root), seed 004's topology.

Three namespaces on a bridge (itself in a fourth, "switch" namespace, so
the machine's own network is never touched): a target namespace serving
16 null exports with ``iolab target`` over TCP, and two initiator
namespaces. mpiexec runs in the switch namespace and places one rank in
each initiator namespace through a launcher agent script
(``ip netns exec NS unshare --uts``: each "host" gets its own host name);
MPI is forced onto TCP over the bridge. A host is cut off by taking its
link down. Needs root and ip(8); under CI=true a missing one fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from peers import require_peer

from .faults import RUN_LIMIT_S, run_with_fault
from .test_mpi import NULL_JOB, _require_mpi

NET = "10.77.{n}"
NBD_FRAMING_BYTES = 28 + 16


@dataclass
class Topology:
    prefix: str
    net: str
    agent: Path
    hostfile: Path
    target: subprocess.Popen[str]

    def ns(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def fleet(self, tmp: Path, *args: str) -> list[str]:
        mpi = ["--prtemca", "plm_ssh_agent", str(self.agent), "--prtemca", "oob_tcp_if_include", f"{self.net}.0/24"]
        mpi += ["--prtemca", "prte_remote_tmpdir_base", str(tmp / "mpi")]  # the daemons share this machine's /tmp
        mpi += ["--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", f"{self.net}.0/24"]
        cmd = ["ip", "netns", "exec", self.ns("sw"), sys.executable, "-m", "iolab.cli.main", "fleet", "-n", "2"]
        cmd += ["--hostfile", str(self.hostfile), *[f"--mpiexec-arg={a}" for a in mpi]]
        return [*cmd, *args]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def topo(tmp_path: Path) -> Iterator[Topology]:
    _require_mpi()
    if os.geteuid() != 0:
        msg = "network namespaces need root"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + " (CI=true)")
        pytest.skip(msg)
    require_peer("ip")
    prefix = f"iolf{os.getpid() % 100000}"
    net = NET.format(n=os.getpid() % 200 + 20)
    names = ["sw", "tgt", "h1", "h2"]
    made: list[str] = []
    target = None
    try:
        for n in names:
            _ip("netns", "add", f"{prefix}-{n}")
            made.append(f"{prefix}-{n}")
            _ip("-n", f"{prefix}-{n}", "link", "set", "lo", "up")
        sw = f"{prefix}-sw"
        _ip("-n", sw, "link", "add", "br0", "type", "bridge")
        _ip("-n", sw, "addr", "add", f"{net}.254/24", "dev", "br0")
        _ip("-n", sw, "link", "set", "br0", "up")
        for i, n in enumerate(["tgt", "h1", "h2"], start=1):
            ns = f"{prefix}-{n}"
            _ip("link", "add", f"v-{n}", "netns", sw, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("-n", sw, "link", "set", f"v-{n}", "master", "br0", "up")
            _ip("-n", ns, "addr", "add", f"{net}.{i}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
        agent = tmp_path / "nsagent.sh"
        agent.write_text(
            "#!/bin/sh\n# mpiexec launcher agent: HOST CMD... -> CMD in HOST's namespace, own host name\n"
            'host=$1; shift\ncase "$host" in\n'
            f"  {net}.2) ns={prefix}-h1;;\n  {net}.3) ns={prefix}-h2;;\n"
            '  *) echo "unknown host $host" >&2; exit 1;;\nesac\n'
            'exec ip netns exec "$ns" unshare --uts sh -c "hostname $ns; $*"\n'
        )
        agent.chmod(0o755)
        hostfile = tmp_path / "hosts.txt"
        hostfile.write_text(f"{net}.2 slots=1\n{net}.3 slots=1\n")
        exports = [a for i in range(16) for a in ("--export", f"e{i}=null,size=1g")]
        serve = ["target", "--tcp", f"{net}.1:10809", "--listen-any", *exports]
        target = subprocess.Popen(
            ["ip", "netns", "exec", f"{prefix}-tgt", sys.executable, "-m", "iolab.cli.main", *serve],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert target.stdout is not None
        first = target.stdout.readline()  # "iolab target: listening on ..." once bound
        assert "listening" in first, first
        yield Topology(prefix, net, agent, hostfile, target)
    finally:
        if target is not None:
            target.terminate()
            target.wait(timeout=30)
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30, check=False)


def _hosts_table(tmp: Path, topo: Topology) -> Path:
    t = tmp / "hosts.toml"
    t.write_text(
        f'[[host]]\nrank = 0\nuri = "nbd://{topo.net}.1:10809/e0"\n\n[[host]]\nrank = 1\nuri = "nbd://{topo.net}.1:10809/e1"\n'
    )
    return t


def test_seed004_two_initiators_wire_exceeds_payload_by_the_framing(topo: Topology, tmp_path: Path) -> None:
    table = _hosts_table(tmp_path, topo)
    for qd in (8, 64):
        job = ["--name=initiator", "--ioengine=nbd", "--rw=randread", "--bs=128k", f"--iodepth={qd}"]
        job += ["--time_based", "--runtime=2", "--output-format=json", f"--fleet-spool={tmp_path / 'spool'}"]
        cmd = topo.fleet(tmp_path, "--hosts", str(table), "run", *job)
        ran = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_LIMIT_S, check=False)
        assert ran.returncode == 0, ran.stderr[-3000:]
        doc = json.loads(ran.stdout)
        rows = {r["host"]: r for r in doc["table"]}
        assert set(rows) == {topo.ns("h1"), topo.ns("h2"), "Total"}, rows.keys()
        tot = rows["Total"]
        assert tot["ios"] == rows[topo.ns("h1")]["ios"] + rows[topo.ns("h2")]["ios"] > 0
        # every request costs its header and reply on the wire, and nothing else differs
        assert tot["wire_bytes"] - tot["bytes"] == tot["ios"] * NBD_FRAMING_BYTES
        assert tot["wire_bw_bytes_per_s"] > tot["bw_bytes_per_s"]
        assert doc["clock"]["ranks"][1]["round_trip_ns"] > 0


def test_a_host_cut_off_ends_the_run_named_incomplete(topo: Topology, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    interval_s, deadline_s = 1.0, 3.0
    cmd = topo.fleet(tmp_path, "--deadline", f"{deadline_s:g}s", "run", *NULL_JOB, "--runtime=60")
    cmd += ["--output-format=json", f"--fleet-spool={spool}"]
    ended = run_with_fault(cmd, spool, 1, lambda _: _ip("-n", topo.ns("sw"), "link", "set", "v-h2", "down"))
    out, err, took = ended.out, ended.err, ended.took_s
    assert ended.returncode == 4, err[-3000:]
    # two intervals + the deadline; then up to 2 s for mpiexec, which waits
    # on the cut host's daemon, and slack for a loaded 2-core machine
    assert took <= 2 * interval_s + deadline_s + 2.0 + 10.0, took
    assert f"{topo.ns('h2')} (rank 1) lost" in err
    doc = json.loads(out)
    assert doc["incomplete"] is True
    assert {h["rank"]: h["state"] for h in doc["hosts"]} == {0: "complete", 1: "lost"}
