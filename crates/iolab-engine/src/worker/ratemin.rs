//! rate_min / rate_iops_min (fio's minimum rates): every `ratecycle` of the
//! measured window, what a worker completed in that cycle is compared with
//! the minimums; falling short ends the worker with an error naming both.

use iolab_core::job::{IoDir, PreparedJob};

use crate::EngineError;

#[derive(Debug)]
pub struct RateMin {
    min_bytes: [u64; 2],
    min_ios: [u64; 2],
    cycle_ns: u64,
    /// End of the current cycle (0 until the measured window starts).
    next_ns: u64,
    /// Completed (I/Os, bytes) per direction when the cycle began.
    at_start: [(u64, u64); 2],
}

impl RateMin {
    /// None when the job sets no minimum for a direction it does (a single
    /// value sets both directions; only those the job does are held to it).
    pub fn new(job: &PreparedJob) -> Option<RateMin> {
        let a = &job.amounts;
        let only_done = |v: [u64; 2]| {
            IoDir::ALL.map(|d| {
                if job.rw.uses_slot(d) {
                    v[d as usize]
                } else {
                    0
                }
            })
        };
        let (min_bytes, min_ios) = (only_done(a.rate_min_bytes), only_done(a.rate_min_iops));
        let any = min_bytes.iter().chain(&min_ios).any(|&m| m > 0);
        any.then(|| RateMin {
            min_bytes,
            min_ios,
            cycle_ns: a.ratecycle_ms.max(1) * 1_000_000,
            next_ns: 0,
            at_start: [(0, 0); 2],
        })
    }

    /// Called with the clock and the totals completed so far; an error once
    /// a whole cycle fell short. `measuring` is false during the ramp.
    pub fn check(
        &mut self,
        now_ns: u64,
        measuring: bool,
        done: [(u64, u64); 2],
    ) -> Result<(), EngineError> {
        if !measuring {
            return Ok(());
        }
        if self.next_ns == 0 {
            (self.next_ns, self.at_start) = (now_ns + self.cycle_ns, done);
            return Ok(());
        }
        if now_ns < self.next_ns {
            return Ok(());
        }
        let secs = (now_ns - (self.next_ns - self.cycle_ns)) as f64 / 1e9;
        for dir in IoDir::ALL {
            let d = dir as usize;
            let ios = (done[d].0 - self.at_start[d].0) as f64 / secs;
            let bw = (done[d].1 - self.at_start[d].1) as f64 / secs;
            let short = |got: f64, min: u64, unit: &str| {
                (min > 0 && got < min as f64).then(|| {
                    EngineError::TooSlow(format!(
                        "{} rate {got:.0} {unit} over the last {:.3} s is below the minimum {min} \
                         {unit}",
                        dir.name(),
                        secs
                    ))
                })
            };
            if let Some(e) =
                short(bw, self.min_bytes[d], "bytes/s").or(short(ios, self.min_ios[d], "IOPS"))
            {
                return Err(e);
            }
        }
        (self.next_ns, self.at_start) = (now_ns + self.cycle_ns, done);
        Ok(())
    }
}
