//! Rate control: when each I/O of a rate-limited worker is due.
//!
//! `rate=` (bytes/s) and `rate_iops=` (I/Os per second) cap each
//! direction of each worker: like fio, the limit is per job clone, so
//! `numjobs=4 rate_iops=100` makes 400 I/Os per second in all (checked with
//! fio 3.33). When a direction has both, the stricter one applies to each
//! I/O: its spacing is `max(bytes / rate, 1 / rate_iops)`.
//!
//! [`RateLimiter::next_due_ns`] hands out a *schedule*: the intended issue
//! time of each I/O, in ns since the worker's measured start. The worker
//! waits until that time, then issues. The schedule never waits for the
//! device: if I/Os complete late, later ones are already due and go out
//! at once until the worker has caught up. So latency measured from the
//! intended time includes the time an I/O waited behind a slow one — the
//! correction for coordinated omission (as in wrk2).
//!
//! `rate_process=linear` spaces I/Os evenly; `poisson` draws exponential
//! gaps with the same mean (`rand_distr::Exp1` scaled), i.e. a Poisson
//! arrival process, which is what many independent users make.
//!
//! A direction without a limit is not paced: its I/Os are due at once
//! (`next_due_ns` returns 0) and [`RateLimiter::is_limited`] is false; the
//! worker must measure those from their actual issue time. With a
//! read/write mix and limits on both directions, give the limits in the
//! mix's proportion: each direction keeps its own schedule, and one whose
//! I/Os the mix draws too rarely for its limit falls behind it, and its
//! latency from the intended time then includes that lag.

use rand_distr::{Distribution, Exp1};

use crate::gen::{rng_for, STREAM_RATE};
use crate::job::{IoDir, PreparedJob, RateProcess};

type Rng = rand_xoshiro::Xoshiro256PlusPlus;

/// Schedule of one direction.
#[derive(Debug, Clone)]
struct DirSchedule {
    /// Spacing per byte (`rate`), ns; 0 when not limited by bytes.
    ns_per_byte: f64,
    /// Spacing per I/O (`rate_iops`), ns; 0 when not limited by I/Os.
    ns_per_io: f64,
    /// Intended issue time of the next I/O, ns (fractional: no drift).
    next_ns: f64,
}

/// The rate schedule of one worker.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    dirs: [Option<DirSchedule>; 2],
    process: RateProcess,
    rng: Rng,
}

impl RateLimiter {
    /// The limiter of a worker of `job` (give it [`crate::gen::IoGen::seed`]);
    /// `None` when the job has no rate limit.
    pub fn new(job: &PreparedJob, seed: u64) -> Option<RateLimiter> {
        let dir = |d: usize| {
            let bytes = job.rate_bytes_per_s[d].filter(|&r| r > 0);
            let iops = job.rate_iops[d].filter(|&r| r > 0);
            (bytes.is_some() || iops.is_some()).then(|| DirSchedule {
                ns_per_byte: bytes.map_or(0.0, |r| 1e9 / r as f64),
                ns_per_io: iops.map_or(0.0, |r| 1e9 / r as f64),
                next_ns: 0.0,
            })
        };
        let dirs = [dir(0), dir(1)];
        if dirs.iter().all(Option::is_none) {
            return None;
        }
        Some(RateLimiter {
            dirs,
            process: job.rate_process,
            rng: rng_for(seed, STREAM_RATE),
        })
    }

    /// Whether I/Os of `dir` are paced.
    pub fn is_limited(&self, dir: IoDir) -> bool {
        self.dirs[dir.option_slot()].is_some()
    }

    /// Intended issue time (ns since the worker's measured start) of the
    /// next I/O in `dir` of `bytes`; advances that direction's schedule.
    /// 0 ("now") for a direction that is not limited.
    pub fn next_due_ns(&mut self, dir: IoDir, bytes: u64) -> u64 {
        let Some(s) = &mut self.dirs[dir.option_slot()] else {
            return 0;
        };
        let due = s.next_ns;
        let mean_gap_ns = (bytes as f64 * s.ns_per_byte).max(s.ns_per_io);
        s.next_ns += match self.process {
            RateProcess::Linear => mean_gap_ns,
            RateProcess::Poisson => {
                let e: f64 = Exp1.sample(&mut self.rng);
                mean_gap_ns * e
            }
        };
        due.round() as u64
    }
}
