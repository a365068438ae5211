"""Facts about the host a run measured, for a self-describing result directory.

``host_facts(path)``: CPU model and cores, cpufreq governors, memory, kernel, whether it is a
virtual machine (``systemd-detect-virt``, else the cpuinfo ``hypervisor``
flag), and for ``path`` the filesystem and device under it (from
``/proc/self/mountinfo`` and ``/sys/dev/block``) with its I/O scheduler.
A fact that cannot be read is ``None`` — never guessed.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any, Optional

Json = dict[str, Any]


def _read(path: str) -> Optional[str]:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _cpu() -> Json:
    info = _read("/proc/cpuinfo") or ""
    model = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("model name")), None)
    flags = next((ln.split(":", 1)[1].split() for ln in info.splitlines() if ln.startswith("flags")), [])
    return {
        "model": model,
        "logical_cores": os.cpu_count(),
        "hypervisor_flag": "hypervisor" in flags,
        "scaling_governors": scaling_governors(),
    }


def scaling_governors(root: Path = Path("/sys/devices/system/cpu")) -> Optional[list[str]]:
    """The cpufreq governors in use (distinct, sorted); None where the kernel
    exposes no cpufreq (many VMs): whether the clock varies is then unknown."""
    found = {g.strip() for p in sorted(root.glob("cpu[0-9]*/cpufreq/scaling_governor")) if (g := _read(str(p)))}
    return sorted(found) or None


def _memory_bytes() -> Optional[int]:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return None


def _virt(hypervisor_flag: bool) -> Json:
    tool = shutil.which("systemd-detect-virt")
    if tool is not None:
        done = subprocess.run([tool], capture_output=True, text=True, timeout=5, check=False)
        kind = done.stdout.strip() or "none"
        return {"virtualized": kind != "none", "kind": kind, "source": "systemd-detect-virt"}
    return {"virtualized": hypervisor_flag, "kind": None, "source": "/proc/cpuinfo hypervisor flag"}


def _mount_of(dev: str) -> Json:
    """The mountinfo entry whose ``major:minor`` is ``dev`` (the last one wins:
    the one mounted on top)."""
    found: Json = {}
    for line in (_read("/proc/self/mountinfo") or "").splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 2 and fields[2] == dev:
            found = {"mount_point": fields[4], "fstype": tail[0], "source": tail[1]}
    return found


def _block(dev: str) -> Json:
    """Device name, size and I/O scheduler of a block device (a partition
    reports its disk's queue)."""
    sys_dir = Path(f"/sys/dev/block/{dev}")
    if not sys_dir.exists():
        return {"device": None, "scheduler": None}
    real = sys_dir.resolve()
    disk = real.parent if (real / "partition").exists() else real
    sched_text = _read(str(disk / "queue" / "scheduler"))
    scheduler = None
    if sched_text:
        picked = [w for w in sched_text.split() if w.startswith("[")]
        scheduler = picked[0].strip("[]") if picked else sched_text.strip()
    rotational = _read(str(disk / "queue" / "rotational"))
    model = _read(str(disk / "device" / "model"))
    return {
        "device": real.name,
        "disk": disk.name,
        "scheduler": scheduler,
        "rotational": None if rotational is None else rotational.strip() == "1",
        "model": None if model is None else model.strip(),
    }


def storage_facts(path: Path) -> Json:
    """Filesystem and device under ``path`` (its nearest existing parent)."""
    probe = path.resolve()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    st = probe.stat()
    if path.exists() and path.is_block_device():
        dev = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
        return {"path": str(path), "fstype": None, **_block(dev)}
    dev = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    return {"path": str(path.resolve()), "dev": dev, **_mount_of(dev), **_block(dev)}


def host_facts(target: Optional[Path] = None) -> Json:
    """Everything above; ``storage`` only when ``target`` is given."""
    cpu = _cpu()
    facts: Json = {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "os": platform.platform(),
        "cpu": cpu,
        "memory_bytes": _memory_bytes(),
        "virtualization": _virt(cpu["hypervisor_flag"]),
        "python": platform.python_version(),
    }
    if target is not None:
        facts["storage"] = storage_facts(target)
    return facts
