"""exec_prerun / exec_postrun: a shell command before and after the job, its
output in JOB.prerun.txt / JOB.postrun.txt; a failing prerun stops the run
before any I/O."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import iolab
from iolab.jobs import JobSpec

JOB = ["--name=hooked", "--ioengine=psync", "--rw=write", "--bs=4k", "--size=64k", "--filename=data.bin"]


def test_prerun_runs_before_the_io_and_postrun_after(cli: Callable[..., Any], workdir: Path) -> None:
    # The prerun runs before the layout (it sees no data file yet); the postrun sees it written.
    r = cli(
        "run",
        *JOB,
        "--exec_prerun=echo pre; test -e data.bin && echo present || echo absent",
        "--exec_postrun=echo post; stat -c %s data.bin",
        "--output-format=fio-json",
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["jobs"][0]["write"]["io_bytes"] == 64 * 1024
    assert "hooked: saving output of prerun in hooked.prerun.txt" in r.stderr
    pre = (workdir / "hooked.prerun.txt").read_text()
    assert pre == "pre\nabsent\n", pre
    assert (workdir / "hooked.postrun.txt").read_text() == "post\n65536\n"


def test_a_failing_prerun_stops_the_run_before_any_io(cli: Callable[..., Any], workdir: Path) -> None:
    r = cli("run", *JOB, "--exec_prerun=echo no; exit 3")
    assert r.exit_code == 1
    assert "exec_prerun='echo no; exit 3' exited with status 3" in r.stderr, r.output
    assert not (workdir / "data.bin").exists(), "no job ran"
    assert (workdir / "hooked.prerun.txt").read_text() == "no\n"


def test_parse_only_runs_no_command(cli: Callable[..., Any], workdir: Path) -> None:
    assert cli("run", *JOB, "--exec_prerun=touch ran", "--parse-only").exit_code == 0
    assert not (workdir / "ran").exists()


def test_the_api_runs_them_too(workdir: Path) -> None:
    spec = JobSpec("api", (("ioengine", "null"), ("size", "64k"), ("exec_postrun", "echo done")))
    out = iolab.run(spec)
    assert out.result["jobs"][0]["name"] == "api"
    assert (workdir / "api.postrun.txt").read_text() == "done\n"
