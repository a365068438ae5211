//! cache: a RAID controller's cache — read-ahead, write-back or
//! write-through, flush on FLUSH/FUA, a dirty high-water mark and destage.
//!
//! A [`super::Layer`] (cache/io.rs): it writes its own data operations and
//! forwards its caps and the stack's walk to the device beneath.
//!
//! Parameters:
//! - `size` (default 256m, the workbook controller's): bytes of cache; it
//!   bounds the read-ahead lines and, separately, the dirty data plus the
//!   data being destaged;
//! - `write` = `back` | `through` (default `back`): `back` acknowledges a
//!   write once it is in the cache; `through` once the device below has it;
//! - `read` = `none` | `ahead` | `adaptive` (default `none`): `ahead` reads
//!   ahead of every read, `adaptive` once two reads in a row were
//!   sequential (the second began where the first ended);
//! - `ahead` (default 4m): how far read-ahead keeps ahead of the reader,
//!   refilled an eighth at a time;
//! - `high_water` (default 50%): dirty share of `size` above which the
//!   oldest dirty extents are destaged (down to half of it);
//! - `stripe` (default: the full stripe of a raid directly beneath, else
//!   1m): dirty data is destaged as soon as it fills an aligned stripe, so
//!   a RAID 5 below sees full-stripe writes and no reads;
//! - `hit`, `hit_rate` (defaults 12us, 352MiB/s): the cost of moving a
//!   request between host and cache, `hit + bytes / hit_rate`;
//! - `miss` (default 0): the firmware's cost before a request goes below.
//!
//! `hit`, `hit_rate` and `miss` are fitted controller constants (see
//! docs/raid-lab.md), not physics. Timing: a hit is held until its lines
//! have arrived (read-ahead in flight) and then for the hit cost; a miss
//! and a write-through write start below `miss` after arrival; a
//! write-through write ends with the device below, a read miss's data is
//! then forwarded to the host over the same data path as a hit's, 64 KiB
//! at a time as it arrives (store and forward: cache/io.rs). A write-back write is held for the hit cost, and
//! longer only when the cache is full: until enough destages complete.
//! Destages start at once and are not waited for (the member timelines
//! carry them, so later misses queue behind them). FLUSH destages all and
//! ends when every destage and the flush below have completed; a FUA
//! write destages what it touches with FUA and waits for it.
//!
//! Data: dirty data lives in the cache as merged extents and is laid over
//! every read, read-ahead lines are kept up to date by writes, so reads
//! always return the newest data. One lock guards the state, including
//! the calls below it (they compute completion times, they never wait).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::raid::ticket_of;
use super::ticket::{Completion, Due};
use super::{fmt_bytes, BlockDev, BlockResult, Counter, IoCtx};

/// Read-ahead line size.
const LINE: u64 = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritePolicy {
    Back,
    Through,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPolicy {
    None,
    Ahead,
    Adaptive,
}

/// Cache settings.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheParams {
    pub size_bytes: u64,
    pub write: WritePolicy,
    pub read: ReadPolicy,
    pub ahead_bytes: u64,
    pub high_water: f64,
    pub stripe_bytes: Option<u64>,
    pub hit: Duration,
    pub hit_bytes_per_s: u64,
    pub miss: Duration,
}

impl Default for CacheParams {
    fn default() -> Self {
        CacheParams {
            size_bytes: 256 << 20,
            write: WritePolicy::Back,
            read: ReadPolicy::None,
            ahead_bytes: 4 << 20,
            high_water: 0.5,
            stripe_bytes: None,
            hit: Duration::from_micros(12),
            hit_bytes_per_s: 352 << 20,
            miss: Duration::ZERO,
        }
    }
}

#[derive(Debug)]
struct Line {
    data: Box<[u8]>,
    ready_at: Option<Instant>,
    /// The fetch's completion when the disks decide it later.
    ready_ticket: Option<Arc<dyn Completion>>,
}

