"""What analysis reads and what it writes: the one contract between the
loaders (iolab run and sweep directories, fio JSON), the analysis functions
and the reports.

Input — a :class:`Dataset`: the measured :class:`Point` s of a study (a
sweep's points, a run's stonewall groups, a fio output's groups), each with
one :class:`Sample` per repeat. A sample holds per-direction figures with
their latency histograms (HdrHistogram V2 base64, the engine's form; None
where the source had none, e.g. fio's plain ``json``), the job's
configuration, CPU and device figures and the time series — everything in
explicit units. Loaders fill it; nothing after them reads files.

Output — an :class:`Analysis`: tables (one :class:`Row` per point and
direction, every figure a :class:`Stat` over the repeats), consistency
checks, knees, bottleneck, :class:`Finding` s (trend statements and
warnings) ranked by importance. ``Analysis.to_json()`` is the
``iolab.analysis/1`` document (``iolab report --format json``).

Units are in every field name; percentiles are keyed by percent (99.9).
Percentiles are never averaged into a headline figure: a point's figure is
the percentile of the repeats' merged histogram; the repeats' own
percentiles give its spread (sd, CV, confidence interval).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Union

Json = dict[str, Any]
Scalar = Union[str, int, float, bool]

ANALYSIS_SCHEMA = "iolab.analysis/1"
DIRS = ("read", "write")
LAT_KINDS = ("slat", "clat", "lat")


@dataclass
class LatStats:
    """One latency distribution (ns)."""

    count: int
    min_ns: int
    max_ns: int
    mean_ns: float
    stdev_ns: float
    #: percent → value in ns (e.g. {50.0: 81000, 99.0: 150000})
    percentiles: dict[float, int]
    #: HdrHistogram V2 base64 (exact merges, charts); None when the source had none.
    hist: Optional[str] = None


@dataclass
class DirResult:
    """One direction of one sample."""

    ios: int
    bytes: int
    errors: int
    runtime_ns: int
    iops: float
    bw_bytes_per_s: float
    slat: Optional[LatStats] = None
    clat: Optional[LatStats] = None
    lat: Optional[LatStats] = None

    @staticmethod
    def idle() -> DirResult:
        """A direction without I/O (the trim of a sample that did none)."""
        return DirResult(0, 0, 0, 0, 0.0, 0.0)


@dataclass
class SampleConfig:
    """The job configuration that matters to analysis (from the prepared job)."""

    rw: str  # fio's name: read, write, randread, randwrite, rw, randrw
    bs_read_bytes: int
    bs_write_bytes: int
    iodepth: int
    numjobs: int
    direct: bool
    ioengine: str
    rwmixread_pct: Optional[float] = None
    #: bytes the job addresses (its working set); None when unknown.
    size_bytes: Optional[int] = None
    ramp_time_ns: int = 0
    rate_limited: bool = False
    time_based: bool = False
    #: the configured rate caps over all workers and directions; None when uncapped or unknown
    rate_iops: Optional[float] = None
    rate_bytes_per_s: Optional[float] = None
    #: I/Os allowed in flight over all jobs of the sample when it is not
    #: iodepth x numjobs (a stonewall group of several jobs); None otherwise
    outstanding_total: Optional[int] = None
    #: False when the block size varies (ranges, bssplit): bs_*_bytes is then the largest
    bs_fixed: bool = True
    #: hosts (fleet ranks) that each ran the whole job: a fleet run's merged result; 1 otherwise
    hosts: int = 1

    @property
    def outstanding(self) -> int:
        """I/Os the configuration allows in flight: hosts x iodepth x numjobs."""
        per_host = self.outstanding_total if self.outstanding_total is not None else self.iodepth * self.numjobs
        return self.hosts * per_host

    @property
    def random(self) -> bool:
        return self.rw.startswith("rand")


@dataclass
class CpuFigures:
    """CPU over the sample's window; None where the source did not measure it."""

    usr_cpu_pct: Optional[float] = None  # worker threads, % of one CPU (fio's usr_cpu)
    sys_cpu_pct: Optional[float] = None  # worker threads, % of one CPU (fio's sys_cpu)
    proc_cpu_pct: Optional[float] = None  # the whole tool process, % of ONE CPU
    sys_busy_pct: Optional[float] = None  # whole system, % of ALL CPUs (100 - idle - iowait)
    steal_pct: Optional[float] = None  # whole system, % of all CPUs
    iowait_pct: Optional[float] = None
    ncpus: Optional[int] = None
    cycles_per_io: Optional[float] = None
    cycles_per_byte: Optional[float] = None
    #: "fixed"/"varies"/None: whether the clock the cycle figures use may vary
    clock_note: Optional[str] = None


