//! Per stonewall group: the figures of the whole group ([`GroupSummary`]),
//! the one home of a group's IOPS, bandwidth and latency.
//!
//! - [`GroupDirSummary::iops`] and `bw_bytes_per_s`: the group's I/Os and
//!   bytes over its longest runtime (fio's "Run status group" line uses the
//!   same window for its aggregate bandwidth);
//! - `slat`/`clat`/`lat`: statistics of the exact merge (bucket by bucket)
//!   of every worker's histogram in the group — never an average of the
//!   jobs' percentiles;
//! - [`GroupSummary::total`]: both directions together, computed the same way;
//! - [`GroupSummary::series`]: the group's time series, every job's
//!   intervals merged exactly (counts added, histograms merged), so a
//!   group's interval IOPS and p99 have this one home too;
//! - [`GroupSummary::reported`]: with group_reporting, the group's jobs
//!   merged into one entry, as fio reports them (one result per group).
//!
//! A fleet run is summarised from the exact merge of the hosts' results
//! ([`crate::stats::merge_results`]), so its group figures are the fleet's
//! totals with no extra arithmetic.

use serde::{Deserialize, Serialize};

use super::cpu::{group_cpu, located, CpuSummary};
use super::{per_s, DirSummary, IntervalSummary, JobSummary, LatSummary, Summary};
use crate::job::IoDir;
use crate::stats::{merge_series, merge_workers, DirStats, RunResult, WorkerResult};

/// One direction (or, as [`GroupSummary::total`], both) of a stonewall group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupDirSummary {
    pub ios: u64,
    pub bytes: u64,
    /// I/Os that completed with an error (not counted in `ios`).
    pub errors: u64,
    /// `ios` / the longest runtime in the group (per direction: the
    /// longest of the entries' runtimes of that direction).
    pub iops: f64,
    /// `bytes` / the longest runtime in the group.
    pub bw_bytes_per_s: f64,
    /// Over the reported entries (jobs with group_reporting, else workers)
    /// that did this direction.
    pub entry_bw_min_bytes_per_s: f64,
    pub entry_bw_max_bytes_per_s: f64,
    pub runtime_min_ns: u64,
    pub runtime_max_ns: u64,
    /// Every worker's histograms of the group merged exactly; percentiles
    /// in the `percentile_list` of the group's first job.
    pub slat: LatSummary,
    pub clat: LatSummary,
    pub lat: LatSummary,
}

/// One stonewall group: aggregate figures and CPU accounting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    pub group: u32,
    pub jobs: Vec<String>,
    pub read: GroupDirSummary,
    pub write: GroupDirSummary,
    /// Trims (all zero in a group that does not trim; absent in summaries
    /// written before iolab issued trims).
    #[serde(default = "GroupDirSummary::empty")]
    pub trim: GroupDirSummary,
    /// Every direction: I/Os, bytes, IOPS and bandwidth of reads, writes
    /// and trims together, latency of every I/O merged exactly.
    pub total: GroupDirSummary,
    /// One per host that ran the group (one entry on a single host).
    pub cpu: Vec<CpuSummary>,
    /// The group's time series: its jobs' series merged interval by
    /// interval ([`merge_series`]), per direction and in total.
    pub series: Vec<IntervalSummary>,
    /// With group_reporting: every worker of the group's jobs that set it,
    /// merged exactly into one entry — fio's one result for the group, named
    /// after the first of those jobs (runtimes the longest, per direction
    /// too; `thread_runtime_ns` and CPU added). None when no job of the
    /// group sets group_reporting; each job's own entry stays in `jobs[]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported: Option<Summary>,
}

/// One [`GroupSummary`] per stonewall group, in group order.
/// `merged`: each job of `run` with its workers merged, in job order.
pub(super) fn group_summaries(
    run: &RunResult,
    jobs: &[JobSummary],
    merged: &[WorkerResult],
    logged_series: Option<Vec<Vec<IntervalSummary>>>,
) -> Vec<GroupSummary> {
    let mut logged_series = logged_series;
    let ngroups = run.jobs.iter().map(|j| j.group + 1).max().unwrap_or(0);
    let cpu = located(run, ngroups);
    (0..ngroups)
        .map(|g| {
            let [read, write, trim] = merged_dirs(run, merged, g);
            let mut both = read.clone();
            both.merge(&write);
            both.merge(&trim);
            let pcts = run
                .jobs
                .iter()
                .find(|j| j.group == g)
                .map_or(&[][..], |j| &j.job.percentile_list[..]);
            let reported = reported(jobs, merged, g);
            let entries = entries(jobs, g, reported.as_ref());
            GroupSummary {
                group: g,
                jobs: jobs
                    .iter()
                    .filter(|j| j.group == g)
                    .map(|j| j.name.clone())
                    .collect(),
                read: group_dir(&entries, &[IoDir::Read], &read, pcts),
                write: group_dir(&entries, &[IoDir::Write], &write, pcts),
                trim: group_dir(&entries, &[IoDir::Trim], &trim, pcts),
                total: group_dir(&entries, &IoDir::MEASURED, &both, pcts),
                cpu: group_cpu(run, jobs, g, &cpu),
                series: match logged_series.as_mut() {
                    Some(s) => s
                        .get_mut(g as usize)
                        .map(std::mem::take)
                        .unwrap_or_default(),
                    None => group_series(run, merged, g),
                },
                reported,
            }
        })
        .collect()
}

