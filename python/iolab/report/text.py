"""Terminal reports of a results document (``iolab.result/1``).

- ``format_text(doc)``: reads like fio's normal output — per worker (or,
  with ``group_reporting``, per stonewall group: its jobs merged into one
  entry, as fio does) a header, per direction IOPS, bandwidth, bytes and
  the runtime they are over (each direction's own: a verify job's write and
  read phases apart), slat/clat/lat statistics and percentile
  blocks, interval statistics, thread CPU; per stonewall group the
  aggregate line and the system CPU breakdown with c/B and cycles per I/O.
  Unlike fio every figure has ONE explicit unit (never "1791k" for 1.79 ms).
- ``format_quick_table(doc)``: one row per job (IOPS, MB/s, lat p50/p99),
  for ``iolab quick``.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from iolab import _native
from iolab.report.analysis_text import TABLE_LAT_UNIT
from iolab.results import lat_target
from iolab.results.document import check_document
from iolab.results.unified import shown_dirs
from iolab.units import (
    bucket_edge,
    fmt_bw,
    fmt_bytes,
    fmt_bytes_exact,
    fmt_decimal_bytes,
    fmt_lat,
    fmt_num,
    fmt_pct,
    fmt_secs,
    lat_unit,
    lat_unit_for,
)

Json = dict[str, Any]
#: fio's three directions; a direction without I/O prints nothing, and
#: summaries written before iolab issued trims have no ``trim``.
_DIRS = ("read", "write", "trim")
LAT_FROM_ISSUE = "lat (from issue)"
LAT_INTENDED = "lat (from intended time, includes queueing behind the rate schedule)"


def _bs(r: Json) -> str:
    lo, hi = r["min_bytes"], r["max_bytes"]
    return fmt_bytes_exact(lo) if lo == hi else f"{fmt_bytes_exact(lo)}-{fmt_bytes_exact(hi)}"


def _config(job: Json) -> str:
    c = job["config"]
    bs = f"(R) {_bs(c['bs_read'])}, (W) {_bs(c['bs_write'])}"
    mix = f" rwmixread={c['rwmixread_pct']}%" if c["rw"].endswith("rw") else ""
    return (
        f"ioengine={c['ioengine']} rw={c['rw']}{mix} bs={bs} "
        f"iodepth={c['iodepth']} numjobs={c['numjobs']} direct={int(c['direct'])}"
    )


def _header(job: Json, who: str) -> str:
    return f"{job['name']}: ({who}): {_config(job)}"


def _lat_line(label: str, s: Json) -> str:
    unit, scale = lat_unit(s["mean_ns"])
    return (
        f"{label} ({unit}): min={fmt_lat(s['min_ns'], scale)}, avg={fmt_lat(s['mean_ns'], scale)}, "
        f"max={fmt_lat(s['max_ns'], scale)}, stdev={fmt_lat(s['stdev_ns'], scale)}"
    )


def _pct_label(p: float) -> str:
    """99.9 → "99.90th", 99.999 → "99.999th" (never rounded to 100)."""
    text = f"{p:.6f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"{whole}.{frac.ljust(2, '0')}th"


def _pct_block(label: str, s: Json, indent: str) -> list[str]:
    pcts = s["percentiles"]
    if s["count"] == 0 or not pcts:
        return []
    unit, scale = lat_unit_for(p["value_ns"] for p in pcts)
    cells = [(_pct_label(p["percentile"]), fmt_lat(p["value_ns"], scale)) for p in pcts]
    kw = max(len(k) for k, _ in cells)
    vw = max(len(v) for _, v in cells)
    items = [f"{k:>{kw}}=[{v:>{vw}}]" for k, v in cells]
    lines = [f"{indent}{label} percentiles ({unit}):"]
    for i in range(0, len(items), 4):
        row = ", ".join(items[i : i + 4])
        lines.append(f"{indent} | {row}{',' if i + 4 < len(items) else ''}")
    return lines


def _interval_lines(iv: Json, indent: str) -> list[str]:
    if iv["samples"] == 0:
        return []
    mib = 2**20
    return [
        f"{indent}bw (MiB/s): min={fmt_num(iv['bw_min_bytes_per_s'] / mib)}, "
        f"max={fmt_num(iv['bw_max_bytes_per_s'] / mib)}, avg={fmt_num(iv['bw_mean_bytes_per_s'] / mib)}, "
        f"stdev={fmt_num(iv['bw_stdev_bytes_per_s'] / mib)}, samples={iv['samples']}",
        f"{indent}iops (I/O/s): min={fmt_num(iv['iops_min'])}, max={fmt_num(iv['iops_max'])}, "
        f"avg={fmt_num(iv['iops_mean'])}, stdev={fmt_num(iv['iops_stdev'])}, samples={iv['samples']}",
    ]


def _dir_lines(name: str, d: Json, runtime_ns: int, rate_limited: bool) -> list[str]:
    if d["ios"] + d["errors"] == 0:
        return []
    ind = "    "
    out = [
        f"  {name}: IOPS={fmt_num(d['iops'])}, BW={fmt_bw(d['bw_bytes_per_s'])}, "
        f"{fmt_bytes(d['bytes'])} ({fmt_decimal_bytes(d['bytes'])}) in {fmt_secs(runtime_ns)}"
    ]
    if d["errors"]:
        out.append(f"{ind}errors: {d['errors']} I/Os failed")
    for label, key in (("slat", "slat"), ("clat", "clat")):
        if d[key]["count"]:
            out.append(ind + _lat_line(label, d[key]))
    lat_label = LAT_FROM_ISSUE if rate_limited else "lat"
    out.append(ind + _lat_line(lat_label, d["lat"]))
    if d["lat_intended"] is not None:
        out.append(ind + _lat_line(LAT_INTENDED, d["lat_intended"]))
    out += _pct_block("clat", d["clat"], ind)
    out += _pct_block(lat_label, d["lat"], ind)
    if d["lat_intended"] is not None:
        out += _pct_block("lat (from intended time)", d["lat_intended"], ind)
    out += _interval_lines(d["intervals"], ind)
    return out


def _dist_line(buckets: list[Json]) -> str | None:
    total = sum(b["count"] for b in buckets)
    if not total:
        return None
    parts = []
    for b in buckets:
        if b["count"]:
            share = max(b["count"] / total * 100, 0.01)
            below = b["below_ns"]
            edge = ">=2000 ms" if below is None else f"<{bucket_edge(below)}"
            parts.append(f"{edge} {share:.2f}%")
    return "  clat distribution: " + ", ".join(parts)


def _entry_lines(job: Json, stats: Json, who: str, members: list[Json] | None = None) -> list[str]:
    """One entry; ``members``: the jobs a group_reporting entry merges (a
    configuration line each when there are several)."""
    rate_limited = job["config"]["rate_limited"]
    if members and len(members) > 1:
        out = [f"{job['name']}: ({who}):"] + [f"  job {m['name']}: {_config(m)}" for m in members]
    else:
        out = [_header(job, who)]
    for d in shown_dirs(job["config"], stats):
        # Summaries older than per-direction runtimes: the entry's window.
        out += _dir_lines(d, stats[d], stats[d].get("runtime_ns", stats["runtime_ns"]), rate_limited)
    if stats["sync"]["count"]:
        out.append(f"  sync: {stats['sync']['count']} calls")
        out.append("    " + _lat_line("sync lat", stats["sync"]["lat"]))
    dist = _dist_line(stats["clat_dist"])
    if dist:
        out.append(dist)
    if job["config"].get("continue_on_error"):
        out.append(_errors_line(stats))
    out.append(
        f"  cpu (per worker thread, % of one CPU): usr={fmt_pct(stats['usr_cpu_pct'])}, "
        f"sys={fmt_pct(stats['sys_cpu_pct'])}, ctx={stats['ctx_switches']}"
    )
    return out


def _errors_line(stats: Json) -> str:
    """fio's ``errors : total=N, first_error=E/<text>`` (under continue_on_error)."""
    first = stats.get("first_error", 0)
    text = os.strerror(first) if first else "none"
    return f"  errors: total={stats.get('total_err', 0)}, first_error={first}/<{text}>"


