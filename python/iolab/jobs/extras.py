"""fio job options that iolab handles around the engine, in Python.

Some of fio's options are about what happens *around* the I/O: which log
files to write, when a job has reached steady state, how fio itself keeps
time. The engine (the Rust option table, ``iolab options``) does not take
them; :func:`split_extras` takes them out of a :class:`~iolab.jobs.JobSpec`
before it goes to the engine and returns them checked and typed as
:class:`JobExtras`. :data:`EXTRA_OPTIONS` is their table (name, aliases,
type, default, help); docs/options.md shows it (:func:`extras_markdown`).

Each option has an effect or says, as a note, why iolab already behaves
as asked: ``gtod_reduce`` and friends say that iolab measures every
latency anyway; ``random_generator`` says that iolab draws offsets with
its own generator. Notes are shown once per run, not per job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from iolab import _native
from iolab.jobs import JobSpec, ParseError


@dataclass(frozen=True)
class ExtraDef:
    """One option of the table: fio's name, its aliases, type, default and help."""

    name: str
    kind: str  # bool, int, text, choice, time (fio's default unit: s), ms (plain milliseconds)
    default: str
    help: str
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()


_MEASURED_ANYWAY = "iolab measures submission, completion and total latency of every I/O whatever it is set to."

#: Every option :func:`split_extras` takes. Order = documentation order.
EXTRA_OPTIONS: tuple[ExtraDef, ...] = (
    ExtraDef("gtod_reduce", "bool", "0", _MEASURED_ANYWAY),
    ExtraDef("disable_lat", "bool", "0", _MEASURED_ANYWAY),
    ExtraDef("disable_clat", "bool", "0", _MEASURED_ANYWAY),
    ExtraDef("disable_slat", "bool", "0", _MEASURED_ANYWAY),
    ExtraDef(
        "disable_bw_measurement",
        "bool",
        "0",
        "iolab measures bandwidth and IOPS per interval whatever it is set to.",
        aliases=("disable_bw",),
    ),
    ExtraDef("clat_percentiles", "bool", "1", "iolab reports percentiles of slat, clat and lat always."),
    ExtraDef("lat_percentiles", "bool", "0", "iolab reports percentiles of slat, clat and lat always."),
    ExtraDef("slat_percentiles", "bool", "0", "iolab reports percentiles of slat, clat and lat always."),
    ExtraDef(
        "random_generator",
        "choice",
        "tausworthe",
        "Accepted by name; iolab draws offsets with its own generator (with the random map, every block "
        "is visited once per pass, as fio's lfsr guarantees).",
        choices=("tausworthe", "lfsr", "tausworthe64"),
    ),
    ExtraDef(
        "clocksource",
        "choice",
        "clock_gettime",
        "Accepted by name; iolab times every I/O with clock_gettime(CLOCK_MONOTONIC).",
        choices=("gettimeofday", "clock_gettime", "cpu"),
    ),
    ExtraDef(
        "iodepth_low",
        "int",
        "iodepth",
        "iolab refills the queue as soon as an I/O completes (fio's default, iodepth_low=iodepth); "
        "a lower watermark is not applied, and a note says so.",
    ),
    ExtraDef(
        "allow_file_create",
        "bool",
        "1",
        "0: every file the job names must exist already; iolab stops before the run, naming the one missing.",
    ),
    ExtraDef(
        "unit_base",
        "choice",
        "0",
        "Units of printed rates, as in fio: 0 (auto) and 8 (bytes) print bytes, iolab's unit; 1 (bits) "
        "is accepted with a note that iolab prints bytes per second all the same.",
        choices=("0", "8", "1"),
    ),
    ExtraDef(
        "wait_for",
        "text",
        "none",
        "Start this job after the named (earlier) job: iolab starts a new stonewall group here, so it also "
        "waits for every other earlier job.",
    ),
    ExtraDef(
        "iomem",
        "choice",
        "malloc",
        "Buffer memory: iolab's buffers are aligned heap memory, fio's malloc; other kinds are refused.",
        aliases=("mem",),
        choices=("malloc",),
    ),
    ExtraDef("new_group", "bool", "0", "Accepted; iolab reports every job on its own, groups are stonewall groups."),
    ExtraDef(
        "verify_async",
        "int",
        "0",
        "Accepted; iolab verifies each block inline as its read completes (fio's default, verify_async=0), "
        "and a note says so.",
    ),
    ExtraDef(
        "overwrite",
        "bool",
        "0",
        "iolab lays out (creates and fills) every file before any job writes to it, which is fio's "
        "overwrite=1; with overwrite=0 a note says that the writes overwrite laid-out data rather than "
        "extending a new file.",
    ),
    ExtraDef(
        "exec_prerun",
        "text",
        "none",
        "A shell command run before the job, its output in JOB.prerun.txt; one that fails stops the run "
        "before any I/O. iolab runs every job's prerun before the run starts and before it lays out the "
        "files, once per job (fio: as each clone starts, its files laid out).",
    ),
    ExtraDef(
        "exec_postrun",
        "text",
        "none",
        "A shell command run after the job, its output in JOB.postrun.txt. iolab runs every job's postrun "
        "after the run ends, once per job (fio: as each clone ends).",
    ),
    ExtraDef(
        "ioscheduler",
        "text",
        "none",
        "The I/O scheduler of the job's devices: iolab checks that each device uses it already (noop and "
        "none are one) and otherwise stops before the run with the command that switches it; fio switches "
        "it itself (as root). A file on no block device gets a note (fio skips it).",
    ),
    ExtraDef(
        "openfiles",
        "int",
        "nrfiles",
        "Files a worker keeps open at once: iolab opens all of a worker's files for the whole job, which is "
        "fio's behaviour when openfiles is at least the number of files; a smaller value (fio closes and "
        "reopens files as it moves between them) is refused with the count.",
    ),
    ExtraDef(
        "disk_util",
        "bool",
        "1",
        "fio's disk utilisation section: iolab's outputs have none (`iolab run --results DIR` keeps the "
        "devices' /proc/diskstats counts in diskstats.json); 0 asks for what iolab does, 1 is noted.",
    ),
    ExtraDef(
        "significant_figures",
        "choice",
        "4",
        "Precision of fio's normal output: iolab's text output has its own format and its JSON exact "
        "figures, so a note says the value has no effect.",
        choices=tuple(str(n) for n in range(1, 11)),
    ),
    ExtraDef(
        "create_on_open",
        "bool",
        "0",
        "iolab creates and lays out every file before the run (fio's create_on_open=0); with 1 (fio: the "
        "file is created by the job's first open, empty) a note says that the files exist before the run "
        "and writes overwrite laid-out data, as with overwrite=0.",
    ),
    # --- fio's log files (iolab.results.fio_logs) ---------------------------------------------
    ExtraDef(
        "write_bw_log",
        "text",
        "off",
        "Write NAME_bw.N.log in fio's format: bandwidth (KiB/s) per log_avg_msec window, or with "
        "log_avg_msec=0 one line per I/O (its bytes per ms of its clat, as fio).",
    ),
    ExtraDef(
        "write_iops_log",
        "text",
        "off",
        "Write NAME_iops.N.log in fio's format: IOPS per window, or with log_avg_msec=0 one line per I/O.",
    ),
    ExtraDef(
        "write_lat_log",
        "text",
        "off",
        "Write NAME_lat.N.log: total latency (ns) per window; iolab keeps no per-window slat/clat, so "
        "windowed NAME_slat/NAME_clat logs are not written. With log_avg_msec=0 (fio's default), one "
        "line per I/O in NAME_lat, NAME_clat and NAME_slat, as fio.",
    ),
    ExtraDef(
        "write_hist_log",
        "text",
        "off",
        "Write NAME_lat_hist.N.log: a total-latency histogram per log_hist_msec window in fio's 1856 "
        "buckets (fio's NAME_clat_hist holds completion latency).",
    ),
    ExtraDef(
        "log_avg_msec",
        "ms",
        "0",
        "Window of the bw/iops/lat logs (ms); sets the run's interval. 0: one line per I/O, which "
        "the engine records as it completes (streamed to a scratch file, no lock per I/O).",
    ),
    ExtraDef("log_hist_msec", "ms", "0", "Window of the histogram log (ms); a multiple of the run's interval."),
    ExtraDef("log_hist_coarseness", "int", "0", "Merge 2^N adjacent buckets of the histogram log (0-6)."),
    ExtraDef(
        "log_max_value",
        "choice",
        "avg",
        "Latency log value per window: avg, max or both (0 = avg, 1 = max).",
        aliases=("log_window_value",),
        choices=("avg", "max", "both", "0", "1"),
    ),
    ExtraDef("per_job_logs", "bool", "1", "1: one log per worker (NAME_bw.N.log); 0: one per job (NAME_bw.log)."),
    ExtraDef(
        "log_offset", "bool", "0", "Add fio's offset column (the I/O's offset per I/O; 0 in windowed logs, as in fio)."
    ),
    ExtraDef(
        "log_unix_epoch",
        "bool",
        "0",
        "1: the logs' time column is Unix epoch time in ms (the measured window's start plus the time "
        "in the run), as in fio; 0: ms from the start of the measured window.",
    ),
    ExtraDef(
        "log_prio",
        "bool",
        "0",
        "Priority column of per-I/O logs: the I/O's ioprio value (0x%04x) instead of 1 for the realtime "
        "class and 0 for others (fio's columns); windowed logs write 0.",
    ),
    # --- steady state (iolab.run.steady) -------------------------------------------------------
    ExtraDef(
        "steadystate",
        "text",
        "off",
        "End the job when steady: iops:N[%], iops_slope:N[%], bw:N[%] or bw_slope:N[%], as fio.",
        aliases=("ss",),
    ),
    ExtraDef(
        "steadystate_duration",
        "time",
        "0",
        "Window over which steady state is judged (s).",
        aliases=("ss_dur",),
    ),
    ExtraDef(
        "steadystate_ramp_time",
        "time",
        "0",
        "Time before steady-state data starts being collected (s).",
        aliases=("ss_ramp",),
    ),
    ExtraDef(
        "steadystate_check_interval",
        "time",
        "1",
        "Sampling interval of the steady-state check (s); must equal the run's interval.",
        aliases=("ss_interval",),
    ),
)

