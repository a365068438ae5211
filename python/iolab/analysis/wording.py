"""Figures as words in findings: every number with its unit.

Findings quote the figures behind them; these helpers keep the units
explicit and the precision honest (about three significant digits, binary
prefixes for bytes, one latency unit chosen per value). The unit
formatters are :mod:`iolab.units`' (under the short names findings use);
this module adds only the wording of percentages and points.
"""

from __future__ import annotations

from iolab.analysis.model import Point, Scalar
from iolab.units import fmt_bytes_per_s as bytes_per_s
from iolab.units import fmt_iops as iops
from iolab.units import fmt_ns as ns
from iolab.units import fmt_sig3 as num
from iolab.units import fmt_size as size

__all__ = ["bytes_per_s", "iops", "label", "ns", "num", "pct", "signed_pct", "size", "value", "virtualization"]

#: systemd-detect-virt's container kinds (``--list``): a container shares its host's kernel, it is no VM.
CONTAINERS = frozenset(
    ("docker", "podman", "lxc", "lxc-libvirt", "systemd-nspawn", "rkt", "wsl", "proot", "pouch", "openvz",
     "container-other")
)  # fmt: skip


def pct(x: float) -> str:
    return f"{num(x)}%"


def signed_pct(x: float) -> str:
    return ("+" if x >= 0 else "") + f"{num(x)}%"


def value(v: Scalar) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def label(point: Point) -> str:
    """A point named as the tables and charts name its row: its parameters
    (``"iodepth=32 bs=4k"``; one without effect, "-", left out), else, in a
    run without axes, its job's name (``"rand-write-4k-qd1"``). Never its
    index: no table shows one (and fio's groups count from 0, plans from 1).
    A point with a ``job`` axis is named by its job alone (``iolab quick``'s
    table names its rows so)."""
    if point.params.get("job") not in (None, "", "-"):
        return value(point.params["job"])
    params = " ".join(f"{k}={value(v)}" for k, v in point.params.items() if v != "-")
    if params:
        return params
    return point.samples[0].label if point.samples else f"point {point.index}"


def virtualization(kind: object) -> str:
    """systemd-detect-virt's answer in words: "a docker container", "a kvm VM"; "" for none or unknown."""
    if not kind or kind == "none":
        return ""
    return f"a {kind} container" if kind in CONTAINERS else f"a {kind} VM"
