//! The per-I/O path of one worker, generic over its backend (static
//! dispatch: `B::SYNC` branches compile away).
//!
//! One turn of the loop either waits (a sync request or thinktime needs a
//! quiet queue; a rate-limited I/O is not due yet; every slot is busy) or
//! issues one batch:
//!
//! 1. take up to `iodepth_batch_submit` units from the generator (no clock);
//! 2. one clock reading `t0`; stage each unit in a free slot; commit;
//!    one clock reading `t1`: slat = t1 − t0 for the whole batch;
//! 3. when the queue is full (or nothing more may be issued) reap at least
//!    `iodepth_batch_complete_min` (≥ 1), at most `_max`; one clock reading
//!    `tr` per reap: clat = tr − t1, lat = tr − t0 of each I/O.
//!
//! At a full queue, where nothing paces the issue, a turn reaps and then
//! issues a unit prepared before the reap, and `tr` is that I/O's `t0`
//! (two readings per I/O instead of three; `handoff`).
//!
//! Like fio, the worker reaps only when it must (queue full, waiting, or
//! done), so the device sees a full queue. With `serialize_overlap` a
//! unit that overlaps an in-flight I/O waits (reap, then try again; see
//! `overlap`). Synchronous backends (psync)
//! complete inside `queue`: one reading before and one after each call,
//! clat = lat, no slat.
//!
//! Short transfers: like fio, the rest of a short read or write is issued
//! again from where it stopped (same slot, same issue time); a transfer of
//! 0 bytes (end of file) is an error. A failed I/O (`-errno`) is counted in
//! `errors`; unless `continue_on_error` makes it non-fatal (`errors.rs`)
//! it stops issuing (fio's default), lets the in-flight I/Os finish, and
//! is reported with the partial result.

use iolab_core::gen::IoUnit;
use iolab_core::job::IoDir;

use super::record::IoTimes;
use super::{io_failed, Params, Source, Syncs, Worker};
use crate::backend::{Backend, Completion, Op, Queued, Request};
use crate::EngineError;

/// One in-flight I/O.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    pub times: IoTimes,
    pub offset: u64,
    pub len: u32,
    /// Bytes already transferred (short transfers are continued).
    pub done: u32,
    pub file: u32,
    pub dir: IoDir,
    /// Seed of a write's verified data, or the seed a verify read expects.
    pub seed: u64,
    /// A read whose data is checked on completion.
    pub check: bool,
    /// Linux ioprio value the I/O was issued with (0: none).
    pub ioprio: u16,
}

impl Default for Slot {
    fn default() -> Slot {
        Slot {
            times: IoTimes::default(),
            offset: 0,
            len: 0,
            done: 0,
            file: 0,
            dir: IoDir::Read,
            seed: 0,
            check: false,
            ioprio: 0,
        }
    }
}

impl Slot {
    /// The slot of unit `u` issued at `issue_ns`, handed to the backend at
    /// `submit_ns` (0 until known), due at `due_ns` (0: none).
    #[inline]
    fn issued(u: &IoUnit, issue_ns: u64, submit_ns: u64, due_ns: u64) -> Slot {
        Slot {
            times: IoTimes {
                issue_ns,
                submit_ns,
                // An I/O without a due time was intended for when it was issued.
                due_ns: if due_ns == 0 { issue_ns } else { due_ns },
            },
            offset: u.offset,
            len: u.len as u32,
            done: 0,
            file: u.file,
            dir: u.dir,
            seed: 0,
            check: false,
            ioprio: 0,
        }
    }
}

/// How often a running worker looks at the run's stop flags, ns.
const HALT_CHECK_NS: u64 = 100_000;

impl<B: Backend> Worker<B> {
    /// Read the clock, remember the reading, close intervals / the ramp.
    #[inline]
    pub(super) fn clock(&mut self) -> u64 {
        let t = self.clk.now_ns();
        self.last_ns = t;
        self.rec.tick(t);
        t
    }