_BY_NAME = {n: d for d in EXTRA_OPTIONS for n in (d.name, *d.aliases)}


@dataclass
class JobExtras:
    """The extra options of one job, typed, by their main name."""

    job: str
    values: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def get(self, name: str, default: object = None) -> object:
        return self.values.get(name, default)

    def text(self, name: str) -> Optional[str]:
        v = self.values.get(name)
        return None if v is None else str(v)

    def flag(self, name: str) -> bool:
        if name in self.values:
            return bool(self.values[name])
        return _native.parse_bool(_BY_NAME[name].default)

    def ms(self, name: str) -> int:
        v = self.values.get(name, 0)
        assert isinstance(v, int)
        return v


def is_extra(name: str) -> bool:
    return name in _BY_NAME


def _parse(job: str, d: ExtraDef, written: str, value: Optional[str]) -> object:
    def bad(what: str) -> ParseError:
        return ParseError(f"job {job}", None, f"{written}={value}: {what}")

    # Booleans, whole numbers and times have one grammar, the core's (the
    # option table's): _native.parse_bool / parse_uint / parse_time_ns.
    if d.kind == "bool":
        try:
            return _native.parse_bool(value)
        except ValueError as e:
            raise bad(_reason(e)) from None
    if value is None:
        if d.kind == "text" and d.name.startswith("write_"):
            return job  # fio: a bare write_*_log names the logs after the job
        raise bad("needs a value")
    v = value.strip()
    if d.kind == "choice":
        if v not in d.choices:
            raise bad(f"expected one of {', '.join(d.choices)}")
        return v
    if d.kind in ("int", "ms"):
        try:
            return _native.parse_uint(v)
        except ValueError as e:
            raise bad(_reason(e) + (" (milliseconds)" if d.kind == "ms" else "")) from None
    if d.kind == "time":
        try:
            return _native.parse_time_ns(v)  # a bare number is in seconds, as fio's
        except ValueError as e:
            raise bad(_reason(e) + " (e.g. 30, 30s, 250ms, 5m)") from None
    return v


