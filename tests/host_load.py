"""How busy other work kept the host while a test measured: what a test
reads before it holds a wall-clock figure to a bound that is iolab's only
where the machine has CPU to spare.

:func:`others_busy_pct` takes a CPU record in the client summary's form
(an iolab target's ``cpu_summary``, the ``server_cpu`` of a wire section):
the host's non-idle time less the measuring process's own CPU. A process
that burns CPU itself (a spinning timer) counts as its own, so it cannot
excuse itself from a check that would catch it.
"""

from __future__ import annotations

from typing import Any

#: At most this share of the host's CPUs (%) busy with other work over a
#: window, for it to count as one on a machine with CPU to spare.
SPARE_OTHERS_PCT = 25.0


def others_busy_pct(cpu: dict[str, Any]) -> float:
    """The share of the host's CPUs (%) that work other than the recording
    process kept busy over the record's window."""
    host_busy = 100.0 - cpu["sys_idle_pct"] - cpu["sys_iowait_pct"]
    return max(0.0, host_busy - cpu["proc_cpu_pct"] / cpu["ncpus"])
