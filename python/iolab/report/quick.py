"""What ``iolab quick`` leaves behind: its results document (JSON) and its
HTML report with the most important findings.

The report is built from memory: the quick run becomes a
:class:`~iolab.results.rundir.RunRecord` (the same record a run directory
holds) and is analysed as one, with no directory written and read back.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Optional

from iolab.analysis import analyze
from iolab.analysis.load import run_dataset
from iolab.analysis.model import Finding
from iolab.report.html import render_html
from iolab.results import build_output
from iolab.results.rundir import RunRecord, run_config
from iolab.run.local import prepare_all
from iolab.run.quick import QuickOutput, default_results_path


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


def write_quick_report(out: QuickOutput, json_path: Path) -> tuple[Path, list[Finding]]:
    """Analyse the quick run and write its HTML report next to the results
    (``NAME.json`` → ``NAME.html``); return its path and the three most
    important findings."""
    # By job: the findings printed under quick's table name its rows as the table does.
    ds = run_dataset(quick_record(out, json_path.stem), json_path.stem, str(json_path), by_job=True)
    ds.name = f"iolab quick ({json_path.stem})"
    an = analyze(ds)
    html_path = json_path.with_suffix(".html")
    html_path.write_text(render_html(an), encoding="utf-8")
    return html_path, an.top(3)
