"""The live cluster view of ``iolab lab fleet``: what VM Fleet's
Watch-Cluster window showed (IOPS, bandwidth and read latency, per node
and in total), with a row per VM as well.

The fleet's ranks already write every interval snapshot to their spool
(:mod:`iolab.fleet.spool`: one JSON line per interval, the rank's
:class:`~iolab.fleet.live.HostRow` with its interval histogram). The lab
reads those lines as they come — the spool lives on the file system every
node shares, namespaces included — and builds one
:class:`~iolab.fleet.live.ClusterInterval` per interval whose rows are the
VMs then the nodes; a node's row and the total are
:func:`~iolab.fleet.live.total_of` its VMs (rates summed, percentiles from
the merged interval histograms). The fleet's own renderers draw it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Optional

from iolab import _native
from iolab.fleet.live import ClusterInterval, HostRow, terminal_table, total_of
from iolab.fleet.spool import read_spool

#: ``(rank, the fleet's host label)`` → the VM's node.
NodeOf = Callable[[int, str], str]


def row_of(line: Mapping[str, Any]) -> HostRow:
    """A spool line's row (``kind: interval``)."""
    r = dict(line["row"])
    r["totals"] = tuple(r.get("totals", ()))
    return HostRow(**r)


def cluster_view(
    seq: int, elapsed_ns: int, vm_rows: Mapping[int, HostRow], vms: int, node_of: NodeOf
) -> ClusterInterval:
    """One interval: a row per VM (``-`` for one whose snapshot has not
    arrived), a row per node (its VMs that reported), the total.
    ``node_of(rank, label)`` names a VM's node (``label``: the fleet's
    host label, ``host/rank``; empty for a VM not heard from)."""
    got = [vm_rows.get(r, HostRow("", r, late=True)) for r in range(vms)]
    names = [node_of(r, row.host) for r, row in enumerate(got)]
    rows = [replace(row, host=f"vm{r} ({names[r]})") for r, row in enumerate(got)]
    nodes: dict[str, list[HostRow]] = {}
    for r, row in enumerate(rows):
        nodes.setdefault(names[r], []).append(row)
    node_rows = [replace(total_of(members), host=f"{name} ({len(members)} VMs)") for name, members in nodes.items()]
    return ClusterInterval(seq, elapsed_ns, tuple(rows + node_rows), total_of(rows))


def mean_ms(row: HostRow) -> Optional[float]:
    """The row's average latency over the interval (from its histogram), ms."""
    if not row.lat_hist or row.late or row.lost:
        return None
    st = _native.hist_stats(row.lat_hist, [])
    return float(st["mean_ns"]) / 1e6 if st["count"] else None


def watch_table(view: ClusterInterval) -> str:
    """The fleet's live table, then Watch-Cluster's own figure: the average
    read latency of every node and of the cluster."""
    lines = [terminal_table(view)]
    avg = [(r.host, mean_ms(r)) for r in view.rows if r.rank is None] + [("total", mean_ms(view.total))]
    lines.append("average read latency: " + ", ".join(f"{h} {'-' if m is None else f'{m:.3f} ms'}" for h, m in avg))
    return "\n".join(lines)


def view_json(view: ClusterInterval) -> dict[str, Any]:
    """The view as data (histograms left out): kept in the report as the last interval seen."""

    def row(r: HostRow) -> dict[str, Any]:
        return {
            "name": r.host,
            "kind": "vm" if r.rank is not None else "node",
            "iops": None if r.late else r.iops,
            "bw_bytes_per_s": None if r.late else r.bw_bytes_per_s,
            "lat_mean_ms": mean_ms(r),
            "lat_p99_ns": None if r.late else r.lat_p99_ns,
        }

    total = row(view.total)
    total["kind"] = "total"
    return {"seq": view.seq, "elapsed_ns": view.elapsed_ns, "rows": [row(r) for r in view.rows], "total": total}


class SpoolWatch:
    """Reads the ranks' spools under ``root`` every ``interval_s`` and hands
    each new interval's view to ``show`` (on its own thread)."""

    def __init__(
        self, root: Path, vms: int, node_of: NodeOf, show: Callable[[ClusterInterval], None], interval_s: float
    ) -> None:
        self.root, self.vms, self.node_of, self.show, self.interval_s = root, vms, node_of, show, interval_s
        self.last: Optional[ClusterInterval] = None
        #: The newest interval that every VM reported (the last one of a run
        #: is often partial: VMs end a little apart).
        self.complete: Optional[ClusterInterval] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="iolab-lab-fleet-watch", daemon=True)

    def __enter__(self) -> SpoolWatch:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.poll()  # the intervals written since the last look

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.poll()

    def poll(self) -> None:
        """Show the newest interval any VM has reached (VMs behind shown as
        ``-``); keep the newest that every VM has reached as ``complete``."""
        by_rank: dict[int, dict[int, tuple[int, HostRow]]] = {}
        for path in self.root.glob("*/rank-*.jsonl"):
            for x in read_spool(path):
                if x.get("kind") == "interval":
                    by_rank.setdefault(int(x["rank"]), {})[int(x["seq"])] = (int(x["elapsed_ns"]), row_of(x))
        if not by_rank:
            return
        if len(by_rank) == self.vms:
            common = set.intersection(*(set(ivs) for ivs in by_rank.values()))
            if common:
                seq = max(common)
                self.complete = self._view(seq, {r: ivs[seq] for r, ivs in by_rank.items()})
        seq = max(max(ivs) for ivs in by_rank.values())
        if self.last is not None and seq <= self.last.seq:
            return
        self.last = self._view(seq, {r: ivs[seq] for r, ivs in by_rank.items() if seq in ivs})
        self.show(self.last)

    def _view(self, seq: int, got: dict[int, tuple[int, HostRow]]) -> ClusterInterval:
        elapsed = max(e for e, _ in got.values())
        return cluster_view(seq, elapsed, {r: row for r, (_, row) in got.items()}, self.vms, self.node_of)


__all__ = ["NodeOf", "SpoolWatch", "cluster_view", "row_of", "view_json", "watch_table"]
