//! How a job's issuing is steered beyond rate limits (fio's flow control,
//! latency-target search and submission mode), grouped so a new option is
//! a field here plus its row in `options/table_control`.

use serde::{Deserialize, Serialize};

/// `io_submit_mode`: who hands I/Os to the engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubmitMode {
    /// The worker submits and reaps its own I/O (fio's default).
    #[default]
    Inline,
    /// Submission is decoupled from completion: each I/O goes out at its
    /// rate-schedule time whatever the completions are doing, up to
    /// iodepth in flight, through iodepth submitter threads (fio's pool of
    /// offload threads); synchronous engines then keep iodepth in flight too.
    Offload,
}

/// fio's `flow*`, `latency_*` and `io_submit_mode` options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IoControl {
    /// `flow`: this worker's weight in its flow group (0 = no flow control).
    pub flow: u32,
    /// `flow_id`: jobs with the same id share one flow group.
    pub flow_id: u32,
    /// `flow_sleep`: how long a worker held back by its flow waits, µs
    /// (0: it retries at once, yielding the CPU).
    pub flow_sleep_us: u64,
    /// `latency_target`: the total latency each window's I/Os must meet,
    /// ns (0 = no search).
    pub latency_target_ns: u64,
    /// `latency_window`: how long each queue depth is tried, ns.
    pub latency_window_ns: u64,
    /// `latency_percentile`: share of a window's I/Os that must meet the
    /// target, percent (100 = every one).
    pub latency_percentile: f64,
    /// `latency_run`: keep adjusting the depth instead of ending the job
    /// once the search settles.
    pub latency_run: bool,
    pub submit_mode: SubmitMode,
}

impl Default for IoControl {
    fn default() -> Self {
        IoControl {
            flow: 0,
            flow_id: 0,
            flow_sleep_us: 0,
            latency_target_ns: 0,
            latency_window_ns: 0,
            latency_percentile: 100.0,
            latency_run: false,
            submit_mode: SubmitMode::Inline,
        }
    }
}
