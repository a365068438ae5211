"""`iolab run --status-interval` (fio's): interim reports, each the whole
report of the run so far (cumulative since the start, ramp left out), in
every chosen output format, before the final one."""

from __future__ import annotations

import json
from typing import Any

NULL_RUN = ["--name=n", "--ioengine=null", "--size=1g", "--bs=4k", "--rw=randread", "--time_based", "--runtime=3500ms"]


def json_documents(text: str) -> list[dict[str, Any]]:
    """Successive JSON documents, as docs/user-guide.md says to read them."""
    decoder, docs, at = json.JSONDecoder(), [], 0
    while text[at:].strip():
        at += len(text[at:]) - len(text[at:].lstrip())
        doc, at = decoder.raw_decode(text, at)
        docs.append(doc)
    return docs


def _read_ios(doc: dict[str, Any]) -> int:
    return int(doc["summary"]["jobs"][0]["merged"]["read"]["ios"])


def test_interim_reports_are_cumulative_and_the_final_is_unchanged(cli, workdir):
    r = cli("run", *NULL_RUN, "--status-interval=1", "--output-format=json")
    assert r.exit_code == 0, r.output
    *interim, final = json_documents(r.stdout)
    # Reports are due at 1 s and 2 s of a run that lasts at least 3.5 s: both
    # come before its end however loaded the machine (a poll every 0.25 s).
    assert len(interim) >= 2, r.stdout[:2000]
    assert [d["status_report"]["number"] for d in interim] == list(range(1, len(interim) + 1))
    assert all(d["status_report"]["interim"] for d in interim)
    ios = [_read_ios(d) for d in interim]
    assert ios == sorted(ios) and ios[-1] <= _read_ios(final), (ios, _read_ios(final))
    assert _read_ios(final) > 0
    # The final report is the one a run without --status-interval prints.
    plain = json_documents(cli("run", *NULL_RUN[:-1], "--runtime=200ms", "--output-format=json").stdout)
    assert len(plain) == 1 and "status_report" not in final
    assert final.keys() == plain[0].keys()
    assert final["summary"]["jobs"][0].keys() == plain[0]["summary"]["jobs"][0].keys()
    assert len(final["result"]["jobs"][0]["workers"][0]["series"]) >= 3  # the final keeps its series


def test_interim_iops_of_a_rate_capped_job_is_the_cap(cli, workdir):
    """rate_iops=200: I/O k is due at k/200 s of the measured window and the
    schedule catches up after a stall, so T seconds in at most 200 T + 1
    I/Os are done and, unless the worker was kept off a CPU for the last
    half second before T, at least 200 (T - 0.5)."""
    cap = 200
    r = cli("run", *NULL_RUN, f"--rate_iops={cap}", "--status-interval=1", "--output-format=fio-json")
    assert r.exit_code == 0, r.output
    *interim, _final = json_documents(r.stdout)
    measured = [d for d in interim if d["jobs"][0]["read"]["runtime"] >= 900]  # ms
    assert measured, r.stdout[:2000]
    for d in measured:
        read = d["jobs"][0]["read"]
        secs = read["runtime"] / 1e3
        assert cap * (secs - 0.5) <= read["total_ios"] <= cap * secs + 2, read
        assert read["iops"] <= cap + 2 / secs, read


def test_every_format_is_printed_at_each_report(cli, workdir):
    r = cli("run", *NULL_RUN[:-1], "--runtime=2500ms", "--status-interval=1", "--output-format=normal,terse")
    assert r.exit_code == 0, r.output
    heads = [line for line in r.stdout.splitlines() if line.startswith("status report ")]
    terse = [line for line in r.stdout.splitlines() if line.startswith("3;")]
    assert len(heads) >= 1 and len(terse) == len(heads) + 1, r.stdout
    assert r.stdout.count("Run status group 0") == len(heads) + 1, r.stdout


def test_output_file_gets_every_report_and_stdout_the_final_text(cli, workdir):
    r = cli("run", *NULL_RUN[:-1], "--runtime=2500ms", "--status-interval=1", "--output-format=json+", "-o", "r.json")
    assert r.exit_code == 0, r.output
    docs = json_documents((workdir / "r.json").read_text())
    assert len(docs) >= 2 and "status_report" not in docs[-1], docs
    assert all(d["status_report"]["number"] == i + 1 for i, d in enumerate(docs[:-1]))
    assert "status report" not in r.stdout and "IOPS" in r.stdout, r.output


def test_a_bad_status_interval_is_one_line(cli, workdir):
    for value, why in (("0", "must be greater than zero"), ("soon", "expected a duration")):
        r = cli("run", *NULL_RUN, f"--status-interval={value}")
        assert r.exit_code != 0, r.output
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "--status-interval" in lines[0] and why in lines[0], r.stderr
