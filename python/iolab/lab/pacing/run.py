"""Run seed 004's tests against iolab targets built to match each one.

Each point (test, variant, QD or buffer count, repeat) gets its own target
on a private Unix socket — 16 exports of ``null``, of the simulated NVMe
drive (:data:`NVME`), or of that drive split in 3 with a delay on a third
or two thirds of the parts — with the test's pacing (buffers, cache, and
target cores as cache groups: ``groups``, SPDK's poll groups, and SPDK's
retry rule, ``retry=same``). The seed's two initiator hosts are two groups
of client jobs in one iolab run (``h1-…``, ``h2-…``): one job per export
and host, each its own NBD connection, as each fio+SPDK initiator opens
one queue pair per subsystem. A host's QD Q is spread over the exports as
evenly as whole depths allow (Q/16 each from QD 16 up; below, Q exports
at depth 1, host 2 starting half way round), so the requests in flight
are the seed's 2 x Q.

A point ends by its deadline whatever the target does: if the clients
have not finished ``ramp + runtime + grace`` after the start, the target's
pacing state is read (which connections wait, since when, for how many
buffers, what their group holds) and the target is shut down, which ends
the waits; the point is reported starved, with that record.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from iolab import _native
from iolab.lab.pacing.seed import BY_NUMBER, SeedTest, Variant
from iolab.run.api import Job, run

MIB = 1 << 20
BS = "128k"
BS_BYTES = 128 << 10
#: The simulated NVMe drive (docs/labs.md, "lab pacing"): sim-ssd read as a
#: filled drive, time-scaled so that 16 of them run on two shared cores.
#: Physical: NAND parallelism (8 channels x 4 dies x 2 planes), a host link
#: that is the drive's bottleneck, read data staged in SRAM with the excess
#: in DRAM. Fitted: ``stage`` (8 reads of 128 KiB: above the 96/16 = 6 reads
#: per drive that pacing's 96 buffers allow, with room for their uneven
#: spread) and ``spill`` (test 3's QD 256 loss, at least 145/178 of its
#: QD 32 bandwidth through NBD). So the loss starts above QD 64 per host
#: (8 reads per drive): the seed's loss at QD 64 itself is not reproduced.
NVME_KEYS = {
    "capacity": "256m",
    "op": "28%",
    "mapped": "on",
    "t_read": "10ms",
    "channel_rate": "4m",
    "link_rate": "8m",
    "stage": "1m",
    "spill": 0.5,
}
NVME = "sim-ssd," + ",".join(f"{k}={v}" for k, v in NVME_KEYS.items())
#: 16 drives x the link rate: the stack's ceiling, MiB/s.
CEILING_MIB_S = 16 * 8
#: The seed's null tests are bound by its wire (200 Gb/s); here the null
#: exports share one link (the target's ``link`` layer) at the NVMe stack's
#: ceiling: requests wait for it in the target, as for the seed's wire, so
#: 2 x Q stay in flight (a client-side cap, fio's rate=, held them back in
#: the client instead, and the pool saw fewer).
NULL_WIRE_MIB_S = CEILING_MIB_S
#: The seed's 1 ms delay, on this drive's time scale: its unloaded 128 KiB
#: read takes ~34 ms here against the seed's 169 µs (test 3, QD 8): x 200.
TIME_SCALE = 200
DELAY = f"{TIME_SCALE}ms"
#: SPDK's retry rule (docs/target.md, "IO pacing").
RETRY = "same"
FULL_QDS = (8, 16, 32, 64, 128, 256)
#: The socket the examples under examples/pacing/ start the target on.
EXAMPLE_SOCKET = "/tmp/pacing.sock"
QUICK_QDS = (8, 32, 256)
RAMP_S = 0.3
#: NBD framing per READ: the request and the simple reply's header.
FRAMING_BYTES = _native.NBD_REQUEST_BYTES + _native.NBD_SIMPLE_REPLY_BYTES

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Settings:
    quick: bool = False
    tests: tuple[int, ...] = tuple(range(1, 17))
    runtime_s: Optional[float] = None
    repeats: Optional[int] = None
    #: seconds past ramp + runtime before a point is ended as starved
    grace_s: float = 6.0

    @property
    def seconds(self) -> float:
        if self.runtime_s is not None:
            return self.runtime_s
        return 1.2 if self.quick else 2.0

    @property
    def test6_repeats(self) -> int:
        return self.repeats or (3 if self.quick else 10)


@dataclass(frozen=True)
class Point:
    test: int
    variant: str
    #: the x of the seed's table: QD, or buffers (tests 9, 10)
    x: int
    qd: int
    pacing: Optional[tuple[int, int]]
    groups: int
    repeat: int = 0

    @property
    def key(self) -> str:
        v = f"/{self.variant}" if self.variant else ""
        return f"test{self.test}{v}/x{self.x}/r{self.repeat}"


def _export_names(t: SeedTest) -> tuple[list[str], set[str]]:
    """The exports of ``t``'s stack and which of them are delayed."""
    if t.stack == "null":
        return [f"null{i}" for i in range(t.exports)], set()
    if t.stack == "nvme":
        return [f"nvme{i}" for i in range(16)], set()
    slow = {"split": 0, "delay1": 1, "delay2": 2}[t.stack]
    # Drive by drive, part by part: a host covering fewer exports than
    # there are (QD < 48) still reaches every kind of part.
    names = [f"d{i}p{j}" for i in range(16) for j in range(3)]
    return names, {n for n in names if int(n.rsplit("p", 1)[1]) < slow}


