//! `thinktime` and its `thinktime_*` options, as fio's handle_thinktime:
//! after every `thinktime_blocks` I/Os (issued or completed, by
//! `thinktime_blocks_type`), or once I/O has run `thinktime_iotime` since
//! the last stall, the worker lets what is in flight complete, spins for
//! `thinktime_spin` and sleeps the rest of `thinktime`. The stall is the
//! run's time, never an I/O's latency.

use iolab_core::job::{PreparedJob, ThinkBlocksType, ThinkOptions};

use super::Worker;
use crate::backend::Backend;
use crate::EngineError;

/// A worker's thinktime: the options and where the last stall left off.
#[derive(Debug, Clone, Copy)]
pub(super) struct Think {
    stall_ns: u64,
    o: ThinkOptions,
    /// I/Os issued so far (`thinktime_blocks_type=issue` counts them).
    issued: u64,
    /// The count (issued or completed) at the last stall.
    last_count: u64,
    /// The end of the last stall, or the first check (`thinktime_iotime`).
    last_ns: Option<u64>,
}

impl Think {
    pub(super) fn new(job: &PreparedJob) -> Option<Think> {
        (job.thinktime_ns > 0).then_some(Think {
            stall_ns: job.thinktime_ns,
            o: job.think,
            issued: 0,
            last_count: 0,
            last_ns: None,
        })
    }

    /// How many of `free` may be issued before the next stall is due: with
    /// `thinktime_blocks_type=issue` no more than the blocks left.
    pub(super) fn issue_cap(&self, free: usize) -> usize {
        if self.o.blocks_type == ThinkBlocksType::Issue && self.o.counts_blocks() {
            let since = self.issued - self.last_count;
            free.min(u64::from(self.o.blocks).saturating_sub(since).max(1) as usize)
        } else {
            free
        }
    }

    pub(super) fn issued(&mut self, n: usize) {
        self.issued += n as u64;
    }

    fn count(&self, completed: u64) -> u64 {
        match self.o.blocks_type {
            ThinkBlocksType::Complete => completed,
            ThinkBlocksType::Issue => self.issued,
        }
    }

    /// Whether a stall is due now (`completed`: I/Os completed so far).
    fn due(&mut self, completed: u64, now_ns: u64) -> bool {
        let since = *self.last_ns.get_or_insert(now_ns);
        if self.o.iotime_ns > 0 && now_ns - since >= self.o.iotime_ns {
            return true;
        }
        self.o.counts_blocks()
            && self.count(completed) >= self.last_count + u64::from(self.o.blocks)
    }
}

impl<B: Backend> Worker<B> {
    fn completed(&self) -> u64 {
        self.limits.done.iter().map(|d| d.0).sum()
    }

    /// Stalls when one is due; whether it did.
    pub(super) fn think_if_due(&mut self) -> Result<bool, EngineError> {
        let completed = self.completed();
        let Some(t) = self.pacing.think.as_mut() else {
            return Ok(false);
        };
        if !t.due(completed, self.last_ns) {
            return Ok(false);
        }
        self.quiesce()?;
        let t = self.pacing.think.expect("checked above");
        let start = self.clock();
        // The busy part: the thread stays on its CPU, reading the clock.
        while self.last_ns < start + t.o.spin_ns && !self.stopping() {
            std::hint::spin_loop();
            self.clock();
        }
        self.sleep_until(start + t.stall_ns);
        let completed = self.completed();
        let t = self.pacing.think.as_mut().expect("checked above");
        t.last_count = t.count(completed);
        t.last_ns = Some(self.last_ns);
        Ok(true)
    }
}
