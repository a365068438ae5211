"""Nodes as network namespaces (root): the cluster on one machine with a
network between its nodes, as tests/fleet/test_netns.py builds it.

A "switch" namespace holds a bridge; the target gets a namespace of its
own and every node one, each on the bridge through a veth pair
(``10.79.X.1`` the target, ``.2``... the nodes, ``.254`` the switch), so
the machine's own network is never touched. mpiexec runs in the switch
namespace and starts each node's ranks through a launcher agent
(``ip netns exec NODE unshare --uts``: each node has its own host name,
``node0``...), with MPI on TCP over the bridge. The VMs reach the target
over TCP, as the post's VMs reach their storage over the network. The
spools are on the file system every namespace shares, so the live view
reads them as in the local mode. Everything is removed at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from iolab.errors import IolabError
from iolab.fleet.live import ClusterInterval
from iolab.lab.fleet_lab.run import FleetLabSettings, Progress, Ran, _fill, fleet_command, node_by_host, run_fleet
from iolab.lab.fleet_lab.topology import Layout, hosts_table, target_specs

PORT = 10809
#: The target's stats endpoint, on the loopback of its own namespace.
STATS = "127.0.0.1:10810"
#: How long the target may take to bind in its namespace.
TARGET_START_S = 60.0


@dataclass(frozen=True)
class Namespaces:
    prefix: str
    net: str
    nodes: int

    def ns(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def node_ip(self, node: int) -> str:
        return f"{self.net}.{node + 2}"

    @property
    def target_ip(self) -> str:
        return f"{self.net}.1"


def _ip(*args: str) -> None:
    ran = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if ran.returncode != 0:
        raise IolabError(f"ip {' '.join(args)}: {ran.stderr.strip() or f'exit {ran.returncode}'}")


@contextmanager
def namespaces(nodes: int) -> Iterator[Namespaces]:
    """The switch, target and node namespaces, removed on the way out."""
    pid = os.getpid()
    t = Namespaces(f"iolfl{pid % 100000}", f"10.79.{pid % 200 + 20}", nodes)
    names = ["sw", "tgt", *[f"node{k}" for k in range(nodes)]]
    made: list[str] = []
    try:
        for n in names:
            _ip("netns", "add", t.ns(n))
            made.append(t.ns(n))
            _ip("-n", t.ns(n), "link", "set", "lo", "up")
        sw = t.ns("sw")
        _ip("-n", sw, "link", "add", "br0", "type", "bridge")
        _ip("-n", sw, "addr", "add", f"{t.net}.254/24", "dev", "br0")
        _ip("-n", sw, "link", "set", "br0", "up")
        for n, addr in [("tgt", t.target_ip), *[(f"node{k}", t.node_ip(k)) for k in range(nodes)]]:
            _ip(
                "link",
                "add",
                f"v{pid % 10000}-{n}",
                "netns",
                sw,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                t.ns(n),
            )
            _ip("-n", sw, "link", "set", f"v{pid % 10000}-{n}", "master", "br0", "up")
            _ip("-n", t.ns(n), "addr", "add", f"{addr}/24", "dev", "eth0")
            _ip("-n", t.ns(n), "link", "set", "eth0", "up")
        yield t
    finally:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30, check=False)


def agent_script(t: Namespaces) -> str:
    """mpiexec's launcher agent: ``HOST CMD...`` runs CMD in HOST's namespace under the node's own host name."""
    cases = "".join(f"  {t.node_ip(k)}) ns={t.ns(f'node{k}')}; name=node{k};;\n" for k in range(t.nodes))
    return (
        "#!/bin/sh\n# iolab lab fleet: mpiexec launcher agent (HOST CMD... -> CMD in HOST's namespace)\n"
        f'host=$1; shift\ncase "$host" in\n{cases}'
        '  *) echo "unknown host $host" >&2; exit 1;;\nesac\n'
        'exec ip netns exec "$ns" unshare --uts sh -c "hostname $name; $*"\n'
    )


def _iolab(ns: str, *args: str) -> list[str]:
    return ["ip", "netns", "exec", ns, sys.executable, "-m", "iolab.cli.main", *args]


