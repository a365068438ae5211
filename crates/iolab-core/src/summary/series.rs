//! The time series in the summary: one [`IntervalSummary`] per interval
//! (rates and latency percentiles from the merged interval histograms, per
//! direction and both together) — of a job (its workers merged) and of a
//! stonewall group (its jobs merged: [`super::GroupSummary::series`]), and
//! [`IntervalStats`]: min/max/mean/stdev of IOPS and bandwidth over the
//! intervals (fio's `bw_min`, `iops_stddev`, … ).

use serde::{Deserialize, Serialize};

use super::per_s;
use crate::hist::LatHist;
use crate::job::IoDir;
use crate::stats::IntervalSample;

/// One direction within one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirIntervalSummary {
    pub ios: u64,
    pub bytes: u64,
    /// Over this interval's own length.
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    /// Total latency (`lat`) of the I/Os completed in the interval; 0 when none.
    pub lat_p50_ns: u64,
    pub lat_p99_ns: u64,
    pub lat_max_ns: u64,
}

/// One interval of a time series (a job's workers, or a group's jobs, merged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalSummary {
    /// Relative to the start of the measured window.
    pub t_start_ns: u64,
    pub t_end_ns: u64,
    pub read: DirIntervalSummary,
    pub write: DirIntervalSummary,
    /// Trims (all zero in jobs that do not trim; absent in summaries
    /// written before iolab issued trims).
    #[serde(default = "DirIntervalSummary::empty")]
    pub trim: DirIntervalSummary,
    /// Every direction: I/Os and bytes added, latency of every I/O of the
    /// interval merged exactly.
    pub total: DirIntervalSummary,
}

impl DirIntervalSummary {
    fn empty() -> DirIntervalSummary {
        DirIntervalSummary::of(0, 0, &LatHist::new(), 0)
    }

    fn of(ios: u64, bytes: u64, lat_ns: &LatHist, len_ns: u64) -> DirIntervalSummary {
        DirIntervalSummary {
            ios,
            bytes,
            iops: per_s(ios, len_ns),
            bw_bytes_per_s: per_s(bytes, len_ns),
            lat_p50_ns: lat_ns.percentile(50.0),
            lat_p99_ns: lat_ns.percentile(99.0),
            lat_max_ns: lat_ns.max(),
        }
    }
}

impl IntervalSummary {
    pub fn of(s: &IntervalSample) -> IntervalSummary {
        let len_ns = s.end_ns.saturating_sub(s.start_ns);
        let lats = s.dirs.each_ref().map(|d| d.lat_ns.unpack());
        let mut all = LatHist::new();
        for h in &lats {
            all.merge(h);
        }
        let one = |d: IoDir| {
            let i = &s.dirs[d as usize];
            DirIntervalSummary::of(i.ios, i.bytes, &lats[d as usize], len_ns)
        };
        let ios = s.dirs.iter().map(|d| d.ios).sum();
        let bytes = s.dirs.iter().map(|d| d.bytes).sum();
        IntervalSummary {
            t_start_ns: s.start_ns,
            t_end_ns: s.end_ns,
            read: one(IoDir::Read),
            write: one(IoDir::Write),
            trim: one(IoDir::Trim),
            total: DirIntervalSummary::of(ios, bytes, &all, len_ns),
        }
    }
}

/// IOPS and bandwidth over the intervals of a series. All zero when no
/// interval qualifies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalStats {
    /// Intervals used: those at least half as long as the longest one (a
    /// short final interval would otherwise give a noisy extreme).
    pub samples: u64,
    pub iops_min: f64,
    pub iops_max: f64,
    pub iops_mean: f64,
    /// Sample standard deviation (n − 1), as fio reports it.
    pub iops_stdev: f64,
    pub bw_min_bytes_per_s: f64,
    pub bw_max_bytes_per_s: f64,
    pub bw_mean_bytes_per_s: f64,
    pub bw_stdev_bytes_per_s: f64,
}

/// [`IntervalStats`] of directions `dirs` added together, over `series`.
pub(super) fn interval_stats(series: &[IntervalSample], dirs: &[IoDir]) -> IntervalStats {
    let len = |s: &IntervalSample| s.end_ns.saturating_sub(s.start_ns);
    let longest_ns = series.iter().map(len).max().unwrap_or(0);
    let used: Vec<&IntervalSample> = series
        .iter()
        .filter(|s| len(s) > 0 && len(s) * 2 >= longest_ns)
        .collect();
    let iops: Vec<f64> = used
        .iter()
        .map(|s| per_s(dirs.iter().map(|&d| s.dirs[d as usize].ios).sum(), len(s)))
        .collect();
    let bw: Vec<f64> = used
        .iter()
        .map(|s| per_s(dirs.iter().map(|&d| s.dirs[d as usize].bytes).sum(), len(s)))
        .collect();
    let (iops_min, iops_max, iops_mean, iops_stdev) = describe(&iops);
    let (bw_min, bw_max, bw_mean, bw_stdev) = describe(&bw);
    IntervalStats {
        samples: used.len() as u64,
        iops_min,
        iops_max,
        iops_mean,
        iops_stdev,
        bw_min_bytes_per_s: bw_min,
        bw_max_bytes_per_s: bw_max,
        bw_mean_bytes_per_s: bw_mean,
        bw_stdev_bytes_per_s: bw_stdev,
    }
}

/// (min, max, mean, sample stdev); zeros for no values, stdev 0 for one.
fn describe(xs: &[f64]) -> (f64, f64, f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = xs.len() as f64;
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = xs.iter().sum::<f64>() / n;
    let stdev = if xs.len() < 2 {
        0.0
    } else {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    };
    (min, max, mean, stdev)
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn describe_matches_fio_sample_stdev() {
        // fio printed bw_mean=8003.2, bw_dev=4.38178 for these five samples.
        let (min, max, mean, sd) = describe(&[8000.0, 8000.0, 8000.0, 8008.0, 8008.0]);
        assert_eq!((min, max), (8000.0, 8008.0));
        assert!((mean - 8003.2).abs() < 1e-9);
        assert!((sd - 4.38178).abs() < 1e-5, "{sd}");
        assert_eq!(describe(&[]), (0.0, 0.0, 0.0, 0.0));
        assert_eq!(describe(&[5.0]).3, 0.0);
    }
}