def _toml_value(v: Any) -> str:
    return json.dumps(v) if isinstance(v, str) else str(v)


def target_toml(t: SeedTest, p: Point) -> str:
    """The target configuration of point ``p`` of test ``t`` (TOML)."""
    lines = []
    if p.pacing is not None:
        b, c = p.pacing
        lines.append(
            f'pacing = {{ buffers = {b}, cache = {c}, unit = "{BS}", groups = {p.groups}, retry = "{RETRY}" }}'
        )
    lines += ["[server]", "max_connections = 256", ""]
    names, slow = _export_names(t)
    if t.stack == "null":
        lines += ["[[export]]", 'name = "null"', 'backend = "null"', 'size = "256m"', f"count = {t.exports}"]
        # The seed's wire, shared: read data queues for it in the target, so
        # the requests stay in flight (and hold their buffers) while it waits.
        lines.append(f'layers = [{{ type = "link", bw = "{NULL_WIRE_MIB_S}m" }}]')
    elif t.stack == "nvme":
        lines += ["[[export]]", 'name = "nvme"', 'backend = "sim-ssd"', "count = 16"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in NVME_KEYS.items()]
    else:
        for i in range(16):
            lines += ["[[device]]", f'name = "d{i}"', 'backend = "sim-ssd"', "split = 3"]
            lines += [f"{k} = {_toml_value(v)}" for k, v in NVME_KEYS.items()]
            lines.append("")
        for n in names:
            dev, part = n.rsplit("p", 1)
            lines += ["[[export]]", f'name = "{n}"', f'device = "{dev}"', f"part = {part}"]
            if n in slow:
                lines.append(f'layers = [{{ type = "delay", read = "{DELAY}" }}]')
            lines.append("")
    return "\n".join(lines) + "\n"


def depths(qd: int, n: int, host: int) -> list[tuple[int, int]]:
    """(export index, depth) of host ``host``'s jobs: ``qd`` requests over
    ``n`` exports as evenly as whole depths allow, host 1 starting half way round."""
    start = (host * n) // 2
    out = []
    for k in range(n):
        d = qd // n + (1 if k < qd % n else 0)
        if d:
            out.append(((start + k) % n, d))
    return out


def timing(t: SeedTest, p: Point, seconds: float) -> tuple[float, float]:
    """(ramp, runtime) in s for point ``p``: a steady state needs a ramp and
    a run several times the point's expected latency (2 x QD reads of
    128 KiB at the stack's ceiling, plus the delay where parts are delayed)."""
    lat = 2 * p.qd * BS_BYTES / (CEILING_MIB_S * MIB)
    if t.stack.startswith("delay"):
        lat += TIME_SCALE / 1e3
    return max(RAMP_S, 1.5 * lat), max(seconds, 3 * lat)