def _group_lines(g: Json, per: str, unified: str = "none") -> list[str]:
    """fio's "Run status group" lines; ``unified``: the group's
    unified_rw_reporting (mixed: one MIXED line, the group's total, in place
    of the directions; both: after them)."""
    out = [f"Run status group {g['group']} (jobs: {', '.join(g['jobs'])}):"]
    shown = {"mixed": ("total",), "both": (*_DIRS, "total")}.get(unified, _DIRS)
    for d in shown:
        x = g.get(d)
        if x is None or x["ios"] == 0:
            continue
        lo, hi = x["entry_bw_min_bytes_per_s"], x["entry_bw_max_bytes_per_s"]
        out.append(
            f"  {('mixed' if d == 'total' else d).upper():>5}: bw={fmt_bw(x['bw_bytes_per_s'])}, per {per} "
            f"{fmt_num(lo / 2**20)}-{fmt_num(hi / 2**20)} MiB/s, io={fmt_bytes(x['bytes'])} "
            f"({fmt_decimal_bytes(x['bytes'])}), run={x['runtime_min_ns'] / 1e9:.3f}-"
            f"{x['runtime_max_ns'] / 1e9:.3f} s"
        )
    for c in g["cpu"]:
        out += _cpu_lines(c)
    return out


def _cpu_lines(c: Json) -> list[str]:
    host = f" on {c['host']}" if c["host"] else ""
    clock = f"{c['clock_hz'] / 1e9:.3f} GHz ({c['clock_source']})" if c["clock_hz"] else "unknown clock"
    return [
        f"  cpu{host} over {fmt_secs(c['window_ns'])}, {c['ncpus']} CPUs, {c['ios']} I/Os, {fmt_bytes(c['bytes'])}:",
        f"    iolab process (% of one CPU): usr={fmt_pct(c['proc_user_pct'])}, "
        f"sys={fmt_pct(c['proc_sys_pct'])}, total={fmt_pct(c['proc_cpu_pct'])}",
        f"    system (% of all CPUs): usr={fmt_pct(c['sys_user_pct'])}, nice={fmt_pct(c['sys_nice_pct'])}, "
        f"sys={fmt_pct(c['sys_system_pct'])}, irq={fmt_pct(c['sys_irq_pct'])}, softirq={fmt_pct(c['sys_softirq_pct'])}, "
        f"steal={fmt_pct(c['sys_steal_pct'])}, iowait={fmt_pct(c['sys_iowait_pct'])}, "
        f"idle={fmt_pct(c['sys_idle_pct'])}; privileged={fmt_pct(c['privileged_pct'])}",
        f"    cycles per I/O: {fmt_num(c['cycles_per_io'])} (system), "
        f"{fmt_num(c['proc_cycles_per_io'])} (iolab process); "
        f"c/B (privileged cycles per byte: sys+irq+softirq of all CPUs): {fmt_num(c['cycles_per_byte'])}; "
        f"clock {clock}",
    ]


