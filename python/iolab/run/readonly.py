"""fio's ``--readonly``: a safety switch that refuses every job that writes
or trims.

fio checks it when it reads the jobs ("job has write bit set, but fio is in
read-only mode"), before anything runs; so does iolab, on the prepared jobs
(so ``rw=randrw`` with ``rwmixread=100`` is a read job, as in fio).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from iolab.errors import JobError


def refuse_writes(prepared: Sequence[dict[str, Any]]) -> None:
    """Raise :class:`JobError` naming the first job that writes or trims."""
    for job in prepared:
        # rw=trim and its kin, or a replayed log's trim lines (a verify-trim job writes).
        if job["rw"].get("trim", "none") != "none" or job.get("replay", {}).get("has_trims"):
            raise JobError(f"--readonly: job {job['name']} trims (discards data); drop --readonly or the trims")
        read_pct = int(job["rw"]["read_pct"])
        if read_pct < 100:
            raise JobError(
                f"--readonly: job {job['name']} writes ({100 - read_pct}% of its I/O); "
                "drop --readonly or make it a read job"
            )