def host_jobs(t: SeedTest, p: Point, sock: Path, seconds: float) -> list[Any]:
    names, _ = _export_names(t)
    plan = [(h, e, d) for h in range(2) for e, d in depths(p.qd, len(names), h)]
    ramp, runtime = timing(t, p, seconds)
    return [
        Job(
            f"h{h + 1}-{names[e]}",
            ioengine="nbd",
            uri=f"nbd+unix:///{names[e]}?socket={sock}",
            rw="randread",
            bs=BS,
            iodepth=d,
            time_based=True,
            runtime=f"{round(runtime * 1000)}ms",
            ramp_time=f"{round(ramp * 1000)}ms",
        )
        for h, e, d in plan
    ]


def points(s: Settings) -> list[Point]:
    """Every point the settings ask for, in run order."""
    qds = QUICK_QDS if s.quick else FULL_QDS
    out: list[Point] = []
    for n in s.tests:
        t = BY_NUMBER[n]
        for v in t.variants:
            out += _variant_points(t, v, s, qds)
    return out


def _variant_points(t: SeedTest, v: Variant, s: Settings, qds: tuple[int, ...]) -> list[Point]:
    groups = v.cores
    if t.axis == "buffers":
        rows = v.rows if not s.quick else [r for r in v.rows if r.x in (96, 48, 32, 16)]
        return [Point(t.number, v.label, r.x, 256, (r.x, r.cache or 0), groups) for r in rows]
    if t.number == 3 and v.label:
        if s.quick:
            return []
        return [Point(3, v.label, r.x, r.x, None, groups) for r in v.rows]
    if t.number == 6:
        q6 = (32, 256) if s.quick else (32, 64, 128, 256)
        return [Point(6, v.label, q, q, v.pacing, groups, r) for q in q6 for r in range(s.test6_repeats)]
    if t.number == 7 and s.quick:
        if v.cores not in (16, 4, 1):
            return []
        qds = (32, 256)
    if t.number == 8:
        qds = (32, 128) if s.quick else FULL_QDS
    return [Point(t.number, v.label, q, q, v.pacing, groups) for q in qds]


def _client(summary: dict[str, Any]) -> dict[str, Any]:
    """Per-host rows and the total, in test.sh's columns."""
    hosts: dict[str, dict[str, float]] = {}
    for j in summary["jobs"]:
        h = j["name"].split("-", 1)[0]
        r = j["merged"]["read"]
        a = hosts.setdefault(h, {"ios": 0.0, "bytes": 0.0, "ns": 0.0, "lat_sum": 0.0, "lat_n": 0.0})
        a["ios"] += r["ios"]
        a["bytes"] += r["bytes"]
        a["ns"] = max(a["ns"], float(r["runtime_ns"]))
        a["lat_sum"] += r["lat"]["mean_ns"] * r["lat"]["count"]
        a["lat_n"] += r["lat"]["count"]
    rows: list[dict[str, Any]] = []
    for h in sorted(hosts):
        a = hosts[h]
        # The host's rate: all its jobs' bytes over the longest of their
        # runs (the host's measured window), not a sum of per-job rates.
        a["iops"] = a["ios"] / (a["ns"] / 1e9) if a["ns"] else 0.0
        a["bw"] = a["bytes"] / (a["ns"] / 1e9) if a["ns"] else 0.0
        wire = a["bw"] + a["iops"] * FRAMING_BYTES
        lat = a["lat_sum"] / a["lat_n"] / 1e3 if a["lat_n"] else None
        rows.append(
            {"host": h, "kiops": a["iops"] / 1e3, "bw_mib_s": a["bw"] / MIB, "lat_us": lat, "wire_mib_s": wire / MIB}
        )
    n = sum(hosts[h]["lat_n"] for h in hosts)
    total = {
        "kiops": sum(r["kiops"] for r in rows),
        "bw_mib_s": sum(r["bw_mib_s"] for r in rows),
        "wire_mib_s": sum(r["wire_mib_s"] for r in rows),
        "lat_us": sum(hosts[h]["lat_sum"] for h in hosts) / n / 1e3 if n else None,
    }
    return {"hosts": rows, "total": total}


