"""Job files of our own (tests/jobs/data/compat/) with the options that other
projects' job files use — VM and target test suites, driver benchmarks,
filesystem test suites: each parses, runs short, and shows the option's effect.

They stand for the survey of other projects' job files (its table lives
outside this repository, with the files' sources) without copying any of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

DATA = Path(__file__).parent / "data" / "compat"
FILES = sorted(p.name for p in DATA.glob("*.fio"))
#: The variables the calling scripts set (driver-perf.fio uses them).
ENV = {"IOENGINE": "libaio", "BLK_SIZE": "4k"}
DEFAULT_RANDSEED = 0xB1899BED


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)


def _run(cli: Callable[..., Any], name: str, *args: str) -> dict[str, Any]:
    r = cli("run", str(DATA / name), *args, "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    return dict(json.loads(r.stdout))


@pytest.mark.parametrize("name", FILES)
def test_compat_file_parses_and_runs(cli: Callable[..., Any], workdir: Path, name: str) -> None:
    assert cli("run", str(DATA / name), "--parse-only").exit_code == 0
    doc = _run(cli, name)
    assert all(j["error"] == 0 for j in doc["jobs"])


def test_verify_state_save_0_keeps_no_state_file(cli: Callable[..., Any], workdir: Path) -> None:
    doc = _run(cli, "vm-integrity.fio")
    job = doc["jobs"][0]
    assert job["write"]["io_bytes"] == 2 << 20
    assert sorted(p.name for p in workdir.iterdir()) == ["compat-integrity.dat"]
    r = cli("run", str(DATA / "vm-integrity.fio"), "--verify_state_save=1", "--parse-only")
    assert r.exit_code != 0
    assert "iolab does not save verify state files; set verify_state_save=0" in r.output


def test_cpumask_pins_the_workers(cli: Callable[..., Any], workdir: Path) -> None:
    shown = cli("run", str(DATA / "driver-perf.fio"), "--parse-only").stdout
    assert "cpus_allowed: [0]" in shown
    # Bit 63 names a CPU this machine does not have: the pinning itself refuses it.
    r = cli("run", str(DATA / "driver-perf.fio"), "--cpumask=0x8000000000000000", "--output-format=terse")
    assert r.exit_code != 0
    assert "63" in r.output


def test_fsync_on_close_and_allrandrepeat(cli: Callable[..., Any], workdir: Path) -> None:
    doc = _run(cli, "fs-stress.fio")
    for job in doc["jobs"]:
        assert job["write"]["total_ios"] == 64
        assert job["sync"]["total_ios"] == 1, "one fsync at the file's one close"
    shown = cli("run", str(DATA / "fs-stress.fio"), "--parse-only").stdout
    assert shown.count(f"randseed: {DEFAULT_RANDSEED}") == 2, "allrandrepeat=1 overrides randrepeat=0"
