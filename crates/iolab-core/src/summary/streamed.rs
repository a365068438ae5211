//! The summary's time series of a run whose intervals were streamed to an
//! interval log (`stats::hlog`) instead of embedded in its workers: read
//! from the log in one pass, one line at a time.
//!
//! [`LogSeries`] keeps, per job (and per worker when the log has them),
//! each interval's bounds and counts without its histogram (~100 bytes an
//! interval: what `IntervalStats` and the group_reporting entry need, fed
//! to the same code as an embedded series), and the [`IntervalSummary`]
//! rows of each job and stonewall group (percentiles from the interval
//! histograms, merged exactly across a group's jobs as they are read).
//! No interval histogram outlives its row.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;

use super::IntervalSummary;
use crate::error::CoreError;
use crate::hist::{LatHist, PackedHist};
use crate::stats::hlog::{HlogEntry, HlogReader};
use crate::stats::{DirInterval, IntervalSample};

/// What the summary takes from an interval log (see the module docs).
#[derive(Debug, Default)]
pub struct LogSeries {
    /// Per job: its workers merged, counts only (no histograms).
    pub jobs: Vec<Vec<IntervalSample>>,
    /// Per job: its rows.
    pub job_series: Vec<Vec<IntervalSummary>>,
    /// Per stonewall group: its jobs merged.
    pub group_series: Vec<Vec<IntervalSummary>>,
    /// Per (job, worker), counts only: when the log has each worker's.
    pub workers: HashMap<(u32, u32), Vec<IntervalSample>>,
    /// The log ends in a record cut short, or some job has no end line:
    /// the run was interrupted.
    pub interrupted: bool,
}

/// `s` without its histograms.
pub fn counts_only(s: &IntervalSample) -> IntervalSample {
    let mut out = IntervalSample {
        start_ns: s.start_ns,
        end_ns: s.end_ns,
        ..Default::default()
    };
    for (o, d) in out.dirs.iter_mut().zip(&s.dirs) {
        *o = DirInterval {
            ios: d.ios,
            bytes: d.bytes,
            lat_ns: PackedHist::default(),
        };
    }
    out
}

#[derive(Debug)]
struct GroupPending {
    sample: IntervalSample,
    lat: Vec<LatHist>,
    reported: u32,
}

/// A group's jobs' intervals merged by index as the log is read.
#[derive(Debug, Default)]
struct GroupMerge {
    jobs: u32,
    pending: BTreeMap<u64, GroupPending>,
}

impl GroupMerge {
    fn add(&mut self, i: u64, s: &IntervalSample) {
        let p = self.pending.entry(i).or_insert_with(|| GroupPending {
            sample: IntervalSample {
                start_ns: u64::MAX,
                ..Default::default()
            },
            lat: s.dirs.iter().map(|_| LatHist::new()).collect(),
            reported: 0,
        });
        p.sample.start_ns = p.sample.start_ns.min(s.start_ns);
        p.sample.end_ns = p.sample.end_ns.max(s.end_ns);
        for ((t, d), h) in p.sample.dirs.iter_mut().zip(&s.dirs).zip(&mut p.lat) {
            t.ios += d.ios;
            t.bytes += d.bytes;
            h.merge(&d.lat_ns.unpack());
        }
        p.reported += 1;
    }

    /// Rows of the intervals every job has reported or ended before
    /// (`ended_before(i)`: jobs of the group that ended with ≤ i
    /// intervals); all of them with `all`.
    fn flush(
        &mut self,
        ended_before: impl Fn(u64) -> u32,
        all: bool,
        out: &mut Vec<IntervalSummary>,
    ) {
        while let Some(e) = self.pending.first_entry() {
            if !all && e.get().reported + ended_before(*e.key()) < self.jobs {
                break;
            }
            let mut p = e.remove();
            for (d, h) in p.sample.dirs.iter_mut().zip(&p.lat) {
                d.lat_ns = PackedHist::pack(h);
            }
            out.push(IntervalSummary::of(&p.sample));
        }
    }
}

/// Read `log` through, for a run whose job `j` is in group `job_groups[j]`.
pub fn read_log_series<R: BufRead>(
    mut log: HlogReader<R>,
    job_groups: &[u32],
) -> Result<LogSeries, CoreError> {
    let njobs = job_groups.len();
    let ngroups = job_groups.iter().map(|g| g + 1).max().unwrap_or(0) as usize;
    let mut out = LogSeries {
        jobs: vec![Vec::new(); njobs],
        job_series: vec![Vec::new(); njobs],
        group_series: vec![Vec::new(); ngroups],
        ..Default::default()
    };
    let mut groups: Vec<GroupMerge> = (0..ngroups).map(|_| GroupMerge::default()).collect();
    for &g in job_groups {
        groups[g as usize].jobs += 1;
    }
    let mut ended: Vec<Option<u64>> = vec![None; njobs];
    let ended_before = |ended: &[Option<u64>], g: u32, i: u64| {
        (0..njobs)
            .filter(|&j| job_groups[j] == g && ended[j].is_some_and(|n| n <= i))
            .count() as u32
    };
    for e in log.by_ref() {
        let g = match e? {
            HlogEntry::Interval(r) => {
                let j = r.source.job as usize;
                if j >= njobs {
                    return Err(CoreError::Format(format!(
                        "interval log has job {j}; the result has {njobs}"
                    )));
                }
                match r.source.worker {
                    Some(w) => {
                        let ws = out.workers.entry((r.source.job, w)).or_default();
                        ws.push(counts_only(&r.sample));
                        continue;
                    }
                    None => {
                        out.jobs[j].push(counts_only(&r.sample));
                        out.job_series[j].push(IntervalSummary::of(&r.sample));
                        groups[job_groups[j] as usize].add(r.index, &r.sample);
                    }
                }
                job_groups[j]
            }
            HlogEntry::JobEnd { job, intervals } => {
                let j = job as usize;
                if j < njobs {
                    ended[j] = Some(intervals);
                }
                job_groups.get(j).copied().unwrap_or(0)
            }
        };
        if let Some(gm) = groups.get_mut(g as usize) {
            gm.flush(
                |i| ended_before(&ended, g, i),
                false,
                &mut out.group_series[g as usize],
            );
        }
    }
    for (g, gm) in groups.iter_mut().enumerate() {
        gm.flush(|_| 0, true, &mut out.group_series[g]);
    }
    out.interrupted = log.truncated() || ended.iter().any(Option::is_none);
    Ok(out)
}

/// [`super::summarize_json_with`] of a result whose intervals are in the
/// interval log at `log_path`.
pub fn summarize_json_with_log(
    result_json: &str,
    log_path: &std::path::Path,
) -> Result<String, CoreError> {
    #[derive(serde::Deserialize)]
    struct Job {
        group: u32,
    }
    #[derive(serde::Deserialize)]
    struct Jobs {
        jobs: Vec<Job>,
    }
    let jobs: Jobs = serde_json::from_str(result_json)
        .map_err(|e| CoreError::Format(format!("not an iolab result: {e}")))?;
    let groups: Vec<u32> = jobs.jobs.iter().map(|j| j.group).collect();
    let file = std::fs::File::open(log_path)
        .map_err(|e| CoreError::Format(format!("interval log {}: {e}", log_path.display())))?;
    let log = read_log_series(HlogReader::new(std::io::BufReader::new(file)), &groups)?;
    super::summarize_json_with(result_json, Some(log))
}