/// A destage in flight: its completion known so far, its bytes, and its
/// ticket while the disks have not decided it.
#[derive(Debug)]
struct Destage {
    done: Instant,
    bytes: u64,
    ticket: Option<Arc<dyn Completion>>,
}

impl Destage {
    /// Whether it has completed by `now` (deciding its ticket if it can).
    fn complete(&mut self, now: Instant) -> bool {
        if let Some(t) = &self.ticket {
            match t.poll(now) {
                Due::At(at) => {
                    self.done = self.done.max(at);
                    self.ticket = None;
                }
                Due::Recheck(_) => return false,
            }
        }
        self.done <= now
    }
}

#[derive(Debug)]
struct Extent {
    data: Vec<u8>,
    /// Insertion order (the oldest is destaged first).
    tick: u64,
}

#[derive(Debug, Default)]
struct State {
    lines: HashMap<u64, Line>,
    fifo: VecDeque<u64>,
    dirty: BTreeMap<u64, Extent>,
    dirty_bytes: u64,
    /// Destages not known to be complete.
    inflight: Vec<Destage>,
    last_end: u64,
    seq_run: u32,
    fetched_end: u64,
    tick: u64,
    /// The arrival of the request being served: the cache's present (a
    /// request a layer above already holds arrives later than the call).
    now: Option<Instant>,
}

impl State {
    fn clock(&self) -> Instant {
        self.now.unwrap_or_else(super::clock::now)
    }
}

#[derive(Debug, Default)]
struct Counts {
    read_hits: AtomicU64,
    read_misses: AtomicU64,
    readahead_reads: AtomicU64,
    readahead_bytes: AtomicU64,
    write_back: AtomicU64,
    write_through: AtomicU64,
    destages: AtomicU64,
    destage_bytes: AtomicU64,
    flushes: AtomicU64,
}

/// The controller cache layer.
#[derive(Debug)]
pub struct CacheLayer {
    next: Arc<dyn BlockDev>,
    p: CacheParams,
    stripe: u64,
    state: Mutex<State>,
    n: Counts,
}

fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

