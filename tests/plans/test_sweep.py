"""run_sweep: every point x repeat written as it finishes; resume; changed
plans refused; drop_caches, timeouts, warm-up and steady state recorded.

Points run the real engine with ioengine=null for 50 ms, so a sweep takes
well under a second per point."""

from __future__ import annotations

import dataclasses
import io
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from iolab.errors import EngineError
from iolab.plans.progress import SweepProgress
from iolab.plans.sweep import PlanChangedError, SweepInterrupted, SweepOptions, run_sweep
from iolab.results.catalog import Catalog
from iolab.run.local import RunOutput, run_jobs
from iolab.run.progress import Terminal

PLAN = """
[plan]
name = "s"
repeats = 2
{plan_extra}
[base]
filename = "{target}"
size = "1m"
rw = "randread"
ioengine = "null"
time_based = true
runtime = "50ms"
[axes]
bs = ["4k", "8k", "16k"]
{extra}
"""


def _write(tmp: Path, plan_extra: str = "", extra: str = "") -> Path:
    path = tmp / "plan.toml"
    path.write_text(
        PLAN.format(target=tmp / "t.dat", plan_extra=textwrap.dedent(plan_extra), extra=textwrap.dedent(extra))
    )
    return path


class Counting:
    """A runner that runs for real and counts; ``interrupt_at`` makes the
    n-th call come back as if Ctrl-C had stopped it."""

    def __init__(self, interrupt_at: int = 0) -> None:
        self.calls = 0
        self.interrupt_at = interrupt_at

    def __call__(self, specs: Any, **kw: Any) -> RunOutput:
        self.calls += 1
        out = run_jobs(specs, **kw)
        if self.calls == self.interrupt_at:
            return dataclasses.replace(out, interrupted=True)
        return out


def _opts(runner: Any = None, **kw: Any) -> SweepOptions:
    stream = io.StringIO()
    progress = SweepProgress(Terminal(stream, is_tty=False))
    return SweepOptions(runner=runner or run_jobs, progress=progress, **kw)


def _done(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "s" / "points").iterdir() if (p / "run.json").exists())


def test_sweep_writes_every_point_and_repeat(tmp_path: Path) -> None:
    root = tmp_path / "res"
    out = run_sweep(_write(tmp_path), root, _opts())
    assert (out.points, out.runs_total, out.runs_done_now) == (3, 6, 6)
    assert _done(root) == ["p001-r1", "p001-r2", "p002-r1", "p002-r2", "p003-r1", "p003-r2"]
    meta = json.loads((root / "s" / "sweep.json").read_text())
    assert meta["points"] == 3 and len(meta["plan_hash"]) == 64
    run = json.loads((root / "s" / "points" / "p002-r1" / "run.json").read_text())
    assert run["params"] == {"bs": "8k"} and run["repeat"] == 1 and run["timed_out"] is False
    config = json.loads((root / "s" / "points" / "p002-r1" / "config.json").read_text())
    assert config["prepared"][0]["bs"] == [{"fixed": 8192}, {"fixed": 8192}]
    assert Catalog(root).find("s")["status"] == "complete"


def test_resume_skips_finished_points(tmp_path: Path) -> None:
    plan, root = _write(tmp_path), tmp_path / "res"
    first = Counting(interrupt_at=4)
    with pytest.raises(SweepInterrupted, match="run the same command to resume"):
        run_sweep(plan, root, _opts(first))
    assert _done(root) == ["p001-r1", "p001-r2", "p002-r1"]  # the interrupted 4th is not kept
    assert Catalog(root).find("s")["status"] == "interrupted"
    second = Counting()
    out = run_sweep(plan, root, _opts(second))
    assert second.calls == 3, "only the three unfinished runs run again"
    assert (out.runs_done_before, out.runs_done_now) == (3, 3)
    assert len(_done(root)) == 6
    assert Catalog(root).find("s")["status"] == "complete"


