"""Running ``iolab lab fleet``: the target, the VMs' data, the fleet run,
and the figures the claims and tables need.

Three places to run (:attr:`FleetLabSettings.mode`):

- ``local``: iolab's target in this process on a private Unix socket,
  serving one 3-way mirror of simulated SSDs per node
  (:func:`~iolab.lab.fleet_lab.topology.target_specs`); the VMs are MPI
  ranks on this machine, grouped on nodes by the lab's layout;
- ``netns`` (root): every node a network namespace on a bridge, the
  target in a namespace of its own serving over TCP, the ranks placed on
  their nodes by mpiexec (:mod:`iolab.lab.fleet_lab.netns`);
- ``real``: ``--uri`` names a real NBD server (``{rank}`` in it gives each
  VM its own export) and ``--hostfile`` real hosts; nothing is written.

Before a simulated run every VM's part is written once, sequentially:
a simulated SSD reads a page that was never written in its command
overhead alone, and VM Fleet's VMs read files that were laid out in full.
The fleet run is ``iolab fleet -n N --hosts TABLE run ...`` (docs/fleet.md):
its JSON (``iolab.fleet/1``) holds every VM's own result and the exact
total, which :func:`measured_of` reduces to what the claims read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from iolab import _native
from iolab.errors import IolabError, JobError
from iolab.fleet.live import ClusterInterval
from iolab.lab.fleet_lab.post import POST_BS_BYTES, POST_IODEPTH
from iolab.lab.fleet_lab.topology import (
    DEFAULT_LIMIT_IOPS,
    DEFAULT_NODES,
    DEFAULT_VM_SIZE,
    DEFAULT_VMS,
    FULL_RUNTIME_S,
    MIN_VM_SIZE_BYTES,
    QUICK_RUNTIME_S,
    QUICK_VM_SIZE,
    Layout,
    check_layout,
    hostfile_hosts,
    hosts_table,
    limits,
    target_specs,
)
from iolab.lab.fleet_lab.watch import NodeOf, SpoolWatch
from iolab.run.api import run
from iolab.run.sources import jobs_from_command_line

Progress = Callable[[str], None]
#: The job every VM runs (the post's DISKSPD line: 512 KiB random read, QD 3).
VM_JOB = ("--name=vm", "--ioengine=nbd", "--rw=randread", "--bs=512k", f"--iodepth={POST_IODEPTH}", "--time_based")
#: Beyond the run itself: MPI start-up, the clock's ping-pong, the gather (a loaded 2-core machine).
FLEET_OVERHEAD_S = 240.0


@dataclass(frozen=True)
class Ran:
    """A fleet run done: the fleet's JSON, the live view's last interval,
    what served the VMs, and how ranks map to nodes."""

    doc: dict[str, Any]
    last: Optional[ClusterInterval]
    served_by: list[str]
    node_of: NodeOf
    #: The target's own record of the run's window (its stats JSON), where iolab served.
    target_stats: Optional[str] = None
    #: Each VM's export (rank order), to find its record in ``target_stats``.
    exports: tuple[str, ...] = ()


@dataclass(frozen=True)
class FleetLabSettings:
    vms: int = DEFAULT_VMS
    nodes: int = DEFAULT_NODES
    quick: bool = False
    runtime_s: Optional[float] = None
    #: The lowest VM's QoS limit (IOPS); None: no limits (the post's own run).
    limit_iops: Optional[int] = DEFAULT_LIMIT_IOPS
    vm_size: Optional[str] = None
    hostfile: Optional[Path] = None
    uri: Optional[str] = None
    #: Nodes as network namespaces: None = where root (and ip(8) is there).
    netns: Optional[bool] = None
    interval: str = "1s"

    @property
    def seconds(self) -> float:
        if self.runtime_s is not None:
            return self.runtime_s
        return QUICK_RUNTIME_S if self.quick else FULL_RUNTIME_S

    @property
    def size(self) -> str:
        return self.vm_size or (QUICK_VM_SIZE if self.quick else DEFAULT_VM_SIZE)

    @property
    def mode(self) -> str:
        if self.uri is not None:
            return "real"
        if self.netns is None:
            return "netns" if os.geteuid() == 0 and shutil.which("ip") else "local"
        return "netns" if self.netns else "local"

    def rates(self) -> Optional[list[int]]:
        return None if self.limit_iops is None else limits(self.vms, self.limit_iops)


def check_settings(s: FleetLabSettings) -> Layout:
    """Everything that can be refused before anything runs, one ``JobError`` each."""
    if s.hostfile is not None and s.uri is None:
        raise JobError(
            "--hostfile: VMs on other hosts need a server they can reach; give --uri nbd://SERVER:PORT/EXPORT "
            "({rank} in it gives each VM its own export)"
        )
    if s.hostfile is not None:
        hosts = hostfile_hosts(s.hostfile)
        layout = check_layout(s.vms, len(hosts))
    else:
        layout = check_layout(s.vms, s.nodes)
    if s.netns and os.geteuid() != 0:
        raise JobError("--netns: network namespaces need root; leave it out to run the nodes' VMs as local ranks")
    if s.limit_iops is not None and s.limit_iops < 1:
        raise JobError(f"--limit-iops {s.limit_iops}: give at least 1 (or --no-limits)")
    if s.uri is not None:
        check_uri(s.uri)
    else:
        try:
            if _native.parse_size(s.size) < MIN_VM_SIZE_BYTES:
                raise JobError(f"--vm-size {s.size}: give at least {MIN_VM_SIZE_BYTES >> 20}m")
        except ValueError as e:
            raise JobError(f"--vm-size: {e}") from None
    return layout


def check_uri(uri: str, timeout_s: float = 5.0) -> None:
    """Refuse an NBD URI no server answers (the first VM's, ``{rank}`` = 0):
    it must greet with NBD's magic within ``timeout_s``."""
    import socket
    from urllib.parse import parse_qs, urlsplit

    u = urlsplit(uri.replace("{rank}", "0"))
    try:
        if u.scheme == "nbd+unix":
            path = parse_qs(u.query).get("socket", [""])[0]
            if not path:
                raise JobError(f"--uri {uri}: nbd+unix needs ?socket=PATH")
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(timeout_s)
            sock.connect(path)
        elif u.scheme == "nbd":
            if not u.hostname:
                raise JobError(f"--uri {uri}: no host (nbd://HOST[:PORT]/EXPORT)")
            sock = socket.create_connection((u.hostname, u.port or 10809), timeout=timeout_s)
        else:
            raise JobError(f"--uri {uri}: expected nbd://HOST[:PORT]/EXPORT or nbd+unix:///EXPORT?socket=PATH")
        with sock:
            greeting = sock.recv(8)
    except OSError as e:
        raise JobError(
            f"--uri {uri}: no NBD server answers there ({e.strerror or e}); start it or fix the URI"
        ) from None
    if greeting != b"NBDMAGIC":
        raise JobError(f"--uri {uri}: the server there does not speak NBD (it sent {greeting[:8]!r})")


def _fill(uris: Sequence[str], progress: Progress, runner: Callable[[list[str]], None]) -> None:
    """Write every VM's export once, sequentially (1 MiB at QD 4)."""
    progress(f"laying out {len(uris)} VM files (writing each export once)")
    args = ["--ioengine=nbd", "--rw=write", "--bs=1m", "--iodepth=4"]
    for i, uri in enumerate(uris):
        args += [f"--name=fill{i}", f"--uri={uri}"]
    runner(args)


def _fill_here(args: list[str]) -> None:
    run(jobs_from_command_line(args))


def fleet_command(s: FleetLabSettings, table: Path, spool: Path, extra: Sequence[str] = ()) -> list[str]:
    """``iolab fleet -n N --hosts TABLE [extra] run VM_JOB ...``."""
    cmd = [sys.executable, "-m", "iolab.cli.main", "fleet", "-n", str(s.vms), "--hosts", str(table), *extra]
    cmd += ["run", *VM_JOB, f"--runtime={round(s.seconds * 1000)}ms", f"--interval={s.interval}"]
    return [*cmd, "--output-format=json", f"--fleet-spool={spool}"]


def run_fleet(
    cmd: list[str],
    s: FleetLabSettings,
    spool: Path,
    node_of: NodeOf,
    show: Callable[[ClusterInterval], None],
    cwd: Path,
) -> tuple[dict[str, Any], Optional[ClusterInterval]]:
    """Run the fleet with the live view on; its JSON and the newest view
    every VM is in (else the newest)."""
    from iolab.run.pipeline import parse_interval_ns

    interval_s = parse_interval_ns(s.interval) / 1e9
    env = {k: v for k, v in os.environ.items() if k != "IOLAB_FLEET_TTY"}  # the lab draws the view
    with SpoolWatch(spool, s.vms, node_of, show, interval_s) as watch:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
        try:
            out, err = proc.communicate(timeout=s.seconds + FLEET_OVERHEAD_S)
        except subprocess.TimeoutExpired:
            _stop(proc)
            raise IolabError(f"the fleet run did not end within {s.seconds + FLEET_OVERHEAD_S:g} s") from None
        except KeyboardInterrupt:
            _stop(proc)
            raise
    if proc.returncode != 0 or not out.strip():
        lines = [ln for ln in err.splitlines() if ln.strip()]
        raise IolabError(f"the fleet run failed (exit {proc.returncode}): {lines[-1] if lines else 'no message'}")
    return json.loads(out), watch.complete or watch.last


#: How long ``iolab fleet`` gets to stop its ranks after a Ctrl-C.
STOP_GRACE_S = 60.0


def _stop(proc: subprocess.Popen[str]) -> None:
    """Stop ``iolab fleet``: SIGINT, which it turns into a stop of every
    rank (docs/fleet.md, "Ctrl-C"), then SIGKILL if it has not ended within
    :data:`STOP_GRACE_S` — before the lab takes the target and namespaces away."""
    import signal

    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def _read_of(doc: dict[str, Any]) -> dict[str, Any]:
    read: dict[str, Any] = doc["summary"]["jobs"][0]["merged"]["read"]
    return read


def _p99(lat: dict[str, Any]) -> float:
    return float(next(p["value_ns"] for p in lat["percentiles"] if p["percentile"] == 99.0))


def server_figures(stats_json: str, export: str) -> Optional[dict[str, float]]:
    """What the target recorded for one export's reads: the mean time it held
    each (header in to reply out), how late its reply timer woke past the
    model's completion, and their difference, the stack's own service time —
    the device's time as the target ran it, free of a busy host's late
    wake-ups (as ``iolab lab raid`` reads it). Means of whole histograms."""
    import json as _json

    for e in _json.loads(stats_json)["exports"]:
        if e["name"] == export:
            read = e["ops"]["read"]
            lat = _native.hist_stats(read["lat_ns"], [])
            late = _native.hist_stats(read["hold_late_ns"], [])
            mean_lat, mean_late = float(lat["mean_ns"]), float(late["mean_ns"])
            return {
                "ios": float(lat["count"]),
                "lat_mean_ns": mean_lat,
                "hold_late_mean_ns": mean_late,
                "service_mean_ns": mean_lat - mean_late,
            }
    return None


def measured_of(
    doc: dict[str, Any],
    node_of: NodeOf,
    rates: Optional[Sequence[int]],
    target_stats: Optional[str] = None,
    exports: Sequence[str] = (),
) -> dict[str, Any]:
    """What the claims and tables read from the fleet's JSON: per VM its
    I/Os, bytes, runtime, read-latency histogram (its workers' merged),
    mean and p99, and the target's record of its export where iolab
    served it; the total as the fleet merged it."""
    vms = []
    for h in doc["hosts"]:
        rank = int(h["rank"])
        entry: dict[str, Any] = {"rank": rank, "host": h["host"], "node": node_of(rank, h["host"]), "state": h["state"]}
        entry["limit_iops"] = None if rates is None else rates[rank]
        entry["server"] = server_figures(target_stats, exports[rank]) if target_stats and exports else None
        if h.get("document") is None:
            vms.append(
                {
                    **entry,
                    "ios": 0,
                    "bytes": 0,
                    "runtime_ns": 0,
                    "lat_hist": None,
                    "lat_mean_ns": 0.0,
                    "lat_p99_ns": 0.0,
                }
            )
            continue
        workers = h["document"]["result"]["jobs"][0]["workers"]
        read = _read_of(h["document"])
        entry.update(
            ios=int(read["ios"]),
            bytes=int(read["bytes"]),
            runtime_ns=int(read["runtime_ns"]),
            lat_hist=_native.hist_merge([w["dirs"][0]["lat_ns"] for w in workers]),
            lat_mean_ns=float(read["lat"]["mean_ns"]),
            lat_p99_ns=_p99(read["lat"]),
        )
        vms.append(entry)
    t = _read_of(doc["total"])
    total = {
        "ios": int(t["ios"]),
        "bytes": int(t["bytes"]),
        "runtime_ns": int(t["runtime_ns"]),
        "bw_bytes_per_s": float(t["bw_bytes_per_s"]),
        "lat_mean_ns": float(t["lat"]["mean_ns"]),
        "lat_p99_ns": _p99(t["lat"]),
    }
    return {
        "bs_bytes": POST_BS_BYTES,
        "vms": vms,
        "total": total,
        "series": series_of(doc),
        "incomplete": bool(doc.get("incomplete")),
    }


def series_of(doc: dict[str, Any]) -> dict[str, list[list[int]]]:
    """Each VM's reads per interval, ``[start_ns, end_ns, bytes, ios]``, on
    rank 0's clock (the fleet's merged total keeps one worker per host, its
    series aligned: docs/fleet.md, "Starting together"), by the host label."""
    out: dict[str, list[list[int]]] = {}
    for w in doc["total"]["result"]["jobs"][0]["workers"]:
        out[w["host"]] = [
            [int(x["start_ns"]), int(x["end_ns"]), int(x["dirs"][0]["bytes"]), int(x["dirs"][0]["ios"])]
            for x in w.get("series", [])
        ]
    return out


def run_local(s: FleetLabSettings, layout: Layout, progress: Progress, show: Callable[[ClusterInterval], None]) -> Ran:
    """The simulated cluster with every VM a local rank."""
    with tempfile.TemporaryDirectory(prefix="iolab-lab-fleet-") as tmp:
        sock = Path(tmp) / "target.sock"
        specs = target_specs(layout, s.size)
        target = _native.Target(None, specs, listen=f"unix:{sock}")
        target.start()
        try:
            uris = [f"nbd+unix:///{layout.export_of(r)}?socket={sock}" for r in range(s.vms)]
            _fill(uris, progress, _fill_here)
            table = Path(tmp) / "hosts.toml"
            table.write_text(hosts_table(uris, s.rates()), encoding="utf-8")
            spool = Path(tmp) / "spool"
            progress(
                f"{s.vms} VMs on {layout.nodes} nodes (local ranks): {s.seconds:g} s of 512 KiB random read at QD 3"
            )
            target.stats_json(reset=True)  # the window starts after the layout
            doc, last = run_fleet(fleet_command(s, table, spool), s, spool, node_name(layout), show, Path(tmp))
            stats = target.stats_json()
            stacks = [f"{name}: {stack}" for name, _size, stack, _ro in target.exports()]
        finally:
            target.shutdown()
            target.wait()
    exports = tuple(layout.export_of(r) for r in range(s.vms))
    return Ran(doc, last, stacks, node_name(layout), stats, exports)


def node_name(layout: Layout) -> NodeOf:
    """Nodes by the lab's layout (local ranks all share this host)."""
    return lambda rank, _label: layout.node_name(layout.node_of(rank))


def node_by_host(rank: int, label: str) -> str:
    """Nodes by the host each rank ran on (namespaces, real hosts): the label's host part."""
    return label.split("/", 1)[0] if label else "?"


def run_real(s: FleetLabSettings, layout: Layout, progress: Progress, show: Callable[[ClusterInterval], None]) -> Ran:
    """A real server (``--uri``), on real hosts where ``--hostfile`` is given; nothing is written."""
    assert s.uri is not None
    with tempfile.TemporaryDirectory(prefix="iolab-lab-fleet-") as tmp:
        uris = [s.uri.replace("{rank}", str(r)) for r in range(s.vms)]
        table = Path(tmp) / "hosts.toml"
        table.write_text(hosts_table(uris, s.rates()), encoding="utf-8")
        spool = Path(tmp) / "spool"
        extra = ["--hostfile", str(s.hostfile)] if s.hostfile is not None else []
        progress(f"{s.vms} VMs against {s.uri}: {s.seconds:g} s of 512 KiB random read at QD 3")
        node_of = node_by_host if s.hostfile is not None else node_name(layout)
        doc, last = run_fleet(fleet_command(s, table, spool, extra), s, spool, node_of, show, Path(tmp))
    return Ran(doc, last, [s.uri], node_of)


__all__ = [
    "FleetLabSettings",
    "Ran",
    "check_settings",
    "check_uri",
    "fleet_command",
    "measured_of",
    "node_by_host",
    "node_name",
    "run_fleet",
    "run_local",
    "run_real",
    "series_of",
    "server_figures",
]
