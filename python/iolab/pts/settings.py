"""A PTS test's settings: the defaults the spec sets and what shrinking
them means (:func:`resolve`, whose ``shrunk`` the verdict prints), what is
tested (:class:`Target`), the jobs' common options, and the safety checks
and purge in front of the first write (:func:`check_target`, :func:`purge`).
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

from iolab import _native
from iolab.errors import JobError, RefusedError
from iolab.plans.model import Value
from iolab.plans.slo import RECORDED_PERCENTILES
from iolab.pts import purge as purging
from iolab.pts.steady import PTS_RULE

#: The spec's round: each cell of the matrix runs one minute.
SPEC_ROUND_TIME = "60s"
#: WSAT's spec bounds: 4x the capacity written, or 6 hours of one-minute rounds.
SPEC_WSAT_FILLS = 4.0
SPEC_WSAT_ROUNDS = 360
#: --quick: rounds of this long, at most this many, over at most this much.
QUICK_ROUND_TIME = "2s"
QUICK_MAX_ROUNDS = 10
QUICK_CAPACITY = "1g"
#: The percentiles a PTS report may ask for: those iolab records (fio's
#: percentile_list) and the PTS's five nines, all from the same histograms.
PTS_PERCENTILES = (*RECORDED_PERCENTILES, 99.999)
#: What every cell reports unless ``--percentiles`` says otherwise.
DEFAULT_PERCENTILES = (50.0, 99.0, 99.9, 99.99, 99.999)


def parse_percentiles(text: str) -> tuple[float, ...]:
    """``'99,99.9,p99.999'`` → (99.0, 99.9, 99.999); one line naming a
    percentile the report cannot give."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        try:
            value = float(part.removeprefix("p"))
        except ValueError:
            value = -1.0
        if value not in PTS_PERCENTILES:
            known = " ".join(f"{p:g}" for p in PTS_PERCENTILES)
            raise JobError(f"--percentiles {text}: '{part}' is not a percentile iolab records (one of: {known})")
        out.append(value)
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class PtsSettings:
    test: str
    variant: str = "enterprise"
    round_time: Optional[str] = None
    max_rounds: Optional[int] = None
    capacity: Optional[str] = None
    wsat_fills: Optional[float] = None
    quick: bool = False
    purge: bool = True
    purge_device: Optional[str] = None
    allow_overwrite: bool = False
    ioengine: Optional[str] = None
    direct: bool = True
    name: Optional[str] = None
    restart: bool = False
    percentiles: tuple[float, ...] = DEFAULT_PERCENTILES


@dataclass(frozen=True)
class Target:
    """What is tested: an NBD export, a block device or a file."""

    kind: str  # "nbd", "device", "file"
    where: str
    size_bytes: Optional[int]  # the device's or export's size; a file's when it exists

    @classmethod
    def of(cls, path: Optional[str], uri: Optional[str], purge_device: Optional[str] = None) -> Target:
        if (path is None) == (uri is None):
            raise JobError("give the device or file to test, or --uri nbd://...: exactly one")
        if uri is not None:
            if purge_device is not None:
                raise JobError(f"--purge-device {purge_device}: only for a block device; --uri names an NBD export")
            return cls("nbd", uri, purging.export_size(uri))
        assert path is not None
        p = Path(path)
        if p.exists() and stat.S_ISBLK(p.stat().st_mode):
            return cls("device", path, None)  # its size is read after the safety checks
        if purge_device is not None:
            raise JobError(f"--purge-device {purge_device}: only for a block device; {path} is not one")
        return cls("file", path, p.stat().st_size if p.is_file() else None)


@dataclass
class Resolved:
    """The settings with their defaults applied, and what was shrunk."""

    round_time: str
    max_rounds: int
    capacity_bytes: int
    wsat_fills: float
    shrunk: list[str] = field(default_factory=list)


