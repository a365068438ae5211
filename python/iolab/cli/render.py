"""How the CLI prints things: run results, prepared jobs, the quick table,
the option table. Formatting only; every figure keeps its unit."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

import typer

from iolab import _native
from iolab.jobs.extras import JobExtras
from iolab.report import format_quick_table, format_text
from iolab.report.quick import write_quick_results
from iolab.results import build_output, to_fio_json
from iolab.results.fio_terse import to_terse
from iolab.run.local import RunOutput
from iolab.run.wire import NAME as WIRE_SECTION
from iolab.run.wire import wire_section
from iolab.units import fmt_bw, fmt_bytes, fmt_secs

# ---- run results ----


#: ``--output-format`` values; fio's spellings (``normal``, ``json+``,
#: ``terse``) beside iolab's. ``json`` is iolab's own document; fio's JSON
#: layout is ``fio-json``.
OUTPUT_FORMATS = {
    "text": "text",
    "normal": "text",
    "json": "json",
    "fio-json": "fio-json",
    "json+": "json+",
    "terse": "terse",
}


def output_formats(value: str) -> list[str]:
    """``"normal,json+"`` → ``["text", "json+"]``; an unknown name is a ValueError naming it."""
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [n for n in names if n not in OUTPUT_FORMATS]
    if unknown or not names:
        raise ValueError(
            f"unknown output format '{','.join(unknown) or value}': use one or more of "
            f"{', '.join(OUTPUT_FORMATS)}, separated by ','"
        )
    return list(dict.fromkeys(OUTPUT_FORMATS[n] for n in names))


#: The key an interim report (``--status-interval``) has in each JSON
#: document it is (iolab's and fio's layouts); the final report has none.
STATUS_KEY = "status_report"


def formatted(
    out: RunOutput, output_format: str, fio_extra: Optional[dict[str, Any]] = None, status: Optional[int] = None
) -> str:
    """The run's results in ``output_format`` (text, json, fio-json, json+, terse);
    ``fio_extra``: keys to add to fio JSON entries, by job name (steadystate).
    ``status``: the number of the interim report ``out`` is (``--status-interval``),
    said in a JSON document's :data:`STATUS_KEY` and a line above the text;
    terse lines stay as fio writes them (one per job, report after report)."""
    doc = build_output(out.result_json, out.summary_json)
    wire = wire_section(out)  # iolab run --target-stats
    if wire is not None:
        doc[WIRE_SECTION] = wire
    mark = None if status is None else {"number": status, "interim": True, "cumulative_since_start": True}
    if output_format == "json":
        return json.dumps(doc if mark is None else {STATUS_KEY: mark, **doc}, indent=2) + "\n"
    if output_format in ("fio-json", "json+"):
        fio = to_fio_json(doc["result"], doc["summary"], plus=output_format == "json+")
        for entry in fio["jobs"]:
            entry.update((fio_extra or {}).get(entry["jobname"], {}))
        return json.dumps(fio if mark is None else {STATUS_KEY: mark, **fio}, indent=2) + "\n"
    if output_format == "terse":
        return to_terse(to_fio_json(doc["result"], doc["summary"]))
    head = "" if status is None else f"status report {status} (interim: cumulative since the start of the run)\n"
    return head + format_text(doc)


def status_report(out: RunOutput, number: int, output_formats: list[str], output: Optional[Path]) -> None:
    """Interim report ``number`` (``--status-interval``) in each of
    ``output_formats``, where the final report will go: stdout, or the
    ``output`` file (started afresh by the first; :func:`run_output` then
    appends the final report after them)."""
    text = "".join(formatted(out, f, status=number) for f in output_formats)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with output.open("w" if number == 1 else "a") as f:
        f.write(text)


def run_output(
    out: RunOutput,
    output_formats: list[str],
    output: Optional[Path],
    fio_extra: Optional[dict[str, Any]] = None,
    append: bool = False,
) -> None:
    """stdout gets each of ``output_formats`` in turn (as fio prints several);
    with ``output``, the file gets them and stdout the text summary.
    ``append``: after what the file has (the interim reports)."""
    text = "".join(formatted(out, f, fio_extra) for f in output_formats)
    if output is None:
        sys.stdout.write(text)
        return
    with output.open("a" if append else "w") as f:
        f.write(text)
    sys.stdout.write(formatted(out, "text"))
    typer.echo(f"results ({','.join(output_formats)}) written to {output}", err=True)


# ---- prepared jobs (--dry-run) ----

#: Fields in bytes that do not say so in their name (fio's option names).
_BYTE_FIELDS = {"size", "offset", "blockalign", "offset_increment"}
_DIRS = ("read", "write")


def _value(key: str, v: Any) -> str:
    if v is None:
        return "-"
    if key.endswith("_ns") and isinstance(v, int):
        return f"{v} ns ({fmt_secs(v)})"
    if key.endswith("_bytes_per_s") and isinstance(v, (int, float)):
        return f"{v} bytes/s ({fmt_bw(v)})"
    if (key in _BYTE_FIELDS or key.endswith("_bytes")) and isinstance(v, int):
        return f"{v} bytes ({fmt_bytes(v)})"
    if key == "bs":
        return _bs(v)
    if key == "rw" and isinstance(v, dict):
        return f"{v['pattern']}, {v['read_pct']}% reads"
    if key == "rate_iops" and isinstance(v, int):
        return f"{v} IOPS"
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return str(v)


def _bs(spec: dict[str, Any]) -> str:
    (kind, v), *_ = spec.items()
    if kind == "fixed":
        return f"{v} bytes ({fmt_bytes(v)})"
    if kind == "range":
        return f"{fmt_bytes(v['min'])} .. {fmt_bytes(v['max'])}"
    return "/".join(f"{fmt_bytes(b)}:{pct}%" for b, pct in v)


def _field(key: str, v: Any) -> str:
    # Per-direction pairs ([read, write]) print with their direction.
    if (
        isinstance(v, list)
        and len(v) == 2
        and key in {"bs", "blockalign", "rate_iops", "rate_bytes_per_s", "percentage_random"}
    ):
        return ", ".join(f"{d} {_value(key, x)}" for d, x in zip(_DIRS, v))
    return _value(key, v)


#: Workers whose files a dry run lists one by one; the rest are counted.
_LISTED_WORKERS = 4


def _files(job: dict[str, Any]) -> str:
    """The files the job's workers will use, as the engine opens them (the
    core's ``PreparedJob::files_for_worker``, through ``_native.worker_files``):
    the nbd URI; the named files, shared by every worker; else each worker's
    own, from ``filename_format`` in ``directory``."""
    if job.get("nbd"):
        return f"{job['nbd']['uri']} (the nbd export, every worker)"
    engine_job = json.dumps(job)
    if job.get("shared_files"):
        return ", ".join(_native.worker_files(engine_job, 0)) + " (every worker)"
    workers = int(job["numjobs"])
    per = [
        f"worker {i}: " + ", ".join(_native.worker_files(engine_job, i)) for i in range(min(workers, _LISTED_WORKERS))
    ]
    more = f"; … {workers - _LISTED_WORKERS} more workers, the same way" if workers > _LISTED_WORKERS else ""
    fmt, directory = job["files"]["filename_format"], job.get("directory") or "."
    return f"none named: each worker makes its own ({fmt} in {directory}): {'; '.join(per)}{more}"


def prepared_jobs(jobs: list[dict[str, Any]], extras: Optional[list[JobExtras]] = None) -> str:
    """Each prepared job: the options as written, then every resolved field,
    then the options handled around the engine (``extras``, same order)."""
    blocks = []
    for i, job in enumerate(jobs):
        written = " ".join(f"--{k}" if v is None else f"--{k}={v}" for k, v in job["spec"]["options"])
        lines = [f"job {job['name']}", f"  as written: {written}"]
        lines.append(f"  file names: {_files(job)}")
        skip = {"name", "spec", "warnings", "filenames"}
        lines += [f"  {k}: {_field(k, v)}" for k, v in job.items() if k not in skip]
        if extras is not None and extras[i].values:
            around = " ".join(f"{k}={v}" for k, v in extras[i].values.items())
            lines.append(f"  handled around the engine: {around}")
        lines += [f"  warning: {w}" for w in job.get("warnings", [])]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


# ---- quick ----


def quick_output(
    out: RunOutput, output: Optional[Path], not_run: Sequence[str] = (), device: Sequence[dict[str, Any]] = ()
) -> None:
    """The quick table on stdout, then the jobs Ctrl-C kept from running
    ("not run", never a row of zeros); the results files, named on stderr.
    The results document also carries, under ``quick``, what else the
    device did during each job and the jobs not run."""
    doc = build_output(out.result_json, out.summary_json)
    if not_run or device:
        doc["quick"] = {"device": list(device), "not_run": list(not_run)}
    for path in write_quick_results(doc, output):
        typer.echo(f"results written to {path}", err=True)
    sys.stdout.write(format_quick_table(doc))
    for name in not_run:
        sys.stdout.write(f"{name}: not run (interrupted before it started)\n")
    for why in dict.fromkeys(d["why"] for d in device if not d.get("measured")):
        sys.stdout.write(f"other traffic on the device {why}\n")


# ---- the option table ----


def option_table(rows: list[dict[str, Any]]) -> str:
    """Each job option: name, aliases, type, unit, default, then its help."""
    blocks = []
    for r in rows:
        head = r["name"]
        if r["aliases"]:
            head += f" (alias {', '.join(r['aliases'])})"
        head += f"  [{r['type']}{', ' + r['unit'] if r['unit'] else ''}]"
        default = r["default"] if r["default"] is not None else r["default_note"]
        if default:
            head += f"  default: {default}"
        help_text = r["help"] + (f" Values: {', '.join(r['choices'])}." if r["choices"] else "")
        body = textwrap.fill(help_text, width=100, initial_indent="    ", subsequent_indent="    ")
        blocks.append(f"{head}\n{body}")
    return "\n".join(blocks)
