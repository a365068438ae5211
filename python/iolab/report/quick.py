"""What ``iolab quick`` leaves behind: its results document (JSON) and its
HTML report with the most important findings.

The report is built from memory: the quick run becomes a
:class:`~iolab.results.rundir.RunRecord` (the same record a run directory
holds) and is analysed as one, with no directory written and read back.

Each job's point gets the device figures measured over that job (quick
runs its jobs one by one, :mod:`iolab.run.quick`). When something else
used the device during a job, the report says so first
(:func:`device_traffic_finding`): those figures measure a shared device.
Quick's own lack of warm-up is its standard design, not the user's
choice: that warning is kept, last.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Optional

from iolab.analysis import analyze
from iolab.analysis.load import run_dataset
from iolab.analysis.model import Analysis, Finding
from iolab.analysis.samples import device_figures
from iolab.analysis.warnings import MIN_TAIL_SAMPLES
from iolab.report.html import render_html
from iolab.results import build_output
from iolab.results.rundir import RunRecord, run_config
from iolab.run.local import prepare_all
from iolab.run.quick import QuickOutput, default_results_path
from iolab.units import fmt_bytes

#: Above every rule's score: other traffic on the device comes first.
OTHER_TRAFFIC_SCORE = 1000.0
#: Jobs the finding gives figures for (worst first); the others it names.
SHOWN_JOBS = 3


def write_quick_results(doc: dict[str, Any], path: Optional[Path] = None) -> list[Path]:
    """Write quick's results document (``iolab.result/1`` JSON) to ``path``
    (default: ``./iolab-quick-YYYYmmdd-HHMMSS.json``); return the paths written."""
    json_path = path or default_results_path()
    json_path.write_text(json.dumps(doc, indent=2) + "\n")
    return [json_path]


def quick_record(out: QuickOutput, run_id: str) -> RunRecord:
    """The quick run as a run directory would hold it (in memory)."""
    doc = build_output(out.run.result_json, out.run.summary_json)
    meta = {"id": run_id, "kind": "run", "interrupted": out.run.interrupted, "finished_unix_ns": time.time_ns()}
    config = run_config(out.jobs, out.run.prepared or prepare_all(out.jobs))
    return RunRecord(doc, config, out.host or {}, meta)


def device_traffic_finding(device: list[dict[str, Any]]) -> Optional[Finding]:
    """ "Other I/O on the device" with the numbers, worst job first, when
    something besides iolab used the device during a job; None otherwise."""
    hit = sorted((d for d in device if d.get("flagged")), key=lambda d: -d["other_bytes"])
    if not hit:
        return None

    def one(d: dict[str, Any]) -> str:
        return (
            f"{d['name']}: ~{d['other_ios']:,} other I/Os, {fmt_bytes(d['other_bytes'])} "
            f"({fmt_bytes(d['other_read_bytes'])} read, {fmt_bytes(d['other_write_bytes'])} written) "
            f"beside iolab's own {d['own_ios']:,} I/Os, {fmt_bytes(d['own_bytes'])}"
        )

    more = hit[SHOWN_JOBS:]
    listed = "; ".join(one(d) for d in hit[:SHOWN_JOBS])
    if more:
        listed += f"; also {', '.join(d['name'] for d in more)}"
    text = (
        f"other I/O on {hit[0]['device']} during {len(hit)} of {len(device)} jobs — {listed}: another program "
        "used the device, so those jobs measured a shared device; rerun them when it is idle"
    )
    figures = {d["name"]: {k: v for k, v in d.items() if k != "name"} for d in hit}
    return Finding("device_other_traffic", "warning", text, figures, score=OTHER_TRAFFIC_SCORE)


def _with_device(an: Analysis, device: list[dict[str, Any]]) -> Analysis:
    """The device finding first (it replaces the analysis's own, which
    names only the worst point), quick's own no-warm-up warning last."""
    found = device_traffic_finding(device)
    if found is not None:
        an.warnings[:] = [found, *(w for w in an.warnings if w.kind != "warn_other_device_io")]
    for w in an.warnings:
        if w.kind == "warn_no_warmup":
            w.text = "quick's standard jobs have no warm-up: " + w.text
            w.score = 0.0
        if w.kind == "warn_too_few_samples" and not _about_the_table(w):
            w.score = 0.0  # kept in the report, but not a top finding under a table that does not show it
    return an


#: The highest percentile quick's table prints (lat p50 and p99).
TABLE_TOP_PCT = 99.0


def _about_the_table(w: Finding) -> bool:
    """Whether a too-few-samples warning touches a percentile quick's table
    prints: one above p99 does not when the job had enough latencies for p99."""
    pct, count = w.figures["percentile"], w.figures["count"]
    return bool(pct <= TABLE_TOP_PCT or count * (1 - TABLE_TOP_PCT / 100) < MIN_TAIL_SAMPLES)


def write_quick_report(out: QuickOutput, json_path: Path) -> tuple[Path, list[Finding]]:
    """Analyse the quick run and write its HTML report next to the results
    (``NAME.json`` → ``NAME.html``); return its path and the three most
    important findings."""
    # By job: the findings printed under quick's table name its rows as the table does.
    ds = run_dataset(quick_record(out, json_path.stem), json_path.stem, str(json_path), by_job=True)
    ds.name = f"iolab quick ({json_path.stem})"
    # One point per job, in order; each gets the device figures of its own window.
    for point, d in zip(ds.points, out.device):
        if d.get("measured"):
            for sample in point.samples:
                sample.device = device_figures({"devices": [d["diskstats"]]})
    an = _with_device(analyze(ds), list(out.device))
    html_path = json_path.with_suffix(".html")
    html_path.write_text(render_html(an), encoding="utf-8")
    return html_path, an.top(3)