def test_changed_plan_is_refused_then_restart(tmp_path: Path) -> None:
    plan, root = _write(tmp_path), tmp_path / "res"
    run_sweep(plan, root, _opts())
    plan.write_text(plan.read_text().replace('"16k"', '"32k"'))
    with pytest.raises(PlanChangedError, match=r"different plan .*another --results directory, or --restart"):
        run_sweep(plan, root, _opts())
    out = run_sweep(plan, root, _opts(restart=True))
    assert out.runs_done_now == 6
    params = {json.loads((p / "run.json").read_text())["params"]["bs"] for p in (root / "s" / "points").iterdir()}
    assert params == {"4k", "8k", "32k"}


def test_quick_changes_the_hash(tmp_path: Path) -> None:
    plan, root = _write(tmp_path, extra='[quick]\nruntime = "20ms"\nrepeats = 1'), tmp_path / "res"
    run_sweep(plan, root, _opts(quick=True))
    with pytest.raises(PlanChangedError):
        run_sweep(plan, root, _opts())


def test_drop_caches_done_and_failure_recorded(tmp_path: Path) -> None:
    plan = _write(tmp_path, plan_extra="drop_caches = true")
    fake = tmp_path / "drop_caches"
    fake.write_text("")
    run_sweep(plan, tmp_path / "ok", _opts(drop_caches_path=fake))
    assert fake.read_text() == "3\n"
    run = json.loads((tmp_path / "ok" / "s" / "points" / "p001-r1" / "run.json").read_text())
    assert run["drop_caches"] == {"done": True}
    opts = _opts(drop_caches_path=tmp_path / "missing" / "drop_caches")
    run_sweep(plan, tmp_path / "bad", opts)
    run = json.loads((tmp_path / "bad" / "s" / "points" / "p001-r1" / "run.json").read_text())
    assert run["drop_caches"]["done"] is False and "No such file" in run["drop_caches"]["error"]
    assert opts.progress is not None
    assert "page cache NOT dropped" in opts.progress.terminal.stream.getvalue()  # type: ignore[attr-defined]


def test_timeout_stops_a_point_and_marks_it(tmp_path: Path) -> None:
    plan = _write(tmp_path, plan_extra='timeout_per_point = "300ms"')
    plan.write_text(plan.read_text().replace('runtime = "50ms"', 'runtime = "30s"').replace('"8k", "16k"', ""))
    plan.write_text(plan.read_text().replace("repeats = 2", "repeats = 1"))
    run_sweep(plan, tmp_path / "res", _opts())
    run = json.loads((tmp_path / "res" / "s" / "points" / "p001-r1" / "run.json").read_text())
    assert run["timed_out"] is True
    doc = json.loads((tmp_path / "res" / "s" / "points" / "p001-r1" / "result.json").read_text())
    assert doc["summary"]["jobs"][0]["merged"]["runtime_ns"] < 5 * 10**9


def test_steady_state_rounds_recorded(tmp_path: Path) -> None:
    extra = "[steady_state]\nrounds = 2\nmax_rounds = 3\nexcursion_pct = 1000\nslope_pct = 1000"
    plan = _write(tmp_path, extra=extra)
    runner = Counting()
    run_sweep(plan, tmp_path / "res", _opts(runner))
    run = json.loads((tmp_path / "res" / "s" / "points" / "p001-r1" / "run.json").read_text())
    ss = run["steady_state"]
    assert ss["reached"] is True and ss["rounds"] == 2 and len(ss["values"]) == 2
    assert runner.calls == 12  # 3 points x 2 repeats x 2 rounds


def test_steady_state_not_reached_stops_at_max_rounds(tmp_path: Path) -> None:
    extra = "[steady_state]\nrounds = 2\nmax_rounds = 3\nexcursion_pct = 0.0001\nslope_pct = 0.0001"
    plan = _write(tmp_path, extra=extra)
    run_sweep(plan, tmp_path / "res", _opts())
    ss = json.loads((tmp_path / "res" / "s" / "points" / "p001-r1" / "run.json").read_text())["steady_state"]
    assert ss["reached"] is False and ss["rounds"] == 3


