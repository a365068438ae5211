"""`iolab report` and `iolab compare` on real results: a run directory
written by `iolab run --results` (null engine, two stonewall groups) and a
fio json+ output produced by fio 3.33."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIO_JSON = Path(__file__).parents[1] / "analysis" / "data" / "fio" / "groups_plus.json"
JOB = ["--ioengine=null", "--size=1m", "--rw=randread", "--bs=4k", "--runtime=30ms", "--time_based"]


@pytest.fixture
def run_dir(cli, workdir: Path) -> Path:
    r = cli("run", "--name=qd1", *JOB, "--name=qd8", *JOB, "--iodepth=8", "--stonewall", "--results", "res")
    assert r.exit_code == 0, r.output
    (found,) = (workdir / "res").glob("run-*")
    return found


def test_report_text_md_json(cli, run_dir: Path) -> None:
    text = cli("report", str(run_dir))
    assert text.exit_code == 0, text.output
    assert text.stdout.startswith(f"iolab analysis: {run_dir.name}\n") and "Throughput and latency" in text.stdout
    md = cli("report", str(run_dir), "--format", "md")
    assert md.exit_code == 0 and md.stdout.startswith("# iolab analysis:"), md.output
    js = cli("report", str(run_dir), "--format", "json")
    doc = json.loads(js.stdout)
    assert doc["schema"] == "iolab.analysis/1" and len(doc["points"]) == 2
    assert {r["dir"] for r in doc["rows"]} == {"read"} and doc["rows"][0]["metrics"]["iops"]["unit"] == "iops"


def test_report_html_default_and_output(cli, run_dir: Path, workdir: Path) -> None:
    r = cli("report", str(run_dir), "--format", "html")
    assert r.exit_code == 0, r.output
    assert r.stdout == f"{run_dir / 'report.html'}\n"
    assert (run_dir / "report.html").read_text().startswith("<!DOCTYPE html>")
    r = cli("report", str(run_dir), "-f", "html", "-o", "mine.html")
    assert r.exit_code == 0 and r.stdout == "mine.html\n" and (workdir / "mine.html").is_file(), r.output
    r = cli("report", str(run_dir), "-f", "md", "-o", "r.md")
    assert r.exit_code == 0 and r.stdout == "" and "r.md" in r.stderr, r.output
    assert (workdir / "r.md").read_text().startswith("# iolab analysis:")
    # Without --format the suffix says which (as `iolab lab`); another suffix is text.
    r = cli("report", str(run_dir), "-o", "by-suffix.html")
    assert r.exit_code == 0 and (workdir / "by-suffix.html").read_text().startswith("<!DOCTYPE html>"), r.output
    r = cli("report", str(run_dir), "-o", "by-suffix.json")
    assert r.exit_code == 0 and (workdir / "by-suffix.json").read_text().lstrip().startswith("{"), r.output
    r = cli("report", str(run_dir), "-o", "plain.txt")
    assert r.exit_code == 0 and (workdir / "plain.txt").read_text().startswith("iolab analysis:"), r.output


def test_report_of_fio_json_plus(cli, workdir: Path) -> None:
    src = workdir / "fio-out.json"
    shutil.copy(FIO_JSON, src)
    r = cli("report", str(src), "-f", "html")
    assert r.exit_code == 0 and r.stdout == f"{workdir / 'fio-out.report.html'}\n", r.output
    text = cli("report", str(src))
    assert "measured by: fio-3.33" in text.stdout, text.output


def test_compare_formats(cli, run_dir: Path) -> None:
    r = cli("compare", str(run_dir), str(run_dir))
    assert r.exit_code == 0, r.output
    assert "matched rows: 2" in r.stdout and "no repeats: cannot tell" in r.stdout
    md = cli("compare", str(run_dir), str(run_dir), "--format", "md")
    assert md.stdout.startswith("# iolab compare:") and "| point | dir | metric |" in md.stdout, md.output
    doc = json.loads(cli("compare", str(run_dir), str(run_dir), "-f", "json").stdout)
    assert doc["schema"] == "iolab.compare/1" and len(doc["rows"]) == 2
    assert all(m["diff_pct"] == 0.0 for row in doc["rows"] for m in row["metrics"].values() if m["a"]["value"])


def test_bad_inputs(cli, workdir: Path) -> None:
    (workdir / "x.json").write_text("{}")
    r = cli("report", "x.json")
    assert r.exit_code == 1 and "x.json" in r.stderr and "Traceback" not in r.output, r.output
    r = cli("report", "nowhere")
    assert r.exit_code == 2 and "nowhere" in r.stderr, r.output
    r = cli("report", "x.json", "--format", "pdf")
    assert r.exit_code == 2 and "pdf" in r.stderr, r.output
    r = cli("compare", "x.json", "x.json", "--format", "html")
    assert r.exit_code == 2 and "html" in r.stderr, r.output


def _differ(cli, workdir: Path, name: str, *extra: str) -> Path:
    r = cli("run", "--name=job", *JOB, *extra, "--results", name)
    assert r.exit_code == 0, r.output
    (found,) = (workdir / name).glob("run-*")
    return found


def test_compare_refuses_different_jobs_unless_forced(cli, workdir: Path) -> None:
    a = _differ(cli, workdir, "a")
    b = _differ(cli, workdir, "b", "--bs=128k", "--rw=randrw", "--rwmixread=70")
    r = cli("compare", str(a), str(b))
    assert r.exit_code != 0, r.output
    assert "ran different jobs" in r.stderr and "--force" in r.stderr and str(a) in r.stderr, r.output
    assert "rw randread (A) vs randrw (B)" in r.stderr and "bs 4 KiB (A) vs 128 KiB (B)" in r.stderr, r.stderr
    assert "rwmixread - (A) vs 70% (B)" in r.stderr, r.stderr
    forced = cli("compare", str(a), str(b), "--force")
    assert forced.exit_code == 0, forced.output
    lines = forced.stdout.splitlines()
    assert lines[1].startswith("DIFFERENT JOBS (compared with --force): rw randread (A) vs randrw (B)"), lines
    assert f"A: {a} (" in forced.stdout and f"B: {b} (" in forced.stdout
    # headline figures by default, every percentile with --all
    assert " lat p50 " in forced.stdout and " lat p99.9 " not in forced.stdout
    every = cli("compare", str(a), str(b), "--force", "--all")
    assert " lat p99.9 " in every.stdout and " lat mean " in every.stdout, every.output


def test_report_of_a_results_json(cli, workdir: Path) -> None:
    r = cli("run", "--name=qd1", *JOB, "--name=qd8", *JOB, "--iodepth=8", "--stonewall",
            "--output", "result.json", "--output-format", "json")  # fmt: skip
    assert r.exit_code == 0, r.output
    text = cli("report", "result.json")
    assert text.exit_code == 0, text.output
    assert "points: 2, axes: iodepth," in text.stdout and "Throughput and latency" in text.stdout, text.stdout
    html = cli("report", "result.json", "-f", "html")
    assert html.exit_code == 0 and html.stdout == "result.report.html\n", html.output
    assert (workdir / "result.report.html").is_file()


def test_report_of_an_interrupted_run_says_so_first(cli, run_dir: Path) -> None:
    meta_path = run_dir / "run.json"
    meta = json.loads(meta_path.read_text())
    meta["interrupted"] = True
    meta_path.write_text(json.dumps(meta))
    text = cli("report", str(run_dir))
    assert text.exit_code == 0, text.output
    second = text.stdout.splitlines()[1]
    assert second.startswith("STATUS: interrupted: figures cover only the time that ran"), text.stdout
    doc = json.loads(cli("report", str(run_dir), "-f", "json").stdout)
    assert doc["warnings"][0]["kind"] == "incomplete"
    page = run_dir / cli("report", str(run_dir), "-f", "html").stdout.strip()
    assert "<strong>STATUS: interrupted" in page.read_text()


def test_report_of_an_unfinished_sweep_says_what_was_kept(cli, run_dir: Path, workdir: Path) -> None:
    # A sweep of 3 planned runs of which 1 finished: the report says so and
    # does not claim the figures cover the time that ran.
    sweep = workdir / "sw"
    (sweep / "points").mkdir(parents=True)
    shutil.copytree(run_dir, sweep / "points" / "p001-r1")
    meta = json.loads((run_dir / "run.json").read_text())
    (sweep / "points" / "p001-r1" / "run.json").write_text(json.dumps({**meta, "point": 1, "params": {"iodepth": 1}}))
    (sweep / "sweep.json").write_text(json.dumps({"id": "sw", "kind": "sweep", "points": 3, "repeats": 1}))
    (sweep / "plan.json").write_text(json.dumps({"axes": [{"name": "iodepth"}], "repeats": 1}))
    text = cli("report", str(sweep))
    assert text.exit_code == 0, text.output
    second = text.stdout.splitlines()[1]
    assert second.startswith("STATUS: incomplete sweep: 1 of 3 planned runs finished"), text.stdout
    assert "a run cut short is not kept" in second and "cover only the time" not in text.stdout


def test_help_lists_each_command_on_one_unbroken_line() -> None:
    # issue #13: `iolab --help` kept the docstrings' line breaks, cutting sentences mid-way
    from iolab.cli.main import app

    for info in app.registered_commands:
        assert info.short_help and "\n" not in info.short_help, info.name


def test_report_and_compare_read_a_streamed_runs_series_from_its_file(cli, workdir: Path) -> None:
    """Issue 30: a run made with --stream-intervals keeps its series in
    timeseries.parquet, not result.json; report (text, HTML chart of every
    interval) and compare read them from there."""
    dirs = []
    for n in range(2):
        r = cli(
            "run", "--name=s", *JOB, "--runtime=300ms", "--interval", "20ms", "--results", f"s{n}", "--stream-intervals"
        )
        assert r.exit_code == 0, r.output
        (found,) = (workdir / f"s{n}").glob("run-*")
        dirs.append(found)
    doc = json.loads((dirs[0] / "result.json").read_text())
    ref = doc["summary"]["series_file"]
    assert ref["file"] == "timeseries.parquet" and ref["groups"][0] >= 10, ref
    assert doc["summary"]["groups"][0]["series"] == [] and doc["summary"]["jobs"][0]["series"] == []
    text = cli("report", str(dirs[0]))
    assert text.exit_code == 0 and "Throughput and latency" in text.stdout, text.output
    js = json.loads(cli("report", str(dirs[0]), "--format", "json").stdout)
    assert js["schema"] == "iolab.analysis/1"
    html = cli("report", str(dirs[0]), "-o", "r.html")
    assert html.exit_code == 0, html.output
    page = (workdir / "r.html").read_text()
    assert "IOPS over time" in page
    cmp = cli("compare", str(dirs[0]), str(dirs[1]))
    assert cmp.exit_code == 0 and "matched rows: 1" in cmp.stdout, cmp.output