    /// True once no more I/O may be issued.
    ///
    /// The run's stop flags (shared atomics) are looked at once per
    /// [`HALT_CHECK_NS`] of the worker's clock, not on every turn: a stop
    /// is seen at most that much later, and the per-I/O path reads no
    /// shared memory. A worker in a flow group looks on every turn: it
    /// reads the group's shared counters per I/O anyway, and a member that
    /// stops the run (exitall) then leaves the group, after which the others
    /// would run free, unheld, until their next look (a burst of a rate's
    /// catch-up after the thread waited for a CPU fits in one period).
    #[inline]
    pub(super) fn stopping(&self) -> bool {
        if self.error.is_some() {
            return true;
        }
        if self.last_ns >= self.halt_check_ns.get() {
            if self.ctl.job_halted(self.job_index) {
                return true;
            }
            // A flow member's next look stays due (see above).
            if self.pacing.flow.is_none() {
                self.halt_check_ns.set(self.last_ns + HALT_CHECK_NS);
            }
        }
        if self.pacing.lat_done || (self.src.gen_done && self.src.pending.is_none()) {
            return true;
        }
        match (self.p.runtime_ns, self.rec.measured_start_ns()) {
            (Some(rt), Some(start)) => self.last_ns >= start + rt,
            _ => false,
        }
    }

    /// The loop; returns on stop, on an I/O error (kept in `self.error`), or
    /// with a backend error (the kernel refused a submit or a wait).
    pub(super) fn main_loop(&mut self) -> Result<(), EngineError> {
        let handoff = self.handoff_applies();
        loop {
            if self.stopping() {
                return Ok(());
            }
            if self.pacing.lat.is_some() && self.lat_follow()? {
                continue;
            }
            if let Some(r) = self.limits.ratemin.as_mut() {
                let measuring = self.rec.measured_start_ns().is_some();
                if let Err(e) = r.check(self.last_ns, measuring, self.limits.done) {
                    self.error.get_or_insert(e);
                    continue;
                }
            }
            if let Some((file, op)) = self.syncs.sync_due.take() {
                self.quiesce()?;
                self.sync(file, op)?;
                continue;
            }
            if self.pacing.think.is_some() && self.think_if_due()? {
                continue;
            }
            if let Some(due) = self.src.wait_due {
                if self.last_ns >= due {
                    self.src.wait_due = None;
                } else if self.q.inflight > 0 && !self.pacing.offload {
                    self.reap(1)?;
                    continue;
                } else if self.q.inflight > 0 {
                    // offload: completions carry their own instants, so
                    // take what is there and keep the schedule.
                    self.reap_ready()?;
                    self.sleep_until(due);
                    continue;
                } else {
                    self.sleep_until(due);
                    self.src.wait_due = None;
                    continue;
                }
            }
            if self.overlap_wait() {
                self.reap(1)?;
                continue;
            }
            if self.q.free.is_empty() && handoff {
                self.reap_and_issue()?;
                continue;
            }
            if self.q.free.is_empty() || self.lat_full() {
                self.reap(self.p.complete_min.min(self.q.inflight))?;
                continue;
            }
            self.issue()?;
            if self.pacing.flow_held {
                self.pacing.flow_held = false;
                self.flow_wait()?;
            }
        }
    }

    /// Pull up to `want` units that are due into `self.q.batch`.
    pub(super) fn fill_batch(&mut self, want: usize) {
        self.q.batch.clear();
        while self.q.batch.len() < want {
            let (u, due) = match self.src.pending.take() {
                Some(p) => p,
                None if self.pacing.flow.as_mut().is_some_and(|f| !f.admit()) => {
                    self.pacing.flow_held = true;
                    return;
                }
                None => match self.next_unit() {
                    Some(u) => (u, self.src.due_for(&u)),
                    None => {
                        self.src.gen_done = true;
                        return;
                    }
                },
            };
            if due > self.last_ns && due > self.clock() {
                self.src.pending = Some((u, due));
                self.src.wait_due = Some(due);
                return;
            }
            if self.overlap_holds(u, due) {
                return;
            }
            self.q.batch.push((u, due));
            if let Some((file, datasync)) = self.src.gen.take_replay_sync() {
                let op = if datasync { Op::Fdatasync } else { Op::Fsync };
                self.syncs.sync_due = Some((file, op));
                return;
            }
            if u.dir == IoDir::Write && self.syncs.count_write(u.file, &self.p) {
                return;
            }
        }
    }

