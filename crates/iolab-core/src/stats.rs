//! Measured statistics and results.
//!
//! - [`DirStats`]: one direction's totals over the measured window (after
//!   `ramp_time`): I/O count, bytes, and slat/clat/lat histograms, plus
//!   latency from the *intended* issue time for rate-limited jobs.
//! - [`IntervalSample`]: one interval of the time series (default 1 s).
//! - [`WorkerResult`] → [`JobResult`] → [`RunResult`]: the full, lossless
//!   result. Histograms serialise as HdrHistogram V2 (base64), so a result
//!   read back is identical and two results merge exactly
//!   ([`merge_results`], [`merge_results_json`]: stats/merge.rs) — the fleet
//!   gathers results from many hosts.
//! - The summary (what people read: IOPS, bytes/s, latency statistics and
//!   percentiles) is computed from these in [`crate::summary`].
//!
//! Units are in every field name: `_ns`, `_bytes`, `_per_s`.

use serde::{Deserialize, Serialize};

use crate::cpu::CpuUsage;
use crate::hist::{LatHist, PackedHist};
use crate::job::{IoDir, PreparedJob};

mod dirs;
pub mod hlog;
mod merge;
pub mod stream;
pub use merge::{merge_json, merge_results, merge_results_json};

/// Version of the result schema (docs/results-schema.md). Bump on any
/// incompatible change.
pub const SCHEMA: &str = "iolab.result/1";

/// Totals of one direction over the measured window.
///
/// Serialised as the fields below plus `exact_ns` ([`DirExtremes`]): the
/// exact extremes of the histograms (their V2 encoding holds only
/// buckets), so a result read back prints the same min and max.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    /// I/Os that completed with an error (not counted in `ios`).
    pub errors: u64,
    /// The time this direction's I/Os ran in, ns (fio's per-direction
    /// runtime): the phases of the measured window in which it did I/O,
    /// added — the whole window for a mix, the write phase and the verify
    /// phase apart for a write job with do_verify (see worker/record.rs).
    /// `None` in results written before it was recorded: readers use the
    /// worker's `runtime_ns` ([`WorkerResult::dir_runtime_ns`]).
    pub runtime_ns: Option<u64>,
    /// Submission latency: I/O prepared → handed to the kernel (submit returned).
    pub slat_ns: LatHist,
    /// Completion latency: submitted → completion seen.
    pub clat_ns: LatHist,
    /// Total latency: prepared → completion seen (slat + clat).
    pub lat_ns: LatHist,
    /// Rate-limited jobs only: intended issue time → completion seen. This
    /// includes time the I/O waited behind earlier ones (coordinated omission).
    pub lat_intended_ns: Option<LatHist>,
    /// Per I/O priority (jobs with cmdprio options only): completion
    /// latency of the I/Os issued with each ioprio value (fio's `prios`).
    pub prios: Vec<PrioStat>,
}

/// The exact `[min, max]` (ns) of each histogram of a [`DirStats`] that has
/// them; absent for an empty histogram, and in older results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DirExtremes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slat: Option<(u64, u64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clat: Option<(u64, u64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat: Option<(u64, u64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_intended: Option<(u64, u64)>,
}

impl DirExtremes {
    fn is_empty(&self) -> bool {
        *self == DirExtremes::default()
    }
}

/// [`DirStats`] as read (`runtime_ns` and `exact_ns` may be absent: older
/// results lack them).
#[derive(Deserialize)]
struct DirStatsRepr {
    ios: u64,
    bytes: u64,
    errors: u64,
    #[serde(default)]
    runtime_ns: Option<u64>,
    slat_ns: LatHist,
    clat_ns: LatHist,
    lat_ns: LatHist,
    lat_intended_ns: Option<LatHist>,
    #[serde(default)]
    prios: Vec<PrioStat>,
    #[serde(default)]
    exact_ns: DirExtremes,
}