def _start_target(t: Namespaces, specs: list[str], log: Path) -> subprocess.Popen[str]:
    exports = [a for spec in specs for a in ("--export", spec)]
    cmd = _iolab(
        t.ns("tgt"), "target", "--tcp", f"{t.target_ip}:{PORT}", "--listen-any", "--stats-http", STATS, *exports
    )
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()  # "iolab target: listening on ..." once bound
    if "listening" not in first:
        proc.kill()
        proc.wait(timeout=30)
        raise IolabError(f"the target in namespace {t.ns('tgt')} did not start: {first.strip() or 'no message'}")
    log.write_text(first, encoding="utf-8")
    return proc


def target_reset(t: Namespaces) -> str:
    """``POST /reset`` on the target's stats endpoint (from inside its
    namespace): the window that ends now, and a new one starts."""
    code = (
        "import sys, urllib.request as u; "
        f"sys.stdout.write(u.urlopen(u.Request('http://{STATS}/reset', method='POST'), timeout=30).read().decode())"
    )
    ran = subprocess.run(
        ["ip", "netns", "exec", t.ns("tgt"), sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if ran.returncode != 0:
        raise IolabError(f"the target's stats at {STATS} in {t.ns('tgt')}: {ran.stderr.strip().splitlines()[-1:]}")
    return ran.stdout


def run_netns(s: FleetLabSettings, layout: Layout, progress: Progress, show: Callable[[ClusterInterval], None]) -> Ran:
    """The simulated cluster with every node a network namespace."""
    with tempfile.TemporaryDirectory(prefix="iolab-lab-fleet-") as tmp_name, namespaces(layout.nodes) as t:
        tmp = Path(tmp_name)
        target = _start_target(t, target_specs(layout, s.size), tmp / "target.log")
        try:
            uris = [f"nbd://{t.target_ip}:{PORT}/{layout.export_of(r)}" for r in range(s.vms)]

            def fill(args: list[str]) -> None:
                ran = subprocess.run(
                    _iolab(t.ns("sw"), "run", *args), capture_output=True, text=True, timeout=600, check=False
                )
                if ran.returncode != 0:
                    raise IolabError(f"laying out the VMs' files failed: {ran.stderr.strip().splitlines()[-1:]}")

            _fill(uris, progress, fill)
            table = tmp / "hosts.toml"
            table.write_text(hosts_table(uris, s.rates()), encoding="utf-8")
            agent = tmp / "nsagent.sh"
            agent.write_text(agent_script(t), encoding="utf-8")
            agent.chmod(0o755)
            hostfile = tmp / "hosts.txt"
            slots = [len(layout.ranks_of(k)) for k in range(layout.nodes)]
            hostfile.write_text("".join(f"{t.node_ip(k)} slots={n}\n" for k, n in enumerate(slots)), encoding="utf-8")
            mpi = ["--prtemca", "plm_ssh_agent", str(agent), "--prtemca", "oob_tcp_if_include", f"{t.net}.0/24"]
            # every node's daemon shares this machine's /tmp: its session folder goes here, removed with tmp
            mpi += ["--prtemca", "prte_remote_tmpdir_base", str(tmp / "mpi")]
            mpi += ["--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", f"{t.net}.0/24"]
            extra = ["--hostfile", str(hostfile), *[f"--mpiexec-arg={a}" for a in mpi]]
            spool = tmp / "spool"
            cmd = ["ip", "netns", "exec", t.ns("sw"), *fleet_command(s, table, spool, extra)]
            progress(
                f"{s.vms} VMs on {layout.nodes} nodes (network namespaces): {s.seconds:g} s of 512 KiB random read at QD 3"
            )
            target_reset(t)  # the window starts after the layout
            doc, last = run_fleet(cmd, s, spool, node_by_host, show, tmp)
            stats = target_reset(t)
        finally:
            target.terminate()
            target.wait(timeout=30)
    served = [
        f"iolab target at {t.target_ip}:{PORT} in namespace {t.ns('tgt')}: {spec}"
        for spec in target_specs(layout, s.size)
    ]
    return Ran(doc, last, served, node_by_host, stats, tuple(layout.export_of(r) for r in range(s.vms)))


__all__ = ["Namespaces", "agent_script", "namespaces", "run_netns"]
