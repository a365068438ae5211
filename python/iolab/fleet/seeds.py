"""Hosts that draw the same random offsets on one target: a methodology note.

Each worker's seed mixes in its number in the run and, in a fleet, the
host's rank (crates/iolab-core/src/gen/rng.rs), so hosts draw their own
offsets — unless the job gives ``randseed``, which asks for the same
sequence everywhere (fio's client/server hosts always draw the same). Then
hosts on one target (the same ``filename`` or ``uri``) read the same blocks
in the same order, and a cache in front of the target serves every host
after the first: the fleet measures the cache, not the device. Rank 0 says
so before the run; the run still goes ahead, as asked.
"""

from __future__ import annotations

from collections.abc import Sequence

from iolab.jobs import JobSpec

#: (job name, target, randseed) of one random job that gives randseed.
SeedKey = tuple[str, str, str]


def _last(spec: JobSpec, *names: str) -> str | None:
    value = None
    for key, v in spec.options:
        if key in names:
            value = v
    return value


def seed_keys(specs: Sequence[JobSpec]) -> list[SeedKey]:
    """This host's random jobs that fix ``randseed``, with their target."""
    out = []
    for spec in specs:
        rw = (_last(spec, "rw", "readwrite") or "read").strip()
        seed = _last(spec, "randseed")
        target = _last(spec, "filename", "uri")
        if rw.startswith("rand") and seed is not None and target:
            out.append((spec.name, target.strip(), seed.strip()))
    return out


def same_sequence_notes(keys_per_host: Sequence[Sequence[SeedKey]], labels: Sequence[str]) -> list[str]:
    """One note per job that two or more hosts run on one target with one seed."""
    hosts: dict[SeedKey, list[str]] = {}
    for label, keys in zip(labels, keys_per_host):
        for key in keys:
            hosts.setdefault(key, []).append(label)
    return [
        f"methodology: hosts {', '.join(names)} draw the same offsets for job '{name}' on {target} "
        f"(randseed={seed} given): a cache in front of it serves every host after the first; "
        "drop randseed to let each host draw its own"
        for (name, target, seed), names in hosts.items()
        if len(names) > 1
    ]