/// Group `g`'s jobs that set group_reporting merged into one entry
/// ([`GroupSummary::reported`]), from their workers already merged per job.
fn reported(jobs: &[JobSummary], merged: &[WorkerResult], g: u32) -> Option<Summary> {
    let picked: Vec<(&JobSummary, &WorkerResult)> = jobs
        .iter()
        .zip(merged)
        .filter(|(j, _)| j.group == g && j.config.group_reporting)
        .collect();
    let first = &picked.first()?.0.config;
    let pcts = &first.percentile_list;
    // As fio's: the group's entry is mixed when one of its jobs asks.
    let mixed = picked
        .iter()
        .any(|(j, _)| j.config.unified_rw_reporting != crate::job::UnifiedRw::None);
    let whole: Vec<WorkerResult> = picked.iter().map(|(_, m)| (*m).clone()).collect();
    let threads = picked.iter().map(|(j, _)| j.merged.thread_runtime_ns).sum();
    Some(Summary::of_merged(
        &merge_workers(&whole),
        threads,
        pcts,
        mixed,
    ))
}

/// Group `g`'s reported entries, as fio has them: the jobs with
/// group_reporting as one entry (`reported`), and each worker of a job
/// without it.
fn entries<'a>(jobs: &'a [JobSummary], g: u32, reported: Option<&'a Summary>) -> Vec<&'a Summary> {
    let mut entries: Vec<&Summary> = reported.into_iter().collect();
    for j in jobs
        .iter()
        .filter(|j| j.group == g && !j.config.group_reporting)
    {
        entries.extend(j.workers.iter().map(|w| &w.stats));
    }
    entries
}

/// Every worker of group `g`, per direction, merged exactly (from the
/// jobs' merges: one histogram merge per job, not per worker).
fn merged_dirs(run: &RunResult, merged: &[WorkerResult], g: u32) -> [DirStats; 3] {
    let mut dirs: [DirStats; 3] = Default::default();
    for (_, m) in run.jobs.iter().zip(merged).filter(|(j, _)| j.group == g) {
        for d in IoDir::MEASURED {
            dirs[d as usize].merge(&m.dirs[d as usize]);
        }
    }
    dirs
}

/// Group `g`'s time series: its jobs' (workers already merged) merged.
fn group_series(run: &RunResult, merged: &[WorkerResult], g: u32) -> Vec<IntervalSummary> {
    let jobs = run.jobs.iter().zip(merged).filter(|(j, _)| j.group == g);
    merge_series(jobs.map(|(_, m)| &m.series[..]))
        .iter()
        .map(IntervalSummary::of)
        .collect()
}

impl GroupDirSummary {
    /// A direction no entry did (the trim of summaries that predate it).
    fn empty() -> GroupDirSummary {
        group_dir(&[], &[IoDir::Trim], &DirStats::default(), &[])
    }
}

/// Aggregate of directions `ds` over the entries that did any of them.
/// An entry's runtime is its direction's (fio's per-direction runtime), or
/// its whole window for both directions together.
fn group_dir(
    entries: &[&Summary],
    ds: &[IoDir],
    merged: &DirStats,
    pcts: &[f64],
) -> GroupDirSummary {
    let sum = |s: &Summary, f: fn(&DirSummary) -> u64| ds.iter().map(|&d| f(s.dir(d))).sum::<u64>();
    let did: Vec<&Summary> = entries
        .iter()
        .copied()
        .filter(|s| sum(s, |x| x.ios + x.errors) > 0)
        .collect();
    let runtime = |s: &Summary| match ds {
        [d] => s.dir(*d).runtime_ns,
        _ => s.runtime_ns,
    };
    let runtime_max_ns = did.iter().map(|s| runtime(s)).max().unwrap_or(0);
    let bws = did
        .iter()
        .map(|s| ds.iter().map(|&d| s.dir(d).bw_bytes_per_s).sum::<f64>());
    let ios = did.iter().map(|s| sum(s, |x| x.ios)).sum();
    let bytes = did.iter().map(|s| sum(s, |x| x.bytes)).sum();
    GroupDirSummary {
        ios,
        bytes,
        errors: did.iter().map(|s| sum(s, |x| x.errors)).sum(),
        iops: per_s(ios, runtime_max_ns),
        bw_bytes_per_s: per_s(bytes, runtime_max_ns),
        entry_bw_min_bytes_per_s: bws.clone().reduce(f64::min).unwrap_or(0.0),
        entry_bw_max_bytes_per_s: bws.reduce(f64::max).unwrap_or(0.0),
        runtime_min_ns: did.iter().map(|s| runtime(s)).min().unwrap_or(0),
        runtime_max_ns,
        slat: LatSummary::of(&merged.slat_ns, pcts),
        clat: LatSummary::of(&merged.clat_ns, pcts),
        lat: LatSummary::of(&merged.lat_ns, pcts),
    }
}
