//! IO pacing: a shared pool of data buffers that requests must hold while
//! they run (seed 004, SPDK's `NumSharedBuffers` / `BufCacheSize`).
//!
//! Parameters ([`PacingParams`]): `buffers` (B, the pool size), `cache` (C,
//! buffers each worker keeps for itself), `unit_bytes` (the size of one
//! buffer; a request of L bytes holds `ceil(L / unit)` buffers, at least
//! one) and `export_limit` (optional: most buffers one export may hold).
//!
//! A *worker* is one connection: its reader thread is where a request asks
//! for buffers (before its WRITE payload is read), just as an SPDK poller
//! thread allocates for the qpairs it owns. On release a buffer goes back
//! to the releasing worker's cache (up to C) when nobody waits, otherwise
//! to the shared pool.
//!
//! When no buffer is free a request joins a FIFO pending queue and is woken
//! by any release. Waiters are served in arrival order; a waiter whose
//! export is at its limit is skipped (it cannot run anyway, and must not
//! hold back other exports — that is what the limit is for).
//!
//! Seed 004 reports a hang with a cache of 0 at deep queue depth: in SPDK
//! pending requests are retried only when the *same thread* releases a
//! buffer, and buffers sitting in other threads' caches are invisible.
//! Here a waiter is woken by any release, and when the shared pool is empty
//! it takes buffers from other workers' caches (counted as `steals`), so a
//! request waits only while all B buffers are held by requests in flight,
//! which finish. A request needing more buffers than it could ever hold
//! (more than B, or than the export limit) is refused, never queued.
//!
//! Buffers are tokens: the memory itself comes from the connection's
//! [`crate::buf::BufCache`]; the pool bounds how many a request may use at
//! once, which is the effect being studied (a bound on data in flight).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use iolab_core::hist::LatHist;
use serde::{Deserialize, Serialize};

/// Pool parameters, as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacingParams {
    /// Buffers in the shared pool (B).
    pub buffers: usize,
    /// Buffers each worker (connection) keeps for reuse (C).
    pub cache: usize,
    /// Size of one buffer, bytes.
    pub unit_bytes: usize,
    /// Most buffers one export may hold at once; `None`: no limit.
    pub export_limit: Option<usize>,
}

impl PacingParams {
    /// Check the parameters; the error names the offending key.
    pub fn validate(&self) -> Result<(), String> {
        if self.buffers == 0 {
            return Err("pacing.buffers must be at least 1".into());
        }
        if self.unit_bytes == 0 || !self.unit_bytes.is_multiple_of(512) {
            return Err(format!(
                "pacing.unit must be a positive multiple of 512 bytes, got {}",
                self.unit_bytes
            ));
        }
        if self.cache > self.buffers {
            return Err(format!(
                "pacing.cache ({}) cannot exceed pacing.buffers ({})",
                self.cache, self.buffers
            ));
        }
        match self.export_limit {
            Some(0) => Err("pacing.export_limit must be at least 1 (omit it for no limit)".into()),
            Some(l) if l > self.buffers => Err(format!(
                "pacing.export_limit ({l}) cannot exceed pacing.buffers ({})",
                self.buffers
            )),
            _ => Ok(()),
        }
    }

    /// Buffers a request of `len_bytes` holds.
    pub fn units_for(&self, len_bytes: usize) -> usize {
        len_bytes.div_ceil(self.unit_bytes).max(1)
    }

    /// Largest request that can ever get its buffers, bytes.
    pub fn max_request_bytes(&self) -> u64 {
        (self.unit_bytes as u64).saturating_mul(self.max_units() as u64)
    }

    /// Most buffers one request may hold.
    fn max_units(&self) -> usize {
        self.export_limit.unwrap_or(self.buffers).min(self.buffers)
    }
}

/// A request that could never get its buffers.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("request needs {units} pacing buffers of {unit_bytes} bytes, more than the {max} one request may hold")]
pub struct TooLarge {
    pub units: usize,
    pub unit_bytes: usize,
    pub max: usize,
}

/// Pacing state, as served with the stats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PacingSnapshot {
    pub params: PacingParams,
    /// Buffers held by requests now.
    pub in_use: usize,
    /// Most buffers held at once since the last reset.
    pub in_use_max: usize,
    /// Requests waiting for buffers now.
    pub pending: usize,
    /// Longest pending queue since the last reset.
    pub pending_max: usize,
    /// Buffers sitting in workers' caches now.
    pub cached: usize,
    /// Requests granted since the last reset.
    pub grants: u64,
    /// Buffers taken from another worker's cache (where SPDK would wait).
    pub steals: u64,
    /// Requests refused because they need more buffers than allowed.
    pub refused: u64,
    /// Time requests waited for buffers (0 for those that did not wait).
    pub wait_ns: LatHist,
}

struct Waiter {
    ticket: u64,
    export: usize,
    units: usize,
}

#[derive(Default)]
struct State {
    free: usize,
    caches: HashMap<u64, usize>,
    in_use: usize,
    per_export: HashMap<usize, usize>,
    queue: VecDeque<Waiter>,
    next_ticket: u64,
    in_use_max: usize,
    pending_max: usize,
    grants: u64,
    steals: u64,
    refused: u64,
    wait_ns: LatHist,
}

/// The shared buffer pool.
pub struct Pacer {
    params: PacingParams,
    state: Mutex<State>,
    released: Condvar,
}

impl std::fmt::Debug for Pacer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pacer({:?})", self.params)
    }
}

/// Buffers held by one request; given back when dropped.
#[derive(Debug)]
pub struct Grant {
    pacer: Arc<Pacer>,
    worker: u64,
    export: usize,
    units: usize,
}

impl Grant {
    /// Buffers held.
    pub fn units(&self) -> usize {
        self.units
    }
}

