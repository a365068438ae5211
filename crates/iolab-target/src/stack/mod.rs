//! The block stack: what an export serves, built like nbdkit's plugins and
//! filters or SPDK's bdevs.
//!
//! A [`BlockDev`] answers reads, writes (with FUA), flushes, trims and
//! zeroing at byte offsets, and states what it can do in [`Caps`]. A
//! backend (memory, file, null) is the bottom of a stack; a layer wraps the
//! next device (`Arc<dyn BlockDev>`) and calls through it, changing what it
//! wants: split (a part of the device), delay (fixed and tail latency),
//! link (a bandwidth- and latency-limited wire shared by exports),
//! error injection, corruption, stats. One file per piece, each opening
//! with its parameters.
//!
//! Dispatch is dynamic (`Arc<dyn BlockDev>`): stacks are assembled at run
//! time from a config, and one indirect call per layer (a few ns) is noise
//! next to the socket system calls of every request.
//!
//! Writing a piece: a layer implements [`Layer`] (`next`, `label`, and only
//! the operations it changes — the rest forward to the device beneath, as
//! nbdkit filters call `next`; a layer acting alike on every operation, as
//! delay, inject and stats do, writes [`Layer::around`] alone); a backend, or a piece over several members,
//! implements [`BlockDev`] and starts its caps from [`Caps::new`]. Any piece
//! may publish named [`Counter`]s ([`BlockDev::counters`]); the target's
//! stats walk each export's stack ([`BlockDev::children`], [`walk`]) and
//! report them per piece and member, in the JSON snapshot (`counters`) and
//! in Prometheus (`iolab_target_dev_counter_total`,
//! `iolab_target_dev_gauge`).
//!
//! Calls are synchronous and may run on several threads at once; a device
//! whose calls may sleep (file I/O) says so in [`Caps::may_block`] and the
//! server then runs them on a worker pool. Latency layers never sleep:
//! they push [`IoCtx::hold_until`] later and the server holds the reply
//! until then, so a delayed request occupies no thread and never delays
//! another one.

pub mod cache;
pub mod clock;
pub mod corrupt;
pub mod delay;
pub mod file;
pub mod inject;
pub mod layer;
pub mod link;
pub mod memory;
pub mod null;
pub mod raid;
pub mod sample;
pub mod sim;
pub mod split;
pub mod stats;
pub mod ticket;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::proto::Errno;

pub use crate::op::Op;
pub use layer::{walk, Counter, Forward, Layer, Req};

/// Per-request context handed down the stack.
#[derive(Debug, Clone, Default)]
pub struct IoCtx {
    hold_until: Option<Instant>,
    /// Completion times a device decides later (see `ticket`).
    tickets: ticket::Tickets,
}

impl IoCtx {
    pub fn new() -> IoCtx {
        IoCtx::default()
    }

    /// The reply must not be sent before this instant (`None`: as soon as done).
    pub fn hold_until(&self) -> Option<Instant> {
        self.hold_until
    }

    /// Hold the reply until at least `d` from now (delays of stacked
    /// layers compose: each counts from when the layers below it finished).
    pub fn hold_for(&mut self, d: Duration) {
        let base = self
            .hold_until
            .map_or_else(clock::now, |t| t.max(clock::now()));
        self.hold_until = Some(base + d);
    }

    /// A context for a request that may not start before `start` (a
    /// dependent step, e.g. RAID 5's writes after its reads).
    pub fn starting_at(start: Option<Instant>) -> IoCtx {
        IoCtx {
            hold_until: start,
            ..IoCtx::default()
        }
    }

    /// Hold the reply until at least `t` (a device that computes its own
    /// completion instant, like the simulated disks).
    pub fn hold_until_at(&mut self, t: Instant) {
        self.hold_until = Some(self.hold_until.map_or(t, |h| h.max(t)));
    }

    /// The reply waits for `t` too (a completion decided later, see `ticket`).
    pub fn add_ticket(&mut self, t: std::sync::Arc<dyn ticket::Completion>) {
        self.tickets.push(t);
    }

    /// Wait for everything `other` waits for too (a layer that sent parts
    /// of a request to several members, each with its own context).
    pub fn join(&mut self, other: IoCtx) {
        if let Some(t) = other.hold_until {
            self.hold_until_at(t);
        }
        self.tickets.append(other.tickets);
    }

    /// Take the request's tickets (the server polls them).
    pub fn take_tickets(&mut self) -> ticket::Tickets {
        std::mem::take(&mut self.tickets)
    }
}

/// A failed block operation: the NBD error to reply with and a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{msg}")]
pub struct BlockError {
    pub errno: Errno,
    pub msg: String,
}

impl BlockError {
    pub fn new(errno: Errno, msg: impl Into<String>) -> BlockError {
        BlockError {
            errno,
            msg: msg.into(),
        }
    }