@dataclass
class DeviceFigures:
    """The block device under the target over the sample's window (/proc/diskstats deltas)."""

    device: str
    window_ns: int
    util_pct: float  # io_ticks / window x 100
    reads_completed: int
    writes_completed: int
    read_bytes: int
    write_bytes: int
    #: False when the source counted I/Os but not bytes (fio's disk_util):
    #: read_bytes/write_bytes are then 0 and mean "unknown", not "none".
    bytes_known: bool = True
    #: time the device spent on reads/writes and the queue (fio's disk_util ticks), ms
    read_ticks_ms: Optional[int] = None
    write_ticks_ms: Optional[int] = None
    in_queue_ms: Optional[int] = None


@dataclass
class Interval:
    """One time-series interval of a group: both directions and all jobs
    merged by the core (``groups[].series[].total``); ``lat_p99_ns``: of
    every I/O of the interval (None when there was none)."""

    t_start_ns: int
    t_end_ns: int
    iops: float
    bw_bytes_per_s: float
    lat_p99_ns: Optional[int] = None
    lat_p50_ns: Optional[int] = None
    lat_max_ns: Optional[int] = None
    #: The interval's total-latency histogram, every worker and direction
    #: merged exactly (None when the source kept none, or for a long run:
    #: see ``samples.MAX_INTERVAL_HISTS``); what the heat map draws.
    lat_hist: Optional[str] = None


@dataclass
class Sample:
    """One measured repeat of a point."""

    label: str  # run id, run directory or fio job/group name
    config: SampleConfig
    read: DirResult
    write: DirResult
    runtime_ns: int
    cpu: CpuFigures = field(default_factory=CpuFigures)
    device: Optional[DeviceFigures] = None
    series: list[Interval] = field(default_factory=list)
    #: anything the source said about the run: interrupted, timed out, notes
    notes: list[str] = field(default_factory=list)
    #: fio's third direction; None when the sample did no trims (or its
    #: source predates them)
    trim: Optional[DirResult] = None

    def dir(self, d: str) -> DirResult:
        if d == "trim":
            return self.trim or DirResult.idle()
        return self.read if d == "read" else self.write


@dataclass
class Point:
    """One point of the study: its axis values and its repeats."""

    index: int
    #: axis name → value as written ("4k", 32, "randread")
    params: dict[str, Scalar]
    #: axis name → number for numeric axes (bs in bytes, iodepth…), for knees and trends
    values: dict[str, float]
    samples: list[Sample]


@dataclass
class Dataset:
    """A whole study, ready to analyse."""

    source: str  # "iolab-run" | "iolab-sweep" | "fio-json"
    name: str
    path: str
    axes: list[str]  # axis names in plan order; [] for a single point
    points: list[Point]
    #: host facts (iolab.run.hostfacts) or what fio told; {} when unknown
    host: Json = field(default_factory=dict)
    #: plan facts analysis warns about: repeats, warmup (bool), precondition (bool),
    #: drop_caches ("dropped"/"failed"/None), steady_state…
    plan: Json = field(default_factory=dict)
    tool: str = "iolab"  # who measured: "iolab <version>" or "fio-3.33"
    #: what every point ran with, in fio's words (rw, bs/bssplit, rate_iops…;
    #: analysis/job_options.py ``shared``): the report's ``job:`` line
    job: dict[str, Scalar] = field(default_factory=dict)

    @property
    def hosts(self) -> list[int]:
        """How many hosts ran the points (a fleet's ranks; 1 for one host), each count once, smallest first."""
        return sorted({s.config.hosts for p in self.points for s in p.samples}) or [1]


