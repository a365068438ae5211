"""``iolab lab fleet``: seed 001 (VM Fleet on Storage Spaces Direct: many
VMs, per-VM QoS, a live cluster view) at small scale, its Watch-Cluster
figures printed beside the measured ones with a verdict on each claim
(docs/labs.md).

- :mod:`.post`: the post's setup and figures as data;
- :mod:`.topology`: VMs on nodes, the mirrors the target serves, the hosts table;
- :mod:`.netns`: nodes as network namespaces (root);
- :mod:`.run`: the target, the VMs' data, the fleet run, the measured figures;
- :mod:`.watch`: the live cluster view (a row per VM and per node, the total);
- :mod:`.claims`: the verdicts, pure functions of the measured figures;
- :mod:`.report`, :mod:`.render`: the report and its formats.
"""

from __future__ import annotations

from typing import Any, Callable

from iolab.fleet.live import ClusterInterval
from iolab.lab.fleet_lab.report import build_report
from iolab.lab.fleet_lab.run import FleetLabSettings, check_settings, measured_of, run_local, run_real
from iolab.lab.fleet_lab.watch import view_json


def run_lab(
    s: FleetLabSettings,
    progress: Callable[[str], None] = lambda _l: None,
    show: Callable[[ClusterInterval], None] = lambda _v: None,
) -> dict[str, Any]:
    """Check the settings, run the fleet (``show`` gets every interval of
    the live view), and build the report."""
    layout = check_settings(s)
    mode = s.mode
    if mode == "netns":
        from iolab.lab.fleet_lab.netns import run_netns

        ran = run_netns(s, layout, progress, show)
    else:
        ran = (run_real if mode == "real" else run_local)(s, layout, progress, show)
    measured = measured_of(ran.doc, ran.node_of, s.rates(), ran.target_stats, ran.exports)
    meta = {
        "mode": mode,
        "vm_count": s.vms,
        "node_count": len({v["node"] for v in measured["vms"]}),
        "quick": s.quick,
        "runtime_s": s.seconds,
        "limit_iops": s.limit_iops,
        "vm_size": None if mode == "real" else s.size,
        "served_by": ran.served_by,
        "clock": {"start_skew_ns": ran.doc.get("clock", {}).get("start_skew_ns")},
    }
    return build_report(measured, meta, None if ran.last is None else view_json(ran.last))


__all__ = ["FleetLabSettings", "build_report", "run_lab"]
