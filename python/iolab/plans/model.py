"""A sweep plan (TOML) → a validated :class:`Plan`; every error names its key.

The format (docs/plans.md)::

    [plan]
    name = "qd-sweep"            # required: names the sweep's result directory
    description = "..."
    mode = "matrix"              # matrix (every combination) or zip (i-th values together)
    repeats = 3                  # measured repeats of every point
    drop_caches = false          # write 3 to /proc/sys/vm/drop_caches before every point
    timeout_per_point = "5m"     # a point still running then is stopped and marked timed out

    [base]                       # one fio job: option = value
    filename = "sweep.dat"
    size = "10g"

    [axes]                       # or [[axis]] name = "iodepth", values = [...]
    iodepth = [1, 16, 32]

    [warmup]                     # ramp_time = "5s" (per point) or runtime = "10s" (a discarded run)
    [precondition]               # rw = "write", bs = "1m", size_factor = 2 (loops over the file)
    [steady_state]               # metric, rounds, max_rounds, excursion_pct, slope_pct
    [quick]                      # job options to shrink to, plus repeats / max_rounds

Only the shape is checked here; job options are checked by the native
core when points are expanded (:mod:`iolab.plans.points`).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from iolab.errors import JobError
from iolab.run.api import parse_interval_ns

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

Value = Union[str, int, float, bool]

_TOP_KEYS = {"plan", "base", "axes", "axis", "warmup", "precondition", "steady_state", "quick"}
_PLAN_KEYS = {"name", "description", "mode", "repeats", "drop_caches", "timeout_per_point"}
_SS_METRICS = ("iops", "bw_bytes_per_s", "lat_mean_ns")


class PlanError(JobError):
    """A plan that cannot be run; ``str(e)`` names the file and the key.
    A ``JobError``, so the CLI treats it as a usage error (exit status 2)."""


@dataclass(frozen=True)
class Axis:
    name: str
    values: tuple[Value, ...]


@dataclass(frozen=True)
class PtsSteadyState:
    """SNIA PTS steady state of a plan's points (``[steady_state]``): the
    last ``rounds`` rounds of ``metric`` lie within ``excursion_pct`` of
    their mean and their least-squares line moves less than ``slope_pct``
    of the mean over those rounds. (Not fio's ``steadystate`` job option,
    which ends a job inside one run: :class:`iolab.run.steady.FioSteadyState`.)"""

    metric: str = "iops"
    rounds: int = 5
    max_rounds: int = 25
    excursion_pct: float = 20.0
    slope_pct: float = 10.0


@dataclass(frozen=True)
class Plan:
    name: str
    description: str
    mode: str
    repeats: int
    drop_caches: bool
    timeout_per_point_ns: Optional[int]
    base: tuple[tuple[str, Value], ...]
    axes: tuple[Axis, ...]
    warmup_ramp_time: Optional[str] = None
    warmup_runtime: Optional[str] = None
    precondition: tuple[tuple[str, Value], ...] = ()
    steady_state: Optional[PtsSteadyState] = None
    quick: tuple[tuple[str, Value], ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def plan_hash(self) -> str:
        """sha256 of the resolved plan: equal hashes run the same points."""
        # The description does not change what runs, so editing it keeps a sweep resumable.
        runs = {k: v for k, v in self.to_json().items() if k != "description"}
        text = json.dumps(runs, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


def load_plan(path: Path) -> Plan:
    """Read and check a plan file. Raises :class:`PlanError`, ``OSError``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise PlanError(f"{path}: not valid TOML: {e}") from None
    return parse_plan(data, str(path))


def parse_plan(data: dict[str, Any], source: str = "plan") -> Plan:
    """Check a parsed plan document (a dict as tomllib returns it)."""

    def err(key: str, msg: str) -> PlanError:
        return PlanError(f"{source}: {key}: {msg}")

    _no_unknown(data, _TOP_KEYS, "", err)
    head = _table(data, "plan", err, required=True)
    _no_unknown(head, _PLAN_KEYS, "plan.", err)
    name = head.get("name")
    if not isinstance(name, str) or not name.strip() or "/" in name:
        raise err("plan.name", "required: a non-empty name without '/'")
    mode = head.get("mode", "matrix")
    if mode not in ("matrix", "zip"):
        raise err("plan.mode", f"'{mode}' is not matrix or zip")
    timeout = head.get("timeout_per_point")
    warm = _table(data, "warmup", err)
    _no_unknown(warm, {"ramp_time", "runtime"}, "warmup.", err)
    return Plan(
        name=name,
        description=_typed(head, "description", str, "", "plan.", err),
        mode=mode,
        repeats=_positive_int(head, "repeats", 1, "plan.", err),
        drop_caches=_typed(head, "drop_caches", bool, False, "plan.", err),
        timeout_per_point_ns=None if timeout is None else _duration_ns(timeout, "plan.timeout_per_point", err),
        base=_options(_table(data, "base", err, required=True), "base", err),
        axes=_axes(data, mode, err),
        warmup_ramp_time=_duration_text(warm, "ramp_time", err),
        warmup_runtime=_duration_text(warm, "runtime", err),
        precondition=_precondition(data, err),
        steady_state=_steady_state(data, err),
        quick=_options(_table(data, "quick", err), "quick", err),
    )


