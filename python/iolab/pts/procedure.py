"""A PTS test run: target checks and purge, preconditioning, rounds of the
test's matrix until steady, everything kept.

Each cell of each round is a run through the run pipeline, written as a
point of a sweep directory (:mod:`iolab.plans.sweep`): ``points/pCCC-rRR``
is cell CCC (numbered across the test's stages) in round RR of its stage,
so ``iolab report`` reads the directory as any sweep; the workload-
independent preconditioning is the sweep's ``precondition/`` run.
``pts.json`` beside them holds the test, the purge, what was shrunk, and
per stage every round's figures, the steady-state windows and the figures
of every cell over the measurement window: I/Os over the time they ran,
latency from the window's histograms merged exactly (never averaged).

Rounds are independent random streams (``randrepeat=0``): with fio's
default seed every round would rewrite the same blocks, a hot set smaller
than the device, and the device would never reach its steady state.
Random offsets are uniform (``norandommap=1``), as the spec's random
workloads are (and as the GC model's prediction assumes).
"""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Optional

from iolab import _native
from iolab.analysis.load import run_samples
from iolab.errors import JobError, RefusedError
from iolab.plans.model import Plan, Value
from iolab.plans.points import Point
from iolab.plans.slo import RECORDED_PERCENTILES
from iolab.plans.steady import steady_metric
from iolab.plans.sweep import SweepOptions, SweepRun, open_sweep
from iolab.pts import purge as purging
from iolab.pts.matrix import Cell, PtsTest, Stage, pts_test
from iolab.pts.steady import PTS_RULE, Window, window
from iolab.results.rundir import read_record, write_json

PTS_FILE = "pts.json"
#: The spec's round: each cell of the matrix runs one minute.
SPEC_ROUND_TIME = "60s"
#: WSAT's spec bounds: 4x the capacity written, or 6 hours of one-minute rounds.
SPEC_WSAT_FILLS = 4.0
SPEC_WSAT_ROUNDS = 360
#: --quick: rounds of this long, at most this many, over at most this much.
QUICK_ROUND_TIME = "2s"
QUICK_MAX_ROUNDS = 10
QUICK_CAPACITY = "1g"
#: The percentiles a PTS report may ask for: those iolab records (fio's
#: percentile_list) and the PTS's five nines, all from the same histograms.
PTS_PERCENTILES = (*RECORDED_PERCENTILES, 99.999)
#: What every cell reports unless ``--percentiles`` says otherwise.
DEFAULT_PERCENTILES = (50.0, 99.0, 99.9, 99.99, 99.999)