def _server(stats: dict[str, Any], slow: set[str]) -> dict[str, Any]:
    """The target's record: per-export bytes and buffer-time (I/Os x mean
    hold, Little's law), CPU per byte, and the pacing state."""
    per: dict[str, dict[str, float]] = {}
    for e in stats["exports"]:
        r = e["ops"]["read"]
        lat = _native.hist_stats(r["lat_ns"], [])
        per[e["name"]] = {
            "bytes": float(r["bytes"]),
            "ios": float(r["ios"]),
            "hold_s": float(lat["mean_ns"]) * r["ios"] / 1e9,
        }
    total = sum(v["bytes"] for v in per.values()) or 1.0
    hold = sum(v["hold_s"] for v in per.values()) or 1.0
    cpu = stats.get("cpu_summary") or {}
    ios = float(cpu.get("ios") or 0)
    nbytes = float(cpu.get("bytes") or 0)
    out: dict[str, Any] = {
        "export_bytes": {k: v["bytes"] for k, v in per.items()},
        "fast_share": sum(v["bytes"] for k, v in per.items() if k not in slow) / total,
        "slow_hold_share": sum(v["hold_s"] for k, v in per.items() if k in slow) / hold if slow else 0.0,
        "fast_mib_s": sum(v["bytes"] for k, v in per.items() if k not in slow) / MIB / (stats["window_ns"] / 1e9),
        "window_s": stats["window_ns"] / 1e9,
        "mib_s": total / MIB / (stats["window_ns"] / 1e9),
        "cycles_per_byte": cpu.get("proc_cycles_per_io", 0.0) * ios / nbytes if nbytes else None,
        "proc_cpu_pct": cpu.get("proc_cpu_pct"),
        # How late the host wrote replies past their model time (a loaded
        # machine's share of the latency; the worst export's p99).
        "late_ms_p99": max((f["late_ns_p99"] for f in stats.get("fidelity", [])), default=0) / 1e6,
    }
    pc = stats.get("pacing")
    if pc:
        w = _native.hist_stats(pc["wait_ns"], [99.0])
        out["pacing"] = {
            "in_use_max": pc["in_use_max"],
            "pending_max": pc["pending_max"],
            "grants": pc["grants"],
            "wait_us_p99": float(w["percentiles"][99.0]) / 1e3 if w["count"] else 0.0,
            "wait_us_max": float(w["max_ns"]) / 1e3 if w["count"] else 0.0,
        }
    return out


def _starvation(stats: dict[str, Any], names: list[str], deadline_s: float) -> dict[str, Any]:
    """What the target says about the requests still waiting at the deadline."""
    pc = stats.get("pacing") or {}
    export_names = [e["name"] for e in stats["exports"]]
    waiting = [
        {
            "conn": w["conn"],
            "group": w["group"],
            "export": export_names[w["export"]] if w["export"] < len(export_names) else str(w["export"]),
            "buffers": w["units"],
            "waited_ms": w["waited_ns"] / 1e6,
            "group_cached": w["group_cached"],
            "group_in_use": w["group_in_use"],
        }
        for w in pc.get("waiting", [])
    ]
    return {
        "deadline_s": deadline_s,
        "waiting": waiting,
        "pool_free": pc.get("free"),
        "groups_starved": sorted({w["group"] for w in waiting if w["group_in_use"] == 0}),
    }


def measure_point(p: Point, s: Settings) -> dict[str, Any]:
    """Run one point; its figures, or its starvation record."""
    t = BY_NUMBER[p.test]
    names, slow = _export_names(t)
    with tempfile.TemporaryDirectory(prefix="iolab-pacing-") as tmp:
        sock = Path(tmp) / "t.sock"
        target = _native.Target(target_toml(t, p), [], listen=f"unix:{sock}")
        target.start()
        done: dict[str, Any] = {}

        def client() -> None:
            try:
                done["res"] = run(host_jobs(t, p, sock, s.seconds))
            except Exception as e:  # reported with the point
                done["error"] = f"{type(e).__name__}: {e}"

        ramp, runtime = timing(t, p, s.seconds)
        deadline_s = ramp + runtime + s.grace_s
        jobs = len(host_jobs(t, p, sock, s.seconds))
        th = threading.Thread(target=client, daemon=True)
        t0 = time.monotonic()
        th.start()
        window = _steady_window(target, th, jobs, ramp, runtime, t0 + deadline_s)
        th.join(max(0.0, t0 + deadline_s - time.monotonic()))
        out: dict[str, Any] = {"point": p.__dict__ | {"key": p.key}, "starved": None}
        stats = json.loads(target.stats_json())
        if th.is_alive():
            out["starved"] = _starvation(stats, names, deadline_s)
        target.shutdown()
        target.wait()
        th.join(30)
        out["wall_s"] = time.monotonic() - t0
        if out["starved"] is None and "res" in done and window is not None:
            out.update(_client(done["res"].summary))
            out["server"] = _server(window, slow)
            # The total's BW: the target's bytes over a window inside the
            # clients' measured run (no start or end effects).
            out["total"]["client_bw_mib_s"] = out["total"]["bw_mib_s"]
            out["total"]["bw_mib_s"] = out["server"]["mib_s"]
            out["total"]["wire_mib_s"] = out["server"]["mib_s"] * (1 + FRAMING_BYTES / BS_BYTES)
        elif out["starved"] is None:
            out["error"] = done.get("error", "the clients ended without a result (or before the steady window)")
        return out