def _no_unknown(table: dict[str, Any], allowed: set[str], prefix: str, err: Any) -> None:
    for key in table:
        if key not in allowed:
            raise err(prefix + key, f"unknown key (expected one of: {', '.join(sorted(allowed))})")


def _table(data: dict[str, Any], key: str, err: Any, required: bool = False) -> dict[str, Any]:
    value = data.get(key)
    if value is None:
        if required:
            raise err(key, f"missing: the plan needs a [{key}] table")
        return {}
    if not isinstance(value, dict):
        raise err(key, f"expected a table ([{key}]), got {type(value).__name__}")
    return value


def _typed(table: dict[str, Any], key: str, kind: type, default: Any, prefix: str, err: Any) -> Any:
    value = table.get(key, default)
    if not isinstance(value, kind):
        raise err(prefix + key, f"expected {kind.__name__}, got {value!r}")
    return value


def _positive_int(table: dict[str, Any], key: str, default: int, prefix: str, err: Any) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise err(prefix + key, f"expected a whole number ≥ 1, got {value!r}")
    return value


def _duration_ns(value: Any, key: str, err: Any) -> int:
    try:
        return parse_interval_ns(str(value))
    except ValueError as e:
        raise err(key, str(e)) from None


def _duration_text(table: dict[str, Any], key: str, err: Any) -> Optional[str]:
    if key not in table:
        return None
    _duration_ns(table[key], f"warmup.{key}", err)
    return str(table[key])


def _scalar(value: Any, key: str, err: Any) -> Value:
    if isinstance(value, (str, int, float, bool)):
        return value
    raise err(key, f"expected a string, number or boolean, got {type(value).__name__}")


def _options(table: dict[str, Any], prefix: str, err: Any) -> tuple[tuple[str, Value], ...]:
    return tuple((k, _scalar(v, f"{prefix}.{k}", err)) for k, v in table.items())


def _axes(data: dict[str, Any], mode: str, err: Any) -> tuple[Axis, ...]:
    if "axes" in data and "axis" in data:
        raise err("axis", "give the axes either as [axes] or as [[axis]] tables, not both")
    raw: list[tuple[str, Any]] = []
    if "axes" in data:
        raw = list(_table(data, "axes", err).items())
    elif "axis" in data:
        if not isinstance(data["axis"], list):
            raise err("axis", "expected [[axis]] tables")
        for i, a in enumerate(data["axis"], 1):
            if not isinstance(a, dict) or set(a) != {"name", "values"} or not isinstance(a["name"], str):
                raise err(f"axis[{i}]", 'expected name = "OPTION" and values = [...]')
            raw.append((a["name"], a["values"]))
    axes = tuple(_axis(name, values, err) for name, values in raw)
    if len({a.name for a in axes}) != len(axes):
        raise err("axes", "an option appears on two axes")
    if mode == "zip" and len({len(a.values) for a in axes}) > 1:
        sizes = ", ".join(f"{a.name}: {len(a.values)}" for a in axes)
        raise err("plan.mode", f"zip needs axes of equal length ({sizes})")
    return axes


def _axis(name: str, values: Any, err: Any) -> Axis:
    if not isinstance(values, list) or not values:
        raise err(f"axes.{name}", "expected a non-empty list of values")
    return Axis(name, tuple(_scalar(v, f"axes.{name}", err) for v in values))


def _precondition(data: dict[str, Any], err: Any) -> tuple[tuple[str, Value], ...]:
    table = _table(data, "precondition", err)
    if not table:
        return ()
    factor = table.get("size_factor", 1)
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
        raise err("precondition.size_factor", f"expected a whole number ≥ 1 (passes over the file), got {factor!r}")
    for key in ("time_based", "runtime", "loops", "filename", "size"):
        if key in table:
            raise err(f"precondition.{key}", "not allowed: the fill covers the target's size x size_factor")
    return _options(table, "precondition", err)


def _steady_state(data: dict[str, Any], err: Any) -> Optional[PtsSteadyState]:
    table = _table(data, "steady_state", err)
    if not table:
        return None
    _no_unknown(table, {"metric", "rounds", "max_rounds", "excursion_pct", "slope_pct"}, "steady_state.", err)
    metric = table.get("metric", "iops")
    if metric not in _SS_METRICS:
        raise err("steady_state.metric", f"'{metric}' is not one of {', '.join(_SS_METRICS)}")
    rounds = _positive_int(table, "rounds", 5, "steady_state.", err)
    max_rounds = _positive_int(table, "max_rounds", 25, "steady_state.", err)
    if max_rounds < rounds:
        raise err("steady_state.max_rounds", f"{max_rounds} is fewer than rounds ({rounds})")
    pcts = {}
    for key, default in (("excursion_pct", 20.0), ("slope_pct", 10.0)):
        v = table.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            raise err(f"steady_state.{key}", f"expected a percentage > 0, got {v!r}")
        pcts[key] = float(v)
    return PtsSteadyState(metric, rounds, max_rounds, pcts["excursion_pct"], pcts["slope_pct"])
