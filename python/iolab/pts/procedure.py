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
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Optional

from iolab import _native
from iolab.analysis.load import run_samples
from iolab.errors import JobError
from iolab.plans.model import Plan, Value
from iolab.plans.points import Point
from iolab.plans.steady import steady_metric
from iolab.plans.sweep import SweepOptions, SweepRun, open_sweep
from iolab.pts import purge as purging
from iolab.pts.matrix import Cell, PtsTest, Stage, pts_test
from iolab.pts.settings import (
    DEFAULT_PERCENTILES,
    PtsSettings,
    Resolved,
    Target,
    base_options,
    check_target,
    purge,
    resolve,
)
from iolab.pts.steady import PTS_RULE, Window, window
from iolab.results.rundir import read_record, write_json

PTS_FILE = "pts.json"


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