    /// An OS error during `op` at `offset`.
    pub fn io(op: &str, offset: u64, e: &std::io::Error) -> BlockError {
        BlockError::new(Errno::from_io(e), format!("{op} at offset {offset}: {e}"))
    }
}

pub type BlockResult = Result<(), BlockError>;

/// What a device is and can do. Layers start from their inner device's
/// caps and change what they change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub size_bytes: u64,
    /// Smallest addressable unit and alignment (a power of two, ≤ 64 KiB).
    pub min_block_bytes: u32,
    /// Size and alignment at which I/O is efficient (a power of two ≥ 512).
    pub preferred_block_bytes: u32,
    pub can_write: bool,
    pub can_flush: bool,
    pub can_fua: bool,
    pub can_trim: bool,
    pub can_zero: bool,
    /// Flush and FUA effects are visible across connections (one shared
    /// cache or none): clients may spread I/O over several connections.
    pub can_multi_conn: bool,
    /// Calls may sleep (real I/O): the server runs them on worker threads.
    pub may_block: bool,
}

impl Caps {
    /// A writable RAM-like device of `size_bytes`: byte-addressable,
    /// 4 KiB preferred, every operation and multi-conn supported, calls
    /// never sleep. Backends change what differs with struct update syntax.
    pub fn new(size_bytes: u64) -> Caps {
        Caps {
            size_bytes,
            min_block_bytes: 1,
            preferred_block_bytes: 4096,
            can_write: true,
            can_flush: true,
            can_fua: true,
            can_trim: true,
            can_zero: true,
            can_multi_conn: true,
            may_block: false,
        }
    }
}

/// A write-zeroes request: make `len_bytes` at `offset` read as zeroes;
/// `may_trim` allows deallocating the range, `fua` persists it before the
/// reply. One value, so every device and layer takes the same one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZeroReq {
    pub offset: u64,
    pub len_bytes: u64,
    pub may_trim: bool,
    pub fua: bool,
}

/// A block device: a backend or a layer over another device.
pub trait BlockDev: Send + Sync + fmt::Debug {
    fn caps(&self) -> Caps;
    /// One line naming this piece and what it wraps, e.g. `delay(read=1ms) <- memory(1 GiB)`.
    fn describe(&self) -> String;
    /// Fill `buf` from `offset` (the server checked the range).
    fn read_at(&self, ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult;
    /// Write `buf` at `offset`; with `fua`, persist it before returning.
    fn write_at(&self, ctx: &mut IoCtx, buf: &[u8], offset: u64, fua: bool) -> BlockResult;
    /// Persist every write that has returned.
    fn flush(&self, ctx: &mut IoCtx) -> BlockResult;
    /// Discard a range (a hint: contents afterwards are unspecified).
    fn trim(&self, ctx: &mut IoCtx, offset: u64, len_bytes: u64, fua: bool) -> BlockResult;
    /// Make a range read as zeroes ([`ZeroReq`]).
    fn zero(&self, ctx: &mut IoCtx, z: ZeroReq) -> BlockResult;

    /// The write size this device does best whole and aligned (a RAID's
    /// full stripe), for a cache above it to destage in; `None`: no such size.
    fn full_stripe_bytes(&self) -> Option<u64> {
        None
    }

    /// This piece's short name, as the export spec names it (`delay`,
    /// `memory`, `raid5`): by default `describe` up to its first `(`,
    /// space or `<`.
    fn name(&self) -> String {
        let d = self.describe();
        d.split(['(', ' ', '<'])
            .next()
            .unwrap_or_default()
            .to_string()
    }

    /// Named figures for the target's stats (default none).
    fn counters(&self) -> Vec<Counter> {
        Vec::new()
    }

    /// The devices directly beneath (a layer's one, a raid's members).
    fn children(&self) -> Vec<Arc<dyn BlockDev>> {
        Vec::new()
    }

    /// A RAID layer marks member `member` failed, or working again after
    /// rebuilding what it missed, while serving (`None`: not a RAID
    /// layer; see raid/live.rs).
    fn set_member_failed(&self, _member: usize, _failed: bool) -> Option<Result<String, String>> {
        None
    }
}

/// Human-readable binary size for `describe` (1 GiB, 512 KiB, 1000 bytes).
pub fn fmt_bytes(n: u64) -> String {
    const UNITS: [(u64, &str); 5] = [
        (1 << 50, "PiB"),
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (u, name) in UNITS {
        if n >= u && n.is_multiple_of(u) {
            return format!("{} {name}", n / u);
        }
    }
    format!("{n} bytes")
}

/// Compact duration for `describe` (1ms, 250us, 1.5ms).
pub fn fmt_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    match ns {
        0 => "0".into(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}
