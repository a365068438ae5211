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

mod dev;
pub mod hdd;
pub mod hdd_mech;
#[cfg(test)]
mod hdd_tests;
pub mod ssd;
pub mod ssd_ftl;
#[cfg(test)]
mod ssd_tests;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub use dev::SimDev;
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
    /// The completions decided and not yet taken.
    fn decided(&mut self) -> &mut Decided;
    /// The completion time of `id` once decided (then forgotten).
    fn take_done(&mut self, id: u64) -> Option<Ns> {
        self.decided().take(id)
    }
    /// Hand every decided completion to `f` (and forget them).
    fn drain_done(&mut self, f: &mut dyn FnMut(u64, Ns)) {
        self.decided().drain(f);
    }
    /// Nobody waits for `id` any more.
    fn forget(&mut self, id: u64) {
        self.decided().take(id);
    }
    /// When a decision may next be taken (> `now`).
    fn next_event(&self, now: Ns) -> Ns;
    /// The device's own counters, named.
    fn counters(&self) -> Vec<(&'static str, u64)>;
}

/// Completions decided and not yet taken: few at a time (they are taken
/// or drained right after each decision), so a list beats a hash map.
#[derive(Debug, Default)]
pub struct Decided(Vec<(u64, Ns)>);

impl Decided {
    pub fn insert(&mut self, id: u64, t: Ns) {
        self.0.push((id, t));
    }

    pub fn take(&mut self, id: u64) -> Option<Ns> {
        let i = self.0.iter().position(|&(d, _)| d == id)?;
        Some(self.0.swap_remove(i).1)
    }

    pub fn drain(&mut self, f: &mut dyn FnMut(u64, Ns)) {
        for (id, t) in self.0.drain(..) {
            f(id, t);
        }
    }
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

/// SplitMix64: reproducible offsets for tests and benches.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A `align`-aligned offset for `len` bytes in `size`.
    pub fn offset(&mut self, size: u64, len: u64, align: u64) -> u64 {
        (self.next_u64() % ((size - len) / align)) * align
    }
}

/// A closed loop on the virtual clock: `qd` requests outstanding, each
/// replaced when it completes. Returns (latencies in ns, end time).
pub fn closed_loop(
    m: &mut dyn SimModel,
    qd: usize,
    n: usize,
    gen: impl FnMut() -> SimReq,
) -> (Vec<Ns>, Ns) {
    closed_loop_at(m, 0, qd, n, gen)
}

/// [`closed_loop`] starting at `t0`; returns the end time.
pub fn closed_loop_at(
    m: &mut dyn SimModel,
    t0: Ns,
    qd: usize,
    n: usize,
    mut gen: impl FnMut() -> SimReq,
) -> (Vec<Ns>, Ns) {
    let mut t: Ns = t0;
    let mut pending: Vec<(u64, Ns)> = Vec::new();
    let mut known = BinaryHeap::new();
    let mut lats = Vec::with_capacity(n);
    let mut issued = 0;
    while issued < qd.min(n) {
        pending.push((m.submit(t, t, gen()), t));
        issued += 1;
    }
    while lats.len() < n {
        pending.retain(|&(id, a)| match m.take_done(id) {
            Some(d) => {
                known.push(Reverse((d, a)));
                false
            }
            None => true,
        });
        let next_ev = if pending.is_empty() {
            Ns::MAX
        } else {
            m.next_event(t)
        };
        match known.peek() {
            Some(&Reverse((c, a))) if c <= next_ev => {
                known.pop();
                t = t.max(c);
                lats.push(c - a);
                if issued < n {
                    pending.push((m.submit(t, t, gen()), t));
                    issued += 1;
                }
            }
            _ => {
                t = next_ev;
                m.advance(t);
            }
        }
    }
    (lats, t)
}
