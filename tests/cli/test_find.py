"""``iolab find`` end to end: a search through the real engine on a target
whose latency-load curve is known by construction, and bad input refused.

The stack: ``iolab target`` with a pool of one I/O buffer (``--pacing
buffers=1``: one request in service at a time, first come first served)
over a memory device behind a 20 ms ``delay`` layer. A closed loop of QD
requests then always finds QD - 1 ahead of each one: every read takes
QD x 20 ms (40 ms at QD 2, 60 ms at QD 3). So ``p50 < 50 ms`` holds up to
QD 2 and breaks at QD 3, with 10 ms (25 %) either side for the scheduling
noise of a loaded machine: the answer is 2. (The median, not a tail
percentile: a stall of the shared 2-core machine that holds the target for
100 ms moves a 300 ms run's p90, not its p50.) The hold is 20 ms, not 5:
beside CPU-bound work the target's reply timer waits for a time slice
(~2 ms) before many a reply, and a request at QD 2 pays for two holds —
with 5 ms holds that made QD 2 read 14.0 ms against a 12.5 ms SLO (a run
beside busy loops and other builds); 20 ms holds leave 5 ms per hold.
"""

from __future__ import annotations

import html
import json
import subprocess
from pathlib import Path

import pytest
from iolab.analysis.analyze import analyze
from iolab.analysis.load import load_dataset
from iolab.plans.model import load_plan
from iolab.report.analysis_text import format_analysis_text
from iolab.report.html import render_html
from iolab.report.markdown import format_analysis_markdown

from tests.target.test_target_cli import start, stop


