"""ioscheduler: checked against the devices under the job's files, never switched."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from iolab.errors import JobError
from iolab.jobs.extras import JobExtras
from iolab.run.hostfacts import storage_facts
from iolab.run.iosched import check_ioschedulers


def _extras(scheduler: str) -> JobExtras:
    e = JobExtras("j")
    e.values["ioscheduler"] = scheduler
    return e


def test_noop_is_none_a_mismatch_stops_and_no_device_is_noted() -> None:
    job = {"name": "j", "filenames": ["/x/a"], "directory": None}
    said: list[str] = []
    on_none = {"disk": "sda", "scheduler": "none"}
    check_ioschedulers([job], [_extras("noop")], said.append, facts=lambda _: on_none)
    assert said == []
    with pytest.raises(JobError, match=r"sda \(under /x/a\) uses none.*echo mq-deadline > /sys/block/sda"):
        check_ioschedulers([job], [_extras("mq-deadline")], said.append, facts=lambda _: on_none)
    check_ioschedulers([job], [_extras("bfq")], said.append, facts=lambda _: {"disk": None, "scheduler": None})
    assert said == ["note: ioscheduler=bfq: /x/a is on no block device, so it has no scheduler (fio skips it)"]


def test_on_this_machine(cli: Callable[..., Any], workdir: Path) -> None:
    here = storage_facts(workdir)
    job = ["--name=s", "--ioengine=psync", "--rw=write", "--bs=4k", "--size=64k", "--filename=s.dat"]
    if here.get("scheduler"):
        r = cli("run", *job, f"--ioscheduler={here['scheduler']}", "--output-format=terse")
        assert r.exit_code == 0, r.output
    r = cli("run", *job[:-1], "--filename=t.dat", "--ioscheduler=no-such-scheduler")
    assert r.exit_code == 2 or "no block device" in r.stderr, r.output
    if here.get("scheduler"):
        assert "ioscheduler=no-such-scheduler" in r.stderr and "iolab does not switch schedulers" in r.stderr
        assert not (workdir / "t.dat").exists(), "stopped before the run"