impl Serialize for DirStats {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // A borrowed twin of DirStatsRepr: no histogram is cloned.
        #[derive(Serialize)]
        struct Out<'a> {
            ios: u64,
            bytes: u64,
            errors: u64,
            #[serde(skip_serializing_if = "Option::is_none")]
            runtime_ns: Option<u64>,
            slat_ns: &'a LatHist,
            clat_ns: &'a LatHist,
            lat_ns: &'a LatHist,
            lat_intended_ns: &'a Option<LatHist>,
            #[serde(skip_serializing_if = "<[PrioStat]>::is_empty")]
            prios: &'a [PrioStat],
            #[serde(skip_serializing_if = "DirExtremes::is_empty")]
            exact_ns: DirExtremes,
        }
        Out {
            ios: self.ios,
            bytes: self.bytes,
            errors: self.errors,
            runtime_ns: self.runtime_ns,
            slat_ns: &self.slat_ns,
            clat_ns: &self.clat_ns,
            lat_ns: &self.lat_ns,
            lat_intended_ns: &self.lat_intended_ns,
            prios: &self.prios,
            exact_ns: self.extremes(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for DirStats {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = DirStatsRepr::deserialize(d)?;
        let restore = |mut h: LatHist, x: Option<(u64, u64)>| {
            if let Some(x) = x {
                h.set_exact(x);
            }
            h
        };
        let x = r.exact_ns;
        Ok(DirStats {
            ios: r.ios,
            bytes: r.bytes,
            errors: r.errors,
            runtime_ns: r.runtime_ns,
            slat_ns: restore(r.slat_ns, x.slat),
            clat_ns: restore(r.clat_ns, x.clat),
            lat_ns: restore(r.lat_ns, x.lat),
            lat_intended_ns: r.lat_intended_ns.map(|h| restore(h, x.lat_intended)),
            prios: r.prios,
        })
    }
}

/// Completion latency of the I/Os of one priority (Linux ioprio value:
/// class << 13 | hint << 3 | level); its count is the histogram's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PrioStat {
    pub ioprio: u16,
    pub clat_ns: LatHist,
}

impl DirStats {
    /// The exact extremes of the histograms that know theirs.
    pub fn extremes(&self) -> DirExtremes {
        DirExtremes {
            slat: self.slat_ns.exact(),
            clat: self.clat_ns.exact(),
            lat: self.lat_ns.exact(),
            lat_intended: self.lat_intended_ns.as_ref().and_then(LatHist::exact),
        }
    }

    /// Exact merge: counts add, histograms merge bucket by bucket (their
    /// exact extremes: min of mins, max of maxes); the runtime is the
    /// longer one (what is merged ran side by side).
    pub fn merge(&mut self, o: &DirStats) {
        self.runtime_ns = self.runtime_ns.max(o.runtime_ns);
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.errors += o.errors;
        self.slat_ns.merge(&o.slat_ns);
        self.clat_ns.merge(&o.clat_ns);
        self.lat_ns.merge(&o.lat_ns);
        match (&mut self.lat_intended_ns, &o.lat_intended_ns) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.lat_intended_ns = Some(b.clone()),
            _ => {}
        }
        for p in &o.prios {
            match self.prios.iter_mut().find(|x| x.ioprio == p.ioprio) {
                Some(x) => x.clat_ns.merge(&p.clat_ns),
                None => self.prios.push(p.clone()),
            }
        }
        self.prios.sort_by_key(|p| p.ioprio);
    }
}

/// One direction within one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirInterval {
    pub ios: u64,
    pub bytes: u64,
    /// Total latency of I/Os completed in this interval (packed: a series
    /// keeps one per interval, see [`PackedHist`]).
    pub lat_ns: PackedHist,
}

/// One interval of the time series. Times are relative to the start of the
/// measured window (negative during ramp is not recorded).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalSample {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Indexed by [`IoDir`] (read, write, trim; see [`dirs`]).
    #[serde(with = "dirs")]
    pub dirs: [DirInterval; 3],
}

/// One worker (thread): one numjobs clone of a job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "WorkerRepr", from = "WorkerRepr")]
pub struct WorkerResult {
    /// Clone index within the job (0-based).
    pub worker: u32,
    /// Host that ran it (for fleet runs).
    pub host: String,
    /// Length of the measured window (after ramp), ns.
    pub runtime_ns: u64,
    /// Indexed by [`IoDir`] (read, write, trim; see [`dirs`]).
    pub dirs: [DirStats; 3],
    /// fsync/fdatasync calls issued and their latency.
    pub syncs: u64,
    pub sync_lat_ns: LatHist,
    /// CPU time of this thread over the measured window (getrusage RUSAGE_THREAD).
    pub usr_cpu_ns: u64,
    pub sys_cpu_ns: u64,
    /// Voluntary + involuntary context switches of the thread over the window.
    pub ctx_switches: u64,
    pub series: Vec<IntervalSample>,
    /// Failed I/Os and verify failures over the whole job, ramp included
    /// (fio's `total_err`; `dirs[].errors` counts the measured window).
    pub total_err: u64,
    /// errno of the first failure (fio's `first_error`; 0 = none).
    pub first_error: i32,
    /// The queue depth a latency_target search settled at (fio's
    /// `latency_depth`); None without latency_target.
    pub latency_depth: Option<u32>,
}