def test_precondition_and_warmup_run(tmp_path: Path) -> None:
    extra = '[precondition]\nrw = "write"\nbs = "64k"\nsize_factor = 2\n[warmup]\nruntime = "20ms"'
    plan = _write(tmp_path, extra=extra)
    runner = Counting()
    run_sweep(plan, tmp_path / "res", _opts(runner))
    fill = json.loads((tmp_path / "res" / "s" / "precondition" / "result.json").read_text())
    assert fill["summary"]["jobs"][0]["merged"]["write"]["bytes"] == 2 * 2**20
    assert runner.calls == 1 + 6 * 2  # fill once, then warm-up + measured run per point x repeat
    run = json.loads((tmp_path / "res" / "s" / "points" / "p001-r1" / "run.json").read_text())
    assert run["warmup_run"] == "20ms"


def test_an_error_keeps_finished_points_and_marks_the_sweep_failed(tmp_path: Path) -> None:
    plan, root = _write(tmp_path), tmp_path / "res"
    calls = 0

    def failing(specs: Any, **kw: Any) -> RunOutput:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise EngineError("device went away")
        return run_jobs(specs, **kw)

    with pytest.raises(EngineError, match="device went away"):
        run_sweep(plan, root, _opts(failing))
    assert _done(root) == ["p001-r1"]
    assert Catalog(root).find("s")["status"] == "failed"


LOGGED_STEADY_PLAN = """
[plan]
name = "ls"
[base]
filename = "{target}"
size = "1m"
rw = "randread"
bs = "4k"
ioengine = "null"
time_based = true
runtime = "60s"
steadystate = "iops:10000%"
ss_dur = "1s"
ss_interval = "250ms"
write_bw_log = "bw"
write_lat_log = "lat"
log_avg_msec = 250
[axes]
iodepth = [1, 2]
"""


def test_points_take_fio_logs_and_steady_state_as_iolab_run_does(tmp_path: Path) -> None:
    """Issue 22: a point runs through the run pipeline, so ``steadystate``
    ends it (was refused: "applied by `iolab run` and iolab.run() only") and
    the fio logs land in its directory. Truths: each point ends at steady
    state long before its 60 s runtime, and its bw log's windows add up to
    the bytes it read."""
    plan = tmp_path / "plan.toml"
    plan.write_text(LOGGED_STEADY_PLAN.format(target=tmp_path / "t.dat"))
    run_sweep(plan, tmp_path / "res", _opts())
    for name in ("p001-r1", "p002-r1"):
        point = tmp_path / "res" / "ls" / "points" / name
        ss = json.loads((point / "steadystate.json").read_text())["ls"]["steadystate"]
        assert ss["attained"] == 1 and ss["ss"] == "iops:10000%"
        read = json.loads((point / "result.json").read_text())["summary"]["jobs"][0]["merged"]["read"]
        runtime_s = read["bytes"] / read["bw_bytes_per_s"]
        assert runtime_s < 30, runtime_s  # ended by steady state, not by its 60 s runtime
        rows = [[int(v) for v in line.split(", ")] for line in (point / "bw_bw.1.log").read_text().splitlines()]
        assert rows and all(r[0] % 250 == 0 for r in rows[:-1])  # windows of log_avg_msec
        start, kib = 0, 0.0
        for r in rows:  # KiB/s over each window → KiB
            kib += r[1] * (r[0] - start) / 1000
            start = r[0]
        # Each line is truncated to whole KiB/s, and times to whole ms.
        assert abs(kib * 1024 - read["bytes"]) <= 1024 * len(rows) + read["bytes"] * 0.001 * len(rows)
        assert (point / "lat_lat.1.log").is_file()