    /// The next unit: a verify read when one is due, else the generator's.
    // Inlined: returned through memory, the unit is read back before the
    // stores that wrote it reach the cache (a store-forwarding stall).
    #[inline(always)]
    pub(super) fn next_unit(&mut self) -> Option<IoUnit> {
        if let Some(u) = self.data.next_read() {
            return Some(u);
        }
        if let Some(u) = self.data.next_trim() {
            return Some(u);
        }
        if self.data.phase || self.src.bytes_left == 0 || self.src.ios_left == 0 {
            return None;
        }
        let passes = self.src.gen.passes_started();
        let u = self.src.gen.next()?;
        if self.p.invalidate_passes && passes > 0 && self.src.gen.passes_started() != passes {
            self.drop_cached_for_pass();
        }
        // A trimwrite's trim rides with its write: io_size and number_ios
        // count the writes only (as fio counts them).
        if u.dir != IoDir::Trim || !self.src.gen.trims_then_writes() {
            self.src.bytes_left = self.src.bytes_left.saturating_sub(u.len);
            self.src.ios_left -= 1;
        }
        Some(self.data.adapt(u))
    }

    fn issue(&mut self) -> Result<(), EngineError> {
        let mut want = self.q.free.len().min(self.p.batch_submit as usize);
        if let Some(l) = &self.pacing.lat {
            want = want.min(l.qd.saturating_sub(self.q.inflight) as usize);
        }
        if let Some(t) = &self.pacing.think {
            want = t.issue_cap(want);
        }
        self.fill_batch(want);
        if self.q.batch.is_empty() {
            return Ok(());
        }
        if let Some(t) = self.pacing.think.as_mut() {
            t.issued(self.q.batch.len());
        }
        if B::SYNC {
            return self.issue_sync();
        }
        let t0 = self.clock();
        self.submit_batch(t0)
    }

    /// Stage `self.q.batch` (units already prepared; `t0`: a clock reading
    /// taken after they were, the I/Os' start), commit, read the clock
    /// (their submission instant): slat = t1 − t0.
    #[inline]
    pub(super) fn submit_batch(&mut self, t0: u64) -> Result<(), EngineError> {
        let mut per_dir = [0u64; 3];
        for i in 0..self.q.batch.len() {
            let (u, due) = self.q.batch[i];
            let slot = self.q.free.pop().expect("batch never exceeds free slots");
            self.q.slots[slot as usize] = Slot::issued(&u, t0, 0, due);
            if let Some(w) = self.wlog.as_mut() {
                w.issued(t0, u.file, u.dir.name(), u.offset, u.len);
            }
            self.q.slots[slot as usize].ioprio = self.pick_prio(&u);
            self.overlap_issued(slot, &u);
            self.prepare_data(slot);
            self.q.staged.push(slot);
            per_dir[u.dir as usize] += 1;
            self.queue(slot)?;
        }
        self.backend
            .commit()
            .map_err(|e| self.backend_err("submit", e))?;
        // Completions reaped this turn (`handoff`) are recorded before the
        // reading's interval bookkeeping, as if recorded when reaped.
        let t1 = self.clk.now_ns();
        self.last_ns = t1;
        if self.q.done_len > 0 {
            self.record_done();
        }
        self.rec.tick(t1);
        for &slot in &self.q.staged {
            self.q.slots[slot as usize].times.submit_ns = t1;
        }
        self.q.inflight += self.q.staged.len() as u32;
        self.q.staged.clear();
        for (d, n) in per_dir.into_iter().enumerate() {
            self.rec.submitted(d, n, t1 - t0);
        }
        Ok(())
    }