def _group_entry_lines(jobs: list[Json], group: Json) -> list[str]:
    """A group's jobs with group_reporting as one entry (fio's), named
    after the first of them."""
    members = [j for j in jobs if j["group"] == group["group"] and j["config"]["group_reporting"]]
    n = sum(len(j["workers"]) for j in members)
    names = f"jobs {', '.join(j['name'] for j in members)} merged, " if len(members) > 1 else ""
    return _entry_lines(members[0], group["reported"], f"group {group['group']}, {names}workers {n}", members)


def format_text(doc: Json) -> str:
    """The full text summary of a results document."""
    s = check_document(doc)["summary"]
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(s["start_unix_ns"] / 1e9))
    out = [f"iolab {s['tool_version']}, started {started}", ""]
    groups = {g["group"]: g for g in s["groups"]}
    merged: set[int] = set()
    set_up_only = {r["name"] for r in doc["result"]["jobs"] if _create_only(r)}
    for job, raw_job in zip(s["jobs"], doc["result"]["jobs"]):
        if job["name"] in set_up_only:
            out += [*_create_only_lines(raw_job, doc["result"].get("layout_notes", [])), ""]
            continue
        n = len(job["workers"])
        group = groups[job["group"]]
        if job["config"]["group_reporting"] and "reported" in group:
            if job["group"] not in merged:  # the group's one entry, at its first job
                merged.add(job["group"])
                out += _group_entry_lines(s["jobs"], group)
                out += lat_target.text_lines(raw_job, None)
                out.append("")
            continue
        if job["config"]["group_reporting"]:
            # A summary written before groups[].reported: one entry per job.
            out += _entry_lines(job, job["merged"], f"group {job['group']}, workers {n}")
            out += lat_target.text_lines(raw_job, None)
            out.append("")
            continue
        for k, w in enumerate(job["workers"]):
            host = f" on {w['host']}" if w["host"] else ""
            out += _entry_lines(job, w["stats"], f"group {job['group']}, worker {w['worker']}{host}")
            out += lat_target.text_lines(raw_job, k)
            out.append("")
    for g in s["groups"]:
        members = [j for j in s["jobs"] if j["group"] == g["group"]]
        if all(j["name"] in set_up_only for j in members):
            continue  # no I/O ran: no figures to give
        grouped = all(j["config"]["group_reporting"] for j in members)
        modes = {str(j["config"].get("unified_rw_reporting", "none")) for j in members}
        unified = "mixed" if modes == {"mixed"} else "both" if modes - {"none"} else "none"
        out += _group_lines(g, ("job" if len(members) == 1 else "entry") if grouped else "worker", unified)
        out.append("")
    if "nbd_target" in doc:
        out += wire_lines(doc["nbd_target"])
    return "\n".join(out).rstrip() + "\n"


