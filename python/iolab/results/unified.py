"""fio's ``unified_rw_reporting`` in the outputs that fio changes for it.

The summary carries the directions as one, ``mixed`` (counts added,
histograms merged exactly: never averaged percentiles), for every entry of
a job with ``unified_rw_reporting=mixed|both``. fio's text and JSON then
show ``mixed`` in place of read, write and trim (``mixed``), or after them
(``both``); :func:`shown_dirs` says which, for the text summary and the
fio-json export alike.
"""

from __future__ import annotations

from typing import Any

DIRS = ("read", "write", "trim")


def mode(config: dict[str, Any], stats: dict[str, Any]) -> str:
    """none, mixed or both for an entry (a group's merged entry has ``mixed``
    when any of its jobs asked; its first job's setting then decides)."""
    m = str(config.get("unified_rw_reporting", "none"))
    if "mixed" not in stats:
        return "none"
    return "both" if m == "none" else m


def shown_dirs(config: dict[str, Any], stats: dict[str, Any]) -> tuple[str, ...]:
    """The directions an entry shows, in fio's order."""
    m = mode(config, stats)
    if m == "mixed":
        return ("mixed",)
    dirs = tuple(d for d in DIRS if d in stats)
    return (*dirs, "mixed") if m == "both" else dirs