    /// Synchronous backends: each unit completes inside `queue`.
    fn issue_sync(&mut self) -> Result<(), EngineError> {
        let slot = 0;
        for i in 0..self.q.batch.len() {
            let (u, due) = self.q.batch[i];
            let t0 = self.clock();
            self.q.slots[0] = Slot::issued(&u, t0, t0, due);
            if let Some(w) = self.wlog.as_mut() {
                w.issued(t0, u.file, u.dir.name(), u.offset, u.len);
            }
            self.q.slots[0].ioprio = self.pick_prio(&u);
            self.prepare_data(slot);
            loop {
                let req = self.request(slot);
                // Safety: `request` points into slot 0's buffer, which the
                // worker owns and leaves alone until the call completes it.
                let c = match unsafe { self.backend.queue(&req) } {
                    Ok(Queued::Done(c)) => c,
                    Ok(Queued::Staged) => unreachable!("a SYNC backend completes in queue"),
                    Err(e) => return Err(self.backend_err("queue", e)),
                };
                let t1 = self.clock();
                if !self.complete(c, t1) {
                    break;
                }
            }
            if self.error.is_some() || self.limits.space_full {
                break;
            }
        }
        Ok(())
    }

    /// The request for what remains of `slot`'s I/O.
    #[inline]
    fn request(&self, slot: u32) -> Request {
        let s = &self.q.slots[slot as usize];
        Request {
            slot,
            op: Op::from(s.dir),
            file: s.file,
            offset: s.offset + u64::from(s.done),
            len: s.len - s.done,
            // Safety: done < len ≤ the slot's buffer size, so this stays in the buffer.
            buf: unsafe { self.bufs.slot_ptr(slot).add(s.done as usize) },
            ioprio: self.prio.as_ref().map_or(0, |p| p.request_ioprio(s.ioprio)),
        }
    }

    #[inline]
    fn queue(&mut self, slot: u32) -> Result<(), EngineError> {
        let req = self.request(slot);
        // Safety: the slot's buffer belongs to this request until its
        // completion is reaped: the slot is not reused or freed before then
        // (the worker drains the queue before it drops the buffers).
        match unsafe { self.backend.queue(&req) } {
            Ok(_) => Ok(()),
            Err(e) => Err(self.backend_err("queue", e)),
        }
    }

    /// Reap at least `min` (≥ 1 while anything is in flight) completions.
    pub(super) fn reap(&mut self, min: u32) -> Result<(), EngineError> {
        self.reap_between(min.max(1).min(self.q.inflight), self.p.complete_max)
    }

    /// Take the completions already there, without waiting (offload).
    pub(super) fn reap_ready(&mut self) -> Result<(), EngineError> {
        self.reap_between(0, self.q.inflight)
    }

    fn reap_between(&mut self, min: u32, max: u32) -> Result<(), EngineError> {
        let mut comps = std::mem::take(&mut self.q.comps);
        comps.clear();
        let r = self.backend.reap(min, max, &mut comps);
        let ts = self.clock();
        let out = match r {
            Ok(_) => self.take_completions(&comps, ts),
            Err(e) => Err(self.backend_err("reap", e)),
        };
        self.q.comps = comps;
        out
    }

    /// Account the reaped `comps` seen at `ts`: free their slots, or issue
    /// the rest of a short transfer.
    pub(super) fn take_completions(
        &mut self,
        comps: &[Completion],
        ts: u64,
    ) -> Result<(), EngineError> {
        for &c in comps {
            let ts = self.backend.completed_at(c.slot).unwrap_or(ts);
            if !self.complete(c, ts) {
                self.q.inflight -= 1;
                self.q.free.push(c.slot);
                self.overlap_freed(c.slot);
            } else {
                self.resubmit(c.slot)?;
            }
        }
        Ok(())
    }

