"""One load step of ``iolab lab wire``: the client jobs it runs and the
figures taken from the run (:func:`point`, pure: a run's result, summary
and the target's stats window in, a plain dict out).

Jobs. Seed 000 ran two SQLIO instances, each pinned to one CPU socket,
each with half the threads, every thread issuing 4 I/Os to each of the 5
shares. Here an *instance* is a set of iolab jobs whose workers are
pinned to one CPU (``cpus_allowed``): per instance and share, one job with
``numjobs`` = the instance's threads and ``iodepth=4``. Both instances run
in this one process as jobs of one stonewall group (MPI fleet ranks would
add a process launcher and its CPU per step to a 2-core host; the engine's
per-worker pinning is what the paper's instance affinity did).

Figures of a step:

- client latency: each direction's ``lat`` (issue to reap) histograms of
  every worker, merged exactly; server latency: the ``stats`` layers below
  the link (the storage's time), merged exactly; wire = client - server
  at each percentile (seed 000's method, section 4.2.2);
- IOPS and bytes/s over the time the I/Os ran (the client's summary);
- %CPU of each side as the share of the CPUs it may run on (100 % = all
  of them busy), from its process CPU time over the window (the client:
  this process over the group; the server: the target process over its
  stats window); c/B = that CPU time x clock / bytes moved (user + system
  time: iolab's client and server are user-space programs; the paper's
  %Privileged counted the kernel's SMB client because that is where SMB ran);
- link utilisation: payload bytes of the busier direction / (bw x time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from iolab import _native
from iolab.jobs import JobSpec
from iolab.run.api import Job
from iolab.run.wire import wire_latency

Json = dict[str, Any]

#: Outstanding I/Os per thread per share (seed 000: 4 per thread per share x 5 shares).
QD_PER_SHARE = 4
#: Percentiles kept per direction (the CDFs of Figures 5, 6, 10 and the p90 of the tables).
PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0)
#: Figure 6's range: wire latency from the 10th to the 95th percentile.
WIRE_RANGE = (10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0)
#: Writes stay within this region of each share (sim-ssd keeps written data in memory).
WRITE_REGION = "64m"
DIRS = ("read", "write")


@dataclass(frozen=True)
class Load:
    """One step: ``rw`` (fio's), ``bs`` bytes, ``threads`` over the
    instances, ``iodepth`` per thread per share, on ``shares`` shares."""

    rw: str
    bs: int
    threads: int
    iodepth: int = QD_PER_SHARE
    shares: int = 5
    rwmixread: Optional[int] = None

    @property
    def outstanding(self) -> int:
        return self.threads * self.iodepth * self.shares


def split_threads(threads: int, instances: int) -> list[int]:
    """Threads per instance, as even as can be (1 thread: the first instance only)."""
    return [threads // instances + (1 if i < threads % instances else 0) for i in range(instances)]


def jobs_for(load: Load, uris: list[str], cpus: list[Optional[str]], seconds: float) -> list[JobSpec]:
    """The client jobs of one step: per instance (``cpus[i]``, its
    ``cpus_allowed`` or None) and share (``uris``), one job of the
    instance's threads (``numjobs``)."""
    out = []
    for i, n in enumerate(split_threads(load.threads, len(cpus))):
        if n == 0:
            continue
        for s, uri in enumerate(uris[: load.shares]):
            opts: dict[str, Any] = {
                "ioengine": "nbd",
                "uri": uri,
                "rw": load.rw,
                "bs": load.bs,
                "iodepth": load.iodepth,
                "numjobs": n,
                "time_based": True,
                "runtime": f"{round(seconds * 1000)}ms",
            }
            if load.rw != "randread":  # reads span the whole export
                opts["size"] = WRITE_REGION
            if load.rwmixread is not None:
                opts["rwmixread"] = load.rwmixread
            if cpus[i] is not None:
                opts["cpus_allowed"] = cpus[i]
            out.append(Job(f"i{i}-s{s}", **opts))
    return out


def pcts(hist: str) -> dict[str, int]:
    """``{"p90": ns, ...}`` of a histogram at :data:`PERCENTILES` ({} when empty)."""
    st = _native.hist_stats(hist, list(PERCENTILES))
    if st["count"] == 0:
        return {}
    return {f"p{p:g}": int(v) for p, v in st["percentiles"].items()}


def _direction(dirs: list[Json], servers: Optional[list[Json]]) -> Json:
    """Client and server percentiles of one direction, and the wire from
    :func:`iolab.run.wire.wire_latency` (the one place it is computed)."""
    client = pcts(_native.hist_merge([x["lat_ns"] for x in dirs]))
    out: Json = {"client_ns": client}
    if servers is not None:
        merged = {"lat_ns": _native.hist_merge([x["lat_ns"] for x in servers]), "ios": sum(x["ios"] for x in servers)}
        out["server_ns"] = pcts(merged["lat_ns"])
        w = wire_latency(dirs, sum(x["ios"] + x["errors"] for x in dirs), merged)
        out["wire_ns"] = {f"p{r['percentile']:g}": r["wire_ns"] for r in w["rows"] if r["wire_ns"] is not None}
        out["ios_match"] = w["ios_match"]
    return out


def _cpu_side(cpu: Optional[Json], ncpus: int, nbytes: int) -> Optional[Json]:
    """%CPU of the CPUs a side may use, its cycles per byte, from a CPU summary."""
    if not cpu or not cpu.get("window_ns"):
        return None
    cycles = float(cpu["proc_cycles_per_io"]) * float(cpu["ios"]) if cpu.get("ios") else None
    if cycles is None:
        cycles = float(cpu["proc_cpu_pct"]) / 100.0 * cpu["window_ns"] / 1e9 * float(cpu["clock_hz"])
    return {
        "cpus": ncpus,
        "cpu_pct": float(cpu["proc_cpu_pct"]) / ncpus,
        "proc_cpu_pct_of_one": float(cpu["proc_cpu_pct"]),
        "c_per_b": cycles / nbytes if nbytes else None,
        "clock_hz": float(cpu["clock_hz"]),
        "host_idle_pct": float(cpu["sys_idle_pct"]) if "sys_idle_pct" in cpu else None,
    }


def point(
    load: Load,
    result: Json,
    summary: Json,
    server: Optional[Json],
    *,
    client_cpus: int,
    server_cpus: int,
    link_bw: Optional[int],
    server_layers: Optional[str] = "srv",
) -> Json:
    """The figures of one step (see the module doc). ``server``: the
    target's stats window, or None (a server without stats);
    ``server_layers``: the prefix of the stats layers that time the
    storage, or None to take the exports' own times (an iolab target
    reached with --uri: its time then includes any link it has)."""
    group = summary["groups"][0]
    total = group["total"]
    runtime_s = max(float(total["runtime_max_ns"]), 1.0) / 1e9
    nbytes = int(total["bytes"])
    dirs: Json = {}
    for i, d in enumerate(DIRS):
        client = [w["dirs"][i] for j in result["jobs"] for w in j["workers"] if w["dirs"][i]["ios"]]
        if not client:
            continue
        srv = None
        if server is not None:
            if server_layers is not None:
                srcs = [x["ops"][d] for x in server["layers"] if x["name"].startswith(server_layers)]
            else:
                srcs = [x["ops"][d] for x in server["exports"]]
            srv = [s for s in srcs if s["ios"]] or None
        dirs[d] = {**_direction(client, srv), "ios": int(group[d]["ios"]), "bytes": int(group[d]["bytes"])}
    busiest = max((int(group[d]["bytes"]) for d in DIRS), default=0)
    cpu = (group.get("cpu") or [None])[0]
    return {
        "rw": load.rw,
        "bs_bytes": load.bs,
        "threads": load.threads,
        "outstanding": load.outstanding,
        "iops": float(total["iops"]),
        "bw_bytes_per_s": float(total["bw_bytes_per_s"]),
        "runtime_s": runtime_s,
        "directions": dirs,
        "client": _cpu_side(cpu, client_cpus, nbytes),
        "server": None if server is None else _cpu_side(server.get("cpu_summary"), server_cpus, nbytes),
        "link_util": None if not link_bw else busiest / (link_bw * runtime_s),
    }
