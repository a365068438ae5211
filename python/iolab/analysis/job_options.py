"""What a job ran, in fio's words, for the labels of tables and charts.

- :func:`written_options` — a resolved job (a results document's
  ``result.jobs[].job``) back as the options fio would take to run it:
  ``rw``, ``rwmixread`` (mixed jobs only), ``bs``/``bsrange``/``bssplit``
  (the directions the job issues), ``rate_iops`` and ``rate`` (when capped),
  then the resolved scalar options. A report must show these: a point capped
  at ``rate_iops=2000`` otherwise reads as a slow engine.
- :func:`no_effect` — options that do nothing for a job's ``rw`` (fio's
  ``rwmixread=50`` default of a pure ``randread`` job): reports show "-"
  for them and never plot them as a number.
- :data:`WHAT_RAN` — the options a report's ``job:`` line and its charts'
  subtitles show when every point shares them.
"""

from __future__ import annotations

from typing import Any, Optional

from iolab.analysis.model import Scalar

Json = dict[str, Any]

#: fio's names of the mixed rw modes: the only ones a read/write mix acts on.
MIXED_RW = ("rw", "readwrite", "randrw")
#: Options that act on mixed jobs only.
MIX_OPTIONS = ("rwmixread", "rwmixwrite")
#: What a reader needs to know ran, in this order, when all points share it.
WHAT_RAN = ("rw", "rwmixread", "rwmixwrite", "bs", "bsrange", "bssplit", "rate_iops", "rate", "ioengine",
            "iodepth", "numjobs", "direct")  # fmt: skip
#: Not shown: they name or order jobs (differ between groups by construction),
#: or are set by the run rather than written (a job's first worker number and
#: fleet rank, mixed into its seeds; whether randseed was written).
NOT_OPTIONS = ("name", "stonewall", "new_group", "group", "first_worker", "seed_host", "randseed_given")
#: Resolved fields shown in fio's words by :func:`written_options` (not as raw values).
_REWRITTEN = ("rw", "bs", "rate_iops", "rate_bytes_per_s")


#: The read share (%) a pure rw mode stands for: a mix option written with
#: that share is what made the job pure (``randrw`` at ``rwmixread=100``).
_PURE_READ_PCT = {"read": 100.0, "randread": 100.0, "write": 0.0, "randwrite": 0.0}


def no_effect(option: str, rw: str, value: Optional[Scalar] = None) -> bool:
    """True when ``option`` changes nothing for a job of ``rw`` (fio's name,
    as the job ran). A mix option whose ``value`` is the share the pure
    ``rw`` stands for is what made the job pure (a mix sweep's ``randrw`` at
    ``rwmixread=100`` runs as ``randread``): it had its effect."""
    if option not in MIX_OPTIONS or rw in MIXED_RW:
        return False
    read_pct = _PURE_READ_PCT.get(rw)
    try:
        given = float(value) if value not in (None, "", "-") else None
    except (TypeError, ValueError):
        given = None
    if read_pct is None or given is None:
        return True
    return given != (read_pct if option == "rwmixread" else 100.0 - read_pct)


def rw_name(rw: Json) -> str:
    """A resolved ``rw`` (``{"pattern": "random", "read_pct": 70}``) → fio's name (``randrw``)."""
    prefix = "rand" if rw["pattern"] == "random" else ""
    pct = int(rw["read_pct"])
    if pct == 100:
        return prefix + "read"
    if pct == 0:
        return prefix + "write"
    return "randrw" if prefix else "rw"


def fio_size(n: int) -> str:
    """Bytes in fio's size syntax, exactly: 4096 → ``4k``, 1048576 → ``1m``, 1000 → ``1000``."""
    for suffix, mult in (("g", 2**30), ("m", 2**20), ("k", 2**10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


def _issued(rw: Json) -> list[int]:
    """The directions (0 read, 1 write) a job issues."""
    pct = int(rw["read_pct"])
    return [d for d, on in ((0, pct > 0), (1, pct < 100)) if on]


def _per_dir(values: list[str]) -> str:
    """One value when the directions agree, else fio's ``R,W`` form."""
    return values[0] if len(set(values)) == 1 else ",".join(values)


def _bs(specs: list[Json], dirs: list[int]) -> tuple[str, str]:
    """(option name, value) of the block sizes of the directions issued."""
    kinds = {next(iter(specs[d])) for d in dirs}
    name = "bssplit" if "split" in kinds else ("bsrange" if "range" in kinds else "bs")
    out = []
    for d in dirs:
        ((kind, v),) = specs[d].items()
        if kind == "fixed":
            size = fio_size(int(v))
            out.append({"bs": size, "bsrange": f"{size}-{size}", "bssplit": f"{size}/100"}[name])
        elif kind == "range":
            out.append(f"{fio_size(int(v['min']))}-{fio_size(int(v['max']))}")
        else:
            out.append(":".join(f"{fio_size(int(b))}/{int(p)}" for b, p in v))
    return name, _per_dir(out)


def _rate(values: list[Optional[int]], dirs: list[int], size: bool) -> Optional[str]:
    """A per-direction cap in fio's form (an uncapped direction's field empty); None when uncapped."""
    caps = [values[d] for d in dirs]
    if all(v is None for v in caps):
        return None
    return _per_dir(["" if v is None else fio_size(int(v)) if size else str(v) for v in caps])


def written_options(job: Json) -> list[tuple[str, Scalar]]:
    """A resolved job's options as fio takes them: what ran first, then its scalar options."""
    rw = job["rw"]
    name = rw_name(rw)
    dirs = _issued(rw)
    out: list[tuple[str, Scalar]] = [("rw", name)]
    if name in MIXED_RW:
        out.append(("rwmixread", int(rw["read_pct"])))
    out.append(_bs(job["bs"], dirs))
    for option, key, size in (("rate_iops", "rate_iops", False), ("rate", "rate_bytes_per_s", True)):
        cap = _rate(list(job.get(key) or [None, None]), dirs, size)
        if cap is not None:
            out.append((option, cap))
    out += [
        (k, v)
        for k, v in job.items()
        if isinstance(v, (int, float, str, bool)) and k not in NOT_OPTIONS and k not in _REWRITTEN
    ]
    return out


def shared(options: list[dict[str, Scalar]], axes: list[str]) -> dict[str, Scalar]:
    """The :data:`WHAT_RAN` options every point ran with the same value (axes left out)."""
    out: dict[str, Scalar] = {}
    for k in WHAT_RAN:
        if k in axes or not options or any(k not in o for o in options):
            continue
        values = {str(o[k]) for o in options}
        if len(values) == 1 and options[0][k] not in ("", "-"):
            out[k] = options[0][k]
    return out


def describe(job: dict[str, Scalar]) -> str:
    """``rw=randrw rwmixread=70 bssplit=4k/50:64k/50 rate_iops=500``."""
    return " ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in job.items())
