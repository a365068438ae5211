//! The real-time side of the simulated disks: [`SimDev`] serves a model
//! (sim-hdd, sim-ssd) as a block device.
//!
//! One model per device behind one mutex, held only to compute. A request
//! is submitted at the instant of its call; a completion known at once is
//! the reply's hold time, one decided later is a [`Completion`] ticket the
//! connection's timer polls. Polls are cheap: the device publishes (in
//! atomics) each ticket's decided completion and the next instant it will
//! decide anything, so a poll before that instant takes no lock, and the
//! first poll after it advances the model for everyone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use super::{Ns, SimModel, SimOp, SimReq};
use crate::stack::clock;
use crate::stack::ticket::{Completion, Due};
use crate::stack::{BlockDev, BlockResult, Caps, Counter, IoCtx, ZeroReq};

/// A ticket's completion: 0 while undecided, else the instant in ns + 1.
type Slot = AtomicU64;

#[derive(Debug)]
struct Inner<M> {
    m: M,
    /// Tickets still waiting for a decision.
    slots: HashMap<u64, Arc<Slot>>,
}

#[derive(Debug)]
struct Shared<M> {
    inner: Mutex<Inner<M>>,
    /// The model's time zero: the arrival of the first request. The model's
    /// state that depends on absolute time (the platters' rotational phase)
    /// then depends only on the requests' arrivals relative to each other,
    /// so the same seed and arrival pattern give the same completions —
    /// whenever the device was built and whenever the first request came.
    epoch: OnceLock<Instant>,
    /// When the model next decides anything (ns).
    next_decision: AtomicU64,
    /// Requests whose completion is decided, and the sum of their model
    /// service times (completion − arrival): what a client should see,
    /// less the round trip.
    decided: AtomicU64,
    service_ns: AtomicU64,
    /// Wall time spent computing in the model (submits and polls; lock
    /// waits included).
    cpu_ns: AtomicU64,
}

impl<M: SimModel> Shared<M> {
    fn lock(&self) -> MutexGuard<'_, Inner<M>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn spent(&self, t0: Instant) {
        self.cpu_ns
            .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// Time zero; set by the first request's arrival (see `epoch`).
    fn epoch(&self, first_arrival: Instant) -> Instant {
        *self.epoch.get_or_init(|| first_arrival)
    }

    fn ns(&self, t: Instant) -> Ns {
        t.saturating_duration_since(self.epoch(t)).as_nanos() as Ns
    }

    fn instant(&self, ns: Ns) -> Instant {
        self.epoch(clock::now()) + Duration::from_nanos(ns)
    }

    /// A request that arrived at `arrival` completes at `done`.
    fn decided(&self, arrival: Ns, done: Ns) -> Instant {
        self.decided.fetch_add(1, Ordering::Relaxed);
        self.service_ns
            .fetch_add(done.saturating_sub(arrival), Ordering::Relaxed);
        self.instant(done)
    }

    /// Hand the model's new decisions to their tickets; note when it next decides.
    fn publish(&self, g: &mut Inner<M>, now: Ns) {
        let Inner { m, slots } = g;
        m.drain_done(&mut |id, t| {
            if let Some(s) = slots.remove(&id) {
                s.store(t + 1, Ordering::Release);
            }
        });
        self.next_decision
            .store(m.next_event(now), Ordering::Release);
    }
}

/// A completion sim-hdd decides when the disk frees.
#[derive(Debug)]
struct SimTicket<M: SimModel> {
    shared: Arc<Shared<M>>,
    id: u64,
    arrival: Ns,
    slot: Arc<Slot>,
}

impl<M: SimModel> SimTicket<M> {
    fn decided(&self) -> Option<Due> {
        match self.slot.load(Ordering::Acquire) {
            0 => None,
            t => Some(Due::At(self.shared.decided(self.arrival, t - 1))),
        }
    }
}

impl<M: SimModel> Completion for SimTicket<M> {
    fn poll(&self, now: Instant) -> Due {
        if let Some(d) = self.decided() {
            return d;
        }
        let s = &self.shared;
        let now_ns = s.ns(now);
        let next = s.next_decision.load(Ordering::Acquire);
        if now_ns < next {
            return Due::Recheck(s.instant(next));
        }
        let t0 = Instant::now();
        let mut g = s.lock();
        g.m.advance(now_ns);
        s.publish(&mut g, now_ns);
        drop(g);
        s.spent(t0);
        self.decided()
            .unwrap_or_else(|| Due::Recheck(s.instant(s.next_decision.load(Ordering::Acquire))))
    }
}

impl<M: SimModel> Drop for SimTicket<M> {
    fn drop(&mut self) {
        // Decided: the model and the slot table have forgotten it already.
        if self.slot.load(Ordering::Acquire) != 0 {
            return;
        }
        let mut g = self.shared.lock();
        g.slots.remove(&self.id);
        g.m.forget(self.id);
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
                inner: Mutex::new(Inner {
                    m: model,
                    slots: HashMap::new(),
                }),
                epoch: OnceLock::new(),
                next_decision: AtomicU64::new(0),
                decided: AtomicU64::new(0),
                service_ns: AtomicU64::new(0),
                cpu_ns: AtomicU64::new(0),
            }),
        }
    }

    /// Time `r` on the model and hold the reply until it completes.
    fn time(&self, ctx: &mut IoCtx, r: SimReq) {
        let s = &self.shared;
        let t0 = Instant::now();
        let now = clock::now();
        let at = ctx.hold_until().map_or(now, |h| h.max(now));
        s.epoch(at);
        let arrival = s.ns(at);
        let now_ns = s.ns(now);
        let mut g = s.lock();
        let id = g.m.submit(now_ns, arrival, r);
        let done = g.m.take_done(id);
        let slot = done.is_none().then(|| {
            let slot = Arc::new(Slot::new(0));
            g.slots.insert(id, slot.clone());
            slot
        });
        s.publish(&mut g, now_ns);
        drop(g);
        s.spent(t0);
        match (done, slot) {
            (Some(t), _) => ctx.hold_until_at(s.decided(arrival, t)),
            (None, Some(slot)) => ctx.add_ticket(Arc::new(SimTicket {
                shared: s.clone(),
                id,
                arrival,
                slot,
            })),
            (None, None) => unreachable!("a slot is made for every undecided request"),
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
            .m
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
    fn zero(&self, ctx: &mut IoCtx, z: ZeroReq) -> BlockResult {
        self.data.zero(ctx, z)?;
        let r = SimReq {
            fua: z.fua,
            ..SimReq::new(SimOp::Write, z.offset, z.len_bytes)
        };
        self.time(ctx, r);
        Ok(())
    }
}
