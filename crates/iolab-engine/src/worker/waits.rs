//! The worker's waits and syncs, off the per-I/O path: quiescing the
//! queue, fsync/fdatasync on a quiet queue (timed into the sync
//! histogram), and sleeping until an instant (rate limiting, thinktime)
//! while still closing intervals and seeing stop requests.

use super::clock::wait_until;
use super::{io_failed, Worker};
use crate::backend::{Backend, Op, Queued, Request};
use crate::EngineError;

impl<B: Backend> Worker<B> {
    /// Wait for every in-flight I/O.
    pub(super) fn quiesce(&mut self) -> Result<(), EngineError> {
        while self.q.inflight > 0 {
            self.reap(self.q.inflight)?;
        }
        Ok(())
    }

    /// One fsync/fdatasync on a quiet queue; its latency goes to the sync
    /// histogram.
    pub(super) fn sync(&mut self, file: u32, op: Op) -> Result<(), EngineError> {
        if let Some(w) = self.wlog.as_mut() {
            let act = if op == Op::Fsync { "sync" } else { "datasync" };
            w.issued(self.last_ns, file, act, 0, 0);
        }
        if let Some(lat_ns) = self.sync_unrecorded(file, op)? {
            self.rec.synced(lat_ns);
        }
        Ok(())
    }

    /// [`Self::sync`] without counting it in the job's syncs (the verify
    /// phase's flush, which fio does not count either); its latency, or
    /// `None` when it failed (the error is kept).
    pub(super) fn sync_unrecorded(
        &mut self,
        file: u32,
        op: Op,
    ) -> Result<Option<u64>, EngineError> {
        // The slot after the last I/O slot is reserved for syncs (no buffer).
        let req = Request {
            slot: self.p.iodepth,
            op,
            file,
            offset: 0,
            len: 0,
            buf: std::ptr::null_mut(),
            ioprio: 0,
        };
        let t0 = self.clock();
        // Safety: a sync carries no buffer (null is allowed for Fsync/Fdatasync).
        let queued = unsafe { self.backend.queue(&req) };
        let c = match queued.map_err(|e| self.backend_err("queue", e))? {
            Queued::Done(c) => c,
            Queued::Staged => {
                self.backend
                    .commit()
                    .map_err(|e| self.backend_err("submit", e))?;
                self.q.comps.clear();
                while self.q.comps.is_empty() {
                    self.backend
                        .reap(1, 1, &mut self.q.comps)
                        .map_err(|e| self.backend_err("reap", e))?;
                }
                self.q.comps[0]
            }
        };
        let t1 = self.clock();
        if c.result < 0 {
            let path = self.paths[file as usize].clone();
            let name = if op == Op::Fsync {
                "fsync"
            } else {
                "fdatasync"
            };
            self.error
                .get_or_insert(io_failed(path, 0, 0, name, c.result));
            return Ok(None);
        }
        Ok(Some(t1 - t0))
    }

    /// Sleep until `until_ns`, closing intervals on the way; returns early
    /// on stop or at the end of the runtime.
    pub(super) fn sleep_until(&mut self, until_ns: u64) {
        const STEP_NS: u64 = 10_000_000;
        while self.last_ns < until_ns && !self.stopping() {
            let step = until_ns.min(self.last_ns + STEP_NS);
            if wait_until(step, &self.ctl.stop).is_none() {
                self.clock();
                return;
            }
            self.clock();
        }
    }
}
