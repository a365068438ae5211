//! The RAID levels, and what every one of them shares: the member set,
//! its counters and failure marks, the strip check, and how the holds of
//! member I/Os compose.
//!
//! Files: raid0.rs (striping; raid1.rs and raid10.rs are built from it),
//! raid5.rs (parity; its stripe cache in raid5/stripes.rs), phase.rs (how
//! member I/Os compose in time), live.rs (a member failed or restored
//! while serving).
//!
//! Parameters common to every level (see raid0/raid1/raid10/raid5.rs for
//! what each adds):
//! - `members` (required): how many member devices;
//! - `member` (required): the backend spec of one member, written
//!   `KIND(KEY=VALUE,…)`, e.g. `sim-hdd(wcache=off)` or `memory(size=1g)`;
//!   each member gets its own backend; `{i}` in a value becomes the
//!   member's index (a file member needs it: `file(path=/var/tmp/m{i}.img)`);
//! - `strip` (default 64k; not raid1): bytes per member before the next
//!   member, a power of two times the members' sector;
//! - `failed` (default none): a member index (or list `1:3`) marked failed
//!   from the start — it is never read or written (degraded mode). A
//!   member can also be failed or restored while serving (live.rs:
//!   the `gate` and the per-member log of missed writes below are its).
//!
//! Member I/Os of one request run in *phases*: every I/O of a phase starts
//! at the same instant (when the previous phase completed) and the phase
//! completes with its slowest member ([`Phase`], phase.rs): a RAID request's hold is
//! the max of its members' holds, never the sum, except where one step
//! needs the data of another (RAID 5's read-modify-write).
//!
//! Counters per member (read/write requests and bytes, flushes) and per
//! layer (see each level) are kept with relaxed atomics and read by
//! [`RaidCounters::counter_values`] for the target's stats.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub mod live;
mod phase;
pub mod raid0;
pub mod raid1;
pub mod raid10;
pub mod raid5;

use super::{BlockDev, BlockError, BlockResult, Caps, Counter, IoCtx};
use crate::proto::Errno;
pub use phase::{pass, ticket_of, After, Joined, Phase};

/// Named counter values of a layer, for the target's stats.
pub trait RaidCounters {
    /// `(name, value)` pairs, e.g. `("member0.reads", 12)`, `("rmw", 3)`.
    fn counter_values(&self) -> Vec<(String, u64)>;
}

/// One member device and its counters.
#[derive(Debug)]
pub struct Member {
    pub dev: Arc<dyn BlockDev>,
    failed: AtomicBool,
    reads: AtomicU64,
    writes: AtomicU64,
    read_bytes: AtomicU64,
    write_bytes: AtomicU64,
    flushes: AtomicU64,
    /// Where the last I/O ended (RAID 1 reads keep a stream on one mirror).
    pub next_offset: AtomicU64,
}

/// The member set of a RAID layer.
#[derive(Debug)]
pub struct Members {
    list: Vec<Member>,
    /// Usable bytes per member (the smallest member, cut to whole strips).
    pub member_bytes: u64,
    pub min_block_bytes: u32,
    /// Requests hold it shared while they run; marking a member failed or
    /// working again (live.rs) holds it alone, so no request sees
    /// the member set change half-way.
    gate: RwLock<()>,
    /// Per member, the (offset, length) ranges written while it was
    /// failed: what a restore rebuilds (md's write-intent bitmap).
    missed: Mutex<Vec<Vec<(u64, u64)>>>,
}

fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