def resolve(s: PtsSettings, target: Target) -> Resolved:
    wsat = s.test == "wsat"
    round_time = s.round_time or (QUICK_ROUND_TIME if s.quick else SPEC_ROUND_TIME)
    spec_rounds = SPEC_WSAT_ROUNDS if wsat else PTS_RULE.max_rounds
    max_rounds = s.max_rounds or (min(QUICK_MAX_ROUNDS, spec_rounds) if s.quick else spec_rounds)
    if max_rounds < PTS_RULE.rounds:
        raise JobError(f"--max-rounds {max_rounds}: a steady-state window needs {PTS_RULE.rounds} rounds")
    cap_bytes = _native.parse_size(s.capacity) if s.capacity is not None else None
    if target.size_bytes is None and cap_bytes is None:
        raise JobError(f"{target.where}: the file does not exist: give its size with --capacity")
    size = target.size_bytes if target.kind != "file" else None
    if size is not None and cap_bytes is not None and cap_bytes > size:
        raise JobError(f"--capacity {s.capacity}: larger than {target.where} ({size} bytes)")
    if cap_bytes is None and s.quick:
        cap_bytes = min(_native.parse_size(QUICK_CAPACITY), target.size_bytes or 1 << 62)
    capacity = cap_bytes if cap_bytes is not None else target.size_bytes
    assert capacity is not None
    out = Resolved(round_time, max_rounds, capacity, s.wsat_fills or SPEC_WSAT_FILLS)
    if _native.parse_duration_ns(round_time) < _native.parse_duration_ns(SPEC_ROUND_TIME):
        out.shrunk.append(f"rounds of {round_time} per cell (the spec: {SPEC_ROUND_TIME})")
    if max_rounds < spec_rounds:
        out.shrunk.append(f"at most {max_rounds} rounds (the spec: {spec_rounds})")
    if size is not None and capacity < size:
        out.shrunk.append(f"{capacity} of {size} bytes tested and preconditioned (--capacity)")
    if wsat and out.wsat_fills < SPEC_WSAT_FILLS:
        out.shrunk.append(f"WSAT until {out.wsat_fills:g}x capacity written (the spec: {SPEC_WSAT_FILLS:g}x)")
    if s.quick and s.test in ("iops", "latency", "dirth"):
        out.shrunk.append("the matrix shrunk (--quick)")
    return out


def base_options(s: PtsSettings, target: Target, r: Resolved) -> dict[str, Value]:
    opts: dict[str, Value] = {}
    if target.kind == "nbd":
        if s.ioengine not in (None, "nbd"):
            raise JobError(f"--ioengine {s.ioengine}: an NBD export (--uri) is driven by ioengine nbd")
        opts.update(ioengine="nbd", uri=target.where)
    else:
        opts.update(filename=target.where, ioengine=s.ioengine or "io_uring", direct=s.direct)
    opts.update(
        size=r.capacity_bytes,
        time_based=True,
        runtime=r.round_time,
        group_reporting=True,
        norandommap=True,
        randrepeat=False,
    )
    return opts


def check_target(s: PtsSettings, target: Target, tables: purging.SystemTables) -> Target:
    """The safety checks, before anything is opened for writing: the target
    with its size (a device's read now)."""
    if target.kind != "device":
        return target
    why = purging.in_use(target.where, tables)
    if why is not None:
        raise RefusedError(f"{target.where}: {why}: iolab never writes a device in use; unmount it first")
    if s.purge:
        purging.check_device_purge(target.where, s.purge_device, s.allow_overwrite, tables)
    elif not s.allow_overwrite:
        raise RefusedError(f"{target.where}: writing a block device needs --allow-overwrite")
    return replace(target, size_bytes=purging.device_size(target.where))


def purge(s: PtsSettings, target: Target) -> purging.Purged:
    """The purge (or the record that there was none), after :func:`check_target`."""
    if not s.purge:
        return purging.Purged("not purged (--no-purge)", 0)
    if target.kind == "device":
        return purging.purge_device(target.where)
    if target.kind == "nbd":
        return purging.purge_nbd(target.where)
    return purging.purge_file(Path(target.where), s.allow_overwrite)
