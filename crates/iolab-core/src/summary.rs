//! The summary: a [`RunResult`] turned into what people and tools read.
//!
//! [`summarize`] computes, from the lossless result, a [`RunSummary`]:
//! - per job ([`JobSummary`]): its configuration in display form, what each
//!   latency means, the job merged over its workers and each worker alone
//!   ([`Summary`]: per direction IOPS, bytes/s, slat/clat/lat statistics and
//!   percentiles, interval statistics; sync latency; thread CPU), and the
//!   merged time series ([`IntervalSummary`]);
//! - per stonewall group ([`GroupSummary`]): per direction and in total,
//!   IOPS, bandwidth and latency of the whole group (histograms merged
//!   exactly), the min/max over the reported entries (fio's "Run status
//!   group" line) and CPU accounting per host ([`CpuSummary`]).
//!
//! Every figure comes from the histograms and counters, never from averaged
//! percentiles: workers are merged exactly (bucket by bucket) first.
//! Units are in every field name (`_ns`, `_bytes`, `_per_s`, `_pct`, `_hz`).
//! docs/results-schema.md documents every field.

mod config;
mod cpu;
mod dist;
mod group;
mod series;
pub mod streamed;

use serde::{Deserialize, Serialize};

use crate::error::CoreError;
use crate::hist::LatHist;
use crate::job::IoDir;
use crate::stats::{
    merge_series, merge_workers, DirStats, IntervalSample, JobResult, RunResult, WorkerMerge,
    WorkerResult,
};

pub use config::{BsRange, JobConfigSummary, LatencyDefinitions};
pub use cpu::CpuSummary;
pub use dist::{LatBucket, CLAT_DIST_BOUNDS_NS};
pub use group::{GroupDirSummary, GroupSummary};
pub use series::{DirIntervalSummary, IntervalStats, IntervalSummary};

/// Version of the summary layout (the `summary` part of `iolab.result/1`).
pub const SUMMARY_SCHEMA: &str = "iolab.summary/1";

/// One percentile of a latency histogram.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentileValue {
    /// In percent (99.9 = the 99.9th percentile).
    pub percentile: f64,
    /// Highest value equivalent (within 0.1%) to the sample at that rank.
    pub value_ns: u64,
}

/// Statistics of one latency histogram, ns. All zero when `count` is 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatSummary {
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
    /// Population standard deviation over the histogram's values.
    pub stdev_ns: f64,
    /// In the job's `percentile_list` order.
    pub percentiles: Vec<PercentileValue>,
}

impl LatSummary {
    /// The one place a histogram becomes statistics and percentiles: the
    /// summary, the group figures and the Python front (`_native.hist_stats`)
    /// all call it. Percentiles outside 0–100 are clamped by HdrHistogram;
    /// [`LatSummary::checked`] refuses them instead.
    pub fn of(h: &LatHist, percentiles: &[f64]) -> LatSummary {
        let (mean_ns, stdev_ns) = h.mean_stdev();
        LatSummary {
            count: h.count(),
            min_ns: h.min(),
            max_ns: h.max(),
            // (0, 0) for an empty histogram: an empty direction never prints NaN.
            mean_ns,
            stdev_ns,
            percentiles: percentiles
                .iter()
                .map(|&p| PercentileValue {
                    percentile: p,
                    value_ns: h.percentile(p),
                })
                .collect(),
        }
    }

    /// [`LatSummary::of`] for percentiles given by a person: each must be
    /// within 0–100 (percent).
    pub fn checked(h: &LatHist, percentiles: &[f64]) -> Result<LatSummary, CoreError> {
        if let Some(p) = percentiles.iter().find(|p| !(0.0..=100.0).contains(*p)) {
            return Err(CoreError::Format(format!(
                "percentile {p} is outside 0..100 (give percent, e.g. 99.9)"
            )));
        }
        Ok(LatSummary::of(h, percentiles))
    }
}

/// One direction of a worker or merged job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirSummary {
    /// Completed I/Os (without errors).
    pub ios: u64,
    pub bytes: u64,
    /// I/Os that completed with an error.
    pub errors: u64,
    /// The time this direction's I/Os ran in (fio's per-direction
    /// runtime): the measured window for a mix, its own phase for a verify
    /// job's write and read; merged: the longest worker's.
    pub runtime_ns: u64,
    /// `ios` / `runtime_ns`.
    pub iops: f64,
    /// `bytes` / `runtime_ns`.
    pub bw_bytes_per_s: f64,
    pub slat: LatSummary,
    pub clat: LatSummary,
    pub lat: LatSummary,
    /// Rate-limited jobs only: latency from the intended issue time.
    pub lat_intended: Option<LatSummary>,
    /// IOPS and bandwidth over the time-series intervals.
    pub intervals: IntervalStats,
}