def parse_percentiles(text: str) -> tuple[float, ...]:
    """``'99,99.9,p99.999'`` → (99.0, 99.9, 99.999); one line naming a
    percentile the report cannot give."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        try:
            value = float(part.removeprefix("p"))
        except ValueError:
            value = -1.0
        if value not in PTS_PERCENTILES:
            known = " ".join(f"{p:g}" for p in PTS_PERCENTILES)
            raise JobError(f"--percentiles {text}: '{part}' is not a percentile iolab records (one of: {known})")
        out.append(value)
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class PtsSettings:
    test: str
    variant: str = "enterprise"
    round_time: Optional[str] = None
    max_rounds: Optional[int] = None
    capacity: Optional[str] = None
    wsat_fills: Optional[float] = None
    quick: bool = False
    purge: bool = True
    purge_device: Optional[str] = None
    allow_overwrite: bool = False
    ioengine: Optional[str] = None
    direct: bool = True
    name: Optional[str] = None
    restart: bool = False
    percentiles: tuple[float, ...] = DEFAULT_PERCENTILES


@dataclass(frozen=True)
class Target:
    """What is tested: an NBD export, a block device or a file."""

    kind: str  # "nbd", "device", "file"
    where: str
    size_bytes: Optional[int]  # the device's or export's size; a file's when it exists

    @classmethod
    def of(cls, path: Optional[str], uri: Optional[str], purge_device: Optional[str] = None) -> Target:
        if (path is None) == (uri is None):
            raise JobError("give the device or file to test, or --uri nbd://...: exactly one")
        if uri is not None:
            if purge_device is not None:
                raise JobError(f"--purge-device {purge_device}: only for a block device; --uri names an NBD export")
            return cls("nbd", uri, purging.export_size(uri))
        assert path is not None
        p = Path(path)
        if p.exists() and stat.S_ISBLK(p.stat().st_mode):
            return cls("device", path, None)  # its size is read after the safety checks
        if purge_device is not None:
            raise JobError(f"--purge-device {purge_device}: only for a block device; {path} is not one")
        return cls("file", path, p.stat().st_size if p.is_file() else None)


@dataclass
class Resolved:
    """The settings with their defaults applied, and what was shrunk."""

    round_time: str
    max_rounds: int
    capacity_bytes: int
    wsat_fills: float
    shrunk: list[str] = field(default_factory=list)


def resolve(s: PtsSettings, target: Target) -> Resolved:
    wsat = s.test == "wsat"
    round_time = s.round_time or (QUICK_ROUND_TIME if s.quick else SPEC_ROUND_TIME)
    spec_rounds = SPEC_WSAT_ROUNDS if wsat else PTS_RULE.max_rounds
    max_rounds = s.max_rounds or (min(QUICK_MAX_ROUNDS, spec_rounds) if s.quick else spec_rounds)
    if max_rounds < PTS_RULE.rounds:
        raise JobError(f"--max-rounds {max_rounds}: a steady-state window needs {PTS_RULE.rounds} rounds")
    cap_bytes = _native.parse_size(s.capacity) if s.capacity is not None else None
    if target.size_bytes is None and cap_bytes is None:
        raise JobError(f"{target.where}: the file does not exist: give its size with --capacity")
    size = target.size_bytes if target.kind != "file" else None
    if size is not None and cap_bytes is not None and cap_bytes > size:
        raise JobError(f"--capacity {s.capacity}: larger than {target.where} ({size} bytes)")
    if cap_bytes is None and s.quick:
        cap_bytes = min(_native.parse_size(QUICK_CAPACITY), target.size_bytes or 1 << 62)
    capacity = cap_bytes if cap_bytes is not None else target.size_bytes
    assert capacity is not None
    out = Resolved(round_time, max_rounds, capacity, s.wsat_fills or SPEC_WSAT_FILLS)
    if _native.parse_duration_ns(round_time) < _native.parse_duration_ns(SPEC_ROUND_TIME):
        out.shrunk.append(f"rounds of {round_time} per cell (the spec: {SPEC_ROUND_TIME})")
    if max_rounds < spec_rounds:
        out.shrunk.append(f"at most {max_rounds} rounds (the spec: {spec_rounds})")
    if size is not None and capacity < size:
        out.shrunk.append(f"{capacity} of {size} bytes tested and preconditioned (--capacity)")
    if wsat and out.wsat_fills < SPEC_WSAT_FILLS:
        out.shrunk.append(f"WSAT until {out.wsat_fills:g}x capacity written (the spec: {SPEC_WSAT_FILLS:g}x)")
    if s.quick and s.test in ("iops", "latency", "dirth"):
        out.shrunk.append("the matrix shrunk (--quick)")
    return out


def base_options(s: PtsSettings, target: Target, r: Resolved) -> dict[str, Value]:
    opts: dict[str, Value] = {}
    if target.kind == "nbd":
        if s.ioengine not in (None, "nbd"):
            raise JobError(f"--ioengine {s.ioengine}: an NBD export (--uri) is driven by ioengine nbd")
        opts.update(ioengine="nbd", uri=target.where)
    else:
        opts.update(filename=target.where, ioengine=s.ioengine or "io_uring", direct=s.direct)
    opts.update(
        size=r.capacity_bytes,
        time_based=True,
        runtime=r.round_time,
        group_reporting=True,
        norandommap=True,
        randrepeat=False,
    )
    return opts


def check_target(s: PtsSettings, target: Target, tables: purging.SystemTables) -> Target:
    """The safety checks, before anything is opened for writing: the target
    with its size (a device's read now)."""
    if target.kind != "device":
        return target
    why = purging.in_use(target.where, tables)
    if why is not None:
        raise RefusedError(f"{target.where}: {why}: iolab never writes a device in use; unmount it first")
    if s.purge:
        purging.check_device_purge(target.where, s.purge_device, s.allow_overwrite, tables)
    elif not s.allow_overwrite:
        raise RefusedError(f"{target.where}: writing a block device needs --allow-overwrite")
    return replace(target, size_bytes=purging.device_size(target.where))


def purge(s: PtsSettings, target: Target) -> purging.Purged:
    """The purge (or the record that there was none), after :func:`check_target`."""
    if not s.purge:
        return purging.Purged("not purged (--no-purge)", 0)
    if target.kind == "device":
        return purging.purge_device(target.where)
    if target.kind == "nbd":
        return purging.purge_nbd(target.where)
    return purging.purge_file(Path(target.where), s.allow_overwrite)


@dataclass
class CellRound:
    """One cell's run in one round: the figures the report reads."""

    round: int
    directory: str
    iops: float
    bw_bytes_per_s: float
    lat_mean_ns: float
    runtime_ns: int
    ios: dict[str, int]
    bytes: dict[str, int]
    #: each direction's total-latency histogram (lat), as the engine recorded it
    hists: dict[str, str]

    def metric(self, name: str) -> float:
        return float(getattr(self, name))


def cell_round(directory: Path, round_no: int, root: Path) -> CellRound:
    summary = read_record(directory).doc["summary"]
    (sample,) = run_samples(directory)[:1]
    hists: dict[str, str] = {}
    for d in ("read", "write"):
        lat = sample.dir(d).lat
        if lat is not None and lat.hist and sample.dir(d).ios:
            hists[d] = lat.hist
    return CellRound(
        round=round_no,
        directory=str(directory.relative_to(root)),
        iops=steady_metric(summary, "iops"),
        bw_bytes_per_s=steady_metric(summary, "bw_bytes_per_s"),
        lat_mean_ns=steady_metric(summary, "lat_mean_ns"),
        runtime_ns=int(sample.runtime_ns),
        ios={d: sample.dir(d).ios for d in ("read", "write")},
        bytes={d: sample.dir(d).bytes for d in ("read", "write")},
        hists=hists,
    )


def window_figures(rounds: Sequence[CellRound], percentiles: Sequence[float] = DEFAULT_PERCENTILES) -> dict[str, Any]:
    """A cell over the measurement window: I/Os over the time they ran, and
    latency from every round's histograms merged exactly (both directions
    and each)."""
    runtime_ns = sum(r.runtime_ns for r in rounds)
    out: dict[str, Any] = {"rounds": [r.round for r in rounds], "runtime_ns": runtime_ns}
    ios = sum(sum(r.ios.values()) for r in rounds)
    out["iops"] = ios / (runtime_ns / 1e9) if runtime_ns else 0.0
    out["bw_bytes_per_s"] = sum(sum(r.bytes.values()) for r in rounds) / (runtime_ns / 1e9) if runtime_ns else 0.0
    for d in ("read", "write", "total"):
        hists = [h for r in rounds for k, h in r.hists.items() if d in (k, "total")]  # total: both directions
        if not hists:
            continue
        merged = _native.hist_merge(hists)
        st = _native.hist_stats(merged, list(percentiles))
        out[f"lat_{d}"] = {
            "count": int(st["count"]),
            "mean_ns": float(st["mean_ns"]),
            "max_ns": int(st["max_ns"]),
            "percentiles_ns": {f"{p:g}": int(st["percentiles"][p]) for p in percentiles},
            "hist": merged,
        }
    return out


@dataclass
class StageOutcome:
    stage: Stage
    first_cell: int
    rounds: list[dict[str, CellRound]] = field(default_factory=list)
    windows: list[Optional[Window]] = field(default_factory=list)
    written_bytes: int = 0

    def tracking(self) -> list[float]:
        label = self.stage.cells[self.stage.tracking].label
        return [r[label].metric(self.stage.metric) for r in self.rounds]

    @property
    def steady(self) -> Optional[Window]:
        w = self.windows[-1] if self.windows else None
        return w if w is not None and w.steady else None


Say = Callable[[str], None]


def run_stage(sweep: SweepRun, stage: StageOutcome, r: Resolved, say: Say) -> None:
    """Rounds of the stage's cells until its tracking cell is steady (WSAT:
    until ``wsat_fills`` x capacity is written), at most ``max_rounds``."""
    st = stage.stage
    for round_no in range(1, r.max_rounds + 1):
        this: dict[str, CellRound] = {}
        for i, cell in enumerate(st.cells):
            point = Point(stage.first_cell + i, cell.params)
            directory = sweep.run_one(point, round_no, r.max_rounds)
            this[cell.label] = cell_round(directory, round_no, sweep.dir)
        stage.rounds.append(this)
        stage.written_bytes += sum(c.bytes["write"] for c in this.values())
        w = window(stage.tracking(), PTS_RULE)
        stage.windows.append(w)
        value = stage.tracking()[-1]
        say(f"{st.name}: round {round_no}: {st.metric} {value:.6g}" + (f"; {_verdict(w)}" if w else ""))
        if st.until_written:
            if stage.written_bytes >= r.wsat_fills * r.capacity_bytes:
                return
        elif w is not None and w.steady:
            return


def _verdict(w: Window) -> str:
    return "steady" if w.steady else "; ".join(w.failures())


@dataclass
class PtsOutcome:
    directory: Path
    doc: dict[str, Any]


def run_pts(
    settings: PtsSettings,
    path: Optional[str],
    uri: Optional[str],
    results_root: Path,
    *,
    say: Say = lambda _line: None,
    tables: purging.SystemTables = purging.SYSTEM,
    sweep_options: Optional[SweepOptions] = None,
) -> PtsOutcome:
    test = pts_test(settings.test, settings.variant, settings.quick)
    target = check_target(settings, Target.of(path, uri, settings.purge_device), tables)
    r = resolve(settings, target)
    name = settings.name or f"pts-{test.name}"
    if not name.strip() or "/" in name:
        raise JobError(f"--name '{name}': give a non-empty name without '/'")
    directory = results_root / name
    if directory.exists() and not settings.restart:
        raise JobError(f"{directory} exists: a PTS test starts from a purge; give --restart to discard it, or --name")
    base = base_options(settings, target, r)
    wipc: tuple[tuple[str, Value], ...] = ()
    if test.wipc:
        wipc = (("rw", "write"), ("bs", "128k"), ("iodepth", 32), ("size_factor", 2))
    plan = Plan(name, f"SNIA PTS {test.title}", "matrix", 1, False, None, tuple(base.items()), (), precondition=wipc)
    opts = replace(
        sweep_options or SweepOptions(),
        allow_overwrite=settings.allow_overwrite,
        restart=settings.restart,
        where="a PTS test",
    )
    purged = purge(settings, target)
    say(f"purge: {purged.how}")
    sweep = open_sweep(plan, _plan_text(plan), results_root, opts)
    started = time.time_ns()
    sweep.catalog.set_status(name, "running")
    try:
        if wipc:
            say(f"preconditioning: 2x {r.capacity_bytes} bytes of 128 KiB sequential writes")
            sweep.precondition()
        stages: list[StageOutcome] = []
        first = 1
        for st in test.stages:
            stages.append(StageOutcome(st, first))
            first += len(st.cells)
            run_stage(sweep, stages[-1], r, say)
    except BaseException:
        sweep.catalog.set_status(name, "failed")
        sweep.progress.close()
        raise
    sweep.progress.close()
    doc = outcome_json(test, settings, target, r, purged, stages, started)
    write_json(sweep.dir / PTS_FILE, doc)
    meta = json.loads((sweep.dir / "sweep.json").read_text(encoding="utf-8"))
    meta.update(points=first - 1, pts=PTS_FILE, finished_unix_ns=time.time_ns())
    write_json(sweep.dir / "sweep.json", meta)
    sweep.catalog.set_status(name, "complete")
    return PtsOutcome(sweep.dir, doc)


def _plan_text(plan: Plan) -> str:
    lines = ["[plan]", f"name = {json.dumps(plan.name)}", f"description = {json.dumps(plan.description)}", "", "[base]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in plan.base]
    return "\n".join(lines) + "\n"


def _cell_json(cell: Cell, index: int) -> dict[str, Any]:
    return {"index": index, "label": cell.label, "params": dict(cell.params)}


def stage_json(s: StageOutcome, percentiles: Sequence[float]) -> dict[str, Any]:
    st = s.stage
    steady = s.steady
    last = s.windows[-1] if s.windows else None
    # The measurement window: the steady window, else the last 5 rounds (not steady: said so).
    span = s.rounds[-PTS_RULE.rounds :] if len(s.rounds) >= PTS_RULE.rounds else s.rounds
    return {
        "name": st.name,
        "metric": st.metric,
        "tracking": st.cells[st.tracking].label,
        "until_written": st.until_written,
        "written_bytes": s.written_bytes,
        "cells": [_cell_json(c, s.first_cell + i) for i, c in enumerate(st.cells)],
        "rounds": [
            {
                "round": i + 1,
                "tracking": s.tracking()[i],
                "window": w.to_json(PTS_RULE) if w else None,
                "cells": {label: _round_json(c) for label, c in rnd.items()},
            }
            for i, (rnd, w) in enumerate(zip(s.rounds, s.windows))
        ],
        "steady": steady is not None,
        "steady_round": steady.last_round if steady else None,
        "window": last.to_json(PTS_RULE) if last else None,
        "measurement": {c.label: window_figures([r[c.label] for r in span], percentiles) for c in st.cells},
    }


def _round_json(c: CellRound) -> dict[str, Any]:
    return {k: v for k, v in c.__dict__.items() if k != "hists"}


def outcome_json(
    test: PtsTest,
    s: PtsSettings,
    target: Target,
    r: Resolved,
    purged: purging.Purged,
    stages: list[StageOutcome],
    started_unix_ns: int,
) -> dict[str, Any]:
    return {
        "kind": "pts",
        "test": test.name,
        "title": test.title,
        "variant": s.variant,
        "target": {"kind": target.kind, "where": target.where, "size_bytes": target.size_bytes},
        "capacity_bytes": r.capacity_bytes,
        "round_time": r.round_time,
        "max_rounds": r.max_rounds,
        "rule": {k: getattr(PTS_RULE, k) for k in ("rounds", "excursion_pct", "slope_pct")},
        "purge": purged.to_json(),
        "preconditioning": "2x capacity, 128 KiB sequential writes" if test.wipc else None,
        "wsat_fills": r.wsat_fills if test.name == "wsat" else None,
        "shrunk": r.shrunk,
        "started_unix_ns": started_unix_ns,
        "tool_version": _native.version(),
        "percentiles": list(s.percentiles),
        "stages": [stage_json(st, s.percentiles) for st in stages],
    }
