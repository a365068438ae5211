"""fio's steady-state detection (``steadystate``/``ss``, ``ss_dur``, ``ss_ramp``).

fio's HOWTO defines it: after ``ss_ramp``, keep a rolling window of
``ss_dur`` worth of IOPS (or bandwidth) samples, one per ``ss_interval``;
the job has reached steady state when

- ``iops:L`` / ``bw:L``: every sample in the window is within L of the
  window's mean (``L%``: L percent of the mean);
- ``iops_slope:L`` / ``bw_slope:L``: the least-squares slope of the window
  (per second) is at most L in absolute value (``L%``: of the mean),
- ``lat:L`` / ``lat_slope:L``: the same on the mean latency (ns) of each
  interval; iolab takes the mean total latency (``lat``) of the I/Os
  completed in the interval, from the interval's merged latency histograms
  the engine's progress carries (``lat_ns``, read and write bucket sums),

and fio then ends the job. Here :class:`SteadyStateRun` wraps the engine's
run for the driver: the run's interval is ``ss_interval``, each poll takes
each steady job's newest interval rates (its workers together, as fio with
``group_reporting``), and when a job's criterion holds it stops that job
alone (``Run.stop_job``), as fio does: the other jobs of its group go on,
and later groups start when the group is done.
What is reported is judged again from the result's exact per-interval
series (:func:`report`), in fio's JSON shape (``steadystate`` of a job).
For latency criteria the report's series is the one judged live (the
result's series keeps percentiles, not means).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, replace
from typing import Any, Optional

from iolab import _native
from iolab.jobs import ParseError
from iolab.jobs.extras import JobExtras

Json = dict[str, Any]
_SPEC = re.compile(r"^(iops|bw|iops_slope|bw_slope|lat|lat_slope):([0-9.]+)(%?)$")


@dataclass(frozen=True)
class Criterion:
    job: str
    written: str
    metric: str  # "iops", "bw" or "lat"
    slope: bool
    limit: float
    percent: bool
    dur_ns: int
    ramp_ns: int
    interval_ns: int
    #: Index of the job in the run (which job ``stop_job`` ends).
    job_index: int = 0

    @property
    def samples(self) -> int:
        return max(1, self.dur_ns // self.interval_ns)


def criterion(e: JobExtras, interval_ns: int) -> Optional[Criterion]:
    text = e.text("steadystate")
    if not text:
        return None
    m = _SPEC.match(text.strip())
    where = f"job {e.job}"
    if not m:
        raise ParseError(
            where,
            None,
            f"steadystate={text}: expected iops:N, iops_slope:N, bw:N, bw_slope:N, lat:N or lat_slope:N (N or N%)",
        )
    kind, limit, pct = m.groups()
    dur = e.get("steadystate_duration", 0)
    if not isinstance(dur, int) or dur <= 0:
        raise ParseError(where, None, f"steadystate={text} needs ss_dur (the window to judge, e.g. ss_dur=30s)")
    ramp = e.get("steadystate_ramp_time", 0)
    return Criterion(
        e.job, text.strip(), kind.split("_")[0], kind.endswith("_slope"), float(limit), pct == "%", dur,
        ramp if isinstance(ramp, int) else 0, interval_ns,
    )  # fmt: skip


def judge(values: list[float], c: Criterion) -> tuple[bool, float, float, float]:
    """(attained, criterion value, max deviation, slope per second) of a window."""
    n = len(values)
    mean = sum(values) / n if n else 0.0
    max_dev = max((abs(v - mean) for v in values), default=0.0)
    step_s = c.interval_ns / 1e9
    xs = [i * step_s for i in range(n)]
    x_mean = sum(xs) / n if n else 0.0
    sxx = sum((x - x_mean) ** 2 for x in xs)
    slope = sum((x - x_mean) * (v - mean) for x, v in zip(xs, values)) / sxx if sxx else 0.0
    raw = abs(slope) if c.slope else max_dev
    value = raw / mean * 100 if c.percent and mean > 0 else raw
    return n >= c.samples and value <= c.limit, value, max_dev, slope


def check_placement(jobs: list[tuple[str, int]], criteria: list[Criterion]) -> None:
    """``jobs``: (name, stonewall group) of every job. Each steady-state job is
    ended on its own, so any placement works; only a name that is no job is
    refused (it cannot happen from a job file)."""
    names = {n for n, _ in jobs}
    for c in criteria:
        if c.job not in names:
            raise ParseError(f"job {c.job}", None, f"steadystate={c.written}: no such job in the run")


class _Watch:
    """The rolling window of one steady-state job."""

    def __init__(self, c: Criterion) -> None:
        self.c = c
        self.samples: list[float] = []
        self.lat_means_ns: list[float] = []
        self.last_k = -1
        self.attained = False

    def offer(self, elapsed_ns: int, iops: float, bw: float, lat_hists: list[Any]) -> bool:
        """One progress reading of the job; True when it has just become steady."""
        c = self.c
        if elapsed_ns < c.ramp_ns or self.attained:
            return False
        k = elapsed_ns // c.interval_ns
        if k <= self.last_k:
            return False
        self.last_k = k
        if c.metric == "lat":
            value = _lat_mean_ns(lat_hists)
            if value is None:  # no I/O completed: nothing to judge
                return False
            self.lat_means_ns.append(value)
        else:
            value = iops if c.metric == "iops" else bw
        self.samples = [*self.samples, value][-c.samples :]
        if judge(self.samples, c)[0]:
            self.attained = True
        return self.attained


class SteadyStateRun:
    """Wraps ``iolab._native.Run``: ends each steady-state job when its
    criterion holds (``stop_job``); the run goes on with the others."""

    def __init__(self, inner: Any, criteria: Criterion | list[Criterion]) -> None:
        self._inner = inner
        cs = criteria if isinstance(criteria, list) else [criteria]
        self.watches = [_Watch(c) for c in cs]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @property
    def attained(self) -> bool:
        """Whether the (first) steady-state job reached steady state."""
        return self.watches[0].attained

    @property
    def lat_means_ns(self) -> list[float]:
        """Mean latency (ns) of every interval judged of the (first) job (lat criteria)."""
        return self.watches[0].lat_means_ns

    def poll(self, timeout_s: float) -> Json:
        p: Json = self._inner.poll(timeout_s)
        if p.get("phase") != "running":
            return p
        per_job = {j["job"]: j for j in p.get("jobs", [])}
        for w in self.watches:
            j = per_job.get(w.c.job_index)
            if j is None and "jobs" in p:
                continue  # the job is not in the running group
            src = j if j is not None else p  # an engine without per-job progress: the group's
            # read and write rates are over the same interval: their sum is its I/Os over its length
            if w.offer(
                p["elapsed_ns"], float(sum(src["iops"])), float(sum(src["bw_bytes_per_s"])), src.get("lat_ns", [])
            ):
                if hasattr(self._inner, "stop_job") and j is not None:
                    self._inner.stop_job(w.c.job_index)
                else:
                    self._inner.stop()
        return p


def _lat_mean_ns(lat_hists: list[Any]) -> Optional[float]:
    hists = [h for h in lat_hists if h]
    if not hists:
        return None
    stats = _native.hist_stats(_native.hist_merge(hists), [])
    return float(stats["mean_ns"]) if stats["count"] else None


def report(
    c: Criterion, job_summary: Json, ramp_time_ns: int, attained: bool, lat_means_ns: Optional[list[float]] = None
) -> Json:
    """fio's ``steadystate`` object from the job's exact merged series: the
    last ``ss_dur`` of full intervals after ``ss_ramp``."""
    kept: deque[Json] = deque(maxlen=c.samples)  # the last ones only: a streamed series is read from its file
    for s in job_summary["series"]:
        if s["t_start_ns"] + ramp_time_ns >= c.ramp_ns and s["t_end_ns"] - s["t_start_ns"] >= c.interval_ns * 0.9:
            kept.append(s)
    rows = list(kept)
    iops = [s["total"]["iops"] for s in rows]
    bw = [s["total"]["bw_bytes_per_s"] for s in rows]
    lat = (lat_means_ns or [])[-c.samples :]
    _ok, value, max_dev, slope = judge({"iops": iops, "bw": bw, "lat": lat}[c.metric], c)
    data: Json = {
        "bw_mean": round(sum(bw) / len(bw)) if bw else 0,
        "iops_mean": round(sum(iops) / len(iops)) if iops else 0,
        "iops": [round(v) for v in iops],
        "bw": [round(v) for v in bw],
    }
    if c.metric == "lat":
        data["lat_mean_ns"] = round(sum(lat) / len(lat)) if lat else 0
        data["lat_ns"] = [round(v) for v in lat]
    return {
        "ss": c.written,
        "duration": c.dur_ns // 1_000_000_000,
        "steadystate_ramp_time": c.ramp_ns // 1_000_000_000,
        "attained": 1 if attained else 0,
        "criterion": f"{value:f}%" if c.percent else f"{value:f}",
        "max_deviation": max_dev,
        "slope": slope,
        "data": data,
    }


def _groups(prepared: list[Json]) -> list[tuple[str, int]]:
    """(name, stonewall group) per job: a ``stonewall`` job starts a new group."""
    out, group = [], 0
    for i, job in enumerate(prepared):
        if i > 0 and job.get("stonewall"):
            group += 1
        out.append((str(job["name"]), group))
    return out


class FioSteadyState:
    """fio's ``steadystate`` option over one run: the run factory for the
    driver (jobs end when steady) and the report afterwards, for every job
    with the option. (Not the SNIA PTS rounds of a sweep plan:
    :class:`iolab.plans.model.PtsSteadyState`.)"""

    def __init__(self, criteria: Criterion | list[Criterion]) -> None:
        self.criteria = criteria if isinstance(criteria, list) else [criteria]
        self.run: Optional[SteadyStateRun] = None

    @property
    def criterion(self) -> Criterion:
        """The first steady-state job's criterion."""
        return self.criteria[0]

    @classmethod
    def plan(cls, extras: list[JobExtras], prepared: list[Json], interval_ns: int) -> Optional[FioSteadyState]:
        criteria = [
            replace(c, job_index=i) for i, e in enumerate(extras) if (c := criterion(e, interval_ns)) is not None
        ]
        if not criteria:
            return None
        check_placement(_groups(prepared), criteria)
        return cls(criteria)

    def factory(self, *args: Any, **kwargs: Any) -> SteadyStateRun:
        from iolab import _native

        self.run = SteadyStateRun(_native.Run(*args, **kwargs), self.criteria)
        return self.run

    def fio_entries(self, summary: Json) -> dict[str, Json]:
        """``{job name: {"steadystate": ...}}`` to add to the job's fio JSON entries."""
        out: dict[str, Json] = {}
        for k, c in enumerate(self.criteria):
            w = self.run.watches[k] if self.run is not None else None
            for job in summary["jobs"]:
                if job["name"] == c.job:
                    lat = w.lat_means_ns if w is not None else None
                    attained = w is not None and w.attained
                    out[job["name"]] = {"steadystate": report(c, job, job["config"]["ramp_time_ns"], attained, lat)}
        return out

    def line(self, summary: Json) -> str:
        """fio's ``steadystate  : attained=yes, ...`` line, one per steady-state job."""
        entries = self.fio_entries(summary)
        lines = []
        for c in self.criteria:
            rep = entries.get(c.job, {}).get("steadystate")
            if rep is None:
                continue
            what = "slope" if c.slope else "mean dev"
            lat = f", lat={rep['data']['lat_mean_ns']} ns" if "lat_mean_ns" in rep["data"] else ""
            lines.append(
                f"{c.job}: steadystate: attained={'yes' if rep['attained'] else 'no'}, "
                f"bw={rep['data']['bw_mean']} bytes/s, iops={rep['data']['iops_mean']} IOPS{lat}, "
                f"{c.metric} {what}={rep['criterion']} (limit {c.written}, "
                f"{len(rep['data']['iops'])} samples of {c.interval_ns // 1_000_000} ms)"
            )
        return "\n".join(lines)
