"""The small-scale cluster of ``iolab lab fleet``: which VM (rank) sits on
which node, the exports the target serves, and the hosts table that gives
each VM its export and its QoS limit.

As in the post, every node owns one 3-way mirror (there a Storage Spaces
virtual disk over NVMe; here ``raid1`` of three ``sim-ssd``), and the VMs
of a node keep their files on it: the node's mirror is split into one part
per VM, each part an export (``n0v0``, ``n0v1``, ... — node 0's VMs 0, 1).
VMs are spread over the nodes in contiguous blocks (8 VMs on 4 nodes: 2
each), as VM Fleet places 20 per node.

Each VM's QoS limit is a ``rate_iops`` of its own (Storage QoS limits are
IOPS): the lowest is ``limit_iops``, and they rise by ``limit_iops / N``
per VM (at least 1), so no two VMs share a limit and a limit that leaked from one VM to
another would show.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from iolab import _native
from iolab.errors import JobError
from iolab.lab.fleet_lab.post import POST_BS_BYTES, POST_PER_VM_BYTES_PER_S

#: Copies of every mirror (the post's 3-way mirror).
MIRROR_COPIES = 3
#: The simulated SSD of every mirror: MQSim's NAND timing (docs/simulation.md);
#: op and pages_per_block only make a device of a few MiB valid for GC (each
#: plane must have 4 spare blocks; the lab never overwrites, so GC never runs).
MEMBER = "sim-ssd(capacity={capacity},op=1.0,pages_per_block=4)"
#: The smallest VM file those keys allow on a node of one VM.
MIN_VM_SIZE_BYTES = 4 << 20
DEFAULT_VMS = 8
DEFAULT_NODES = 4
#: The lowest VM's limit: 60 x 512 KiB/s = 31.5 MB/s, 1/31.8 of the post's 1 GB/s per VM.
DEFAULT_LIMIT_IOPS = 60
DEFAULT_VM_SIZE = "32m"
QUICK_VM_SIZE = "16m"
#: The post gives no duration; a minute is VM Fleet's usual sweep step.
FULL_RUNTIME_S = 60.0
QUICK_RUNTIME_S = 10.0


@dataclass(frozen=True)
class Layout:
    """VMs on nodes: ``node_of[rank]`` and each VM's part of its node's mirror."""

    vms: int
    nodes: int

    def node_of(self, rank: int) -> int:
        return rank * self.nodes // self.vms

    def ranks_of(self, node: int) -> list[int]:
        return [r for r in range(self.vms) if self.node_of(r) == node]

    def part_of(self, rank: int) -> int:
        return self.ranks_of(self.node_of(rank)).index(rank)

    def export_of(self, rank: int) -> str:
        return f"n{self.node_of(rank)}v{self.part_of(rank)}"

    def node_name(self, node: int) -> str:
        return f"node{node}"


def check_layout(vms: int, nodes: int) -> Layout:
    """A layout, or a ``JobError`` that says what to give."""
    if nodes < 2:
        raise JobError(f"--nodes {nodes}: a cluster needs at least two nodes")
    if vms < nodes:
        raise JobError(f"--vms {vms}: fewer VMs than nodes ({nodes}); give at least one VM per node")
    return Layout(vms, nodes)


def limits(vms: int, limit_iops: int) -> list[int]:
    """Each VM's QoS limit (IOPS): ``limit_iops`` rising by ``limit_iops / vms``
    per VM (rounded down), and by at least 1, so that no two VMs share one."""
    return [limit_iops + max(i * limit_iops // vms, i) for i in range(vms)]


def bandwidth_factor(limit_iops: int, bs_bytes: int = POST_BS_BYTES) -> float:
    """The stated scale of bandwidth: the lowest VM's limit over the post's
    floor of 1 GB/s per VM (every VM's limit is at least the lowest, so a
    VM that holds its limit meets the scaled floor)."""
    return limit_iops * bs_bytes / POST_PER_VM_BYTES_PER_S


def target_specs(layout: Layout, vm_size: str) -> list[str]:
    """One compact export spec per node: its 3-way mirror split into one part per VM."""
    size = _native.parse_size(vm_size)
    out = []
    for node in range(layout.nodes):
        parts = len(layout.ranks_of(node))
        member = MEMBER.format(capacity=size * parts)
        out.append(f"n{node}v=raid1,members={MIRROR_COPIES},member={member},split={parts}")
    return out


def hosts_table(uris: list[str], rates: Optional[list[int]]) -> str:
    """The hosts table (TOML, docs/fleet.md): each rank its URI and its limit."""
    lines = ["# iolab lab fleet: each VM (rank) its own export and QoS limit", ""]
    for rank, uri in enumerate(uris):
        lines += ["[[host]]", f"rank = {rank}", f'uri = "{uri}"']
        if rates is not None:
            lines.append(f"rate_iops = {rates[rank]}")
        lines.append("")
    return "\n".join(lines)


def hostfile_hosts(path: Path) -> list[tuple[str, int]]:
    """An Open MPI hostfile's hosts and slots (``host slots=N``; comments and
    blank lines skipped); a ``JobError`` for one that names fewer than two."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise JobError(f"--hostfile {path}: {e.strerror or e}") from None
    hosts: dict[str, int] = {}
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        slots = 1
        for w in words[1:]:
            key, _, value = w.partition("=")
            if key in ("slots", "max_slots") and value.isdigit():
                slots = int(value)
        hosts[words[0]] = hosts.get(words[0], 0) + slots
    if len(hosts) < 2:
        named = f"one host ({next(iter(hosts))})" if hosts else "no host"
        raise JobError(f"--hostfile {path}: names {named}; a cluster needs at least two nodes: list two or more hosts")
    return list(hosts.items())


__all__ = [
    "DEFAULT_LIMIT_IOPS",
    "DEFAULT_NODES",
    "DEFAULT_VMS",
    "MIN_VM_SIZE_BYTES",
    "MIRROR_COPIES",
    "Layout",
    "bandwidth_factor",
    "check_layout",
    "hostfile_hosts",
    "hosts_table",
    "limits",
    "target_specs",
]
