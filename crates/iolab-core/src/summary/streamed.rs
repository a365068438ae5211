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
//!
//! [`summarize_json_with_log_to`] hands each row to a [`SeriesCsv`] file
//! instead of keeping it: the summary then has empty series and memory
//! holds only the counts (what a 24-hour run's series would otherwise
//! need: ~250 bytes a row in memory, ~750 in the summary's JSON).

use std::collections::HashMap;
use std::io::BufRead;

use super::IntervalSummary;
use crate::error::CoreError;
use crate::hist::PackedHist;
use crate::stats::hlog::{HlogEntry, HlogReader};
use crate::stats::stream::{IntervalMerge, SpareHists};
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

/// A group's jobs' intervals merged by index as the log is read.
#[derive(Debug, Default)]
struct GroupMerge {
    jobs: u32,
    merge: IntervalMerge,
}

impl GroupMerge {
    /// Rows of the intervals every job has reported or ended before
    /// (`ended_before(i)`: jobs of the group that ended with ≤ i
    /// intervals); all of them with `all`.
    fn flush(
        &mut self,
        ended_before: impl Fn(u64) -> u32,
        all: bool,
        spare: &mut SpareHists,
        out: &mut Vec<IntervalSummary>,
    ) {
        let done = |i| if all { self.jobs } else { ended_before(i) };
        while let Some((_, sample)) = self.merge.pop_complete(self.jobs, done, spare) {
            out.push(IntervalSummary::of(&sample));
        }
    }
}

/// Whose series a row is of: a job's (its index) or a stonewall group's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesOf {
    Job(u32),
    Group(u32),
}

/// Read `log` through, for a run whose job `j` is in group `job_groups[j]`,
/// keeping the rows in [`LogSeries::job_series`] and `group_series`.
pub fn read_log_series<R: BufRead>(
    log: HlogReader<R>,
    job_groups: &[u32],
) -> Result<LogSeries, CoreError> {
    let mut rows: Vec<(SeriesOf, IntervalSummary)> = Vec::new();
    let mut out = read_log_series_with(log, job_groups, |of, row| {
        rows.push((of, row));
        Ok(())
    })?;
    for (of, row) in rows {
        match of {
            SeriesOf::Job(j) => out.job_series[j as usize].push(row),
            SeriesOf::Group(g) => out.group_series[g as usize].push(row),
        }
    }
    Ok(out)
}

/// [`read_log_series`] handing every row to `sink` as it is made (a job's
/// as its record is read, a group's once all its jobs reported the
/// interval) instead of keeping it: the result's `job_series` and `group_series`
/// hold an empty vector per job and per group.
pub fn read_log_series_with<R: BufRead>(
    mut log: HlogReader<R>,
    job_groups: &[u32],
    mut sink: impl FnMut(SeriesOf, IntervalSummary) -> Result<(), CoreError>,
) -> Result<LogSeries, CoreError> {
    let njobs = job_groups.len();
    let ngroups = job_groups.iter().map(|g| g + 1).max().unwrap_or(0) as usize;
    let mut out = LogSeries {
        jobs: vec![Vec::new(); njobs],
        job_series: vec![Vec::new(); njobs],
        group_series: vec![Vec::new(); ngroups],
        ..Default::default()
    };
    let mut group_rows: Vec<IntervalSummary> = Vec::new();
    let mut spare = SpareHists::new();
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
                        sink(SeriesOf::Job(j as u32), IntervalSummary::of(&r.sample))?;
                        let g = job_groups[j] as usize;
                        if !groups[g].merge.add(r.index, &r.sample) {
                            return Err(CoreError::Format(format!(
                                "interval log: job {j} interval {} after its group's was complete",
                                r.index
                            )));
                        }
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
                &mut spare,
                &mut group_rows,
            );
            for row in group_rows.drain(..) {
                sink(SeriesOf::Group(g), row)?;
            }
        }
    }
    for (g, gm) in groups.iter_mut().enumerate() {
        gm.flush(|_| 0, true, &mut spare, &mut group_rows);
        for row in group_rows.drain(..) {
            sink(SeriesOf::Group(g as u32), row)?;
        }
    }
    out.interrupted = log.truncated() || ended.iter().any(Option::is_none);
    Ok(out)
}

/// The stonewall group of each job of a result (JSON).
fn job_groups(result_json: &str) -> Result<Vec<u32>, CoreError> {
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
    Ok(jobs.jobs.iter().map(|j| j.group).collect())
}