def _reason(e: ValueError) -> str:
    """The core's sentence without the value it quotes (the caller names it)."""
    text = str(e)
    return text.split(": ", 1)[1] if text.startswith("'") and ": " in text else text


def split_extras(spec: JobSpec) -> tuple[JobSpec, JobExtras]:
    """``spec`` without the options of :data:`EXTRA_OPTIONS`, and those options
    checked and typed (later ones win, as for every option)."""
    kept = []
    where = []
    extras = JobExtras(spec.name)
    for (name, value), origin in zip(spec.options, spec.origins):
        d = _BY_NAME.get(name)
        if d is None:
            kept.append((name, value))
            where.append(origin)
        else:
            extras.values[d.name] = _parse(spec.name, d, name, value)
    return JobSpec(spec.name, tuple(kept), tuple(where)), extras


#: Extras whose whole effect is a note (iolab already behaves as asked): any
#: caller may drop them. The others act around the engine (logs, steady
#: state, wait_for, allow_file_create) and need the run pipeline
#: (iolab.run.pipeline) to apply them.
NOTE_ONLY = frozenset(
    {
        "gtod_reduce",
        "disable_lat",
        "disable_clat",
        "disable_slat",
        "disable_bw_measurement",
        "clat_percentiles",
        "lat_percentiles",
        "slat_percentiles",
        "random_generator",
        "clocksource",
        "iodepth_low",
        "unit_base",
        "iomem",
        "new_group",
        "verify_async",
        "overwrite",
        "create_on_open",
        "disk_util",
        "significant_figures",
    }
)


