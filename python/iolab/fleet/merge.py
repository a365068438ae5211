"""Per-host results → one exact total, and the per-host table.

Each rank's final result is the engine's lossless ``iolab.result/1`` (HDR
histograms as V2 base64). :func:`merge_results` is the core's exact merge
(``_native.merge_results``), so the core's summary of the merged result
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

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from iolab import _native
from iolab.run.wire import NBD_REQUEST_HEADER_BYTES, NBD_SIMPLE_REPLY_BYTES

Json = dict[str, Any]
DIRS = ("read", "write")
#: Latency reported in the table (total latency: issue → reap).
LATENCY = "lat_ns"
#: Bytes each request costs on the wire beyond its payload (header + simple reply).
NBD_FRAMING_BYTES = NBD_REQUEST_HEADER_BYTES + NBD_SIMPLE_REPLY_BYTES


def merge_result_jsons(results_json: Sequence[str]) -> str:
    """The exact merge of several hosts' results (``iolab.result/1`` JSON):
    the core's one merge (``_native.merge_results``: workers of the same job
    appended with their host, host facts and CPU accounting appended, the
    earliest start kept; schema, version and interval checked, on the JSON
    form without decoding a histogram). Nothing is summed: the core's
    summary of the merged result does that."""
    if not results_json:
        raise ValueError("no results to merge")
    return _native.merge_results(list(results_json))


def merge_results(results: Sequence[Json]) -> Json:
    """:func:`merge_result_jsons` on parsed results."""
    merged: Json = json.loads(merge_result_jsons([json.dumps(r) for r in results]))
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

    Runtime is the longest worker's for this direction (the time its I/Os
    ran in: a verify job's phases apart), as the core's group figures use."""
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
        runtime_ns=max((_dir_runtime_ns(w, d) for _, w in workers), default=0),
        lat_hist=merged_hist([w["dirs"][d][LATENCY] for _, w in workers]),
        nbd_requests=requests,
        nbd_payload_bytes=payload,
    )


def _dir_runtime_ns(worker: Json, d: int) -> int:
    """The worker's runtime of direction ``d`` (the core's
    ``WorkerResult::dir_runtime_ns``): results without it, the window if the
    direction did any I/O."""
    x = worker["dirs"][d]
    if "runtime_ns" in x:
        return int(x["runtime_ns"])
    return int(worker["runtime_ns"]) if x["ios"] + x["errors"] > 0 else 0


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


__all__ = [
    "LATENCY",
    "NBD_FRAMING_BYTES",
    "Figures",
    "figures",
    "merge_result_jsons",
    "merge_results",
    "row",
    "table_rows",
]
