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
the group's newest interval rates, and when the criterion holds it stops
the run (so only a job in the run's last stonewall group can be ended
early: :func:`check_placement` refuses the others, naming ``--section``).
What is reported is judged again from the result's exact per-interval
series (:func:`report`), in fio's JSON shape (``steadystate`` of a job).
For latency criteria the report's series is the one judged live (the
result's series keeps percentiles, not means).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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
    """``jobs``: (name, stonewall group) of every job. A steady-state job must
    be alone in the run's last group: stopping it stops the run."""
    last = max(g for _, g in jobs)
    for c in criteria:
        group = next(g for n, g in jobs if n == c.job)
        others = [n for n, g in jobs if g == group and n != c.job]
        if group != last or others:
            raise ParseError(
                f"job {c.job}",
                None,
                f"steadystate={c.written}: iolab ends steady jobs by ending the run, so the job must run "
                f"last and alone; run it on its own with --section {c.job}",
            )


class SteadyStateRun:
    """Wraps ``iolab._native.Run``: stops it when the criterion holds."""

    def __init__(self, inner: Any, c: Criterion) -> None:
        self._inner = inner
        self._c = c
        self._samples: list[float] = []
        #: Mean latency (ns) of every interval judged, in order (lat criteria).
        self.lat_means_ns: list[float] = []
        self._last_k = -1
        self.attained = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def poll(self, timeout_s: float) -> Json:
        p: Json = self._inner.poll(timeout_s)
        c = self._c
        if p.get("phase") != "running" or p["elapsed_ns"] < c.ramp_ns or self.attained:
            return p
        k = p["elapsed_ns"] // c.interval_ns
        if k > self._last_k:
            self._last_k = k
            if c.metric == "lat":
                value = interval_lat_mean_ns(p)
                if value is None:  # no I/O completed: nothing to judge
                    return p
                self.lat_means_ns.append(value)
            else:
                value = float(sum(p["iops"] if c.metric == "iops" else p["bw_bytes_per_s"]))
            self._samples = [*self._samples, value][-c.samples :]
            if judge(self._samples, c)[0]:
                self.attained = True
                self._inner.stop()
        return p


def interval_lat_mean_ns(progress: Json) -> Optional[float]:
    """Mean total latency (ns) of the I/Os completed in the progress's last
    interval, read and write together (their histograms merged); None when
    none completed."""
    hists = [h for h in progress.get("lat_ns", []) if h]
    if not hists:
        return None
    stats = _native.hist_stats(_native.hist_merge(hists), [])
    return float(stats["mean_ns"]) if stats["count"] else None


def report(
    c: Criterion, job_summary: Json, ramp_time_ns: int, attained: bool, lat_means_ns: Optional[list[float]] = None
) -> Json:
    """fio's ``steadystate`` object from the job's exact merged series: the
    last ``ss_dur`` of full intervals after ``ss_ramp``."""
    rows = [
        s
        for s in job_summary["series"]
        if s["t_start_ns"] + ramp_time_ns >= c.ramp_ns and s["t_end_ns"] - s["t_start_ns"] >= c.interval_ns * 0.9
    ][-c.samples :]
    iops = [sum(s[d]["iops"] for d in ("read", "write")) for s in rows]
    bw = [sum(s[d]["bw_bytes_per_s"] for d in ("read", "write")) for s in rows]
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


class SteadyState:
    """The steady-state watch of one run: the run factory for the driver and
    the report afterwards."""

    def __init__(self, c: Criterion) -> None:
        self.criterion = c
        self.run: Optional[SteadyStateRun] = None

    @classmethod
    def plan(cls, extras: list[JobExtras], prepared: list[Json], interval_ns: int) -> Optional[SteadyState]:
        criteria = [c for e in extras if (c := criterion(e, interval_ns)) is not None]
        if not criteria:
            return None
        check_placement(_groups(prepared), criteria)
        return cls(criteria[0])

    def factory(self, *args: Any, **kwargs: Any) -> SteadyStateRun:
        from iolab import _native

        self.run = SteadyStateRun(_native.Run(*args, **kwargs), self.criterion)
        return self.run

    def fio_entries(self, summary: Json) -> dict[str, Json]:
        """``{job name: {"steadystate": ...}}`` to add to the job's fio JSON entries."""
        attained = self.run is not None and self.run.attained
        for job in summary["jobs"]:
            if job["name"] == self.criterion.job:
                lat = self.run.lat_means_ns if self.run is not None else None
                rep = report(self.criterion, job, job["config"]["ramp_time_ns"], attained, lat)
                return {job["name"]: {"steadystate": rep}}
        return {}

    def line(self, summary: Json) -> str:
        """fio's ``steadystate  : attained=yes, ...`` line."""
        rep = self.fio_entries(summary).get(self.criterion.job, {}).get("steadystate")
        if rep is None:
            return ""
        what = "slope" if self.criterion.slope else "mean dev"
        lat = f", lat={rep['data']['lat_mean_ns']} ns" if "lat_mean_ns" in rep["data"] else ""
        return (
            f"{self.criterion.job}: steadystate: attained={'yes' if rep['attained'] else 'no'}, "
            f"bw={rep['data']['bw_mean']} bytes/s, iops={rep['data']['iops_mean']} IOPS{lat}, "
            f"{self.criterion.metric} {what}={rep['criterion']} (limit {self.criterion.written}, "
            f"{len(rep['data']['iops'])} samples of {self.criterion.interval_ns // 1_000_000} ms)"
        )
