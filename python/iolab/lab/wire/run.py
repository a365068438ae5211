"""``iolab lab wire``: seed 000 (SMB Direct, client and server) at small
scale, or against a real NBD server.

Simulated (the default): :class:`~iolab.lab.wire.topology.SimServer`
(five mirrored shares of simulated SSDs behind one shared link, a stats
layer under the link) serves; two client instances, pinned to their own
CPU where the host has two, drive it; every step's client result and the
target's stats window over exactly that run (``POST /reset`` before and
after, :mod:`iolab.run.wire`) become a point (:mod:`.measure`). With
``uri`` the same loads run against that one export; server and wire
figures then exist only when ``target_stats`` names an iolab target's
stats endpoint, and are reported as not measurable otherwise.

The result is a plain dict (schema ``iolab.lab.wire/1``): the paper's
tables with the measured value beside each printed one, the claims'
verdicts (:mod:`.verdicts`), the points themselves.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from iolab import _native
from iolab.lab.wire import verdicts
from iolab.lab.wire.measure import Load, jobs_for, point
from iolab.lab.wire.paper import PAPER_THREADS, TABLE1_SIZES_KIB, TABLES, PaperTable
from iolab.lab.wire.topology import SERVER_LAYER, SHARES, Link, SimServer
from iolab.run.api import Job, run

SCHEMA = "iolab.lab.wire/1"
KIB = 1024
FULL_RUNTIME_S = 60.0  # the paper: one minute's worth of I/O per distribution
QUICK_RUNTIME_S = 1.0
FULL_THREADS = (1, 2, 4, 8)
QUICK_THREADS = (1, 2, 4)
#: The studies (paper table → its loads): rw, rwmixread, sizes in KiB.
SCALING = {
    "table2": ("randread", None, (1, 8)),
    "table3": ("randrw", 60, (1, 8)),
    "table4": ("randread", None, (64, 512)),
}
TABLE_KEYS = ("table1", "table2", "table3", "table4")

Json = dict[str, Any]
Progress = Callable[[str], None]


@dataclass(frozen=True)
class WireSettings:
    quick: bool = False
    runtime_s: Optional[float] = None
    link: Link = field(default_factory=Link)
    #: CPUs the simulated server may run on (None: all of this host's).
    server_cpus: Optional[tuple[int, ...]] = None
    #: ``cpus_allowed`` of each client instance (None: the host's CPUs, one each).
    client_cpus: Optional[tuple[str, ...]] = None
    threads: Optional[tuple[int, ...]] = None
    tables: tuple[str, ...] = TABLE_KEYS
    uri: Optional[str] = None
    target_stats: Optional[str] = None

    @property
    def seconds(self) -> float:
        if self.runtime_s is not None:
            return self.runtime_s
        return QUICK_RUNTIME_S if self.quick else FULL_RUNTIME_S

    @property
    def steps(self) -> tuple[int, ...]:
        return self.threads or (QUICK_THREADS if self.quick else FULL_THREADS)


def instance_cpus(given: Optional[tuple[str, ...]]) -> tuple[list[Optional[str]], int]:
    """Each instance's ``cpus_allowed`` and how many CPUs the client may use:
    two instances on this process's first two CPUs (one each), or both
    unpinned on a one-CPU host."""
    if given is not None:
        used = {c for g in given for c in _native_cpus(g)}
        return list(given), len(used)
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < 2:
        return [None, None], len(mine)
    return [str(mine[0]), str(mine[1])], 2


def _native_cpus(spec: str) -> set[int]:
    out: set[int] = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def loads(s: WireSettings, shares: int) -> dict[str, list[Load]]:
    """Every step the chosen tables need, by table."""
    out: dict[str, list[Load]] = {}
    if "table1" in s.tables:
        out["table1"] = [
            Load(rw, k * KIB, threads=1, iodepth=1, shares=1)
            for k in TABLE1_SIZES_KIB
            for rw in (("randread",) if s.uri is not None else ("randread", "randwrite"))
        ]
    for key, (rw, mix, sizes) in SCALING.items():
        # iolab never writes to a server it did not start.
        if key in s.tables and not (s.uri is not None and rw != "randread"):
            out[key] = [Load(rw, k * KIB, t, shares=shares, rwmixread=mix) for k in sizes for t in s.steps]
    return out


class _Runner:
    """Runs a step against ``uris`` and takes its point."""

    def __init__(
        self, uris: list[str], stats_url: Optional[str], s: WireSettings, server_cpus: int, layers: Optional[str]
    ):
        self.uris, self.stats_url, self.s, self.layers = uris, stats_url, s, layers
        self.cpus, self.client_cpus = instance_cpus(s.client_cpus)
        self.server_cpus = server_cpus
        self.link_bw = _native.parse_size(s.link.bw) if layers is not None else None

    def __call__(self, load: Load) -> Json:
        # A single I/O runs on the first instance alone (the paper: one
        # load generator, one share).
        cpus = self.cpus[:1] if load.threads == 1 and load.iodepth == 1 else self.cpus
        out = run(jobs_for(load, self.uris, cpus, self.s.seconds), target_stats=self.stats_url)
        server = out.observed.get("nbd_target") if self.stats_url else None
        server_cpus = self.server_cpus or int((server or {}).get("cpu_summary", {}).get("ncpus") or 1)
        return point(
            load,
            out.result,
            out.summary,
            server,
            client_cpus=self.client_cpus
            if len(cpus) > 1
            else len(_native_cpus(cpus[0]))
            if cpus[0]
            else self.client_cpus,
            server_cpus=server_cpus,
            link_bw=self.link_bw,
            server_layers=self.layers,
        )


def _measure(runner: _Runner, plan: dict[str, list[Load]], progress: Progress) -> dict[str, list[Json]]:
    points: dict[str, list[Json]] = {}
    for key, steps in plan.items():
        for ld in steps:
            mix = f" rwmixread={ld.rwmixread}" if ld.rwmixread else ""
            progress(f"{key}: {ld.rw}{mix} {ld.bs // KIB} KiB, {ld.threads} thread(s), {ld.outstanding} outstanding")
            points.setdefault(key, []).append(runner(ld))
    return points


def measure(
    s: WireSettings, plan: dict[str, list[Load]], progress: Progress = lambda _: None
) -> tuple[dict[str, list[Json]], list[str], Optional[int]]:
    """Run ``plan``'s steps against the simulated server (or ``s.uri``):
    the points by table, the server's stacks, the link's bandwidth in bytes/s."""
    if s.uri is not None:
        runner = _Runner([s.uri], s.target_stats, s, 0, None)
        return _measure(runner, plan, progress), [], None
    with SimServer(s.link, s.server_cpus) as srv:
        ncpu = len(s.server_cpus) if s.server_cpus else len(os.sched_getaffinity(0))
        runner = _Runner([srv.uri(i) for i in range(SHARES)], srv.stats_url, s, ncpu, SERVER_LAYER)
        return _measure(runner, plan, progress), srv.stacks, runner.link_bw


#: The local-storage reference of section 6.1: Table 2's 8 KiB load at one
#: thread (20 outstanding) on a file in a temporary directory, io_uring.
LOCAL_FILE_SIZE = "32m"


def measure_local(s: WireSettings, progress: Progress) -> Json:
    """Client c/B of 8 KiB random reads on a local file (section 6.1's
    "local storage" comparison), pinned like the first client instance."""
    load = Load("randread", 8 * KIB, threads=1, iodepth=20, shares=1)
    cpus, _ = instance_cpus(s.client_cpus)
    progress(f"local: randread 8 KiB, 20 outstanding on a {LOCAL_FILE_SIZE} file")
    with tempfile.TemporaryDirectory(prefix="iolab-lab-wire-local-") as tmp:
        opts: dict[str, Any] = {
            "ioengine": "io_uring",
            "filename": str(Path(tmp) / "local.dat"),
            "size": LOCAL_FILE_SIZE,
            "rw": "randread",
            "bs": load.bs,
            "iodepth": load.iodepth,
            "time_based": True,
            "runtime": f"{round(s.seconds * 1000)}ms",
        }
        if cpus[0] is not None:
            opts["cpus_allowed"] = cpus[0]
        out = run(Job("local", **opts))
    n = len(_native_cpus(cpus[0])) if cpus[0] else len(os.sched_getaffinity(0))
    return point(load, out.result, out.summary, None, client_cpus=n, server_cpus=0, link_bw=None)


def run_lab(s: WireSettings, progress: Progress = lambda _: None) -> Json:
    """Run the lab; the report as a dict (see the module doc)."""
    points, stacks, link_bw = measure(s, loads(s, 1 if s.uri is not None else SHARES), progress)
    if "table2" in s.tables:
        points["local"] = [measure_local(s, progress)]
    where = s.uri or (
        f"simulated file server: {SHARES} shares, each raid1 over 2 sim-ssd, link bw={s.link.bw}/s lat={s.link.lat}"
    )
    return build_report(points, s, where, stacks, link_bw)


def _series(points: list[Json], bs: int) -> list[Json]:
    return sorted((p for p in points if p["bs_bytes"] == bs), key=lambda p: p["threads"])


def _get(p: Optional[Json], key: str) -> Optional[float]:
    """A measured figure of a point by its column key (paper.Column.key, less the size)."""
    if p is None:
        return None
    d = p.get("directions", {})

    def lat(direction: str, side: str) -> Optional[float]:
        v = d.get(direction, {}).get(f"{side}_ns", {}).get("p90")
        return None if v is None else v / 1000.0

    parts = key.split("_")
    if key.endswith("_p90_us"):
        side = parts[1] if len(parts) == 4 else "client"
        return lat(parts[0], side)
    if key in ("iops", "gb_per_s"):
        return float(p["iops"]) if key == "iops" else float(p["bw_bytes_per_s"]) / 1e9
    side_figs = p.get(parts[0]) or {}
    v = side_figs.get("c_per_b" if key.endswith("c_per_b") else "cpu_pct")
    return None if v is None else float(v)


def _table_rows(t: PaperTable, pts: list[Json]) -> list[Json]:
    rows = []
    for r in t.rows:
        for col, paper in zip(t.columns, r.values):
            if t.key == "table1":
                size = int(r.label.split()[0]) * KIB
                rw = "randread" if col.key.startswith("read") else "randwrite"
                p = next((x for x in pts if x["bs_bytes"] == size and x["rw"] == rw), None)
                key = col.key
            else:
                size_txt, key = col.key.split(".", 1)
                size = int(size_txt[:-1]) * KIB
                threads = int(r.label.split()[0])
                p = next((x for x in pts if x["bs_bytes"] == size and x["threads"] == threads), None)
            rows.append(
                {"label": r.label, "column": col.heading, "unit": col.unit, "paper": paper, "measured": _get(p, key)}
            )
    return rows


def build_report(
    points: dict[str, list[Json]], s: WireSettings, where: str, stacks: list[str], link_bw: Optional[int]
) -> Json:
    """The report from measured points (``{table key: [point, ...]}``)."""
    tables = [
        {"key": t.key, "title": t.title, "rows": _table_rows(t, points.get(t.key, []))}
        for t in TABLES
        if t.key in points
    ]
    return {
        "schema": SCHEMA,
        "target": where,
        "notes": notes(s),
        "simulated": s.uri is None,
        "stacks": stacks,
        "quick": s.quick,
        "runtime_s": s.seconds,
        "threads": list(s.steps),
        "paper_threads": list(PAPER_THREADS),
        "link_bw_bytes_per_s": link_bw,
        "tables": tables,
        "claims": claims(points, link_bw),
        "points": points,
    }


def notes(s: WireSettings) -> list[str]:
    """What the report's figures are, where they differ from the paper's."""
    if s.uri is None:
        return [
            "server latency: the target's stats layer under the link (the storage's time); wire = client - server",
            f"two client instances, each pinned to its own CPU (cpus_allowed), in one process; {QD_TEXT}",
        ]
    out = [
        "only reads run against --uri: iolab never writes to a server it did not start (no Table 3, no writes in Table 1)"
    ]
    if s.target_stats is None:
        out.append(
            "server and wire latency, server CPU: not measurable here (give --target-stats with an iolab target's stats URL)"
        )
    else:
        out.append("server latency: the target's time per request (header in to reply out), its whole stack included")
    return out


QD_TEXT = "per thread 4 outstanding I/Os per share (Tables 2-4)"


def claims(points: dict[str, list[Json]], link_bw: Optional[int]) -> list[Json]:
    """Every claim's verdict from the points (pure)."""
    single = points.get("table1", [])
    small = {
        f"{k} KiB {'read' if key == 'table2' else '60/40'}": _series(points.get(key, []), k * KIB)
        for key in ("table2", "table3")
        for k in (1, 8)
    }
    by_size: dict[int, Optional[float]] = {}
    for key, sizes in (("table2", (1, 8)), ("table4", (64, 512))):
        for k in sizes:
            series = _series(points.get(key, []), k * KIB)
            if series:
                best = max(series, key=lambda p: p["bw_bytes_per_s"])
                by_size[k * KIB] = (best.get("client") or {}).get("c_per_b")
    big = _series(points.get("table4", []), 512 * KIB)
    sat = verdicts.saturation(big) if big else None
    loaded = big[sat if sat is not None else -1] if big else None
    remote_8k = by_size.get(8 * KIB)
    local = points.get("local") or [{}]
    local_8k = local[0].get("client") or {}
    single_512 = next((p for p in single if p["bs_bytes"] == 512 * KIB and p["rw"] == "randread"), None)
    return [
        verdicts.wire_constant(single),
        verdicts.server_cpu_limit({k: v for k, v in small.items() if v}),
        verdicts.cb_falls(by_size),
        verdicts.cb_local(remote_8k, local_8k.get("c_per_b")),
        verdicts.knee({k: v for k, v in small.items() if v}),
        verdicts.queueing(single_512, loaded, link_bw),
    ]
