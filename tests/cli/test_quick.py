"""`iolab quick`: the seven standard jobs, a table on stdout, JSON results in a file."""

from __future__ import annotations

import json
import os

from iolab.run.quick import QUICK_JOBS


def test_quick_in_a_directory(cli, workdir):
    target = workdir / "target"
    target.mkdir()
    r = cli("quick", str(target), "--runtime-per-job", "1s", "--size", "16M", "--output", "q.json")
    assert r.exit_code == 0, r.output
    for name, *_ in QUICK_JOBS:
        assert name in r.stdout, r.output
    assert "IOPS" in r.stdout and "MB/s" in r.stdout and "lat p99" in r.stdout, r.output
    assert r.stdout.count("\n") >= len(QUICK_JOBS) + 2, r.output
    doc = json.loads((workdir / "q.json").read_text())
    assert [j["name"] for j in doc["summary"]["jobs"]] == [n for n, *_ in QUICK_JOBS]
    assert [j["group"] for j in doc["summary"]["jobs"]] == list(range(len(QUICK_JOBS)))
    assert "q.json" in r.stderr, r.output
    # quick removes the test file it created
    assert list(target.iterdir()) == [], list(target.iterdir())


def test_quick_default_results_name(cli, workdir):
    target = workdir / "t"
    target.mkdir()
    r = cli("quick", str(target), "--runtime-per-job", "1s", "--size", "8M")
    assert r.exit_code == 0, r.output
    written = list(workdir.glob("iolab-quick-*.json"))
    assert len(written) == 1, r.output
    assert written[0].name in r.stderr, r.output


def test_quick_on_existing_file_reads_only_and_keeps_data(cli, workdir):
    data = os.urandom(8 * 2**20)
    f = workdir / "existing.dat"
    f.write_bytes(data)
    r = cli("quick", str(f), "--runtime-per-job", "1s", "--size", "8M", "-o", "q.json")
    assert r.exit_code == 0, r.output
    assert "--allow-overwrite" in r.stderr, r.output
    names = [j["name"] for j in json.loads((workdir / "q.json").read_text())["summary"]["jobs"]]
    assert names == ["seq-read-1m-qd8", "rand-read-4k-qd1", "rand-read-4k-qd32"], names
    assert f.read_bytes() == data


def test_quick_missing_path(cli, workdir):
    r = cli("quick", "nowhere")
    assert r.exit_code == 1, r.output
    assert "nowhere" in r.stderr and "Traceback" not in r.output, r.output
