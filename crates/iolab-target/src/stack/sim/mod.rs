//! Simulated disks as backends: `sim-hdd` (hdd_mech + hdd) and `sim-ssd`
//! (ssd + ssd_ftl), each a pure model on a virtual clock ([`SimModel`])
//! served in real time by one [`SimDev`].
//!
//! Data is really stored (a memory or file backend underneath), so reads
//! return what was written; the model only decides *when* each request
//! completes. Every connection shares the device's one model (one
//! timeline, one lock held only to compute), so multi-conn holds. The
//! virtual clock is ns since the device was built; a request arrives at
//! the instant of the call (or later, when a layer above already holds it
//! — a dependent request). A completion known at once becomes the reply's
//! hold time ([`IoCtx::hold_until_at`]); one decided later (sim-hdd's NCQ
//! picks among the commands queued when the disk frees) becomes a ticket
//! the server's timer polls ([`super::ticket`]). No thread sleeps.

pub mod hdd;
pub mod hdd_mech;
#[cfg(test)]
mod hdd_tests;
pub mod ssd;
pub mod ssd_ftl;
#[cfg(test)]
mod ssd_tests;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::ticket::{Completion, Due};
use super::{BlockDev, BlockResult, Caps, Counter, IoCtx};
pub use hdd_mech::Ns;

/// What the model is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimOp {
    Read,
    Write,
    Flush,
    Trim,
}

/// One request to a model: `len` bytes at byte `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimReq {
    pub op: SimOp,
    pub offset: u64,
    pub len: u64,
    pub fua: bool,
}

impl SimReq {
    pub fn new(op: SimOp, offset: u64, len: u64) -> SimReq {
        SimReq {
            op,
            offset,
            len,
            fua: false,
        }
    }
}

/// A device model on a virtual clock (ns). Deterministic: the same
/// submissions at the same times give the same completions.
pub trait SimModel: Send + std::fmt::Debug + 'static {
    /// Queue `r`, arriving at `arrival` (>= `now`, the present); returns its id.
    fn submit(&mut self, now: Ns, arrival: Ns, r: SimReq) -> u64;
    /// Take every decision due by `now`.
    fn advance(&mut self, now: Ns);
    /// The completion time of `id` once decided (then forgotten).
    fn take_done(&mut self, id: u64) -> Option<Ns>;
    /// Nobody waits for `id` any more.
    fn forget(&mut self, id: u64);
    /// When a decision may next be taken (> `now`).
    fn next_event(&self, now: Ns) -> Ns;
    /// The device's own counters, named.
    fn counters(&self) -> Vec<(&'static str, u64)>;
}

/// Run `reqs` one after another (QD 1, each arriving when the previous
/// completes, plus `gap` ns): their completion times. For tests and benches.
pub fn run_qd1(m: &mut dyn SimModel, start: Ns, gap: Ns, reqs: &[SimReq]) -> Vec<Ns> {
    let mut t = start;
    reqs.iter()
        .map(|&r| {
            let id = m.submit(t, t, r);
            let done = loop {
                if let Some(d) = m.take_done(id) {
                    break d;
                }
                let next = m.next_event(t);
                m.advance(next);
                t = next;
            };
            t = done.max(t) + gap;
            done
        })
        .collect()
}

#[derive(Debug)]
struct Shared<M> {
    model: Mutex<M>,
    epoch: Instant,
    /// Requests whose completion is decided, and the sum of their model
    /// service times (completion − arrival): what the client should see,
    /// less the round trip.
    decided: AtomicU64,
    service_ns: AtomicU64,
    /// Wall time spent computing in the model (submits and polls).
    cpu_ns: AtomicU64,
}

impl<M> Shared<M> {
    fn lock(&self) -> MutexGuard<'_, M> {
        self.model.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Count the time since `t0` as model computation.
    fn spent(&self, t0: Instant) {
        self.cpu_ns
            .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    fn ns(&self, t: Instant) -> Ns {
        t.saturating_duration_since(self.epoch).as_nanos() as Ns
    }

    fn instant(&self, ns: Ns) -> Instant {
        self.epoch + Duration::from_nanos(ns)
    }

    /// A request arrived at `arrival` completes at `done`.
    fn decided(&self, arrival: Ns, done: Ns) -> Instant {
        self.decided.fetch_add(1, Ordering::Relaxed);
        self.service_ns
            .fetch_add(done.saturating_sub(arrival), Ordering::Relaxed);
        self.instant(done)
    }
}

/// A completion sim-hdd decides when the disk frees.
#[derive(Debug)]
struct SimTicket<M: SimModel> {
    shared: Arc<Shared<M>>,
    id: u64,
    arrival: Ns,
}

impl<M: SimModel> Completion for SimTicket<M> {
    fn poll(&self, now: Instant) -> Due {
        let s = &self.shared;
        let now_ns = s.ns(now);
        let t0 = Instant::now();
        let mut m = s.lock();
        m.advance(now_ns);
        let due = match m.take_done(self.id) {
            Some(t) => Due::At(s.decided(self.arrival, t)),
            None => Due::Recheck(s.instant(m.next_event(now_ns))),
        };
        drop(m);
        s.spent(t0);
        due
    }
}

impl<M: SimModel> Drop for SimTicket<M> {
    fn drop(&mut self) {
        self.shared.lock().forget(self.id);
    }
}

/// A simulated disk: data in `data`, timing from the model.
#[derive(Debug)]
pub struct SimDev<M: SimModel> {
    kind: &'static str,
    summary: String,
    data: Arc<dyn BlockDev>,
    shared: Arc<Shared<M>>,
}

impl<M: SimModel> SimDev<M> {
    /// `kind` and `summary` name it in `describe` (`sim-hdd(wcache=off)`).
    pub fn new(kind: &'static str, summary: String, model: M, data: Arc<dyn BlockDev>) -> Self {
        SimDev {
            kind,
            summary,
            data,
            shared: Arc::new(Shared {
                model: Mutex::new(model),
                epoch: Instant::now(),
                decided: AtomicU64::new(0),
                service_ns: AtomicU64::new(0),
                cpu_ns: AtomicU64::new(0),
            }),
        }
    }

