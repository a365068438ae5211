"""Results → a :class:`Dataset`: an iolab run directory (or the same run in
memory, a :class:`~iolab.results.rundir.RunRecord`: :func:`run_dataset`),
an iolab sweep directory, or (by dispatch to
:mod:`iolab.analysis.fio_import`) a fio JSON output.

A run with several stonewall groups gives one point per group; its axes
are the job options whose values differ between the groups (the job name
when nothing else does). A sweep gives one point per plan point, its
params from each ``run.json``, its samples the repeats ``points/pNNN-rK``.
Numeric axis values (``values``) come from the resolved job (``bs`` in
bytes, ``iodepth``, ``numjobs``, ``size``…) or, for other options, from
the number as written or a size parsed by the native option parser.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Optional

from iolab import _native
from iolab.analysis.job_options import no_effect, shared, written_options
from iolab.analysis.model import Dataset, Point, Sample, Scalar
from iolab.analysis.samples import device_figures, group_sample
from iolab.errors import IolabError
from iolab.results.document import RESULT_SCHEMA
from iolab.results.rundir import RANK_FILE_PREFIX, RUN_FILE, RunRecord, current_document, is_complete, read_record

Json = dict[str, Any]
DISKSTATS_FILE = "diskstats.json"


class DatasetError(IolabError, ValueError):
    """A path that holds no results analysis can read."""


def load_dataset(path: str | Path) -> Dataset:
    """Read a run directory, a sweep directory or a fio JSON file.

    Raises :class:`DatasetError` naming the path when it is none of them."""
    p = Path(path)
    if p.is_file():
        return _load_file(p)
    if is_complete(p):
        return load_run_dir(p)
    if (p / "sweep.json").is_file():
        return load_sweep_dir(p)
    raise DatasetError(
        f"{p}: not an iolab run directory (run.json), sweep directory (sweep.json) or fio JSON file{_held(p)}"
    )


def _held(p: Path) -> str:
    """What to give instead of a directory that only holds results: its run
    and sweep directories (``iolab sweep --results DIR`` puts a sweep in
    ``DIR/<plan name>``), or a note that the path does not exist."""
    if not p.exists():
        return " (it does not exist)"
    if not p.is_dir():
        return ""
    held = sorted(c for c in p.iterdir() if c.is_dir() and (is_complete(c) or (c / "sweep.json").is_file()))
    if not held:
        return ""
    shown = ", ".join(str(c) for c in held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
    return f"; it holds {shown}: give one of them"


def _load_file(p: Path) -> Dataset:
    """A file: fio's output (its loader explains what is wrong with a fio
    text or terse output), or an iolab result document given by mistake."""
    text = p.read_text(encoding="utf-8", errors="replace")
    try:
        top = json.loads(text)
    except json.JSONDecodeError as e:
        _refuse_broken_iolab(p, text, e)
        top = None
    if isinstance(top, dict) and top.get("schema") == RESULT_SCHEMA:
        return load_result_file(p, top)
    if isinstance(top, dict) and str(top.get("schema", "")).startswith("iolab."):
        raise DatasetError(
            f"{p}: an iolab {top['schema']} document, not results; report a results file "
            "(iolab run --output-format json), a run directory (iolab run --results DIR) or a sweep directory"
        )
    if isinstance(top, dict) and "fio version" not in top:
        raise DatasetError(f"{p}: a JSON file without 'fio version': not fio output (give a run or sweep directory)")
    from iolab.analysis.fio_import import load_fio_json  # lazy: only fio outputs need it

    return load_fio_json(p)


#: How an iolab document opens (``{"schema": "iolab.result/1", ...``), whitespace aside.
_IOLAB_OPENING = re.compile(r'^\s*\{\s*"schema"\s*:\s*"(iolab\.[a-z_]+/\d+)"')


def _refuse_broken_iolab(p: Path, text: str, e: json.JSONDecodeError) -> None:
    """An iolab document that does not parse is a damaged iolab file, not fio
    output: say that, and what to do (fio's hint would mislead)."""
    m = _IOLAB_OPENING.match(text)
    if m is None:
        return
    schema = m.group(1)
    redo = "iolab run --output-format json --output FILE" if schema == RESULT_SCHEMA else "the command that wrote it"
    # Ended inside the document, or inside a string (a JSON string cannot
    # hold a raw newline, so an unterminated one runs to the end of the text).
    if e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string"):
        what = f"cut short (it ends at line {e.lineno}, inside the document)"
    else:
        what = f"that is not valid JSON ({e.msg} at line {e.lineno})"
    raise DatasetError(f"{p}: an {schema} file {what}: restore it, or rerun {redo}")


def load_result_file(path: Path, doc: Json) -> Dataset:
    """A results document (``iolab run --output-format json``): one point per
    stonewall group, as a run directory gives, without what only a directory
    keeps (host facts, device figures, the options as written: the axes are
    the resolved options that differ between groups, else the job name)."""
    try:
        doc = current_document(doc)
        config = {
            "jobs": [{"name": str(r["name"]), "options": written_options(r["job"])} for r in doc["result"]["jobs"]]
        }
        return run_dataset(RunRecord(doc, config, {}, {"id": path.stem}), path.stem, str(path))
    except (KeyError, TypeError, ValueError, IolabError) as e:
        raise DatasetError(f"{path}: a {RESULT_SCHEMA} document that cannot be read: {e}") from None


def _json(path: Path) -> Json:
    value: Json = json.loads(path.read_text(encoding="utf-8"))
    return value


def _optional_json(path: Path) -> Optional[Json]:
    return _json(path) if path.is_file() else None


def _run_notes(meta: Json) -> list[str]:
    notes = []
    if meta.get("interrupted"):
        notes.append("interrupted: figures cover only the time that ran")
    if meta.get("error"):
        notes.append(f"ended early on an error (figures cover the work done before it): {meta['error']}")
    if meta.get("timed_out"):
        notes.append("stopped at the per-point timeout")
    ss = meta.get("steady_state")
    if isinstance(ss, dict) and not ss.get("reached"):
        notes.append(f"steady state not reached after {ss.get('rounds')} rounds")
    dc = meta.get("drop_caches")
    if isinstance(dc, dict) and not dc.get("done"):
        notes.append(f"page cache not dropped: {dc.get('error')}")
    return notes


def record_samples(rec: RunRecord, default_label: str) -> list[Sample]:
    """Every stonewall group of one run (in memory or read from its directory), as samples."""
    groups = rec.doc["summary"]["groups"]
    disk = rec.files.get(DISKSTATS_FILE)
    notes = _run_notes(rec.meta)
    # One diskstats window covers the whole run: it belongs to a group only when there is one.
    device = device_figures(disk) if len(groups) == 1 else None
    if disk and len(groups) > 1:
        notes.append(f"device figures cover all {len(groups)} groups together: not attributed to one")
    label = str(rec.meta.get("id", default_label))
    # A fleet run's own documents per rank (hosts/rank-R.json): each host's rate caps.
    per_rank = [doc for name, doc in sorted(rec.files.items()) if name.startswith(RANK_FILE_PREFIX)]
    return [
        group_sample(rec.doc, g, label if len(groups) == 1 else f"{label}#g{g['group']}", notes, device, per_rank)
        for g in groups
    ]


def run_samples(directory: Path) -> list[Sample]:
    """Every stonewall group of one run directory, as samples."""
    return record_samples(read_record(directory), directory.name)


def _tool(directory: Path) -> str:
    meta = _optional_json(directory / RUN_FILE) or _optional_json(directory / "sweep.json") or {}
    return f"iolab {meta.get('tool_version', '?')}"


def load_run_dir(directory: Path) -> Dataset:
    """A run directory → one point per stonewall group."""
    return run_dataset(read_record(directory), directory.name, str(directory))


def run_dataset(rec: RunRecord, name: str, path: str, *, by_job: bool = False) -> Dataset:
    """A run (in memory: ``iolab quick``; or read from disk) → one point per
    stonewall group. ``by_job``: the job's name is the first axis, so rows
    and findings are named as a table of jobs names them (``iolab quick``)."""
    samples = record_samples(rec, name)
    options = [_effective(o, s) for o, s in zip(_group_options(rec.config, rec.doc), samples)]
    differ = [k for k in dict.fromkeys(k for o in options for k in o) if len({str(o.get(k)) for o in options}) > 1]
    axes = [k for k in differ if k != "job"] or (["job"] if len(samples) > 1 else [])
    if by_job and len(samples) > 1 and "job" not in axes:
        axes.insert(0, "job")
    points = []
    for i, (s, opts) in enumerate(zip(samples, options), 1):
        params: dict[str, Scalar] = {
            a: _effective({a: opts[a]}, s)[a] if a in opts else _default_effective(a, s) for a in axes
        }
        points.append(Point(i, params, numeric_values(params, s), [s]))
    warm = any(s.config.ramp_time_ns > 0 for s in samples)
    plan: Json = {"repeats": 1, "warmup": warm, "precondition": False, "drop_caches": None}
    tool = f"iolab {rec.meta.get('tool_version') or rec.doc['tool']['version']}"
    return Dataset("iolab-run", name, path, axes, points, rec.host, plan, tool, shared(options, axes))


def _effective(options: dict[str, Scalar], sample: Sample) -> dict[str, Scalar]:
    """Options as they acted on the sample's job: "-" for one without effect (rwmixread of a randread job)."""
    return {k: "-" if no_effect(k, sample.config.rw, v) else v for k, v in options.items()}


def _default_effective(option: str, s: Sample) -> Scalar:
    """An option the group did not write, as it acted: "-" where it has no
    effect on the group's rw (fio's rwmixread=50 on a randread job), else
    its resolved default."""
    return "-" if no_effect(option, s.config.rw) else _resolved(option, s)


def _resolved(option: str, s: Sample) -> Scalar:
    """The value a group ran with for an option it did not write (its
    default), where the prepared job tells; "-" otherwise."""
    if option == "iodepth":
        return s.config.iodepth
    number = _CONFIG_NUMBERS.get(option)
    got = number(s) if number is not None else None
    if got is None:
        return "-"
    return int(got) if float(got).is_integer() else got


def _group_options(config: Json, doc: Json) -> list[dict[str, Scalar]]:
    """Each stonewall group's first job's options as written (``job``: its name)."""
    jobs = config.get("jobs", [])
    firsts: dict[int, dict[str, Scalar]] = {}
    for i, sjob in enumerate(doc["summary"]["jobs"]):
        if sjob["group"] in firsts or i >= len(jobs):
            continue
        opts: dict[str, Scalar] = {"job": jobs[i]["name"]}
        opts.update({k: ("" if v is None else v) for k, v in jobs[i]["options"] if k != "stonewall"})
        firsts[sjob["group"]] = opts
    return [firsts.get(int(g["group"]), {}) for g in doc["summary"]["groups"]]


_CONFIG_NUMBERS: dict[str, Callable[[Sample], Optional[float]]] = {
    # iodepth is taken as written: the engine may run fewer (sync engines keep 1).
    "numjobs": lambda s: s.config.numjobs,
    "size": lambda s: s.config.size_bytes,
    "rwmixread": lambda s: s.config.rwmixread_pct,
    "bs": lambda s: _fixed_bs(s),
    "blocksize": lambda s: _fixed_bs(s),
}


def _fixed_bs(s: Sample) -> Optional[int]:
    """The block size of the direction the sample issued; None when it varies (bsrange, bssplit)."""
    if not s.config.bs_fixed:
        return None
    return s.config.bs_read_bytes if s.read.ios or not s.write.ios else s.config.bs_write_bytes


def numeric_values(params: dict[str, Scalar], sample: Optional[Sample]) -> dict[str, float]:
    """The numeric axes of a point: from its resolved job where iolab knows the option, else parsed."""
    out: dict[str, float] = {}
    for name, value in params.items():
        if value == "-" or (sample is not None and no_effect(name, sample.config.rw, value)):
            continue  # an option without effect is no position on an axis
        got = _CONFIG_NUMBERS[name](sample) if name in _CONFIG_NUMBERS and sample is not None else None
        number = float(got) if got is not None else parse_number(value)
        if number is not None:
            out[name] = number
    return out


def parse_number(value: Scalar) -> Optional[float]:
    """A number as written, or a size ("4k", "1MiB") by fio's rules (the core's parser); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return float(_native.parse_size(str(value)))
    except ValueError:
        return None


def load_sweep_dir(directory: Path) -> Dataset:
    """A sweep directory → one point per plan point, one sample per finished repeat."""
    meta = _json(directory / "sweep.json")
    plan = _optional_json(directory / "plan.json") or {}
    by_point: dict[int, list[Path]] = {}
    for d in sorted((directory / "points").iterdir()) if (directory / "points").is_dir() else []:
        if is_complete(d):
            by_point.setdefault(int(_json(d / RUN_FILE)["point"]), []).append(d)
    if not by_point:
        raise DatasetError(f"{directory}: the sweep has no finished point yet")
    axes = [a["name"] for a in plan.get("axes", [])]
    points, drops = [], []
    for index in sorted(by_point):
        dirs = by_point[index]
        samples = [s for d in dirs for s in run_samples(d)]
        params = _effective(dict(_json(dirs[0] / RUN_FILE).get("params", {})), samples[0])
        drops += [_json(d / RUN_FILE).get("drop_caches") for d in dirs]
        points.append(Point(index, params, numeric_values(params, samples[0]), samples))
    host = _optional_json(directory / "host.json") or {}
    facts = {**_plan_facts(plan, meta, drops), "finished_runs": sum(len(d) for d in by_point.values())}
    found = _optional_json(directory / str(meta["find"])) if meta.get("find") else None
    if found is not None:
        # ``iolab find`` numbers its points in the order it visited them: the tables go along the axis.
        points.sort(key=lambda p: [p.values.get(a, 0.0) for a in axes])
        keep = ("slo", "axis", "best", "first_fail", "statement", "evaluations", "grid_axis", "rows")
        facts["find"] = {k: found.get(k) for k in keep}
    return Dataset("iolab-sweep", str(meta.get("id", directory.name)), str(directory), axes, points, host,
                   facts, _tool(directory))  # fmt: skip


def _plan_facts(plan: Json, meta: Json, drops: list[Any]) -> Json:
    drop: Optional[str] = None
    if plan.get("drop_caches"):
        drop = "dropped" if all(isinstance(d, dict) and d.get("done") for d in drops) else "failed"
    return {
        "repeats": int(plan.get("repeats") or meta.get("repeats") or 1),
        "warmup": bool(plan.get("warmup_ramp_time") or plan.get("warmup_runtime")),
        "precondition": bool(plan.get("precondition")),
        "drop_caches": drop,
        "steady_state": plan.get("steady_state"),
        "quick": bool(meta.get("quick")),
        # runs the plan asked for (points x repeats) and runs finished, for the report's status line
        "planned_runs": int(meta.get("points") or 0) * int(plan.get("repeats") or meta.get("repeats") or 1) or None,
    }
