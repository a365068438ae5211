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
//! **SPDK's retry rule** (`retry = "same"`, [`Retry::Same`]), for the
//! seed's starvation: buffers belong to *groups* (`groups`, SPDK's poll
//! groups: connection `i` is in group `i mod groups`; 0 gives every
//! connection its own), a release returns buffers to the releasing group's
//! cache first (up to C) whoever waits, and then retries that group's
//! pending requests, in order, on the spot — and no other group's. A new
//! request of a group with nobody pending takes from its group's cache,
//! then the shared pool; other groups' caches are invisible (no steals).
//! So a group whose requests all wait while none of its own are in flight
//! is never retried: it starves for good, as the seed's test 8 (cache 0,
//! QD ≥ 128) hung. With `groups`, each group's cache is filled from the
//! pool when the pool is made (SPDK fills each thread's cache at start), so
//! a group with a cache always has buffers of its own coming back. The snapshot lists every waiting request (connection,
//! group, export, buffers, how long), and [`Pacer::close`] (at shutdown)
//! ends the waits, so a starved point can always be ended.
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
    /// Cache groups (SPDK poll groups): connection `i` is in group
    /// `i mod groups`; 0: every connection is its own group.
    #[serde(default)]
    pub groups: usize,
    /// Which releases retry a pending request (see the module doc).
    #[serde(default)]
    pub retry: Retry,
}

/// Which releases retry a pending request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Retry {
    /// Any release, and buffers cached by other groups may be taken:
    /// a request waits only while all buffers are held by running requests.
    #[default]
    Any,
    /// Only a release by the request's own group, which retries its
    /// group's pending requests at once (SPDK's rule); no steals.
    Same,
}

impl Retry {
    pub fn parse(s: &str) -> Result<Retry, String> {
        match s {
            "any" => Ok(Retry::Any),
            "same" => Ok(Retry::Same),
            _ => Err(format!("must be any or same, got '{s}'")),
        }
    }
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

/// Why a request got no buffers.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AcquireError {
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
    /// The pool was closed (the server is stopping) while the request waited.
    #[error("the pacing pool closed while the request waited for buffers")]
    Closed,
}

/// A request waiting for buffers now, as the snapshot lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingRequest {
    /// The connection (server connection id) that asked.
    pub conn: u64,
    /// Its cache group.
    pub group: u64,
    /// The export's index in the server's export list.
    pub export: usize,
    /// Buffers it needs.
    pub units: usize,
    /// How long it has waited so far, ns.
    pub waited_ns: u64,
    /// Buffers its group holds in its cache now.
    pub group_cached: usize,
    /// Buffers its group's requests hold now (0: nothing of the group
    /// runs, so under retry = same nothing will retry it).
    pub group_in_use: usize,
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
    /// Every request waiting now, in arrival order.
    #[serde(default)]
    pub waiting: Vec<WaitingRequest>,
    /// Buffers free in the shared pool now.
    #[serde(default)]
    pub free: usize,
}

struct Waiter {
    ticket: u64,
    export: usize,
    units: usize,
    conn: u64,
    group: u64,
    since: Instant,
    /// Buffers already moved to it (retry = same: by its group's release).
    granted: bool,
}

#[derive(Default)]
struct State {
    free: usize,
    /// Buffers cached, per group.
    caches: HashMap<u64, usize>,
    in_use: usize,
    per_export: HashMap<usize, usize>,
    /// Buffers held by running requests, per group.
    per_group: HashMap<u64, usize>,
    closed: bool,
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
    group: u64,
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
        self.pacer.release(self.group, self.export, self.units);
    }
}