impl Drop for Grant {
    fn drop(&mut self) {
        self.pacer.release(self.worker, self.export, self.units);
    }
}

impl Pacer {
    /// A pool with every buffer free; `params` must have been validated.
    pub fn new(params: PacingParams) -> Arc<Pacer> {
        let state = State {
            free: params.buffers,
            ..State::default()
        };
        Arc::new(Pacer {
            params,
            state: Mutex::new(state),
            released: Condvar::new(),
        })
    }

    pub fn params(&self) -> &PacingParams {
        &self.params
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hold buffers for a request of `len_bytes` on `export`, issued by
    /// `worker`; waits (FIFO) while none are free.
    pub fn acquire(
        self: &Arc<Self>,
        worker: u64,
        export: usize,
        len_bytes: usize,
    ) -> Result<Grant, TooLarge> {
        let units = self.params.units_for(len_bytes);
        let max = self.params.max_units();
        let mut st = self.lock();
        if units > max {
            st.refused += 1;
            let unit_bytes = self.params.unit_bytes;
            return Err(TooLarge {
                units,
                unit_bytes,
                max,
            });
        }
        let t0 = Instant::now();
        if st.queue.is_empty() && self.fits(&st, export, units) {
            self.take(&mut st, worker, export, units, 0);
        } else {
            let ticket = st.next_ticket;
            st.next_ticket += 1;
            st.queue.push_back(Waiter {
                ticket,
                export,
                units,
            });
            st.pending_max = st.pending_max.max(st.queue.len());
            while !self.my_turn(&st, ticket) {
                st = self
                    .released
                    .wait(st)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            st.queue.retain(|w| w.ticket != ticket);
            let waited_ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
            self.take(&mut st, worker, export, units, waited_ns);
            // Another waiter (of another export) may fit now too.
            self.released.notify_all();
        }
        Ok(Grant {
            pacer: self.clone(),
            worker,
            export,
            units,
        })
    }

    /// Whether `units` more buffers for `export` fit now (every buffer not
    /// held by a request counts, cached ones included: see the module doc).
    fn fits(&self, st: &State, export: usize, units: usize) -> bool {
        let held = st.per_export.get(&export).copied().unwrap_or(0);
        let under_limit = self.params.export_limit.is_none_or(|l| held + units <= l);
        under_limit && st.in_use + units <= self.params.buffers
    }

    fn export_ok(&self, st: &State, w: &Waiter) -> bool {
        let held = st.per_export.get(&w.export).copied().unwrap_or(0);
        self.params.export_limit.is_none_or(|l| held + w.units <= l)
    }

    /// The waiter `ticket` may go: it fits, and no earlier waiter that its
    /// export limit allows to run is still waiting.
    fn my_turn(&self, st: &State, ticket: u64) -> bool {
        for w in &st.queue {
            if w.ticket == ticket {
                return self.fits(st, w.export, w.units);
            }
            if self.export_ok(st, w) {
                return false;
            }
        }
        unreachable!("a waiter stays queued until it leaves")
    }

    /// Move `units` buffers to a request: own cache first, then the shared
    /// pool, then other workers' caches.
    fn take(&self, st: &mut State, worker: u64, export: usize, units: usize, waited_ns: u64) {
        let mut need = units;
        let own = st.caches.entry(worker).or_insert(0);
        let n = need.min(*own);
        *own -= n;
        need -= n;
        let n = need.min(st.free);
        st.free -= n;
        need -= n;
        for c in st.caches.values_mut() {
            let n = need.min(*c);
            *c -= n;
            need -= n;
            st.steals += n as u64;
        }
        assert_eq!(need, 0, "fits() checked that enough buffers are not in use");
        st.in_use += units;
        *st.per_export.entry(export).or_insert(0) += units;
        st.in_use_max = st.in_use_max.max(st.in_use);
        st.grants += 1;
        st.wait_ns.record(waited_ns);
    }

    fn release(&self, worker: u64, export: usize, units: usize) {
        let mut st = self.lock();
        st.in_use -= units;
        if let Some(h) = st.per_export.get_mut(&export) {
            *h -= units;
        }
        // Keep buffers for this worker only when nobody waits for them.
        let to_cache = if st.queue.is_empty() {
            let c = st.caches.get(&worker).copied().unwrap_or(0);
            units.min(self.params.cache.saturating_sub(c))
        } else {
            0
        };
        *st.caches.entry(worker).or_insert(0) += to_cache;
        st.free += units - to_cache;
        if !st.queue.is_empty() {
            self.released.notify_all();
        }
    }

    /// A worker is gone: its cached buffers return to the shared pool.
    pub fn retire(&self, worker: u64) {
        let mut st = self.lock();
        if let Some(c) = st.caches.remove(&worker) {
            st.free += c;
        }
        if !st.queue.is_empty() {
            self.released.notify_all();
        }
    }

    /// The current state; with `reset`, counters, maxima and the wait
    /// histogram restart from now, in the same critical section.
    pub fn snapshot(&self, reset: bool) -> PacingSnapshot {
        let mut st = self.lock();
        let snap = PacingSnapshot {
            params: self.params,
            in_use: st.in_use,
            in_use_max: st.in_use_max,
            pending: st.queue.len(),
            pending_max: st.pending_max,
            cached: st.caches.values().sum(),
            grants: st.grants,
            steals: st.steals,
            refused: st.refused,
            wait_ns: st.wait_ns.clone(),
        };
        if reset {
            st.in_use_max = st.in_use;
            st.pending_max = st.queue.len();
            st.grants = 0;
            st.steals = 0;
            st.refused = 0;
            st.wait_ns.reset();
        }
        snap
    }
}

#[cfg(test)]
mod tests;
