"""fio's outputs from ``iolab run``: json+, terse v3, several formats at once,
and fio's spellings ``--minimal``, ``--parse-only``, ``--section``, ``--showcmd``.

Truths: json+ ``bins`` count every I/O (N at both ends) and give back the
percentiles iolab printed, within fio's own bucket error (half a bucket:
1/128 of the value) plus HDR's 0.1 %; fio's ``fio_jsonplus_clat2csv``
reads and validates iolab's json+ unchanged; terse lines carry the same
figures as the JSON, field by field.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest
from iolab.results.fio_plat import PLAT_NR, plat_percentile, plat_value
from peers import require_peer

NULL_JOB = ["--name=a", "--ioengine=null", "--size=16m", "--bs=4k", "--rw=randrw", "--numjobs=2"]
JOB_FILE = """
[global]
ioengine=null   ; inline comment
size = 8m       # spaces around '='
bs=4k
[first]
rw=read
[second]
rw=write
"""


def _plus(cli: Callable[..., Any], *args: str) -> dict[str, Any]:
    r = cli("run", *NULL_JOB, *args, "--output-format=json+")
    assert r.exit_code == 0, r.output
    return dict(json.loads(r.stdout))


def _counts(bins: dict[str, int]) -> list[int]:
    index = {plat_value(i): i for i in range(PLAT_NR)}
    counts = [0] * PLAT_NR
    for key, count in bins.items():
        counts[index[int(key)]] += count
    return counts


def test_json_plus_bins_count_every_io_and_give_back_the_printed_percentiles(cli: Callable[..., Any]) -> None:
    doc = _plus(cli)
    assert len(doc["jobs"]) == 2
    for entry in doc["jobs"]:
        for d in ("read", "write"):
            for lat in ("slat_ns", "clat_ns", "lat_ns"):
                stats = entry[d][lat]
                assert sum(stats["bins"].values()) == stats["N"] == entry[d]["total_ios"]
                counts = _counts(stats["bins"])
                for pct, printed_ns in stats["percentile"].items():
                    from_bins = plat_percentile(counts, float(pct))
                    assert abs(from_bins - printed_ns) <= max(1, printed_ns / 64), (lat, pct, from_bins, printed_ns)


def test_json_plus_with_group_reporting_merges_the_workers_bins(cli: Callable[..., Any]) -> None:
    per_worker = _plus(cli)
    grouped = _plus(cli, "--group_reporting")
    (entry,) = grouped["jobs"]
    assert sum(entry["read"]["clat_ns"]["bins"].values()) == entry["read"]["total_ios"]
    # Same job, run again: each worker does size/bs I/Os in all, whatever the timing.
    assert entry["read"]["total_ios"] + entry["write"]["total_ios"] == sum(
        e[d]["total_ios"] for e in per_worker["jobs"] for d in ("read", "write")
    )


def test_fio_jsonplus_clat2csv_reads_and_validates_iolab_json_plus(cli: Callable[..., Any], tmp_path: Path) -> None:
    tool = require_peer("fio_jsonplus_clat2csv")
    (tmp_path / "plus.json").write_text(json.dumps(_plus(cli)))
    for extra in ([], ["--validate"]):
        r = subprocess.run([tool, "plus.json", "out.csv", *extra], cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
    assert "validated" in r.stdout
    rows = (tmp_path / "out_job0.csv").read_text().splitlines()
    assert rows[0].startswith("nsec, read_slat_ns_count") and len(rows) > 2


def test_terse_v3_has_fio_layout_and_the_json_figures(cli: Callable[..., Any]) -> None:
    r = cli("run", *NULL_JOB, "--output-format=fio-json,terse")
    assert r.exit_code == 0, r.output
    fio_json, _, terse = r.stdout.rpartition("}\n")
    entries = json.loads(fio_json + "}")["jobs"]
    lines = terse.splitlines()
    assert len(lines) == len(entries) == 2
    for line, entry in zip(lines, entries):
        f = line.split(";")
        assert len(f) == 121  # fio 3.33's terse v3 line of a job without a description
        assert f[0] == "3" and f[2] == "a" and f[3] == str(entry["groupid"])
        assert int(f[5]) == entry["read"]["io_kbytes"] and int(f[6]) == entry["read"]["bw"]
        assert int(f[46]) == entry["write"]["io_kbytes"]
        assert int(f[13]) == entry["read"]["clat_ns"]["min"] // 1000
        assert f[17].startswith("1.000000%=")
        assert f[91:98] == [""] * 7  # queue-depth distribution: not recorded, left empty


def test_minimal_is_terse(cli: Callable[..., Any]) -> None:
    r = cli("run", *NULL_JOB, "--minimal")
    assert r.exit_code == 0, r.output
    assert [line.split(";")[0] for line in r.stdout.splitlines()] == ["3", "3"]


def test_unknown_output_format_and_terse_version_are_named(cli: Callable[..., Any]) -> None:
    r = cli("run", *NULL_JOB, "--output-format=normal,yaml")
    assert r.exit_code == 2 and "yaml" in r.stderr, r.output
    r = cli("run", *NULL_JOB, "--minimal", "--terse-version=2")
    assert r.exit_code == 2 and "terse version 2" in r.stderr, r.output


def test_normal_and_json_at_once(cli: Callable[..., Any]) -> None:
    r = cli("run", *NULL_JOB, "--output-format=normal,json")
    assert r.exit_code == 0, r.output
    text, brace, rest = r.stdout.partition("{")
    assert "read: IOPS=" in text
    assert json.loads(brace + rest)["schema"] == "iolab.result/1"


def test_parse_only_section_and_showcmd(cli: Callable[..., Any], workdir: Path) -> None:
    (workdir / "two.fio").write_text(JOB_FILE)
    r = cli("run", "two.fio", "--parse-only", "--section=second")
    assert r.exit_code == 0, r.output
    assert "job second" in r.stdout and "job first" not in r.stdout
    r = cli("run", "two.fio", "--showcmd")
    assert r.exit_code == 0, r.output
    args = shlex.split(r.stdout)
    assert args[:3] == ["iolab", "run", "--name=first"]
    assert args.count("--ioengine=null") == 2 and "--size=8m" in args and "--rw=write" in args
    # The command line it shows runs the same jobs.
    again = cli("run", *args[2:], "--parse-only")
    assert again.exit_code == 0 and again.stdout.count("job ") == 2, again.output


def test_section_that_does_not_exist_is_named(cli: Callable[..., Any], workdir: Path) -> None:
    (workdir / "two.fio").write_text(JOB_FILE)
    r = cli("run", "two.fio", "--section=third")
    assert r.exit_code == 2, r.output
    assert "--section third: no such job; the jobs are first, second" in r.stderr


@pytest.mark.parametrize("spelling", ["--parse-only", "--dry-run"])
def test_parse_only_runs_nothing(cli: Callable[..., Any], workdir: Path, spelling: str) -> None:
    r = cli("run", "--name=x", "--rw=write", "--size=1m", spelling)
    assert r.exit_code == 0, r.output
    assert not list(workdir.iterdir())  # no file laid out
