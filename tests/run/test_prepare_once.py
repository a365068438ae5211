"""Jobs are prepared once per run in Python: the observers (diskstats),
the engine's warnings and the run directory's config.json share one
preparation (``iolab run --results`` used to prepare each job again for
each of them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iolab import _native


def test_run_with_results_prepares_each_job_once(cli, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = _native.prepare_job

    def counting(name: str, options: list[tuple[str, str | None]]) -> str:
        calls.append(name)
        return real(name, options)

    monkeypatch.setattr(_native, "prepare_job", counting)
    r = cli("run", "--name=a", "--filename=f.dat", "--size=1m", "--rw=read", "--bs=64k", "--results", "res")
    assert r.exit_code == 0, r.output
    assert calls == ["a"], calls
    (run_dir,) = [p for p in (workdir / "res").iterdir() if p.is_dir()]
    config = json.loads((run_dir / "config.json").read_text())
    assert [p["name"] for p in config["prepared"]] == ["a"]
    assert config["prepared"][0]["size"] == 1 << 20