/// [`WorkerResult`] as serialised: its fields, and the exact extremes of
/// `sync_lat_ns` beside it (`sync_lat_exact_ns`, absent when empty and in
/// older results), as [`DirStats`] keeps its histograms'.
#[derive(Serialize, Deserialize)]
struct WorkerRepr {
    worker: u32,
    host: String,
    runtime_ns: u64,
    #[serde(with = "dirs")]
    dirs: [DirStats; 3],
    syncs: u64,
    sync_lat_ns: LatHist,
    usr_cpu_ns: u64,
    sys_cpu_ns: u64,
    ctx_switches: u64,
    series: Vec<IntervalSample>,
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    total_err: u64,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    first_error: i32,
    #[serde(default)]
    latency_depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sync_lat_exact_ns: Option<(u64, u64)>,
}

impl From<WorkerResult> for WorkerRepr {
    fn from(w: WorkerResult) -> WorkerRepr {
        WorkerRepr {
            sync_lat_exact_ns: w.sync_lat_ns.exact(),
            worker: w.worker,
            host: w.host,
            runtime_ns: w.runtime_ns,
            dirs: w.dirs,
            syncs: w.syncs,
            sync_lat_ns: w.sync_lat_ns,
            usr_cpu_ns: w.usr_cpu_ns,
            sys_cpu_ns: w.sys_cpu_ns,
            ctx_switches: w.ctx_switches,
            series: w.series,
            total_err: w.total_err,
            first_error: w.first_error,
            latency_depth: w.latency_depth,
        }
    }
}

impl From<WorkerRepr> for WorkerResult {
    fn from(r: WorkerRepr) -> WorkerResult {
        let mut sync_lat_ns = r.sync_lat_ns;
        if let Some(x) = r.sync_lat_exact_ns {
            sync_lat_ns.set_exact(x);
        }
        WorkerResult {
            worker: r.worker,
            host: r.host,
            runtime_ns: r.runtime_ns,
            dirs: r.dirs,
            syncs: r.syncs,
            sync_lat_ns,
            usr_cpu_ns: r.usr_cpu_ns,
            sys_cpu_ns: r.sys_cpu_ns,
            ctx_switches: r.ctx_switches,
            series: r.series,
            total_err: r.total_err,
            first_error: r.first_error,
            latency_depth: r.latency_depth,
        }
    }
}

impl WorkerResult {
    /// The time direction `d`'s I/Os ran in ([`DirStats::runtime_ns`]); for
    /// results that did not record it, the whole measured window if the
    /// direction did any I/O, else 0 (as fio: a direction without I/O
    /// has no runtime).
    pub fn dir_runtime_ns(&self, d: IoDir) -> u64 {
        let s = &self.dirs[d as usize];
        let active = s.ios + s.errors > 0;
        s.runtime_ns
            .unwrap_or(if active { self.runtime_ns } else { 0 })
    }
}

/// Counts that older results lack are left out when 0, so results
/// without failures read as before (`skip_serializing_if`).
pub(crate) fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

pub(crate) fn is_zero_i32(n: &i32) -> bool {
    *n == 0
}

/// One job and all its workers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    /// Stonewall group (0-based): groups run one after another.
    pub group: u32,
    pub job: PreparedJob,
    pub workers: Vec<WorkerResult>,
}

/// Host facts recorded with every result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub ncpus: u32,
    pub mem_bytes: u64,
}

/// A whole run: every job, the CPU accounting of each stonewall group, and
/// what was done to prepare the files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub tool_version: String,
    /// Wall-clock time the measured window of the first group began (Unix ns).
    pub start_unix_ns: u64,
    pub interval_ns: u64,
    pub hosts: Vec<HostInfo>,
    pub jobs: Vec<JobResult>,
    /// One per stonewall group, over that group's measured window.
    pub cpu: Vec<CpuUsage>,
    /// What layout did (e.g. "created testfile, 1073741824 bytes, filled
    /// with incompressible data").
    pub layout_notes: Vec<String>,
    /// The interval log the run streamed its intervals into (the workers'
    /// `series` are empty then); absent when the series are embedded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_log: Option<IntervalLogRef>,
}