    /// Time `r` on the model and hold the reply until it completes.
    fn time(&self, ctx: &mut IoCtx, r: SimReq) {
        let s = &self.shared;
        let now = Instant::now();
        let arrival = ctx.hold_until().map_or(now, |h| h.max(now));
        let arrival = s.ns(arrival);
        let mut m = s.lock();
        let id = m.submit(s.ns(now), arrival, r);
        let done = m.take_done(id);
        drop(m);
        s.spent(now);
        match done {
            Some(t) => {
                ctx.hold_until_at(s.decided(arrival, t));
            }
            None => {
                ctx.add_ticket(Arc::new(SimTicket {
                    shared: s.clone(),
                    id,
                    arrival,
                }));
            }
        }
    }
}

impl<M: SimModel> BlockDev for SimDev<M> {
    fn caps(&self) -> Caps {
        let c = self.data.caps();
        Caps {
            can_flush: true,
            can_fua: true,
            can_trim: true,
            can_zero: true,
            // One model and one store behind every connection.
            can_multi_conn: true,
            preferred_block_bytes: c.preferred_block_bytes.max(4096),
            ..c
        }
    }

    fn describe(&self) -> String {
        format!(
            "{}({}) <- {}",
            self.kind,
            self.summary,
            self.data.describe()
        )
    }

    /// The model's own counters, and the model service time it decided
    /// (`model_service_ns` over `model_decided` requests).
    fn counters(&self) -> Vec<Counter> {
        let s = &self.shared;
        let mut v: Vec<Counter> = s
            .lock()
            .counters()
            .into_iter()
            .map(|(name, value)| match name {
                "wa_milli" | "dirty_bytes" => Counter::gauge(name, value),
                _ => Counter::total(name, value),
            })
            .collect();
        v.push(Counter::total(
            "model_decided",
            s.decided.load(Ordering::Relaxed),
        ));
        v.push(Counter::total(
            "model_service_ns",
            s.service_ns.load(Ordering::Relaxed),
        ));
        v.push(Counter::total(
            "model_cpu_ns",
            s.cpu_ns.load(Ordering::Relaxed),
        ));
        v
    }

    fn children(&self) -> Vec<Arc<dyn BlockDev>> {
        vec![self.data.clone()]
    }

    fn read_at(&self, ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        self.data.read_at(ctx, buf, offset)?;
        self.time(ctx, SimReq::new(SimOp::Read, offset, buf.len() as u64));
        Ok(())
    }

    fn write_at(&self, ctx: &mut IoCtx, buf: &[u8], offset: u64, fua: bool) -> BlockResult {
        self.data.write_at(ctx, buf, offset, fua)?;
        let r = SimReq {
            fua,
            ..SimReq::new(SimOp::Write, offset, buf.len() as u64)
        };
        self.time(ctx, r);
        Ok(())
    }

    fn flush(&self, ctx: &mut IoCtx) -> BlockResult {
        if self.data.caps().can_flush {
            self.data.flush(ctx)?;
        }
        self.time(ctx, SimReq::new(SimOp::Flush, 0, 0));
        Ok(())
    }

    fn trim(&self, ctx: &mut IoCtx, offset: u64, len_bytes: u64, fua: bool) -> BlockResult {
        if self.data.caps().can_trim {
            self.data.trim(ctx, offset, len_bytes, fua)?;
        }
        self.time(ctx, SimReq::new(SimOp::Trim, offset, len_bytes));
        Ok(())
    }

    /// Zeroes are written like data (a 2008 disk has no deallocation).
    fn zero(
        &self,
        ctx: &mut IoCtx,
        offset: u64,
        len_bytes: u64,
        may_trim: bool,
        fua: bool,
    ) -> BlockResult {
        self.data.zero(ctx, offset, len_bytes, may_trim, fua)?;
        let r = SimReq {
            fua,
            ..SimReq::new(SimOp::Write, offset, len_bytes)
        };
        self.time(ctx, r);
        Ok(())
    }
}
