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

mod merge;
pub use merge::{merge_json, merge_results, merge_results_json};

/// Version of the result schema (docs/results-schema.md). Bump on any
/// incompatible change.
pub const SCHEMA: &str = "iolab.result/1";

/// Totals of one direction over the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    /// I/Os that completed with an error (not counted in `ios`).
    pub errors: u64,
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prios: Vec<PrioStat>,
}

/// Completion latency of the I/Os of one priority (Linux ioprio value:
/// class << 13 | hint << 3 | level); its count is the histogram's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PrioStat {
    pub ioprio: u16,
    pub clat_ns: LatHist,
}

impl DirStats {
    /// Exact merge: counts add, histograms merge bucket by bucket.
    pub fn merge(&mut self, o: &DirStats) {
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
    /// Indexed by [`IoDir`].
    pub dirs: [DirInterval; 2],
}

/// One worker (thread): one numjobs clone of a job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerResult {
    /// Clone index within the job (0-based).
    pub worker: u32,
    /// Host that ran it (for fleet runs).
    pub host: String,
    /// Length of the measured window (after ramp), ns.
    pub runtime_ns: u64,
    /// Indexed by [`IoDir`].
    pub dirs: [DirStats; 2],
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
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub total_err: u64,
    /// errno of the first failure (fio's `first_error`; 0 = none).
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub first_error: i32,
    /// The queue depth a latency_target search settled at (fio's
    /// `latency_depth`); None without latency_target.
    #[serde(default)]
    pub latency_depth: Option<u32>,
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
}

impl JobResult {
    /// All workers merged into one (exact); see [`merge_workers`].
    pub fn merged(&self) -> WorkerResult {
        merge_workers(&self.workers)
    }
}

/// Merge workers into one (exact). Runtime is the longest; series are
/// merged interval by interval ([`merge_series`]).
pub fn merge_workers(workers: &[WorkerResult]) -> WorkerResult {
    let mut m = WorkerResult::default();
    for w in workers {
        m.runtime_ns = m.runtime_ns.max(w.runtime_ns);
        for d in IoDir::ALL {
            m.dirs[d as usize].merge(&w.dirs[d as usize]);
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
    m.series = merge_series(workers.iter().map(|w| &w.series[..]));
    m
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
    let mut lat = [LatHist::new(), LatHist::new()];
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
