//! The job's configuration in display form ([`JobConfigSummary`]: what a
//! report header shows) and, in words, what each latency of the job
//! measures ([`LatencyDefinitions`]).

use serde::{Deserialize, Serialize};

use crate::job::{IoDir, Pattern, PreparedJob, TrimMode};

/// Block sizes of one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BsRange {
    pub min_bytes: u64,
    pub max_bytes: u64,
}

/// The job's configuration in display form (for report headers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobConfigSummary {
    pub ioengine: String,
    /// fio's name: read, write, randread, randwrite, rw, randrw.
    pub rw: String,
    /// Share of reads, percent.
    pub rwmixread_pct: u32,
    pub bs_read: BsRange,
    pub bs_write: BsRange,
    pub iodepth: u32,
    pub numjobs: u32,
    pub direct: bool,
    pub time_based: bool,
    pub runtime_limit_ns: Option<u64>,
    pub ramp_time_ns: u64,
    pub rate_limited: bool,
    pub rate_iops_read: Option<u64>,
    pub rate_iops_write: Option<u64>,
    pub rate_read_bytes_per_s: Option<u64>,
    pub rate_write_bytes_per_s: Option<u64>,
    pub percentile_list: Vec<f64>,
    pub group_reporting: bool,
    /// `unified_rw_reporting`: the summaries carry `mixed` (not none).
    #[serde(default, skip_serializing_if = "crate::job::UnifiedRw::is_none")]
    pub unified_rw_reporting: crate::job::UnifiedRw,
    /// The options as the user wrote them, in order (`null` for bare flags).
    pub options: Vec<(String, Option<String>)>,
    /// continue_on_error (or ignore_error) is in force: fio then reports
    /// total_err and first_error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub continue_on_error: bool,
}

impl JobConfigSummary {
    pub(super) fn of(j: &PreparedJob) -> JobConfigSummary {
        let bs = |d: IoDir| BsRange {
            min_bytes: j.bs[d as usize].min(),
            max_bytes: j.bs[d as usize].max(),
        };
        JobConfigSummary {
            ioengine: j.ioengine.name().to_string(),
            rw: fio_rw_name(j),
            rwmixread_pct: j.rw.read_pct,
            bs_read: bs(IoDir::Read),
            bs_write: bs(IoDir::Write),
            iodepth: j.iodepth,
            numjobs: j.numjobs,
            direct: j.direct,
            time_based: j.time_based,
            runtime_limit_ns: j.runtime_ns,
            ramp_time_ns: j.ramp_time_ns,
            rate_limited: j.rate_limited(),
            rate_iops_read: j.rate_iops[0],
            rate_iops_write: j.rate_iops[1],
            rate_read_bytes_per_s: j.rate_bytes_per_s[0],
            rate_write_bytes_per_s: j.rate_bytes_per_s[1],
            percentile_list: j.percentile_list.clone(),
            group_reporting: j.group_reporting,
            unified_rw_reporting: j.unified_rw_reporting,
            options: j.spec.options.clone(),
            continue_on_error: j.errors.continuing(),
        }
    }
}

fn fio_rw_name(j: &PreparedJob) -> String {
    let prefix = if j.rw.pattern == Pattern::Random {
        "rand"
    } else {
        ""
    };
    let kind = match (j.rw.trim, j.rw.read_pct) {
        (TrimMode::Only, _) => "trim",
        (TrimMode::ThenWrite, _) => "trimwrite",
        (TrimMode::None, 100) => "read",
        (TrimMode::None, 0) => "write",
        (TrimMode::None, _) => "rw",
    };
    format!("{prefix}{kind}")
}

/// What each latency in this job's summary measures, in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyDefinitions {
    pub slat: String,
    pub clat: String,
    pub lat: String,
    /// Present for rate-limited jobs only.
    pub lat_intended: Option<String>,
}

impl LatencyDefinitions {
    pub(super) fn of(j: &PreparedJob) -> LatencyDefinitions {
        LatencyDefinitions {
            slat: "submission: I/O prepared -> submit call returned".into(),
            clat: "completion: submit call returned -> completion seen".into(),
            lat: "total, from actual issue: I/O prepared -> completion seen (slat + clat)".into(),
            lat_intended: j.rate_limited().then(|| {
                "total, from the intended issue time on the rate schedule -> completion seen; \
                 includes time queued behind the schedule (free of coordinated omission)"
                    .into()
            }),
        }
    }
}
