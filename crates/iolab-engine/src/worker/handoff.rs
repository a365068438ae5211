//! Reap and issue in one turn at a full queue, the reap's clock reading
//! serving as the next I/O's start.
//!
//! At a full queue a worker's steady state is: reap (clock reading `tr`,
//! the completions' instant), prepare the next unit, read the clock (`t0`,
//! its start), stage and commit it, read the clock (`t1`, its submission).
//! fio reads the clock at the same three points: `icd->time` after
//! getevents (io_u.c `init_icd`), `io_u->start_time` at the end of
//! `get_io_u` once the unit is prepared, and the issue time after the
//! commit (ioengines.c `td_io_queue`; the null engine's `null_queued`).
//! Three readings are half of the null engine's cost per I/O.
//!
//! Here the next unit is prepared *before* the reap and the completions
//! are recorded *after* the commit, so between `tr` and staging runs only
//! the stop check (a few compares of the worker's own fields). `tr` is
//! then a reading taken after the unit was prepared and before it was
//! staged — what fio's `start_time` is — and serves as `t0`: two readings
//! per I/O instead of three. What is measured keeps fio's definitions:
//! slat = `t1 − tr` (staging and commit), clat = `t1` → the reap that sees
//! it, lat = `tr` → that reap; each reaped I/O is recorded at `tr` (or the
//! backend's own completion instant), as in `reap_between`, once `t1` is
//! read and before that reading closes an interval or the ramp, so each
//! completion lands in the same interval and window as before. Releasing the
//! reaped slots (a copy of each slot's state, a push to the free list)
//! comes before `tr`, inside the reap, as fio's `td_io_getevents` does its
//! in-flight bookkeeping before `icd->time` is read.
//!
//! It applies where nothing else decides when the next I/O may go
//! ([`Worker::handoff_applies`]: no rate, replay pacing, thinktime,
//! latency_target, flow or serialize_overlap) and no completion reads its
//! slot's buffer (no verify: the next I/O takes the slot before the
//! completions are recorded). A short or failed completion, or a generator
//! that is done, takes the ordinary path.

use iolab_core::job::IoDir;

use super::io_loop::Slot;
use super::Worker;
use crate::backend::Backend;
use crate::EngineError;

impl<B: Backend> Worker<B> {
    /// Whether this job's full-queue turns go through [`Self::reap_and_issue`].
    pub(super) fn handoff_applies(&self) -> bool {
        !B::SYNC
            && !self.data.verifies()
            && self.pacing.lat.is_none()
            && self.pacing.flow.is_none()
            && self.p.thinktime_ns == 0
            && self.src.rate.is_none()
            && self.src.gen.replay_due_ns().is_none()
            && self.overlap.is_none()
    }

    /// One turn at a full queue (see the module doc).
    pub(super) fn reap_and_issue(&mut self) -> Result<(), EngineError> {
        let min = self.p.complete_min.min(self.q.inflight);
        // The next unit, prepared before the reap (fio's get_io_u); kept in
        // the batch, so it is read back long after it was written.
        self.q.batch.clear();
        match self.src.pending.take() {
            Some(p) => self.q.batch.push(p),
            None => match self.next_unit() {
                Some(u) => self.q.batch.push((u, 0)),
                None => {
                    self.src.gen_done = true;
                    return self.reap(min);
                }
            },
        }
        self.q.comps.clear();
        match self
            .backend
            .reap(min.max(1), self.p.complete_max, &mut self.q.comps)
        {
            Ok(_) => self.hand_off(),
            Err(e) => Err(self.backend_err("reap", e)),
        }
    }

    /// Release the reaped slots, read the clock once, issue the prepared
    /// unit at that reading, then record the completions at it.
    #[inline]
    fn hand_off(&mut self) -> Result<(), EngineError> {
        let whole = self.q.comps.iter().all(|c| {
            let s = &self.q.slots[c.slot as usize];
            c.result >= i64::from(s.len - s.done)
        });
        if !whole || self.q.comps.is_empty() {
            // The ordinary path (a short or failed I/O, or nothing reaped
            // and so no slot to issue into); the prepared unit goes out
            // with the next issue.
            self.src.pending = self.q.batch.pop();
            let ts = self.clock();
            let comps = std::mem::take(&mut self.q.comps);
            let r = self.take_completions(&comps, ts);
            self.q.comps = comps;
            return r;
        }
        let n = self.q.comps.len();
        if self.q.done.len() < n {
            self.q.done.resize(n, (0, Slot::default()));
        }
        for i in 0..n {
            let slot = self.q.comps[i].slot;
            // Element to element: no copy through the stack.
            self.q.done[i] = (slot, self.q.slots[slot as usize]);
            self.q.free.push(slot);
        }
        self.q.done_len = n;
        self.q.inflight -= n as u32;
        let tr = self.clock();
        self.q.done_ns = tr;
        if !self.stopping() {
            if let Err(e) = self.submit_batch(tr) {
                self.record_done();
                return Err(e);
            }
            // As `fill_batch` counts an issued write (a sync it makes due
            // is taken at the top of the next turn).
            let u = self.q.batch[0].0;
            if u.dir == IoDir::Write {
                self.syncs.count_write(u.file, &self.p);
            }
        }
        self.record_done();
        Ok(())
    }

    /// Record the completions released by [`Self::hand_off`] at the
    /// reap's reading (or the backend's own completion instant).
    #[inline]
    pub(super) fn record_done(&mut self) {
        let n = std::mem::take(&mut self.q.done_len);
        for i in 0..n {
            let (slot, s) = self.q.done[i];
            let ts = self.backend.completed_at(slot).unwrap_or(self.q.done_ns);
            self.account(slot, &s, ts);
        }
    }
}