@dataclass
class Stat:
    """A figure over a point's repeats. ``value`` is THE figure of the point
    (for percentiles: from the merged histogram; otherwise the mean); the
    rest describes the spread of the per-repeat values."""

    value: float
    n: int
    mean: float
    sd: Optional[float]  # sample sd (n-1); None when n < 2
    cv_pct: Optional[float]
    ci95_low: Optional[float]  # 95% interval of the mean (Student t; percentiles: bootstrap); None when n < 2
    ci95_high: Optional[float]
    unit: str  # "iops", "bytes_per_s", "ns", "pct", "cycles_per_byte", …


@dataclass
class Row:
    """One point x direction of a table."""

    point: int
    params: dict[str, Scalar]
    dir: str  # "read" | "write"
    #: metric name → Stat: iops, bw_bytes_per_s, {slat,clat,lat}_{mean,min,max}_ns,
    #: {slat,clat,lat}_p{50,90,99,99.9…}_ns (names via metric_name), usr_cpu_pct,
    #: sys_cpu_pct, cycles_per_byte…
    metrics: dict[str, Stat]
    unstable: bool = False  # CV above the threshold for a headline metric


@dataclass
class Finding:
    """A statement generated from the data, with the figures behind it.

    ``kind`` names the rule that produced it (e.g. "knee", "trend",
    "littles_law", "bottleneck", "bandwidth_identity", "unstable_repeats",
    "warn_buffered_fits_ram", …). ``severity``: "info" for a finding,
    "warning" for a methodology warning, "error" for an inconsistency in the
    data. ``score`` ranks importance (higher first) for "top findings"."""

    kind: str
    severity: str
    text: str
    figures: Json = field(default_factory=dict)
    axis: Optional[str] = None
    points: list[int] = field(default_factory=list)
    score: float = 0.0


@dataclass
class Analysis:
    dataset: Dataset
    rows: list[Row]
    findings: list[Finding]  # statements (info) and inconsistencies (error), ranked
    warnings: list[Finding]  # methodology warnings, ranked
    #: axis → {"point": index, "value": axis value, ...figures} or None when no knee
    knees: dict[str, Optional[Json]] = field(default_factory=dict)
    bottleneck: Json = field(default_factory=dict)  # {"verdict": ..., "evidence": {...}}

    def top(self, n: int = 3) -> list[Finding]:
        """The n most important findings and warnings together."""
        return sorted(self.findings + self.warnings, key=lambda f: -f.score)[:n]

    def to_json(self) -> Json:
        """The ``iolab.analysis/1`` document (histograms left out: they are in the results)."""
        ds = self.dataset
        return {
            "schema": ANALYSIS_SCHEMA,
            "source": {"kind": ds.source, "name": ds.name, "path": ds.path, "tool": ds.tool},
            "hosts": max(ds.hosts),
            "axes": ds.axes,
            "job": ds.job,
            "points": [{"index": p.index, "params": p.params, "repeats": len(p.samples)} for p in ds.points],
            "rows": [asdict(r) for r in self.rows],
            "findings": [asdict(f) for f in self.findings],
            "warnings": [asdict(f) for f in self.warnings],
            "knees": self.knees,
            "bottleneck": self.bottleneck,
        }


def metric_name(kind: str, percentile: float) -> str:
    """``("clat", 99.9)`` → ``"clat_p99.9_ns"``; ``("lat", 50.0)`` → ``"lat_p50_ns"``."""
    p = f"{percentile:g}"
    return f"{kind}_p{p}_ns"