impl CacheLayer {
    pub fn new(next: Arc<dyn BlockDev>, p: CacheParams) -> Result<CacheLayer, String> {
        if p.size_bytes < LINE {
            return Err(format!(
                "size {} is less than one 64 KiB line",
                p.size_bytes
            ));
        }
        if !(p.high_water > 0.0 && p.high_water <= 1.0) {
            return Err(format!("high_water {} is not in (0, 100%]", p.high_water));
        }
        if p.hit_bytes_per_s == 0 {
            return Err("hit_rate must be more than 0".into());
        }
        let stripe = p
            .stripe_bytes
            .or_else(|| next.full_stripe_bytes())
            .unwrap_or(1 << 20);
        Ok(CacheLayer {
            next,
            p,
            stripe,
            state: Mutex::new(State::default()),
            n: Counts::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state, with the present set to the arrival of `ctx`'s request.
    fn lock_at(&self, ctx: &IoCtx) -> std::sync::MutexGuard<'_, State> {
        let now = super::clock::now();
        let mut st = self.lock();
        st.now = Some(ctx.hold_until().map_or(now, |h| h.max(now)));
        st
    }

    fn hit_cost(&self, len: usize) -> Duration {
        let ns = len as u128 * 1_000_000_000 / u128::from(self.p.hit_bytes_per_s);
        self.p.hit + Duration::from_nanos(ns as u64)
    }

    /// A context for a request the firmware sends below now.
    fn below(&self, st: &State) -> IoCtx {
        IoCtx::starting_at(Some(st.clock() + self.p.miss))
    }

    /// Write one extent below (a destage); its completion is tracked and
    /// returned (the instant known now, and the ticket while undecided).
    fn destage(
        &self,
        st: &mut State,
        off: u64,
        data: &[u8],
        fua: bool,
    ) -> Result<(Instant, Option<Arc<dyn Completion>>), super::BlockError> {
        let mut c = IoCtx::starting_at(Some(st.clock()));
        self.next.write_at(&mut c, data, off, fua)?;
        let done = c.hold_until().unwrap_or_else(|| st.clock());
        let ticket = ticket_of(&mut c);
        st.inflight.push(Destage {
            done,
            bytes: data.len() as u64,
            ticket: ticket.clone(),
        });
        bump(&self.n.destages, 1);
        bump(&self.n.destage_bytes, data.len() as u64);
        Ok((done, ticket))
    }

    /// Remove `[a, b)` from the dirty extent starting at `key` and return it.
    fn cut(st: &mut State, key: u64, a: u64, b: u64) -> Vec<u8> {
        let e = st.dirty.remove(&key).expect("extent");
        let (i, j) = ((a - key) as usize, (b - key) as usize);
        if i > 0 {
            let head = e.data[..i].to_vec();
            st.dirty.insert(
                key,
                Extent {
                    data: head,
                    tick: e.tick,
                },
            );
        }
        if j < e.data.len() {
            let tail = e.data[j..].to_vec();
            st.dirty.insert(
                b,
                Extent {
                    data: tail,
                    tick: e.tick,
                },
            );
        }
        st.dirty_bytes -= b - a;
        e.data[i..j].to_vec()
    }

    /// Add a write to the dirty extents, merging what it touches; returns
    /// the merged extent's start.
    fn insert_dirty(st: &mut State, off: u64, data: &[u8]) -> u64 {
        let end = off + data.len() as u64;
        let keys: Vec<u64> = st
            .dirty
            .range(..=end)
            .rev()
            .take_while(|(k, e)| *k + e.data.len() as u64 >= off)
            .map(|(k, _)| *k)
            .collect();
        let mut start = off;
        let mut stop = end;
        for k in &keys {
            start = start.min(*k);
            stop = stop.max(k + st.dirty[k].data.len() as u64);
        }
        st.tick += 1;
        let mut tick = st.tick;
        let mut merged = vec![0u8; (stop - start) as usize];
        for k in keys {
            let e = st.dirty.remove(&k).expect("extent");
            st.dirty_bytes -= e.data.len() as u64;
            tick = tick.min(e.tick);
            let at = (k - start) as usize;
            merged[at..at + e.data.len()].copy_from_slice(&e.data);
        }
        let at = (off - start) as usize;
        merged[at..at + data.len()].copy_from_slice(data);
        st.dirty_bytes += merged.len() as u64;
        st.dirty.insert(start, Extent { data: merged, tick });
        start
    }

    /// Lay the dirty data over `buf` (read at `off`).
    fn overlay(st: &State, buf: &mut [u8], off: u64) {
        let end = off + buf.len() as u64;
        for (k, e) in st.dirty.range(..end).rev() {
            let e_end = k + e.data.len() as u64;
            if e_end <= off {
                break;
            }
            let (a, b) = ((*k).max(off), e_end.min(end));
            buf[(a - off) as usize..(b - off) as usize]
                .copy_from_slice(&e.data[(a - k) as usize..(b - k) as usize]);
        }
    }

    /// Copy a write into the read-ahead lines it touches.
    fn patch_lines(st: &mut State, buf: &[u8], off: u64) {
        let end = off + buf.len() as u64;
        for li in off / LINE..end.div_ceil(LINE) {
            if let Some(l) = st.lines.get_mut(&li) {
                let ls = li * LINE;
                let (a, b) = (off.max(ls), end.min(ls + l.data.len() as u64));
                l.data[(a - ls) as usize..(b - ls) as usize]
                    .copy_from_slice(&buf[(a - off) as usize..(b - off) as usize]);
            }
        }
    }
}

mod io;

#[cfg(test)]
mod tests;