def _create_only(raw_job: Json) -> bool:
    return bool(raw_job["job"].get("worker", {}).get("create_only"))


def _create_only_lines(raw_job: Json, layout_notes: list[str]) -> list[str]:
    """A ``create_only=1`` job: what was set up, and that no I/O ran (a
    table of zeros would read as a measurement)."""
    job = raw_job["job"]
    engine_job = json.dumps(job)
    files = {f for w in range(int(job["numjobs"])) for f in _native.worker_files(engine_job, w)}
    notes = [n for n in layout_notes if any(n.split(":", 1)[0].endswith(f" {f}") for f in files)]
    return [
        f"{raw_job['name']}: create_only=1: set up only, no I/O ran ({len(files)} file(s) laid out as the job "
        "would use them; nothing was measured)",
        *(f"  {n}" for n in notes),
    ]


def wire_lines(section: Json) -> list[str]:
    """The wire latency block of ``iolab run --target-stats``: per export and
    direction client, server and wire latency at each percentile (one unit
    for the block), the counts at both ends, the server's CPU, and payload
    vs wire bytes."""
    w = section["wire"]
    out = [
        f"wire latency vs iolab target {section['server'].get('stats_url', '')} "
        f"(server window {fmt_secs(w['server_window_ns'])}):",
        "  client = lat from issue to reap; server = header received to reply written (less WRITE payload "
        "arrival); wire = client - server at each percentile",
    ]
    for e in w["exports"]:
        for d, x in e["directions"].items():
            out += _wire_dir_lines(e["export"], d, x)
        out += _wire_bytes_lines(e["bytes"])
    c = w.get("server_cpu")
    if c:
        out.append(
            f"  server CPU: process {fmt_pct(c['proc_cpu_pct'])} of one CPU (usr={fmt_pct(c['proc_user_pct'])}, "
            f"sys={fmt_pct(c['proc_sys_pct'])}); system privileged {fmt_pct(c['privileged_pct'])} of all CPUs; "
            f"cycles per I/O {fmt_num(c['cycles_per_io'])} (system), {fmt_num(c['proc_cycles_per_io'])} (process); "
            f"c/B (privileged cycles per byte) {fmt_num(c['cycles_per_byte'])}"
        )
    return [*out, ""]