impl Pacer {
    /// A pool with every buffer free; `params` must have been validated.
    pub fn new(params: PacingParams) -> Arc<Pacer> {
        let mut state = State {
            free: params.buffers,
            ..State::default()
        };
        // With groups (SPDK's threads), each group fills its cache from the
        // pool at start, in group order, while buffers last.
        for g in 0..params.groups as u64 {
            let n = params.cache.min(state.free);
            state.free -= n;
            state.caches.insert(g, n);
        }
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

    /// The cache group of connection `worker`.
    pub fn group_of(&self, worker: u64) -> u64 {
        match self.params.groups {
            0 => worker,
            g => worker % g as u64,
        }
    }

    /// Hold buffers for a request of `len_bytes` on `export`, issued by
    /// connection `worker`; waits (FIFO) while none are free.
    pub fn acquire(
        self: &Arc<Self>,
        worker: u64,
        export: usize,
        len_bytes: usize,
    ) -> Result<Grant, AcquireError> {
        let units = self.params.units_for(len_bytes);
        let max = self.params.max_units();
        let group = self.group_of(worker);
        let same = self.params.retry == Retry::Same;
        let mut st = self.lock();
        if units > max {
            st.refused += 1;
            let unit_bytes = self.params.unit_bytes;
            return Err(TooLarge {
                units,
                unit_bytes,
                max,
            }
            .into());
        }
        let t0 = Instant::now();
        let go_now = if same {
            !st.queue.iter().any(|w| w.group == group) && self.fits_same(&st, group, export, units)
        } else {
            st.queue.is_empty() && self.fits(&st, export, units)
        };
        if go_now {
            self.take(&mut st, group, export, units, 0);
        } else {
            let ticket = st.next_ticket;
            st.next_ticket += 1;
            st.queue.push_back(Waiter {
                ticket,
                export,
                units,
                conn: worker,
                group,
                since: t0,
                granted: false,
            });
            st.pending_max = st.pending_max.max(st.queue.len());
            loop {
                let ready = if same {
                    st.queue.iter().any(|w| w.ticket == ticket && w.granted)
                } else {
                    self.my_turn(&st, ticket)
                };
                if ready {
                    // (Granted buffers are held by this request from here,
                    // closed or not: its Grant gives them back.)
                    break;
                }
                if st.closed {
                    st.queue.retain(|w| w.ticket != ticket);
                    return Err(AcquireError::Closed);
                }
                st = self
                    .released
                    .wait(st)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            st.queue.retain(|w| w.ticket != ticket);
            let waited_ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
            if same {
                // Its group's release moved the buffers already.
                st.wait_ns.record(waited_ns);
            } else {
                self.take(&mut st, group, export, units, waited_ns);
                // Another waiter (of another export) may fit now too.
                self.released.notify_all();
            }
        }
        Ok(Grant {
            pacer: self.clone(),
            group,
            export,
            units,
        })
    }

    /// retry = same: `units` more buffers for `export` fit from `group`'s
    /// own cache and the shared pool (other groups' caches are invisible).
    fn fits_same(&self, st: &State, group: u64, export: usize, units: usize) -> bool {
        let held = st.per_export.get(&export).copied().unwrap_or(0);
        let under_limit = self.params.export_limit.is_none_or(|l| held + units <= l);
        let own = st.caches.get(&group).copied().unwrap_or(0);
        under_limit && own + st.free >= units
    }

    /// Close the pool: every waiting request returns [`AcquireError::Closed`]
    /// (the server is stopping; a starved request must not hold it up).
    pub fn close(&self) {
        self.lock().closed = true;
        self.released.notify_all();
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
    fn take(&self, st: &mut State, group: u64, export: usize, units: usize, waited_ns: u64) {
        let mut need = units;
        let own = st.caches.entry(group).or_insert(0);
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
        *st.per_group.entry(group).or_insert(0) += units;
        st.in_use_max = st.in_use_max.max(st.in_use);
        st.grants += 1;
        st.wait_ns.record(waited_ns);
    }

    fn release(&self, group: u64, export: usize, units: usize) {
        let mut st = self.lock();
        st.in_use -= units;
        if let Some(h) = st.per_export.get_mut(&export) {
            *h -= units;
        }
        if let Some(h) = st.per_group.get_mut(&group) {
            *h -= units;
        }
        let same = self.params.retry == Retry::Same;
        // Keep buffers for this group only when nobody waits for them
        // (retry = same: always, as SPDK does).
        let to_cache = if same || st.queue.is_empty() {
            let c = st.caches.get(&group).copied().unwrap_or(0);
            units.min(self.params.cache.saturating_sub(c))
        } else {
            0
        };
        *st.caches.entry(group).or_insert(0) += to_cache;
        st.free += units - to_cache;
        if same {
            self.retry_group(&mut st, group);
        }
        if !st.queue.is_empty() {
            self.released.notify_all();
        }
    }

    /// retry = same: hand buffers to `group`'s pending requests in order,
    /// as many as fit (SPDK retries its pending queue on the releasing thread).
    fn retry_group(&self, st: &mut State, group: u64) {
        let mut i = 0;
        while i < st.queue.len() {
            let w = &st.queue[i];
            if w.group == group && !w.granted {
                let (export, units) = (w.export, w.units);
                if !self.fits_same(st, group, export, units) {
                    break;
                }
                self.take_unrecorded(st, group, export, units);
                st.queue[i].granted = true;
            }
            i += 1;
        }
    }

    /// [`Self::take`] without recording the wait (the waiter records it).
    fn take_unrecorded(&self, st: &mut State, group: u64, export: usize, units: usize) {
        let own = st.caches.entry(group).or_insert(0);
        let n = units.min(*own);
        *own -= n;
        st.free -= units - n;
        st.in_use += units;
        *st.per_export.entry(export).or_insert(0) += units;
        *st.per_group.entry(group).or_insert(0) += units;
        st.in_use_max = st.in_use_max.max(st.in_use);
        st.grants += 1;
    }

    /// A worker is gone: its cached buffers return to the shared pool.
    /// (With `groups`, a group outlives its connections: its cache stays.)
    pub fn retire(&self, worker: u64) {
        let mut st = self.lock();
        if self.params.groups == 0 {
            if let Some(c) = st.caches.remove(&worker) {
                st.free += c;
            }
        }
        if !st.queue.is_empty() {
            self.released.notify_all();
        }
    }

    /// The current state; with `reset`, counters, maxima and the wait
    /// histogram restart from now, in the same critical section.
    pub fn snapshot(&self, reset: bool) -> PacingSnapshot {
        let mut st = self.lock();
        let now = Instant::now();
        let waiting = st
            .queue
            .iter()
            .filter(|w| !w.granted)
            .map(|w| WaitingRequest {
                conn: w.conn,
                group: w.group,
                export: w.export,
                units: w.units,
                waited_ns: u64::try_from(now.duration_since(w.since).as_nanos())
                    .unwrap_or(u64::MAX),
                group_cached: st.caches.get(&w.group).copied().unwrap_or(0),
                group_in_use: st.per_group.get(&w.group).copied().unwrap_or(0),
            })
            .collect();
        let snap = PacingSnapshot {
            waiting,
            free: st.free,
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