impl Members {
    /// `min` members at least; each member's usable size is cut to a
    /// multiple of `strip` (`None`: of the sector; a mirror has no strip).
    pub fn new(
        devs: Vec<Arc<dyn BlockDev>>,
        level: &str,
        min: usize,
        strip: Option<u64>,
    ) -> Result<Members, String> {
        if devs.len() < min {
            return Err(format!(
                "{level} needs at least {min} members, got {}",
                devs.len()
            ));
        }
        let caps: Vec<Caps> = devs.iter().map(|d| d.caps()).collect();
        // RAID works in sectors: at least 512 bytes even over a byte-addressable member.
        let min_block_bytes = caps.iter().map(|c| c.min_block_bytes).fold(512, u32::max);
        if let Some(strip) = strip {
            check_strip(strip, min_block_bytes)?;
        }
        let strip = strip.unwrap_or(u64::from(min_block_bytes));
        let smallest = caps.iter().map(|c| c.size_bytes).min().unwrap_or(0);
        let member_bytes = smallest / strip * strip;
        if member_bytes == 0 {
            return Err(format!(
                "members of {smallest} bytes hold no whole strip of {strip} bytes"
            ));
        }
        if let Some(c) = caps.iter().find(|c| !c.can_write) {
            return Err(format!("a member is read-only ({c:?})"));
        }
        let n = devs.len();
        let list = devs
            .into_iter()
            .map(|dev| Member {
                dev,
                failed: AtomicBool::new(false),
                reads: AtomicU64::new(0),
                writes: AtomicU64::new(0),
                read_bytes: AtomicU64::new(0),
                write_bytes: AtomicU64::new(0),
                flushes: AtomicU64::new(0),
                next_offset: AtomicU64::new(u64::MAX),
            })
            .collect();
        Ok(Members {
            list,
            member_bytes,
            min_block_bytes,
            gate: RwLock::new(()),
            missed: Mutex::new(vec![Vec::new(); n]),
        })
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// The member devices, for the target's stats walk.
    pub fn devs(&self) -> Vec<Arc<dyn BlockDev>> {
        self.list.iter().map(|m| m.dev.clone()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn get(&self, i: usize) -> &Member {
        &self.list[i]
    }

    pub fn is_failed(&self, i: usize) -> bool {
        self.list[i].failed.load(Ordering::Relaxed)
    }

    /// Mark member `i` failed: it is read and written no more. Its
    /// content is taken as unknown (a member failed at config time missed
    /// whatever happened before): a restore rebuilds all of it.
    pub fn fail(&self, i: usize) {
        self.note_missed(i, 0, self.member_bytes);
        self.fail_live(i);
    }

    /// Mark member `i` failed while serving: it holds everything written
    /// so far, so a restore rebuilds only the writes it misses from now.
    pub fn fail_live(&self, i: usize) {
        self.list[i].failed.store(true, Ordering::Relaxed);
    }

    /// Mark member `i` working again (after a rebuild: live.rs).
    pub fn get_failed_reset(&self, i: usize) {
        self.list[i].failed.store(false, Ordering::Relaxed);
    }

    /// Held (shared) by a request for as long as it runs.
    pub fn enter(&self) -> RwLockReadGuard<'_, ()> {
        self.gate.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Held alone while the member set changes (no request runs).
    pub fn exclusive(&self) -> RwLockWriteGuard<'_, ()> {
        self.gate.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Failed member `i` missed a write of `len` bytes at `offset`.
    pub fn note_missed(&self, i: usize, offset: u64, len: u64) {
        let mut g = self.missed.lock().unwrap_or_else(PoisonError::into_inner);
        g[i].push((offset, len));
    }

    /// The ranges member `i` missed, merged and sorted; forgotten.
    pub fn take_missed(&self, i: usize) -> Vec<(u64, u64)> {
        let mut g = self.missed.lock().unwrap_or_else(PoisonError::into_inner);
        let mut v = std::mem::take(&mut g[i]);
        v.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::new();
        for (o, l) in v {
            match out.last_mut() {
                Some((a, b)) if o <= *a + *b => *b = (*b).max(o + l - *a),
                _ => out.push((o, l)),
            }
        }
        out
    }

    pub fn failed_count(&self) -> usize {
        (0..self.len()).filter(|&i| self.is_failed(i)).count()
    }

    fn gone(i: usize) -> BlockError {
        BlockError::new(Errno::Io, format!("member {i} has failed"))
    }

    /// Read member `i` at `offset` as part of `phase`.
    pub fn read(&self, i: usize, phase: &mut Phase, buf: &mut [u8], offset: u64) -> BlockResult {
        let m = &self.list[i];
        if self.is_failed(i) {
            return Err(Self::gone(i));
        }
        add(&m.reads, 1);
        add(&m.read_bytes, buf.len() as u64);
        m.next_offset
            .store(offset + buf.len() as u64, Ordering::Relaxed);
        let mut c = phase.child();
        let r = m.dev.read_at(&mut c, buf, offset);
        phase.join(&mut c);
        r
    }

    /// Write member `i` at `offset` as part of `phase`.
    pub fn write(
        &self,
        i: usize,
        phase: &mut Phase,
        buf: &[u8],
        offset: u64,
        fua: bool,
    ) -> BlockResult {
        let m = &self.list[i];
        if self.is_failed(i) {
            return Err(Self::gone(i));
        }
        add(&m.writes, 1);
        add(&m.write_bytes, buf.len() as u64);
        let mut c = phase.child();
        let r = m.dev.write_at(&mut c, buf, offset, fua);
        phase.join(&mut c);
        r
    }

    /// Flush every working member, in parallel.
    pub fn flush(&self, ctx: &mut IoCtx) -> BlockResult {
        let mut phase = Phase::after(ctx);
        for (i, m) in self.list.iter().enumerate() {
            if self.is_failed(i) {
                continue;
            }
            add(&m.flushes, 1);
            let mut c = phase.child();
            m.dev.flush(&mut c)?;
            phase.join(&mut c);
        }
        phase.finish(ctx);
        Ok(())
    }

    /// Caps of an array of `size_bytes` over these members.
    pub fn caps(&self, size_bytes: u64, strip: u64) -> Caps {
        let all = |f: fn(&Caps) -> bool| self.list.iter().all(|m| f(&m.dev.caps()));
        Caps {
            size_bytes,
            min_block_bytes: self.min_block_bytes,
            preferred_block_bytes: u32::try_from(strip.min(1 << 20)).unwrap_or(1 << 20),
            can_write: true,
            can_flush: all(|c| c.can_flush),
            can_fua: all(|c| c.can_fua),
            can_trim: false,
            can_zero: false,
            can_multi_conn: all(|c| c.can_multi_conn),
            may_block: self.list.iter().any(|m| m.dev.caps().may_block),
        }
    }

    /// Per-member counters: `member{i}.reads` … `member{i}.failed`.
    pub fn counters(&self) -> Vec<(String, u64)> {
        let mut v = Vec::new();
        for (i, m) in self.list.iter().enumerate() {
            let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
            v.push((format!("member{i}.reads"), load(&m.reads)));
            v.push((format!("member{i}.writes"), load(&m.writes)));
            v.push((format!("member{i}.read_bytes"), load(&m.read_bytes)));
            v.push((format!("member{i}.write_bytes"), load(&m.write_bytes)));
            v.push((format!("member{i}.flushes"), load(&m.flushes)));
            v.push((format!("member{i}.failed"), u64::from(self.is_failed(i))));
        }
        v
    }

    /// One line naming the members, for `describe`.
    pub fn describe(&self) -> String {
        let first = self
            .list
            .first()
            .map(|m| m.dev.describe())
            .unwrap_or_default();
        let failed: Vec<String> = (0..self.len())
            .filter(|&i| self.is_failed(i))
            .map(|i| i.to_string())
            .collect();
        let failed = if failed.is_empty() {
            String::new()
        } else {
            format!(", failed {}", failed.join(":"))
        };
        format!("{} x {first}{failed}", self.len())
    }
}

/// A strip must be a power of two and a whole number of sectors.
pub fn check_strip(strip: u64, sector: u32) -> Result<(), String> {
    if !strip.is_power_of_two() || strip < u64::from(sector) {
        return Err(format!(
            "strip {strip} is not a power of two times the members' sector of {sector} bytes"
        ));
    }
    Ok(())
}

/// The layer's requests and bytes by direction.
#[derive(Debug, Default)]
pub struct Traffic {
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    pub read_bytes: AtomicU64,
    pub write_bytes: AtomicU64,
}

impl Traffic {
    pub fn read(&self, n: usize) {
        add(&self.reads, 1);
        add(&self.read_bytes, n as u64);
    }

    pub fn write(&self, n: usize) {
        add(&self.writes, 1);
        add(&self.write_bytes, n as u64);
    }

    pub fn counters(&self) -> Vec<(String, u64)> {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        vec![
            ("reads".into(), load(&self.reads)),
            ("writes".into(), load(&self.writes)),
            ("read_bytes".into(), load(&self.read_bytes)),
            ("write_bytes".into(), load(&self.write_bytes)),
        ]
    }
}

/// `(name, value)` pairs as running totals for the target's stats.
pub fn totals(v: Vec<(String, u64)>) -> Vec<Counter> {
    v.into_iter().map(|(n, x)| Counter::total(n, x)).collect()
}

/// `dst ^= src` (parity arithmetic).
pub fn xor_into(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

/// An error for an operation a RAID layer does not carry.
pub fn not_supported(level: &str, op: &str) -> BlockError {
    BlockError::new(Errno::NotSup, format!("{level} does not support {op}"))
}