def find_on_paced_target(iolab_cmd: list[str], tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``iolab find --slo p50<50ms ... ARGS`` on the stack above (results in tmp_path/res); it succeeded."""
    proc, sock = start(iolab_cmd, tmp_path, "--pacing", "buffers=1,cache=0,unit=128k",
                       "--export", "m=memory,size=4m+delay,read=20ms")  # fmt: skip
    try:
        r = subprocess.run(
            [*iolab_cmd, "find", "--slo", "p50<50ms", "--limit", "8", "--resolution", "1", *args,
             "--results", str(tmp_path / "res"), "--ioengine=nbd", f"--uri=nbd+unix:///m?socket={sock}",
             "--rw=randread", "--bs=4k", "--runtime=300ms", "--time_based"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        stop(proc)
    assert r.returncode == 0, r.stderr
    return r


def test_find_on_a_paced_delay_target_finds_qd_2(iolab_cmd: list[str], tmp_path: Path) -> None:
    r = find_on_paced_target(iolab_cmd, tmp_path, "--repeats", "2", "--max-repeats", "3", "--name=paced")
    directory = tmp_path / "res" / "find-paced-iodepth"
    found = json.loads((directory / "find.json").read_text())
    assert (found["best"], found["first_fail"]) == (2, 3), r.stdout
    # 1, 2 pass; 4, 3 break: every value run twice (three times where the decision was close),
    # each run a point of the sweep directory.
    assert [e["value"] for e in found["evaluations"]] == [1, 2, 4, 3]
    lines = r.stdout.splitlines()
    assert lines[0].startswith("p50 ") and "at QD 2: meets 'p50<50ms'" in lines[0], r.stdout
    assert lines[1].startswith("QD 3 breaks it"), r.stdout
    kept = load_plan(directory / "plan.toml")  # the job, as a plan file that `iolab sweep` would run
    assert kept.repeats == 2 and dict(kept.base)["ioengine"] == "nbd" and dict(kept.base)["time_based"] is True
    data = load_dataset(directory)  # what `iolab report` reads: the points along the axis
    assert data.axes == ["iodepth"] and [p.params["iodepth"] for p in data.points] == [1, 2, 3, 4]
    assert [len(p.samples) for p in data.points] == [
        e["repeats"] for e in sorted(found["evaluations"], key=lambda e: e["value"])
    ]
    an = analyze(data)
    assert "SLO search (iolab find, 'p50<50ms'):\n  " + lines[0] in format_analysis_text(an)
    assert "## SLO search (iolab find, 'p50<50ms')" in format_analysis_markdown(an)
    assert lines[1] in html.unescape(render_html(an))


def test_a_grid_of_qd_and_jobs_on_the_paced_target(iolab_cmd: list[str], tmp_path: Path) -> None:
    # One request in service at a time, 20 ms each: numjobs x QD requests in flight take
    # numjobs x QD x 20 ms each. p50 < 50 ms: QD 2 at one job (40 ms), QD 1 at two (40 ms; QD 2 is 80 ms).
    r = find_on_paced_target(iolab_cmd, tmp_path, "--axis", "iodepth", "--axis", "numjobs=1,2", "--repeats", "1",
                             "--max-repeats", "2", "--name=grid")  # fmt: skip
    directory = tmp_path / "res" / "find-grid-iodepth-numjobs"
    found = json.loads((directory / "find.json").read_text())
    assert [(row["numjobs"], row["best"], row["first_fail"]) for row in found["rows"]] == [(1, 2, 3), (2, 1, 2)]
    # Both frontier points keep two requests in flight at 40 ms: about the same IOPS; the statement names one.
    assert found["best"]["iodepth"] * found["best"]["numjobs"] == 2, r.stdout
    lines = r.stdout.splitlines()
    assert lines[0] == "frontier of 'p50<50ms' over iodepth x numjobs:", r.stdout
    assert lines[1].startswith("  numjobs 1: p50 ") and "at QD 2" in lines[1], r.stdout
    assert any(line.startswith("best over the grid: QD ") for line in lines), r.stdout
    data = load_dataset(directory)  # the report's view: the grid's points along both axes
    assert data.axes == ["iodepth", "numjobs"]
    assert {(p.params["iodepth"], p.params["numjobs"]) for p in data.points} >= {(1, 1), (2, 1), (3, 1), (1, 2), (2, 2)}
    assert "frontier of 'p50<50ms'" in format_analysis_text(analyze(data))


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--slo", "p99 below 1ms"], "does not parse"),
        (["--slo", "p99.95<1ms"], "not a percentile iolab records"),
        (["--slo", "p99<1ms", "--axis", "rw"], "--axis rw: not a numeric job option"),
        (["--slo", "p99<1ms", "--iodepth=4"], "iodepth=4: is an axis find searches"),
        (["--slo", "p99<1ms", "--repeats", "3", "--max-repeats", "2"], "need 1 ≤ repeats ≤ max-repeats"),
        (["--slo", "p99<1ms", "--search-name", "a/b"], "without '/'"),
        (["--slo", "p99<1ms", "--axis", "iodepth", "--axis", "numjobs"], "--axis numjobs=1,2,4"),
        (["--slo", "p99<1ms", "--axis", "iodepth", "--axis", "bs=4k", "--axis", "numjobs=1"], "a grid of two"),
    ],
)
def test_bad_input_is_one_line_exit_2(cli, workdir: Path, args: list[str], says: str) -> None:  # type: ignore[no-untyped-def]
    r = cli("find", *args, "--name=x", "--ioengine=null", "--rw=randread", "--size=1m", "--runtime=10ms")
    assert r.exit_code == 2, r.output
    assert says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (workdir / "iolab-results").exists()


def test_a_plan_with_axes_is_refused(cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    plan = workdir / "p.toml"
    plan.write_text('[plan]\nname = "p"\n[base]\nioengine = "null"\nsize = "1m"\n[axes]\nbs = ["4k", "8k"]\n')
    r = cli("find", "--slo", "p99<1ms", str(plan))
    assert r.exit_code == 2, r.output
    assert "has axes (bs); find searches its axes itself" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_the_same_command_reads_back_what_it_measured(cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    plan = workdir / "p.toml"
    plan.write_text(
        '[plan]\nname = "nul"\nrepeats = 2\n[base]\nioengine = "null"\nrw = "randread"\nsize = "1m"\n'
        'time_based = true\nruntime = "20ms"\n'
    )
    args = ("find", "--slo", "p99<1s and iops>1", "--limit", "2", "--max-repeats", "2", str(plan))
    first = cli(*args)
    assert first.exit_code == 0, first.output
    runs = sorted((workdir / "iolab-results" / "nul" / "points").glob("*/run.json"))
    assert [p.parent.name for p in runs] == ["p001-r1", "p001-r2", "p002-r1", "p002-r2"]
    stamps = [p.stat().st_mtime_ns for p in runs]
    again = cli(*args)
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout and "still holds at --limit 2" in again.stdout
    assert [p.stat().st_mtime_ns for p in runs] == stamps  # read back, not run again
