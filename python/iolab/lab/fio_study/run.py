"""Run seed 002's three sweeps with iolab's sweep machinery and reduce
each point to the figures the seed's tables print.

Where the jobs run:

- a file ``testfile`` in a directory (the user's, else a temporary one
  removed afterwards): the seed's ``--filename=testfile``;
- ``device``: a block device or file the user names (it is written:
  randrw; the caller must have allowed overwriting);
- ``sim``: a simulated SSD (``sim-ssd``, docs/simulation.md) that iolab
  serves itself on a private Unix socket, driven with iolab's NBD client
  (``ioengine=nbd``: an addition the report lists, as ``filename`` gives
  way to the export's URI). One device serves the three sweeps in turn, as
  the seed's one SSD did, written once over the jobs' size first (fio's
  layout of testfile). Each run's record from the target (its service time
  per request, free of the host's late wake-ups) is kept beside the
  client's figures (``per_repeat.service_us``).

Each sweep is a plan (:mod:`.plans`) run by :func:`iolab.plans.sweep.run_plan`
into a results directory and read back with
:func:`iolab.analysis.load.load_sweep_dir`; every point becomes
``{"params", "read", "write", "total", "config"}`` (:func:`point_figures`):
per direction the total, submission and completion latency in µs (avg
over every I/O of every repeat, min, max) and IOPS / MiB/s (mean over
repeats), with the per-repeat values the verdicts need for their noise.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from iolab import _native
from iolab.analysis.load import load_sweep_dir
from iolab.analysis.model import DirResult, LatStats, Point, Sample
from iolab.lab.fio_study.plans import QUICK_RUNTIME, QUICK_SIZE, Shrink, build_plan, plan_toml
from iolab.plans.model import Value
from iolab.plans.progress import SweepProgress
from iolab.plans.sweep import SweepOptions, run_plan
from iolab.run.api import Job, run
from iolab.run.local import run_jobs

SWEEPS = ("bs", "rwmix", "qd")
MIB = 1 << 20
#: The simulated SSD: sim-ssd's defaults; its capacity bounds the jobs' size
#: (the seed's 10G would be 10 GiB of memory).
SIM_CAPACITY = "1g"
DEFAULT_REPEATS = 3

Progress = Callable[[str], None]


@dataclass(frozen=True)
class StudySettings:
    quick: bool = False
    #: overrides of the seed's (or quick's) size and runtime
    size: Optional[str] = None
    runtime: Optional[str] = None
    repeats: int = DEFAULT_REPEATS
    directory: Optional[Path] = None
    device: Optional[str] = None
    sim: bool = False
    sim_export: str = f"sim-ssd,capacity={SIM_CAPACITY}"
    #: options added to the seed's commands, e.g. (("ioengine", "io_uring"),)
    additions: tuple[tuple[str, Value], ...] = ()
    results: Optional[Path] = None
    allow_overwrite: bool = False
    #: discard sweeps already in ``results`` (else they resume, or a changed plan is refused)
    restart: bool = False
    sweeps: tuple[str, ...] = SWEEPS
    progress: Optional[SweepProgress] = field(default=None, compare=False)

    def shrink(self) -> Shrink:
        size = self.size or (QUICK_SIZE if self.quick else None)
        runtime = self.runtime or (QUICK_RUNTIME if self.quick else None)
        if self.sim and size is None:
            size = SIM_CAPACITY
        return Shrink(size, runtime)

    @property
    def where(self) -> str:
        if self.sim:
            return f"simulated SSD ({self.sim_export}) through iolab's NBD target"
        if self.device:
            return self.device
        return f"file testfile in {self.directory or 'a temporary directory'}"


@contextlib.contextmanager
def _sim_target(export: str, tmp: Path, size: str) -> Iterator[tuple[str, Any]]:
    """Serve ``export`` on a private socket, its first ``size`` bytes
    written once (as fio lays out ``testfile`` before its first job: an
    export has no layout, and a never-written flash page reads in the
    firmware's overhead alone); yields its NBD URI and the target."""
    sock = tmp / "ssd.sock"
    target = _native.Target(None, [f"ssd={export}"], listen=f"unix:{sock}")
    target.start()
    try:
        uri = f"nbd+unix:///ssd?socket={sock}"
        run(Job("layout", ioengine="nbd", uri=uri, rw="write", bs="1m", iodepth=4, size=size))
        yield uri, target
    finally:
        target.shutdown()
        target.wait()


def _server_figures(stats_json: str) -> dict[str, Any]:
    """What the target recorded over one run, per direction: I/Os and the
    mean service time (µs): its hold of each request less how late its
    reply timer woke — the simulated device's time, which a busy host's
    late wake-ups do not enter (docs/raid-lab.md uses the same record)."""
    ops = json.loads(stats_json)["exports"][0]["ops"]
    out: dict[str, Any] = {}
    for d in ("read", "write"):
        lat = _native.hist_stats(ops[d]["lat_ns"], [])
        late = _native.hist_stats(ops[d]["hold_late_ns"], [])
        n = int(lat["count"])
        service = (float(lat["mean_ns"]) - float(late["mean_ns"])) / 1e3 if n else None
        out[d] = {"ios": n, "service_us": service}
    return out


#: The options that tell a sweep's points apart.
_KEYS = ("bs", "rwmixread", "iodepth")


def _key(options: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(options.get(k)) for k in _KEYS)


def _recording_runner(target: Any, record: dict[tuple[str, ...], list[dict[str, Any]]]) -> Any:
    """:func:`run_jobs` with the target's record of each run kept in
    ``record`` under the run's (bs, rwmixread, iodepth), in run order."""

    def runner(specs: list[Any], **kwargs: Any) -> Any:
        target.stats_json(reset=True)
        out = run_jobs(specs, **kwargs)
        record.setdefault(_key(dict(specs[0].options)), []).append(_server_figures(target.stats_json()))
        return out

    return runner


def _lat_us(stats: list[LatStats]) -> Optional[dict[str, float]]:
    """avg over every I/O of every repeat (count-weighted means: the merged
    histogram's mean), min of the mins, max of the maxes; in µs."""
    stats = [s for s in stats if s.count]
    if not stats:
        return None
    n = sum(s.count for s in stats)
    return {
        "avg": sum(s.mean_ns * s.count for s in stats) / n / 1e3,
        "min": min(s.min_ns for s in stats) / 1e3,
        "max": max(s.max_ns for s in stats) / 1e3,
    }


def _p50_us(stats: list[Optional[LatStats]]) -> Optional[float]:
    """The median total latency of the I/Os of ``stats`` together (their
    histograms merged exactly, never percentiles averaged), in µs."""
    hists = [s.hist for s in stats if s is not None and s.count and s.hist]
    if not hists:
        return None
    merged = hists[0] if len(hists) == 1 else _native.hist_merge(hists)
    (value_ns,) = _native.hist_stats(merged, [50.0])["percentiles"].values()
    return float(value_ns) / 1e3


def _direction(dirs: list[DirResult]) -> Optional[dict[str, Any]]:
    if not any(d.ios for d in dirs):
        return None
    out: dict[str, Any] = {}
    for kind in ("lat", "slat", "clat"):
        out[f"{kind}_us"] = _lat_us([s for s in (getattr(d, kind) for d in dirs) if s is not None])
    out["iops"] = sum(d.iops for d in dirs) / len(dirs)
    out["mib_per_s"] = sum(d.bw_bytes_per_s for d in dirs) / len(dirs) / MIB
    out["per_repeat"] = {
        "lat_avg_us": [d.lat.mean_ns / 1e3 if d.lat is not None and d.lat.count else None for d in dirs],
        "lat_p50_us": [_p50_us([d.lat]) for d in dirs],
        "iops": [d.iops for d in dirs],
        "mib_per_s": [d.bw_bytes_per_s / MIB for d in dirs],
    }
    return out


def _total(samples: list[Sample]) -> dict[str, Any]:
    """Both directions together, per repeat: IOPS, MiB/s, and the mean
    total latency over every I/O (the directions' means weighted by I/Os)."""
    iops, mib, lat, p50 = [], [], [], []
    for s in samples:
        iops.append(s.read.iops + s.write.iops)
        mib.append((s.read.bw_bytes_per_s + s.write.bw_bytes_per_s) / MIB)
        parts = [(d.lat.mean_ns, d.lat.count) for d in (s.read, s.write) if d.lat is not None and d.lat.count]
        n = sum(c for _, c in parts)
        lat.append(sum(m * c for m, c in parts) / n / 1e3 if n else None)
        p50.append(_p50_us([s.read.lat, s.write.lat]))
    return {"per_repeat": {"iops": iops, "mib_per_s": mib, "lat_avg_us": lat, "lat_p50_us": p50}}


def _server(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per repeat, each direction's service time and both directions' (I/O-weighted)."""
    out: dict[str, Any] = {"read": [], "write": [], "total": []}
    for r in runs:
        parts = [(r[d]["service_us"], r[d]["ios"]) for d in ("read", "write") if r[d]["ios"]]
        for d in ("read", "write"):
            out[d].append(r[d]["service_us"])
        n = sum(c for _, c in parts)
        out["total"].append(sum(v * c for v, c in parts) / n if n else None)
    return out


def point_figures(p: Point, server: Optional[list[dict[str, Any]]] = None) -> dict[str, Any]:
    """The point's figures (module doc); ``server``: the target's record of
    each repeat (simulated SSD), added to ``per_repeat`` as ``service_us``."""
    c = p.samples[0].config
    fig: dict[str, Any] = {
        "params": {k: v for k, v in p.params.items()},
        "read": _direction([s.read for s in p.samples]),
        "write": _direction([s.write for s in p.samples]),
        "total": _total(p.samples),
        "repeats": len(p.samples),
        "config": {"ioengine": c.ioengine, "iodepth": c.iodepth, "direct": c.direct, "size_bytes": c.size_bytes},
    }
    if server:
        for d, values in _server(server).items():
            if fig[d] is not None:
                fig[d]["per_repeat"]["service_us"] = values
    return fig


def run_study(s: StudySettings) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """Run the sweeps; ``({sweep: [point figures]}, {sweep: plan as run})``."""
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="iolab-fio-study-")))
        results = s.results or tmp / "results"
        additions = s.additions
        drop: tuple[str, ...] = ()
        target: Optional[str] = None
        shrink = s.shrink()
        record: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        runner: Any = run_jobs
        if s.sim:
            uri, served = stack.enter_context(_sim_target(s.sim_export, tmp, shrink.size or SIM_CAPACITY))
            additions, drop = (("ioengine", "nbd"), ("uri", uri), *additions), ("filename",)
            runner = _recording_runner(served, record)
        else:
            target = s.device or str((s.directory or tmp) / "testfile")
        measured: dict[str, list[dict[str, Any]]] = {}
        plans: dict[str, Any] = {}
        for sweep in s.sweeps:
            plan = build_plan(sweep, repeats=s.repeats, shrink=shrink, additions=additions, drop=drop)
            opts = SweepOptions(
                quick=bool(shrink.table()),
                target=target,
                allow_overwrite=s.allow_overwrite,
                restart=s.restart,
                progress=s.progress,
                runner=runner,
            )
            outcome = run_plan(plan, plan_toml(plan), results, opts)
            ds = load_sweep_dir(outcome.directory)
            base = dict(plan.base)
            measured[sweep] = [point_figures(p, record.get(_key({**base, **p.params}))) for p in ds.points]
            record.clear()
            plans[sweep] = {
                "name": plan.name,
                "base": [list(kv) for kv in plan.base],
                "quick": [list(kv) for kv in plan.quick],
                "axes": [{"name": a.name, "values": list(a.values)} for a in plan.axes],
                "repeats": plan.repeats,
                "results": str(outcome.directory) if s.results else None,
            }
        return measured, plans
