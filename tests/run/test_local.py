"""The local run driver: notes, progress, Ctrl-C, errors, and what reaches
the engine.

The engine is mostly replaced by a recording fake (``run_factory``) whose
result is a real one, made once by the real engine with the null backend;
the I/O-error test drives the real engine and changes its file under it."""

from __future__ import annotations

import json
import os
import socket
from typing import Any, Optional

import iolab
import pytest
from iolab import _native
from iolab.run.local import run_jobs


class Sink:
    def __init__(self) -> None:
        self.notes: list[str] = []
        self.updates: list[dict[str, Any]] = []
        self.closed = 0

    def note(self, line: str) -> None:
        self.notes.append(line)

    def update(self, progress: dict[str, Any]) -> None:
        self.updates.append(progress)

    def close(self) -> None:
        self.closed += 1


class FakeRun:
    """Finishes after ``polls`` polls; raises KeyboardInterrupt at poll ``interrupt_at``."""

    def __init__(self, result_json: str, polls: int, interrupt_at: Optional[int]) -> None:
        self.result_json = result_json
        self.polls_left = polls
        self.interrupt_at = interrupt_at
        self.calls: list[str] = []
        self.args: dict[str, Any] = {}
        self.start_notes: list[str] = []
        self.notes_at_start: list[str] = []

    def layout_notes(self) -> list[str]:
        return ["laid out f: 1 MiB", *self.start_notes]

    def start(self, at_unix_ns: Optional[int] = None) -> None:
        self.calls.append("start")
        self.start_notes = self.notes_at_start

    def poll(self, timeout_s: float) -> dict[str, Any]:
        self.calls.append("poll")
        if self.calls.count("poll") == self.interrupt_at:
            raise KeyboardInterrupt
        self.polls_left -= 1
        return {"phase": "running", "elapsed_ns": 1}

    def stop(self) -> None:
        self.calls.append("stop")
        self.polls_left = 0

    def finished(self) -> bool:
        return self.polls_left <= 0

    def wait(self) -> str:
        self.calls.append("wait")
        return self.result_json


@pytest.fixture(scope="module")
def real_result_json() -> str:
    job = iolab.Job("n", ioengine="null", rw="randread", bs="4k", size="1m", time_based=True, runtime="1s")
    return iolab.run(job).result_json


def make_factory(fake: FakeRun):
    def factory(jobs: list[Any], **kw: Any) -> FakeRun:
        fake.args = {"jobs": jobs, **kw}
        return fake

    return factory


def test_notes_progress_and_summary(real_result_json):
    fake, sink = FakeRun(real_result_json, polls=3, interrupt_at=None), Sink()
    out = run_jobs([iolab.Job("n", rw="read", size="1m")], progress=sink, run_factory=make_factory(fake))
    assert sink.notes == ["laid out f: 1 MiB"]
    # Three polls while running, one after the end (the final intervals).
    assert len(sink.updates) == 4 and sink.closed >= 1
    assert fake.calls == ["start", "poll", "poll", "poll", "poll", "wait"]
    assert not out.interrupted
    assert out.layout_notes == ("laid out f: 1 MiB",)
    assert out.summary["jobs"][0]["name"] == "n"
    assert json.loads(out.result_json) == out.result


def test_ctrl_c_stops_and_keeps_the_result(real_result_json):
    fake, sink = FakeRun(real_result_json, polls=100, interrupt_at=2), Sink()
    out = run_jobs([iolab.Job("n", rw="read", size="1m")], progress=sink, run_factory=make_factory(fake))
    assert fake.calls == ["start", "poll", "poll", "stop", "wait"]
    assert out.interrupted
    assert any("interrupted" in n for n in sink.notes), sink.notes
    assert out.summary["jobs"][0]["merged"]["read"]["ios"] > 0


def test_what_reaches_the_engine(real_result_json):
    fake = FakeRun(real_result_json, polls=1, interrupt_at=None)
    job = iolab.Job("n", rw="randread", size="1m", time_based=True, runtime=1)
    run_jobs([job], allow_overwrite=True, interval_ns=500_000_000, run_factory=make_factory(fake))
    assert fake.args == {
        "jobs": [("n", [("rw", "randread"), ("size", "1m"), ("time_based", None), ("runtime", "1")])],
        "interval_ns": 500_000_000,
        "allow_overwrite": True,
        "host": socket.gethostname(),
    }


def test_settings_without_effect_are_noted_before_the_run(real_result_json):
    fake, sink = FakeRun(real_result_json, polls=1, interrupt_at=None), Sink()
    job = iolab.Job("q", ioengine="psync", rw="randread", size="1m", iodepth=16)
    run_jobs([job], progress=sink, run_factory=make_factory(fake))
    assert sink.notes[0].startswith("q: warning:") and "iodepth=16" in sink.notes[0], sink.notes


def test_invalid_job_never_reaches_the_engine(real_result_json):
    fake = FakeRun(real_result_json, polls=1, interrupt_at=None)
    with pytest.raises(iolab.JobError, match="bs"):
        run_jobs([iolab.Job("n", rw="read", size="1m", bs="0")], run_factory=make_factory(fake))
    assert fake.calls == [] and fake.args == {}


def test_notes_from_starting_the_workers_are_shown_once(real_result_json):
    fake, sink = FakeRun(real_result_json, polls=2, interrupt_at=None), Sink()
    fake.notes_at_start = ["f: O_DIRECT not supported, using buffered I/O"]
    out = run_jobs([iolab.Job("n", rw="read", size="1m")], progress=sink, run_factory=make_factory(fake))
    assert sink.notes == ["laid out f: 1 MiB", "f: O_DIRECT not supported, using buffered I/O"]
    assert out.layout_notes == tuple(sink.notes)


def test_an_io_error_keeps_the_partial_result(tmp_path):
    """The real engine: the file shrinks to 1 MiB + 1000 bytes between
    layout and start (as in the engine's own test), so the read at 1 MiB
    comes back short and its rest finds the end of the file."""
    path = tmp_path / "t.0.0"

    def shrink_after_prepare(jobs: list[Any], **kw: Any) -> Any:
        run = _native.Run(jobs, **kw)
        os.truncate(path, 2**20 + 1000)
        return run

    sink = Sink()
    job = iolab.Job("t", directory=str(tmp_path), rw="read", size="4m", ioengine="psync")
    with pytest.raises(OSError) as raised:
        run_jobs([job], progress=sink, run_factory=shrink_after_prepare)
    assert f"I/O error on {path} at offset 1048576 (4096 bytes, read)" in str(raised.value)
    partial = iolab.partial_output(raised.value)
    assert partial is not None, "the partial result is attached"
    read = partial.summary["jobs"][0]["merged"]["read"]
    assert (read["ios"], read["errors"]) == (256, 1), "the work before the error is kept"
    assert json.loads(partial.result_json) == partial.result
    assert any("ended early on an error" in n for n in sink.notes), sink.notes


def test_an_error_without_a_result_is_raised_as_it_is(real_result_json):
    class Broken(FakeRun):
        def wait(self) -> str:
            raise iolab.EngineError("run lifecycle: the coordinator thread panicked")

    fake = Broken(real_result_json, polls=1, interrupt_at=None)
    with pytest.raises(iolab.EngineError) as raised:
        run_jobs([iolab.Job("n", rw="read", size="1m")], run_factory=make_factory(fake))
    assert iolab.partial_output(raised.value) is None