    /// Account one completion. Returns true if the I/O was short and must
    /// go on (the slot stays busy).
    #[inline]
    fn complete(&mut self, c: Completion, ts: u64) -> bool {
        let s = &mut self.q.slots[c.slot as usize];
        let left = i64::from(s.len - s.done);
        if c.result >= left {
            let s = *s;
            self.account(c.slot, &s, ts);
            return false;
        }
        if c.result > 0 {
            s.done += c.result as u32;
            return true;
        }
        self.failed(c);
        false
    }

    /// Record the I/O of `slot` (`s`: its state when it completed, the
    /// slot itself may already carry the next I/O) as done at `ts`.
    #[inline(always)]
    pub(super) fn account(&mut self, slot: u32, s: &Slot, ts: u64) {
        let (dir, len, times) = (s.dir, s.len, s.times);
        self.rec
            .completed(dir, u64::from(len), &times, ts, !B::SYNC);
        if self.prio.is_some() || self.iolog.is_some() {
            self.per_io(s, ts);
        }
        // rate_min counts a trim with the writes (its option slot).
        let d = &mut self.limits.done[dir.option_slot()];
        (d.0, d.1) = (d.0 + 1, d.1 + u64::from(len));
        if self.pacing.lat.is_some() {
            self.pacing
                .lat_completed(ts.saturating_sub(times.issue_ns), ts);
        }
        self.data_done(slot, s);
    }

    #[cold]
    fn failed(&mut self, c: Completion) {
        let s = self.q.slots[c.slot as usize];
        if self.space_ran_out(s.dir, c.result) {
            return;
        }
        self.rec.errored(s.dir);
        let path = &self.paths[s.file as usize];
        let len = u64::from(s.len);
        let fatal = self
            .limits
            .errs
            .io_failed(path, s.dir, s.offset, len, c.result);
        if fatal && self.error.is_none() {
            let path = path.clone();
            let e = io_failed(path, s.offset, len, s.dir.name(), c.result);
            self.error = Some(super::prio::explain_denied(e, s.ioprio));
        }
    }

    /// Issue the rest of a short transfer right away.
    #[cold]
    fn resubmit(&mut self, slot: u32) -> Result<(), EngineError> {
        self.queue(slot)?;
        self.backend
            .commit()
            .map_err(|e| self.backend_err("submit", e))?;
        self.q.slots[slot as usize].times.submit_ns = self.clock();
        Ok(())
    }
}

impl Source {
    /// Intended issue time of `u` (0 = whenever: no rate in its direction).
    /// The rate schedule starts when I/O starts (ramp included), so the
    /// pace does not jump when the measured window begins.
    #[inline]
    pub(super) fn due_for(&mut self, u: &IoUnit) -> u64 {
        // read_iolog: the log's schedule (0 with replay_no_stall: whenever).
        match self.gen.replay_due_ns() {
            Some(0) => return 0,
            Some(t) => return self.rate_origin_ns + t,
            None => {}
        }
        match self.rate.as_mut() {
            Some(r) if r.is_limited(u.dir) => self.rate_origin_ns + r.next_due_ns(u.dir, u.len),
            _ => 0,
        }
    }
}

impl Syncs {
    /// Count a write to `file`; true if a sync is due after it.
    #[inline]
    pub(super) fn count_write(&mut self, file: u32, p: &Params) -> bool {
        let f = file as usize;
        self.written[f] = true;
        if p.fsync_every == 0 && p.fdatasync_every == 0 {
            return false;
        }
        self.writes[f] += 1;
        let n = self.writes[f];
        if p.fsync_every > 0 && n.is_multiple_of(p.fsync_every) {
            self.sync_due = Some((file, Op::Fsync));
        } else if p.fdatasync_every > 0 && n.is_multiple_of(p.fdatasync_every) {
            self.sync_due = Some((file, Op::Fdatasync));
        }
        self.sync_due.is_some()
    }
}