impl DirSummary {
    fn of(d: &DirStats, runtime_ns: u64, intervals: IntervalStats, pcts: &[f64]) -> DirSummary {
        DirSummary {
            ios: d.ios,
            bytes: d.bytes,
            errors: d.errors,
            runtime_ns,
            iops: per_s(d.ios, runtime_ns),
            bw_bytes_per_s: per_s(d.bytes, runtime_ns),
            slat: LatSummary::of(&d.slat_ns, pcts),
            clat: LatSummary::of(&d.clat_ns, pcts),
            lat: LatSummary::of(&d.lat_ns, pcts),
            lat_intended: d.lat_intended_ns.as_ref().map(|h| LatSummary::of(h, pcts)),
            intervals,
        }
    }
}

/// fsync/fdatasync calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncSummary {
    pub count: u64,
    pub lat: LatSummary,
}

/// A worker, or a job merged over its workers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Measured window: the longest of the merged workers'.
    pub runtime_ns: u64,
    /// Sum of the workers' measured windows (fio's `job_runtime`).
    pub thread_runtime_ns: u64,
    pub read: DirSummary,
    pub write: DirSummary,
    /// Trims (fio's third direction; all zero in a job that does not trim).
    pub trim: DirSummary,
    /// `unified_rw_reporting=mixed|both` only: reads, writes and trims as
    /// one direction (fio's "mixed"): counts added, histograms merged
    /// exactly, over the longest direction's runtime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mixed: Option<DirSummary>,
    /// Every direction: (read + write + trim I/Os) / runtime (the whole
    /// window: both phases of a verify job).
    pub iops: f64,
    /// Every direction: (read + write + trim bytes) / runtime.
    pub bw_bytes_per_s: f64,
    /// Total latency (`lat`) of every I/O, every direction merged exactly.
    pub lat_all: LatSummary,
    pub sync: SyncSummary,
    /// Thread CPU time summed over the workers.
    pub usr_cpu_ns: u64,
    pub sys_cpu_ns: u64,
    /// CPU time / `thread_runtime_ns` × 100: the average share of one CPU
    /// each worker thread used (fio's `usr_cpu`/`sys_cpu`).
    pub usr_cpu_pct: f64,
    pub sys_cpu_pct: f64,
    pub ctx_switches: u64,
    /// fio's latency distribution of completion latency, both directions.
    pub clat_dist: Vec<LatBucket>,
    /// Failures over the whole job and the first one's errno (fio's
    /// `total_err`, `first_error`; see `continue_on_error`).
    #[serde(default, skip_serializing_if = "crate::stats::is_zero_u64")]
    pub total_err: u64,
    #[serde(default, skip_serializing_if = "crate::stats::is_zero_i32")]
    pub first_error: i32,
}

impl Summary {
    /// One worker (its own figures: nothing to merge, no histogram copied).
    pub fn of(w: &WorkerResult, percentiles: &[f64]) -> Summary {
        Summary::of_merged(w, w.runtime_ns, percentiles, false)
    }

    /// Workers merged exactly (histograms bucket by bucket, series interval
    /// by interval), then summarised.
    pub fn of_workers(workers: &[WorkerResult], percentiles: &[f64]) -> Summary {
        let thread_runtime_ns = workers.iter().map(|w| w.runtime_ns).sum();
        Summary::of_merged(
            &merge_workers(workers),
            thread_runtime_ns,
            percentiles,
            false,
        )
    }

    /// `mixed`: also the directions as one ([`Summary::mixed`]).
    fn of_merged(
        m: &WorkerResult,
        thread_runtime_ns: u64,
        percentiles: &[f64],
        mixed: bool,
    ) -> Summary {
        let mut clat_all = m.dirs[0].clat_ns.clone();
        let mut lat_all = m.dirs[0].lat_ns.clone();
        for d in &m.dirs[1..] {
            clat_all.merge(&d.clat_ns);
            lat_all.merge(&d.lat_ns);
        }
        let dir = |d: IoDir| {
            let stats = series::interval_stats(&m.series, &[d]);
            DirSummary::of(&m.dirs[d as usize], m.dir_runtime_ns(d), stats, percentiles)
        };
        let mixed = mixed.then(|| {
            let mut all = m.dirs[0].clone();
            for d in &m.dirs[1..] {
                all.merge(d);
            }
            let runtime_ns = IoDir::MEASURED
                .map(|d| m.dir_runtime_ns(d))
                .into_iter()
                .max();
            let stats = series::interval_stats(&m.series, &IoDir::MEASURED);
            DirSummary::of(&all, runtime_ns.unwrap_or(0), stats, percentiles)
        });
        Summary {
            runtime_ns: m.runtime_ns,
            thread_runtime_ns,
            read: dir(IoDir::Read),
            write: dir(IoDir::Write),
            trim: dir(IoDir::Trim),
            mixed,
            iops: per_s(m.dirs.iter().map(|d| d.ios).sum(), m.runtime_ns),
            bw_bytes_per_s: per_s(m.dirs.iter().map(|d| d.bytes).sum(), m.runtime_ns),
            lat_all: LatSummary::of(&lat_all, percentiles),
            sync: SyncSummary {
                count: m.syncs,
                lat: LatSummary::of(&m.sync_lat_ns, percentiles),
            },
            usr_cpu_ns: m.usr_cpu_ns,
            sys_cpu_ns: m.sys_cpu_ns,
            usr_cpu_pct: pct(m.usr_cpu_ns as f64, thread_runtime_ns as f64),
            sys_cpu_pct: pct(m.sys_cpu_ns as f64, thread_runtime_ns as f64),
            ctx_switches: m.ctx_switches,
            clat_dist: dist::clat_dist(&clat_all),
            total_err: m.total_err,
            first_error: m.first_error,
        }
    }