fn open_log(
    log_path: &std::path::Path,
) -> Result<HlogReader<std::io::BufReader<std::fs::File>>, CoreError> {
    let file = std::fs::File::open(log_path)
        .map_err(|e| CoreError::Format(format!("interval log {}: {e}", log_path.display())))?;
    Ok(HlogReader::new(std::io::BufReader::new(file)))
}

/// [`super::summarize_json_with`] of a result whose intervals are in the
/// interval log at `log_path`.
pub fn summarize_json_with_log(
    result_json: &str,
    log_path: &std::path::Path,
) -> Result<String, CoreError> {
    let groups = job_groups(result_json)?;
    let log = read_log_series(open_log(log_path)?, &groups)?;
    super::summarize_json_with(result_json, Some(log))
}

/// The series rows as CSV, one line per row and direction (see
/// [`SeriesCsv::HEADER`]), and how many rows each job and group has.
#[derive(Debug)]
pub struct SeriesCsv<W: std::io::Write> {
    out: W,
    /// Rows (intervals) per job and per group.
    pub job_rows: Vec<u64>,
    pub group_rows: Vec<u64>,
}

impl<W: std::io::Write> SeriesCsv<W> {
    /// Columns: `series` (`job` or `group`), `index` (the job's index in the
    /// result, or the group's number), the interval's bounds, `dir` (read,
    /// write, trim, total) and [`super::DirIntervalSummary`]'s fields.
    /// Floats are written in Rust's shortest form that reads back exactly.
    pub const HEADER: &'static str = "series,index,t_start_ns,t_end_ns,dir,ios,bytes,iops,bw_bytes_per_s,lat_p50_ns,lat_p99_ns,lat_max_ns";

    pub fn new(mut out: W, jobs: usize, groups: usize) -> Result<Self, CoreError> {
        writeln!(out, "{}", Self::HEADER).map_err(CoreError::from)?;
        Ok(SeriesCsv {
            out,
            job_rows: vec![0; jobs],
            group_rows: vec![0; groups],
        })
    }

    pub fn write(&mut self, of: SeriesOf, row: &IntervalSummary) -> Result<(), CoreError> {
        let (name, index, count) = match of {
            SeriesOf::Job(j) => ("job", j, &mut self.job_rows[j as usize]),
            SeriesOf::Group(g) => ("group", g, &mut self.group_rows[g as usize]),
        };
        *count += 1;
        let dirs = [
            ("read", &row.read),
            ("write", &row.write),
            ("trim", &row.trim),
            ("total", &row.total),
        ];
        for (dir, d) in dirs {
            writeln!(
                self.out,
                "{name},{index},{},{},{dir},{},{},{:?},{:?},{},{},{}",
                row.t_start_ns,
                row.t_end_ns,
                d.ios,
                d.bytes,
                d.iops,
                d.bw_bytes_per_s,
                d.lat_p50_ns,
                d.lat_p99_ns,
                d.lat_max_ns
            )
            .map_err(CoreError::from)?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<(Vec<u64>, Vec<u64>), CoreError> {
        self.out.flush().map_err(CoreError::from)?;
        Ok((self.job_rows, self.group_rows))
    }
}

/// [`summarize_json_with_log`] writing the series to `series_csv`
/// ([`SeriesCsv`]) as they are made instead of into the summary, whose
/// `series` are then empty: memory does not grow with the run's length
/// beyond the counts the interval statistics need. Returns the summary and
/// the rows per job and per group.
pub fn summarize_json_with_log_to(
    result_json: &str,
    log_path: &std::path::Path,
    series_csv: &std::path::Path,
) -> Result<(String, Vec<u64>, Vec<u64>), CoreError> {
    let groups = job_groups(result_json)?;
    let ngroups = groups.iter().map(|g| g + 1).max().unwrap_or(0) as usize;
    let file = std::fs::File::create(series_csv)
        .map_err(|e| CoreError::Format(format!("series file {}: {e}", series_csv.display())))?;
    let mut csv = SeriesCsv::new(std::io::BufWriter::new(file), groups.len(), ngroups)?;
    let log = read_log_series_with(open_log(log_path)?, &groups, |of, row| csv.write(of, &row))?;
    let (job_rows, group_rows) = csv.finish()?;
    let summary = super::summarize_json_with(result_json, Some(log))?;
    Ok((summary, job_rows, group_rows))
}
