"""The hosts table: each host or rank of a fleet run gets its own options.

A TOML file (``--hosts FILE``)::

    [default]                    # every rank (optional)
    filename = "/data/vm{rank}.dat"

    [[host]]
    rank = 0                     # this rank ...
    uri = "nbd://10.0.0.3:10809/e0"
    cpus_allowed = "0-3"

    [[host]]
    name = "node17"              # ... or every rank on this host
    rate_iops = 500

Values may use ``{rank}`` and ``{host}``. The options are appended to
every job of the rank (so they win over the job file's), in the order
default, name entries, rank entries. Only options that differ per host
are accepted — filename, uri, cpus_allowed, rate_iops — since any other
difference between hosts makes their sum mean nothing; any other key is an
error naming it, as is a rank or a host name that is not in the run (a
typo would otherwise silently leave a host on the default).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.errors import JobError
from iolab.jobs import JobSpec, Option

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

#: The job options a hosts table may set per host.
PER_HOST_OPTIONS = ("filename", "uri", "cpus_allowed", "rate_iops")


@dataclass(frozen=True)
class HostsTable:
    """A parsed hosts table: ``default`` options, then per-name and per-rank ones."""

    default: tuple[Option, ...] = ()
    by_name: tuple[tuple[str, tuple[Option, ...]], ...] = ()
    by_rank: tuple[tuple[int, tuple[Option, ...]], ...] = ()
    source: str = "hosts table"

    def options_for(self, rank: int, host: str) -> list[Option]:
        """The options of ``rank`` on ``host``, ``{rank}``/``{host}`` filled in."""
        picked = list(self.default)
        picked += [o for name, opts in self.by_name if name == host for o in opts]
        picked += [o for r, opts in self.by_rank if r == rank for o in opts]
        return [(k, None if v is None else v.format(rank=rank, host=host)) for k, v in picked]

    def check_against(self, hosts: Sequence[str]) -> None:
        """Every rank and host name the table names must be in the run."""
        outside = sorted({r for r, _ in self.by_rank if not 0 <= r < len(hosts)})
        if outside:
            named = sorted({r for r, _ in self.by_rank})
            raise JobError(
                f"{self.source}: {_ranks(outside)} {'is' if len(outside) == 1 else 'are'} not in this run "
                f"(it has {len(hosts)} ranks, 0..{len(hosts) - 1}; the table names {_ranks(named)}): start "
                f"{max(named) + 1} ranks (iolab fleet -n {max(named) + 1}), or remove the [[host]] entries of "
                f"{_ranks(outside)}"
            )
        for name, _ in self.by_name:
            if name not in hosts:
                raise JobError(f"{self.source}: host {name!r} runs no rank (hosts: {', '.join(sorted(set(hosts)))})")

    def apply(self, jobs: Sequence[JobSpec], rank: int, host: str) -> list[JobSpec]:
        """``jobs`` as ``rank`` on ``host`` runs them."""
        extra = self.options_for(rank, host)
        return [j.with_options(*extra) for j in jobs] if extra else list(jobs)


def _ranks(ranks: list[int]) -> str:
    """Ranks as "rank 3", "ranks 4..7" (consecutive) or "ranks 1, 5, 9"."""
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    if ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"ranks {ranks[0]}..{ranks[-1]}"
    return "ranks " + ", ".join(str(r) for r in ranks)


def _options(table: Any, where: str) -> tuple[Option, ...]:
    if not isinstance(table, dict):
        raise JobError(f"{where}: expected a table of options")
    out = []
    for key, value in table.items():
        if key not in PER_HOST_OPTIONS:
            raise JobError(
                f"{where}: '{key}' cannot differ per host (a hosts table sets {', '.join(PER_HOST_OPTIONS)}); "
                "put it in the job instead"
            )
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise JobError(f"{where}: {key} = {value!r}: expected text or a whole number")
        out.append((key, str(value)))
    return tuple(out)


def parse_hosts(text: str, source: str = "hosts table") -> HostsTable:
    """Parse a hosts table (see the module doc); raises ``JobError`` naming the key."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise JobError(f"{source}: not TOML: {e}") from None
    unknown = set(doc) - {"default", "host"}
    if unknown:
        raise JobError(f"{source}: unknown section(s) {', '.join(sorted(unknown))} (expected [default] and [[host]])")
    default = _options(doc.get("default", {}), f"{source} [default]")
    by_name: list[tuple[str, tuple[Option, ...]]] = []
    by_rank: list[tuple[int, tuple[Option, ...]]] = []
    entries = doc.get("host", [])
    if not isinstance(entries, list):
        raise JobError(f"{source}: 'host' must be an array of tables ([[host]])")
    for i, entry in enumerate(entries):
        where = f"{source} [[host]] #{i + 1}"
        if not isinstance(entry, dict):
            raise JobError(f"{where}: expected a table")
        entry = dict(entry)
        rank, name = entry.pop("rank", None), entry.pop("name", None)
        if (rank is None) == (name is None):
            raise JobError(f'{where}: give exactly one of rank = N or name = "HOST"')
        opts = _options(entry, where)
        if rank is not None:
            if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
                raise JobError(f"{where}: rank = {rank!r}: expected a rank number (0, 1, ...)")
            by_rank.append((rank, opts))
        else:
            if not isinstance(name, str) or not name:
                raise JobError(f"{where}: name = {name!r}: expected a host name")
            by_name.append((name, opts))
    return HostsTable(default, tuple(by_name), tuple(by_rank), source)


def read_hosts(path: Path) -> HostsTable:
    """Read and parse a hosts table file."""
    return parse_hosts(path.read_text(encoding="utf-8"), str(path))


__all__ = ["PER_HOST_OPTIONS", "HostsTable", "parse_hosts", "read_hosts"]
