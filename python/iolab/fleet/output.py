"""A fleet run's results: the exact total, a row per host, three formats.

- text: seed 004's table — a row per host (and direction) and a total,
  kIOPS, MB/s, Gb/s, mean/p50/p99 latency, wire Gb/s for nbd jobs — then
  the clock (offsets, round trips, start skew) and every fault;
- json (schema ``iolab.fleet/1``): every host's own results document, the
  total's (the merged result and its core summary), the table, the clock;
- fio-json: fio's client/server layout: ``client_stats`` with the
  entries of each host (``hostname`` set) and an ``All clients`` entry per
  job whose percentiles come from the merged histograms; keys as fio 3.33's
  client writes them (no ``eta``/``elapsed``; ``All clients`` without job
  options), checked against fio in tests/interop/test_fio_client_server.py;
- json+: the same with fio's latency ``bins`` in every entry: each host's
  from its own workers' histograms, ``All clients``' from the exact merge of
  every host's (bucket sums — fio's ``sum_thread_stats`` adds the clients'
  ``io_u_plat`` the same way; fio writes them there since 3.39, 3.33 wrote
  no percentiles and no bins for ``All clients``).

A run that lost a host says INCOMPLETE in every format and names the host.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from iolab import _native
from iolab.fleet.align import align
from iolab.fleet.align import report as alignment_report
from iolab.fleet.merge import merge_result_jsons, table_rows
from iolab.fleet.runner import FleetOutcome, HostPart
from iolab.results import build_output, to_fio_json
from iolab.results.fio_json import _entry
from iolab.results.rundir import INDENT_MAX_BYTES
from iolab.run.local import RunOutput
from iolab.run.series import summarize_streamed
from iolab.units import fmt_num

Json = dict[str, Any]
FLEET_SCHEMA = "iolab.fleet/1"
#: Keys of a host's entry that fio's ``All clients`` entry does not have (fio 3.33, checked
#: against its client/server output in tests/interop/test_fio_client_server.py).
ALL_CLIENTS_OMITS = ("job options", "latency_depth", "latency_target", "latency_percentile", "latency_window")


@dataclass(frozen=True)
class FleetResults:
    """What rank 0 reports."""

    outcome: FleetOutcome
    #: The merged run (exact total), as a RunOutput so run directories take it.
    total: Optional[RunOutput]
    #: (label, parsed result) of every host that returned one.
    per_host: list[tuple[str, Json]]
    rows: list[Json]
    #: How every host's series was put on rank 0's clock (:func:`iolab.fleet.align.report`).
    alignment: Optional[Json] = None


def build(outcome: FleetOutcome) -> FleetResults:
    with_results = [p for p in outcome.parts if p.result_json is not None]
    if not with_results:
        return FleetResults(outcome, None, [], [])
    per_rank = {p.rank: json.loads(p.result_json) for p in with_results if p.result_json is not None}
    offsets = {int(x["rank"]): int(x["offset_ns"]) for x in outcome.clock.get("ranks", [])}
    on_zero, how = align(per_rank, offsets)
    # The total is merged from the aligned copies: one clock for every series.
    merged_json = merge_result_jsons([json.dumps(on_zero[p.rank]) for p in with_results])
    merged = json.loads(merged_json)
    log = outcome.config.interval_log
    if log is not None and log.is_file():
        # --stream-intervals: the series are the fleet's merged log, streamed by rank 0
        merged["interval_log"] = {"file": log.name, "per_worker": False}
        merged_json = json.dumps(merged)
        # Its series go to timeseries.parquet beside the log, not into the summary (bounded memory).
        summary = summarize_streamed(merged_json, log)
        series_dir: Optional[Path] = log.parent
    else:
        merged.pop("interval_log", None)  # the ranks' own logs stay on their hosts
        merged_json = json.dumps(merged)
        summary = _native.summarize(merged_json)
        series_dir = None
    per_host = [(p.host, per_rank[p.rank]) for p in with_results]
    total = RunOutput(merged_json, summary, outcome.interrupted, (), series_dir=series_dir)
    return FleetResults(outcome, total, per_host, table_rows(per_host, merged), alignment_report(how))


def _us(ns: Optional[float]) -> str:
    """µs, four significant digits as every report table: 0.061, not 0.1 (a null engine's 61 ns)."""
    return "-" if ns is None else fmt_num(ns / 1e3)


def text(res: FleetResults) -> str:
    o = res.outcome
    lines = [f"fleet: {len(o.parts)} ranks; jobs: {', '.join(dict.fromkeys(j.name for j in o.jobs))}"]
    multi_group = len({r["group"] for r in res.rows}) > 1
    head = f"{'Host':<28} | {'Dir':<5} | {'kIOPS':>9} | {'MB/s':>9} | {'BW Gb/s':>8} | {'AVG_LAT µs':>10} | {'p50 µs':>8} | {'p99 µs':>8} | {'Wire Gb/s':>9}"
    sep = "-" * len(head)
    lines += [head, sep]
    for r in res.rows:
        if r["host"] == "Total":
            lines.append(sep)
        wire = "" if r["wire_bw_gbit_per_s"] is None else f"{r['wire_bw_gbit_per_s']:.3f}"
        name = r["host"] if not multi_group else f"{r['host']} [g{r['group']}]"
        lines.append(
            f"{name[:28]:<28} | {r['dir']:<5} | {r['iops'] / 1e3:>9.2f} | {r['bw_bytes_per_s'] / 1e6:>9.1f} | "
            f"{r['bw_gbit_per_s']:>8.3f} | {_us(r['lat_mean_ns']):>10} | {_us(r['lat_p50_ns']):>8} | "
            f"{_us(r['lat_p99_ns']):>8} | {wire:>9}"
        )
        if r["host"] == "Total":
            lines.append(sep)
    lines.append("Total: counts and bytes summed over the hosts; latency from the merged histograms (bucket sums).")
    if any(r["wire_bw_gbit_per_s"] is not None for r in res.rows):
        lines.append("Wire = payload + NBD framing (28-byte request header + 16-byte reply per request).")
    c = o.clock
    offs = [abs(x["offset_ns"]) for x in c["ranks"]]
    lines.append(
        f"clock: start skew {c['start_skew_ns'] / 1e6:.3f} ms; offsets up to {max(offs, default=0) / 1e6:.3f} ms "
        f"(round trip median {c['round_trip_median_ns'] / 1e3:.1f} µs; error bound = round trip / 2)"
    )
    for x in c["ranks"]:
        after = x["start_after_first_ns"]
        lines.append(
            f"  rank {x['rank']} {x['host']}: offset {x['offset_ns'] / 1e3:+.1f} µs, round trip "
            f"{x['round_trip_ns'] / 1e3:.1f} µs, started {'-' if after is None else f'{after / 1e6:.3f} ms'} after the first"
        )
    if res.alignment is not None:
        padded = [
            f"rank {a['rank']} by {a['series_shift_intervals']}"
            for a in res.alignment["ranks"]
            if a["series_shift_intervals"]
        ]
        lines.append(
            "series: every host's on rank 0's clock (start minus offset, shifted by start_after_first_ns)"
            + ("; padded by whole intervals: " + ", ".join(padded) if padded else "")
        )
    if o.interrupted:
        lines.append("INTERRUPTED (Ctrl-C): the figures cover the time that ran on every host")
    if o.incomplete:
        lines.append("INCOMPLETE: the total covers only the hosts that returned results:")
        lines += [f"  {f}" for f in o.faults]
        for p in o.parts:
            if p.state == "complete":
                continue
            last = ""
            if p.last_snapshot is not None:
                row = p.last_snapshot["row"]
                last = (
                    f"; last interval seen: #{p.last_snapshot['seq']}, {(row.get('iops') or 0) / 1e3:.2f} kIOPS, "
                    f"{(row.get('bw_bytes_per_s') or 0) / 1e6:.1f} MB/s"
                )
            kept = "its partial result is in the total" if p.result_json is not None else "not in the total"
            lines.append(f"  {p.host} (rank {p.rank}): {p.state}, {kept}{last}; spool {p.spool}")
    return "\n".join(lines) + "\n"


def host_document(p: HostPart) -> Optional[Json]:
    """The host's own results document (its result and the core's summary
    of it), or None for a host that returned no result."""
    if p.result_json is None:
        return None
    return build_output(p.result_json, summarize_host(p.result_json))


def summarize_host(result_json: str) -> str:
    """The core's summary of one host's result. A host that streamed its
    intervals (``--stream-intervals``) has them in its own log on its host
    (``interval_log`` in fleet.json): its summary here has no series."""
    if '"interval_log"' in result_json:
        doc = json.loads(result_json)
        doc.pop("interval_log", None)
        result_json = json.dumps(doc)
    return _native.summarize(result_json)


def _host_json(p: HostPart, documents: bool = True) -> Json:
    snap = None
    if p.last_snapshot is not None:
        snap = {**p.last_snapshot, "row": {k: v for k, v in p.last_snapshot["row"].items() if k != "lat_hist"}}
    out = {
        "rank": p.rank,
        "host": p.host,
        "state": p.state,
        "error": p.error,
        "spool": p.spool,
        **({"interval_log": p.interval_log} if p.interval_log else {}),
        "last_snapshot": snap,
    }
    return {**out, "document": host_document(p)} if documents else out


def fleet_json(res: FleetResults, documents: bool = True) -> Json:
    """The ``iolab.fleet/1`` document; without ``documents`` the hosts'
    own results documents are left out (a run directory writes them one
    at a time, :func:`iolab.fleet.rundir.save_fleet_run`)."""
    o = res.outcome
    total = None if res.total is None else build_output(res.total.result_json, res.total.summary_json)
    return {
        "schema": FLEET_SCHEMA,
        "incomplete": o.incomplete,
        "faults": o.faults,
        "interrupted": o.interrupted,
        "deadline_s": o.config.deadline_s,
        "interval_ns": o.config.interval_ns,
        "clock": o.clock,
        "alignment": res.alignment,
        "table": res.rows,
        "total": total,
        "hosts": [_host_json(p, documents) for p in o.parts],
    }


def _client_entry(entry: Json, hostname: str) -> Json:
    """An entry as fio's client writes it: without ``eta`` and ``elapsed``
    (the client has no ETA of its servers' jobs), ``hostname`` and ``port``
    last. iolab's ranks have no port: 0."""
    kept = {k: v for k, v in entry.items() if k not in ("eta", "elapsed")}
    return {**kept, "hostname": hostname, "port": 0}


def fio_json(res: FleetResults, *, plus: bool = False) -> Json:
    """fio's client/server layout (``client_stats``); ``plus``: json+ (every
    latency's ``bins``; ``All clients``' from the merged workers of every host)."""
    if res.total is None:
        return {"client_stats": [], "iolab": {"incomplete": True, "faults": res.outcome.faults}}
    merged = res.total.result
    top = to_fio_json(merged, res.total.summary)
    stats: list[Json] = []
    for label, result in res.per_host:
        for e in to_fio_json(result, json.loads(summarize_host(json.dumps(result))), plus=plus)["jobs"]:
            stats.append(_client_entry(e, label))
    summary = res.total.summary
    groups = {g["group"]: g for g in summary["groups"]}
    for job, raw_job in zip(summary["jobs"], merged["jobs"]):
        # json+: the bins of every host's workers of the job, merged bucket by bucket.
        raw = raw_job["workers"] if plus else None
        e = _entry(job, job["merged"], groups[job["group"]], None, raw)
        # fio's sum of its clients carries no job's options and no latency_target
        # state; the job is named under "iolab".
        for key in ALL_CLIENTS_OMITS:
            e.pop(key, None)
        e["jobname"] = "All clients"
        e["iolab"]["job"] = job["name"]
        e["iolab"]["hosts"] = [label for label, _ in res.per_host]
        stats.append(_client_entry(e, "All clients"))
    top.pop("jobs")
    top["client_stats"] = stats
    top["iolab"] = {
        "incomplete": res.outcome.incomplete,
        "faults": res.outcome.faults,
        "clock": res.outcome.clock,
        "alignment": res.alignment,
    }
    return top


def _json_text(doc: Json) -> str:
    """Indented, unless large (:data:`~iolab.results.rundir.INDENT_MAX_BYTES`:
    indentation takes Python's slow encoder, minutes for 10,000 hosts)."""
    compact = json.dumps(doc)
    return (compact if len(compact) > INDENT_MAX_BYTES else json.dumps(doc, indent=2)) + "\n"


def formatted(res: FleetResults, output_format: str) -> str:
    if output_format == "json":
        return _json_text(fleet_json(res))
    if output_format in ("fio-json", "json+"):
        return _json_text(fio_json(res, plus=output_format == "json+"))
    return text(res)


__all__ = ["FLEET_SCHEMA", "FleetResults", "build", "fio_json", "fleet_json", "formatted", "host_document", "text"]