/// Where a run's intervals are when they were streamed ([`hlog`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntervalLogRef {
    /// The log's file name, relative to the result's directory.
    pub file: String,
    /// Each worker's own intervals are in it too (else only each job's
    /// workers merged).
    pub per_worker: bool,
}

impl JobResult {
    /// All workers merged into one (exact); see [`merge_workers`].
    pub fn merged(&self) -> WorkerResult {
        merge_workers(&self.workers)
    }
}

/// Merge workers into one (exact). Runtime is the longest, per direction
/// too (a worker without per-direction runtimes counts its whole window);
/// series are merged interval by interval ([`merge_series`]).
pub fn merge_workers(workers: &[WorkerResult]) -> WorkerResult {
    let mut m = WorkerMerge::default();
    for w in workers {
        m.add(w);
    }
    m.finish(merge_series(workers.iter().map(|w| &w.series[..])))
}

/// [`merge_workers`] one worker at a time, so a summary of many workers
/// holds one worker's decoded histograms at a time (each ~225 KiB dense)
/// instead of all of them. Everything but the series is folded by
/// [`WorkerMerge::add`]; the caller merges the series ([`merge_series`],
/// on the packed interval histograms) and hands them to
/// [`WorkerMerge::finish`].
#[derive(Debug, Default)]
pub struct WorkerMerge {
    m: WorkerResult,
    /// Longest runtime per direction ([`WorkerResult::dir_runtime_ns`]).
    dir_runtime_ns: [u64; 3],
}

impl WorkerMerge {
    /// Fold one worker in (exact: counts add, histograms merge bucket by bucket).
    pub fn add(&mut self, w: &WorkerResult) {
        let m = &mut self.m;
        m.runtime_ns = m.runtime_ns.max(w.runtime_ns);
        for d in IoDir::MEASURED {
            m.dirs[d as usize].merge(&w.dirs[d as usize]);
            self.dir_runtime_ns[d as usize] =
                self.dir_runtime_ns[d as usize].max(w.dir_runtime_ns(d));
        }
        m.syncs += w.syncs;
        m.sync_lat_ns.merge(&w.sync_lat_ns);
        m.usr_cpu_ns += w.usr_cpu_ns;
        m.sys_cpu_ns += w.sys_cpu_ns;
        m.ctx_switches += w.ctx_switches;
        m.total_err += w.total_err;
        if m.first_error == 0 {
            m.first_error = w.first_error;
        }
    }

    /// The merged worker, with the workers' series already merged.
    pub fn finish(self, series: Vec<IntervalSample>) -> WorkerResult {
        let mut m = self.m;
        for d in IoDir::MEASURED {
            m.dirs[d as usize].runtime_ns = Some(self.dir_runtime_ns[d as usize]);
        }
        m.series = series;
        m
    }
}

/// Several time series merged interval by interval (by index): counts add,
/// latency histograms merge exactly, an interval spans the earliest start
/// to the latest end. The workers of a job ([`merge_workers`]) and the jobs
/// of a stonewall group (the group's series in the summary) merge this way.
///
/// Interval histograms are packed ([`PackedHist`]): each interval is merged
/// in two live histograms that are reused, and packed once, so merging N
/// series costs one unpack per series-interval and one pack per interval
/// (not an unpack and a pack of the running total per series).
pub fn merge_series<'a>(
    series: impl Iterator<Item = &'a [IntervalSample]> + Clone,
) -> Vec<IntervalSample> {
    let intervals = series.clone().map(<[_]>::len).max().unwrap_or(0);
    let mut lat = [LatHist::new(), LatHist::new(), LatHist::new()];
    let mut out = Vec::with_capacity(intervals);
    for i in 0..intervals {
        let mut t: Option<IntervalSample> = None;
        for s in series.clone().filter_map(|s| s.get(i)) {
            let t = t.get_or_insert_with(|| IntervalSample {
                start_ns: s.start_ns,
                end_ns: s.end_ns,
                ..Default::default()
            });
            t.start_ns = t.start_ns.min(s.start_ns);
            t.end_ns = t.end_ns.max(s.end_ns);
            for (d, h) in lat.iter_mut().enumerate() {
                t.dirs[d].ios += s.dirs[d].ios;
                t.dirs[d].bytes += s.dirs[d].bytes;
                h.merge(&s.dirs[d].lat_ns.unpack());
            }
        }
        let mut t = t.expect("some series has interval i");
        for (d, h) in lat.iter_mut().enumerate() {
            t.dirs[d].lat_ns = PackedHist::pack(h);
            h.reset();
        }
        out.push(t);
    }
    out
}