    /// The direction `d`.
    pub fn dir(&self, d: IoDir) -> &DirSummary {
        match d {
            IoDir::Read => &self.read,
            IoDir::Write => &self.write,
            IoDir::Trim => &self.trim,
        }
    }
}

/// One worker (numjobs clone) alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerSummary {
    pub worker: u32,
    pub host: String,
    pub stats: Summary,
}

/// One job: merged over its workers, and each worker alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSummary {
    pub name: String,
    /// Stonewall group (0-based).
    pub group: u32,
    pub config: JobConfigSummary,
    pub latency_definitions: LatencyDefinitions,
    /// All workers merged exactly.
    pub merged: Summary,
    pub workers: Vec<WorkerSummary>,
    /// The job's time series, workers merged interval by interval.
    pub series: Vec<IntervalSummary>,
}

impl JobSummary {
    pub fn of(j: &JobResult) -> JobSummary {
        JobFold::of(j).0
    }
}

/// One job's workers taken one at a time: each summarised alone and folded
/// into the job's exact merge ([`WorkerMerge`]), its packed series kept for
/// the one series merge at the end. Only one worker's decoded histograms
/// are alive at a time, so the summary of N workers costs N times one
/// worker's, in time and memory (holding every worker decoded costs
/// ~1.6 MB each: 16 GB at 10,000 hosts).
struct JobFold {
    pcts: Vec<f64>,
    /// `unified_rw_reporting` is mixed or both.
    mixed: bool,
    merge: WorkerMerge,
    series: Vec<Vec<IntervalSample>>,
    workers: Vec<WorkerSummary>,
    thread_runtime_ns: u64,
}

impl JobFold {
    fn new(j: &JobResult) -> JobFold {
        JobFold {
            pcts: j.job.percentile_list.clone(),
            mixed: j.job.unified_rw_reporting != crate::job::UnifiedRw::None,
            merge: WorkerMerge::default(),
            series: Vec::new(),
            workers: Vec::new(),
            thread_runtime_ns: 0,
        }
    }

    /// Job `j`'s summary and workers merged, from its typed workers.
    fn of(j: &JobResult) -> (JobSummary, WorkerResult) {
        let mut fold = JobFold::new(j);
        for w in &j.workers {
            fold.add(w, None);
        }
        fold.finish(j, None)
    }

    /// Worker `w` (its series kept packed: a copy of the encoded intervals).
    /// `logged`: its series from an interval log (counts only), when its
    /// intervals were streamed there.
    fn add(&mut self, w: &WorkerResult, logged: Option<&Vec<IntervalSample>>) {
        self.thread_runtime_ns += w.runtime_ns;
        let stats = match logged {
            Some(series) => Summary::of_merged(
                &WorkerResult {
                    series: series.clone(),
                    ..w.clone()
                },
                w.runtime_ns,
                &self.pcts,
                self.mixed,
            ),
            None => Summary::of_merged(w, w.runtime_ns, &self.pcts, self.mixed),
        };
        self.workers.push(WorkerSummary {
            worker: w.worker,
            host: w.host.clone(),
            stats,
        });
        self.merge.add(w);
        self.series.push(w.series.clone());
    }

