"""Per-host results → one exact total, and the per-host table.

Each rank's final result is the engine's lossless ``iolab.result/1`` (HDR
histograms as V2 base64). :func:`merge_results` is the core's exact merge
(``_native.merge_results``, done here on the parsed JSON), so the core's summary of the merged result
adds counts and bytes and merges histograms bucket by bucket. No
percentile is ever averaged: every latency figure of a total is computed
from the merged histogram (``_native.hist_merge``, then the core's one
percentile function through ``_native.hist_stats``); a test checks the
table's total against the core's group figures.

:func:`table_rows` gives seed 004's table: a row per host and direction
and a total — kIOPS, MB/s, Gb/s, mean/p50/p99 latency, and for nbd jobs
the wire bandwidth (payload plus NBD's framing per request, the same
derivation as :mod:`iolab.run.wire`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from iolab import _native
from iolab.errors import ResultFormatError
from iolab.run.wire import NBD_REQUEST_HEADER_BYTES, NBD_SIMPLE_REPLY_BYTES

Json = dict[str, Any]
DIRS = ("read", "write")
#: Latency reported in the table (total latency: issue → reap).
LATENCY = "lat_ns"
#: Bytes each request costs on the wire beyond its payload (header + simple reply).
NBD_FRAMING_BYTES = NBD_REQUEST_HEADER_BYTES + NBD_SIMPLE_REPLY_BYTES


def merge_results(results: Sequence[Json]) -> Json:
    """The exact merge of several hosts' results (parsed ``iolab.result/1``).

    The same merge as the core's ``merge_results`` (``RunResult::merge``:
    workers of the same job and group appended with their host, host facts
    and CPU accounting appended, the earliest start kept; schema, version
    and interval checked) — nothing is summed here: the core's summary of
    the merged result does that. Done on the parsed JSON because the core's
    merge decodes and re-encodes every histogram of every host (seconds at
    1,000 hosts) where appending needs none of them;
    tests/fleet/test_merge.py checks that both give the same result."""
    if not results:
        raise ValueError("no results to merge")
    first = results[0]
    for r in results[1:]:
        if r["interval_ns"] != first["interval_ns"]:
            raise ResultFormatError(
                f"cannot merge results with intervals of {r['interval_ns']} ns and {first['interval_ns']} ns "
                "(give every host the same interval)"
            )
        if r["schema"] != first["schema"] or r["tool_version"] != first["tool_version"]:
            raise ResultFormatError(
                f"cannot merge a {r['schema']} result of iolab {r['tool_version']} with a {first['schema']} "
                f"result of iolab {first['tool_version']} (run every host with the same iolab)"
            )
    merged: Json = copy.deepcopy(first)
    jobs = {(j["name"], j["group"]): j for j in merged["jobs"]}
    for other in results[1:]:
        for oj in other["jobs"]:
            same = jobs.get((oj["name"], oj["group"]))
            if same is None:
                jobs[(oj["name"], oj["group"])] = copy.deepcopy(oj)
                merged["jobs"].append(jobs[(oj["name"], oj["group"])])
            else:
                same["workers"].extend(oj["workers"])
        merged["hosts"].extend(other["hosts"])
        merged["cpu"].extend(other["cpu"])
        merged["start_unix_ns"] = min(merged["start_unix_ns"], other["start_unix_ns"])
        merged["layout_notes"].extend(other["layout_notes"])
    return merged


@dataclass(frozen=True)
class Figures:
    """One direction of one host (or of the total) within one group."""

    ios: int
    bytes: int
    runtime_ns: int
    #: The merged total-latency histogram (V2 base64).
    lat_hist: str
    #: Requests on the wire (I/Os, failed ones, flushes) of nbd jobs; None when no job is nbd.
    nbd_requests: Optional[int]
    nbd_payload_bytes: int = 0

    @property
    def iops(self) -> float:
        return self.ios * 1e9 / self.runtime_ns if self.runtime_ns else 0.0

    @property
    def bw_bytes_per_s(self) -> float:
        return self.bytes * 1e9 / self.runtime_ns if self.runtime_ns else 0.0

    @property
    def wire_bytes(self) -> Optional[int]:
        if self.nbd_requests is None:
            return None
        return self.nbd_payload_bytes + self.nbd_requests * NBD_FRAMING_BYTES

    @property
    def wire_bw_bytes_per_s(self) -> Optional[float]:
        w = self.wire_bytes
        return None if w is None or not self.runtime_ns else w * 1e9 / self.runtime_ns


def figures(result: Json, group: int, d: int) -> Figures:
    """Direction ``d`` of stonewall ``group`` in ``result`` (one host or merged).

    Runtime is the longest worker's, as the core's group figures use."""
    workers = [(j, w) for j in result["jobs"] if j["group"] == group for w in j["workers"]]
    nbd = [(j, w) for j, w in workers if j["job"].get("ioengine") == "nbd"]
    requests = None
    payload = 0
    if nbd:
        # Every I/O (failed ones too) is one request and one reply; a
        # sync is a FLUSH: counted with the reads so it is counted once.
        requests = sum(w["dirs"][d]["ios"] + w["dirs"][d]["errors"] + (w["syncs"] if d == 0 else 0) for _, w in nbd)
        payload = sum(w["dirs"][d]["bytes"] for _, w in nbd)
    return Figures(
        ios=sum(w["dirs"][d]["ios"] for _, w in workers),
        bytes=sum(w["dirs"][d]["bytes"] for _, w in workers),
        runtime_ns=max((w["runtime_ns"] for _, w in workers), default=0),
        lat_hist=merged_hist([w["dirs"][d][LATENCY] for _, w in workers]),
        nbd_requests=requests,
        nbd_payload_bytes=payload,
    )


def merged_hist(hists: Sequence[str]) -> str:
    """The exact merge; one histogram is already its own merge (no decode)."""
    return hists[0] if len(hists) == 1 else _native.hist_merge(list(hists))


def groups_of(result: Json) -> list[int]:
    return sorted({j["group"] for j in result["jobs"]})


def row(label: str, f: Figures, direction: str, group: int) -> Json:
    """One table row; every figure with its unit in its name."""
    stats = _native.hist_stats(f.lat_hist, [50.0, 99.0])
    pct = stats["percentiles"]
    wire = f.wire_bw_bytes_per_s
    return {
        "host": label,
        "group": group,
        "dir": direction,
        "ios": f.ios,
        "bytes": f.bytes,
        "runtime_ns": f.runtime_ns,
        "iops": f.iops,
        "bw_bytes_per_s": f.bw_bytes_per_s,
        "bw_gbit_per_s": f.bw_bytes_per_s * 8 / 1e9,
        "lat_mean_ns": stats["mean_ns"],
        "lat_p50_ns": pct.get(50.0, 0) if stats["count"] else None,
        "lat_p99_ns": pct.get(99.0, 0) if stats["count"] else None,
        "lat_count": stats["count"],
        "wire_bytes": f.wire_bytes,
        "wire_bw_bytes_per_s": wire,
        "wire_bw_gbit_per_s": None if wire is None else wire * 8 / 1e9,
    }


def table_rows(per_host: Sequence[tuple[str, Json]], total: Json) -> list[Json]:
    """A row per host, group and direction that did I/O, then the total rows
    (``host`` = ``"Total"``), whose latency comes from the merged histograms."""
    rows: list[Json] = []
    for g in groups_of(total):
        for d, name in enumerate(DIRS):
            tot = figures(total, g, d)
            if tot.ios == 0:
                continue
            for label, result in per_host:
                rows.append(row(label, figures(result, g, d), name, g))
            rows.append(row("Total", tot, name, g))
    return rows


__all__ = ["LATENCY", "NBD_FRAMING_BYTES", "Figures", "figures", "merge_results", "row", "table_rows"]