def _wire_dir_lines(export: str, d: str, x: Json) -> list[str]:
    same = "equal" if x["ios_match"] else "MISMATCH: another client, or I/Os outside the window"
    out = [f"  export {export}, {d.upper()}: client {x['client_ios']} I/Os, server {x['server_ios']} I/Os ({same})"]
    rows = [r for r in x["rows"] if r["wire_ns"] is not None]
    if not rows:
        return out
    unit, scale = lat_unit_for(float(r["client_ns"]) for r in rows)
    out.append(f"    {'percentile':>10}  {'client (' + unit + ')':>12}  {'server (' + unit + ')':>12}  "
               f"{'wire (' + unit + ')':>12}")  # fmt: skip
    for r in rows:
        flag = "  (negative: below timing resolution)" if r["wire_ns"] < 0 else ""
        out.append(
            f"    {_pct_label(r['percentile']):>10}  {fmt_lat(r['client_ns'], scale):>12}  "
            f"{fmt_lat(r['server_ns'], scale):>12}  {fmt_lat(r['wire_ns'], scale):>12}{flag}"
        )
    return out


def _wire_bytes_lines(b: Json) -> list[str]:
    return [
        f"  bytes over {b['requests']} requests (derived from NBD framing: 28-byte request header, 16-byte "
        "simple reply; not socket counts):",
        f"    to target: payload {b['to_target_payload_bytes']} bytes, wire {b['to_target_wire_bytes']} bytes; "
        f"from target: payload {b['from_target_payload_bytes']} bytes, wire {b['from_target_wire_bytes']} bytes; "
        f"protocol overhead {fmt_pct(b['overhead_pct'])} of wire bytes",
    ]


def _percentile(s: Json, p: float) -> int | None:
    for x in s["percentiles"]:
        if abs(x["percentile"] - p) < 1e-9:
            return int(x["value_ns"])
    return None


def format_quick_table(doc: Json) -> str:
    """One row per job: name, IOPS, MB/s, total-latency p50 and p99 (one unit per column)."""
    s = check_document(doc)["summary"]
    rows = []
    for job in s["jobs"]:
        m = job["merged"]
        lat = m["lat_all"]
        ok = lat["count"] > 0
        rows.append(
            (
                job["name"],
                m["iops"],
                m["bw_bytes_per_s"] / 1e6,
                _percentile(lat, 50.0) if ok else None,
                _percentile(lat, 99.0) if ok else None,
            )
        )
    # One fixed unit for both columns (the analysis tables' one): chosen from
    # the values, p99 read ms in one run and µs in the next.
    unit, scale = TABLE_LAT_UNIT
    head = ("job", "IOPS (I/O/s)", "MB/s", f"lat p50 ({unit})", f"lat p99 ({unit})")
    body = [
        (
            name,
            fmt_num(iops),
            fmt_num(mbs),
            "-" if p50 is None else fmt_lat(p50, scale),
            "-" if p99 is None else fmt_lat(p99, scale),
        )
        for name, iops, mbs, p50, p99 in rows
    ]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(5)]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
        for r in [head, *body]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    note = "lat = total latency from issue, every direction; '-' = no I/O, or p50/p99 not in percentile_list"
    return "\n".join([*lines, note]) + "\n"