def _steady_window(
    target: Any, th: threading.Thread, jobs: int, ramp: float, runtime: float, deadline: float
) -> Optional[dict[str, Any]]:
    """The target's stats over the middle of the clients' measured run:
    from when all ``jobs`` connections are open, past the ramp plus a tenth
    of the run, for 80 % of the run. None if the clients end first."""
    while json.loads(target.stats_json())["connections"]["active"] < jobs:
        if not th.is_alive() or time.monotonic() > deadline:
            return None
        time.sleep(0.01)
    time.sleep(ramp + 0.1 * runtime)
    target.stats_json(reset=True)
    time.sleep(0.8 * runtime)
    return dict(json.loads(target.stats_json()))


def measure(s: Settings, progress: Progress = lambda _: None) -> list[dict[str, Any]]:
    """Every point of the settings, measured in order."""
    pts = points(s)
    out = []
    for i, p in enumerate(pts, 1):
        progress(f"[{i}/{len(pts)}] {p.key}")
        out.append(measure_point(p, s))
    return out


def example_configs() -> dict[str, str]:
    """File name → the target configuration of each test's table (at its
    first QD or buffer count; tests 9 and 10 at 96 buffers), as written
    under examples/pacing/ (a test checks they are current)."""
    out = {}
    for t in BY_NUMBER.values():
        for i, v in enumerate(t.variants):
            if t.number == 3 and v.label:
                continue
            x = 96 if t.axis == "buffers" else v.rows[0].x
            pacing = v.pacing if t.axis == "qd" else (96, 96 // v.cores)
            p = Point(t.number, v.label, x, x, pacing, v.cores)
            several = len(t.variants) > 1 and t.number != 3
            name = f"test{t.number:02d}" + (f"-{chr(ord('a') + i)}" if several else "") + ".toml"
            head = f"# Seed 004, test {t.number}: {t.disks}, pacing {t.pacing}"
            head += f" ({v.label})\n" if v.label else "\n"
            head += f"# iolab target --config examples/pacing/{name} --unix {EXAMPLE_SOCKET}\n"
            head += f"# (the whole test, both initiators: iolab lab pacing --test {t.number})\n"
            out[name] = head + target_toml(t, p)
    return out


def example_jobs(qd: int = 256) -> dict[str, str]:
    """File name → a job file of both initiators' jobs for each test at
    host QD ``qd`` (one section per host and export, as the lab runs
    them), for ``iolab run`` against the target of the test's config."""
    out = {}
    for t in BY_NUMBER.values():
        names, _ = _export_names(t)
        several = len(t.variants) > 1 and t.number != 3
        config = f"test{t.number:02d}{'-a' if several else ''}.toml" + (
            " (or another of its tables)" if several else ""
        )
        lines = [
            f"# Seed 004, test {t.number}: both initiators at QD {qd} per host ({t.disks}).",
            f"# iolab target --config examples/pacing/{config} --unix {EXAMPLE_SOCKET} &",
            f"# iolab run examples/pacing/test{t.number:02d}-qd{qd}.fio",
            "[global]",
            "ioengine=nbd",
            "rw=randread",
            f"bs={BS}",
            "time_based",
            "runtime=5s",
            "ramp_time=2s",
        ]
        jobs = [(h, e, d) for h in range(2) for e, d in depths(qd, len(names), h)]
        for h, e, d in jobs:
            lines += [
                "",
                f"[h{h + 1}-{names[e]}]",
                f"uri=nbd+unix:///{names[e]}?socket={EXAMPLE_SOCKET}",
                f"iodepth={d}",
            ]
        out[f"test{t.number:02d}-qd{qd}.fio"] = "\n".join(lines) + "\n"
    return out