def engine_job(spec: JobSpec, where: str) -> JobSpec:
    """``spec`` for the engine alone: note-only extras checked and dropped;
    an extra that needs a runner to apply it is refused by name (``where``
    says which caller cannot apply it), never silently ignored."""
    if not any(is_extra(name) for name, _ in spec.options):
        return spec
    native, extras = split_extras(spec)
    acting = sorted(n for n in extras.values if n not in NOTE_ONLY)
    if acting:
        raise ParseError(
            f"job {spec.name}",
            None,
            f"{', '.join(acting)}: applied by the run pipeline (`iolab run`, iolab.run(), sweep points), "
            f"not by {where}; run the job with one of those",
        )
    return native


#: The option table's type and unit of each kind of extra (``iolab options``).
_KIND_TYPE = {"time": ("time", "s"), "ms": ("int", "ms")}


def extra_rows() -> list[dict[str, object]]:
    """:data:`EXTRA_OPTIONS` as rows of the core's option table
    (``_native.option_table()``'s keys), for ``iolab options``."""
    rows: list[dict[str, object]] = []
    for d in EXTRA_OPTIONS:
        kind, unit = _KIND_TYPE.get(d.kind, (d.kind, ""))
        rows.append(
            {
                "name": d.name,
                "aliases": list(d.aliases),
                "type": kind,
                "default": d.default,
                "default_note": None,
                "unit": unit,
                "choices": list(d.choices),
                "help": d.help,
            }
        )
    return rows


def extras_markdown() -> str:
    """The table of :data:`EXTRA_OPTIONS` for docs/options.md."""
    lines = ["| Option | Aliases | Type | Default | Description |", "|---|---|---|---|---|"]
    for d in EXTRA_OPTIONS:
        aliases = ", ".join(f"`{a}`" for a in d.aliases)
        help_text = d.help + (f" Values: {', '.join(d.choices)}." if d.choices else "")
        lines.append(f"| `{d.name}` | {aliases} | {d.kind} | {d.default} | {help_text} |")
    return "\n".join(lines) + "\n"