    /// The job's summary and its workers merged (for the group figures).
    /// `logged`: the job's series from an interval log (counts only, and
    /// its rows), when its intervals were streamed there.
    fn finish(
        self,
        j: &JobResult,
        logged: Option<(Vec<IntervalSample>, Vec<IntervalSummary>)>,
    ) -> (JobSummary, WorkerResult) {
        let (series, rows) = match logged {
            Some((series, rows)) => (series, Some(rows)),
            None => (merge_series(self.series.iter().map(|s| &s[..])), None),
        };
        let m = self.merge.finish(series);
        let summary = JobSummary {
            name: j.name.clone(),
            group: j.group,
            config: JobConfigSummary::of(&j.job),
            latency_definitions: LatencyDefinitions::of(&j.job),
            merged: Summary::of_merged(&m, self.thread_runtime_ns, &self.pcts, self.mixed),
            workers: self.workers,
            series: rows.unwrap_or_else(|| m.series.iter().map(IntervalSummary::of).collect()),
        };
        (summary, m)
    }
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub schema: String,
    pub tool_version: String,
    pub start_unix_ns: u64,
    pub interval_ns: u64,
    pub jobs: Vec<JobSummary>,
    pub groups: Vec<GroupSummary>,
}

/// Summarise a whole run.
pub fn summarize(run: &RunResult) -> RunSummary {
    summary_of(run, run.jobs.iter().map(JobFold::of).collect(), None)
}

/// The run's summary from its jobs' (summary, workers merged); `run`'s
/// workers are not read (the JSON path leaves them out).
fn summary_of(
    run: &RunResult,
    folded: Vec<(JobSummary, WorkerResult)>,
    group_series: Option<Vec<Vec<IntervalSummary>>>,
) -> RunSummary {
    let (jobs, merged): (Vec<JobSummary>, Vec<WorkerResult>) = folded.into_iter().unzip();
    RunSummary {
        schema: SUMMARY_SCHEMA.to_string(),
        tool_version: run.tool_version.clone(),
        start_unix_ns: run.start_unix_ns,
        interval_ns: run.interval_ns,
        groups: group::group_summaries(run, &jobs, &merged, group_series),
        jobs,
    }
}

/// [`summarize`] from and to JSON: the result as written by serde (the raw
/// part of the results document), the summary as JSON.
///
/// Workers are decoded one at a time (see [`JobFold`]): the run is parsed
/// as JSON, each job's workers taken out, and each worker decoded,
/// summarised and folded before the next, so a merged fleet result of
/// 10,000 hosts needs one worker's dense histograms in memory, not 10,000.
pub fn summarize_json(result_json: &str) -> Result<String, CoreError> {
    summarize_json_with(result_json, None)
}

/// [`summarize_json`] of a run whose intervals were streamed to an
/// interval log: its series from `log` ([`streamed::read_log_series`]).
/// A run with a log needs it: without, its summary would have no series.
pub fn summarize_json_with(
    result_json: &str,
    log: Option<streamed::LogSeries>,
) -> Result<String, CoreError> {
    let bad = |e: serde_json::Error| CoreError::Format(format!("not an iolab result: {e}"));
    let mut value: serde_json::Value = serde_json::from_str(result_json).map_err(bad)?;
    let mut workers: Vec<Vec<serde_json::Value>> = Vec::new();
    if let Some(jobs) = value
        .get_mut("jobs")
        .and_then(serde_json::Value::as_array_mut)
    {
        for j in jobs {
            let taken = match j.get_mut("workers") {
                Some(serde_json::Value::Array(ws)) => std::mem::take(ws),
                _ => Vec::new(),
            };
            workers.push(taken);
        }
    }
    let run: RunResult = serde_json::from_value(value).map_err(bad)?;
    if let (Some(r), None) = (&run.interval_log, &log) {
        return Err(CoreError::Format(format!(
            "the run streamed its intervals to {}: summarise it with that log",
            r.file
        )));
    }
    let mut log = log;
    let mut folded = Vec::with_capacity(run.jobs.len());
    for (ji, (j, ws)) in run.jobs.iter().zip(workers).enumerate() {
        let mut fold = JobFold::new(j);
        for w in ws {
            let w: WorkerResult = serde_json::from_value(w).map_err(bad)?;
            let logged = log
                .as_mut()
                .and_then(|l| l.workers.remove(&(ji as u32, w.worker)));
            fold.add(&w, logged.as_ref());
        }
        let logged = log.as_mut().map(|l| {
            (
                std::mem::take(&mut l.jobs[ji]),
                std::mem::take(&mut l.job_series[ji]),
            )
        });
        folded.push(fold.finish(j, logged));
    }
    let groups = log.map(|l| l.group_series);
    serde_json::to_string(&summary_of(&run, folded, groups))
        .map_err(|e| CoreError::Format(format!("cannot encode the summary: {e}")))
}

/// `x` per second over `ns` nanoseconds; 0 for an empty window.
pub(crate) fn per_s(x: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        x as f64 * 1e9 / ns as f64
    }
}

/// `part` / `whole` × 100; 0 when `whole` is 0.
pub(crate) fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole * 100.0
    } else {
        0.0
    }
}
