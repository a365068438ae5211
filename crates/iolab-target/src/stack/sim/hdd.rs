//! sim-hdd's command model: the queue, NCQ, the look-ahead buffer and the
//! write cache, on a virtual clock (no sockets, no wall time).
//!
//! One timeline: the mechanism (arm + head) serves one media access at a
//! time. A decision is taken when it becomes free, among the commands that
//! have arrived by then (the first `ncq` in arrival order): shortest
//! positioning time first (SPTF; seek + rotational wait from where the
//! head is then, see `hdd_mech`). Decisions are taken lazily — when a
//! command arrives or someone asks ([`SimModel::advance`]) — but only ever
//! with the arrivals up to the decision's own time, so the outcome depends
//! on arrival times and order alone.
//!
//! - Read: a buffer hit (a look-ahead segment or dirty data holds the whole
//!   range) costs `overhead + len/iface`; a read that continues the stream
//!   the head is reading ahead completes when the media reaches its end; a
//!   miss costs `overhead + seek + rotation + len/R(x)`, then the head reads
//!   ahead up to one segment (`cache/segments`) until the next command moves
//!   it. The previous stream's data stays as a segment (LRU, `segments`).
//! - Write, cache off or FUA: `overhead + seek + settle + rotation + len/R(x)`.
//!   Cache on: done after `overhead + len/iface` while the dirty data fits
//!   the cache (else it waits for destaging); dirty extents merge, and the
//!   mechanism destages them (up to 256 KiB at a time, SPTF among the extents
//!   nearest the head) whenever no host command waits, or first when a
//!   FLUSH or a write waits. FLUSH completes when nothing is dirty.
//! - TRIM: `overhead`, no media work (a drive of 2008 had no TRIM; it is
//!   accepted so that filesystems can mount).

use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};

use super::hdd_mech::{HddParams, Mech, Ns};

mod buffer;
mod sptf;
use super::{Decided, SimModel, SimOp, SimReq};

/// Largest destage operation: bounds how long a read waits behind one.
const DESTAGE_MAX_BYTES: u64 = 256 << 10;
/// Ranges the buffer remembers having added (see `buffer_hit_cached`).
const RECENT: usize = 64;
/// Dirty extents considered on each side of the head per destage.
const DESTAGE_CANDIDATES: usize = 8;

/// sim-hdd's own counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HddCounters {
    pub requests: u64,
    pub bytes: u64,
    /// Head moves to another track.
    pub seeks: u64,
    pub buffer_hits: u64,
    pub media_reads: u64,
    pub media_writes: u64,
    pub media_write_bytes: u64,
    pub destages: u64,
    pub flushes: u64,
}

#[derive(Debug, Clone)]
struct Pending {
    id: u64,
    arrival: Ns,
    r: SimReq,
    /// Where its first byte is (track, angle): computed once, as SPTF
    /// looks at every queued command at every decision.
    track: u64,
    angle: f64,
    /// Whether the buffer held it, as of `buf_added` `.0` and
    /// `buf_removed` `.1` (see `buffer_hit_cached`).
    hit: Cell<(u64, u64, bool)>,
}

/// The look-ahead the head is doing: it read up to `end` at time `t` and
/// goes on reading until `cap` or until it moves.
#[derive(Debug, Clone, Copy)]
struct Stream {
    start: u64,
    end: u64,
    t: f64,
    cap: u64,
    /// The media rate there (bytes per ns), fixed for the stream: it
    /// changes by < 0.1 % over a segment.
    rate: f64,
}

/// The disk's state on the virtual clock.
#[derive(Debug)]
pub struct HddModel {
    m: Mech,
    /// Commands waiting for the mechanism, in arrival order (a Vec: at
    /// most a few dozen, scanned at every decision, which indexes a Vec
    /// more cheaply than a VecDeque).
    queue: Vec<Pending>,
    /// Cached writes waiting for room in the cache.
    waiting: VecDeque<Pending>,
    mech_free: f64,
    head_track: u64,
    head_off: u64,
    stream: Option<Stream>,
    segs: VecDeque<(u64, u64)>,
    dirty: BTreeMap<u64, u64>,
    dirty_bytes: u64,
    /// Count the buffer's changes: ranges added (the last ones kept in
    /// `recent`) and removals.
    buf_added: u64,
    buf_removed: u64,
    /// A ring of the last `RECENT` ranges added (`recent_next`: the slot
    /// to write next; `recent_len`: how many are valid).
    recent: [(u64, u64); RECENT],
    recent_next: usize,
    recent_len: usize,
    /// Reused by `decide` and `sptf` (no allocation per decision).
    scratch: Vec<usize>,
    bounds: Vec<f64>,
    /// The earliest arrival among the first `ncq` queued commands, while
    /// the queue has not changed (`run` asks at every call; polls between
    /// decisions would otherwise scan the queue each time).
    first_arrival: Option<Option<Ns>>,
    /// FLUSH commands in `queue`.
    flushes_queued: usize,
    done: Decided,
    next_id: u64,
    pub c: HddCounters,
}

impl HddModel {
    pub fn new(p: HddParams) -> HddModel {
        HddModel {
            m: Mech::new(p),
            queue: Vec::new(),
            waiting: VecDeque::new(),
            mech_free: 0.0,
            head_track: 0,
            head_off: 0,
            stream: None,
            segs: VecDeque::new(),
            dirty: BTreeMap::new(),
            dirty_bytes: 0,
            buf_added: 0,
            buf_removed: 0,
            recent: [(0, 0); RECENT],
            recent_next: 0,
            recent_len: 0,
            scratch: Vec::new(),
            bounds: Vec::new(),
            first_arrival: None,
            flushes_queued: 0,
            done: Decided::default(),
            next_id: 0,
            c: HddCounters::default(),
        }
    }

    pub fn mech(&self) -> &Mech {
        &self.m
    }

    fn segment_bytes(&self) -> u64 {
        self.m.p.cache_bytes / u64::from(self.m.p.segments)
    }

    fn finish(&mut self, id: u64, t: f64) {
        self.done.insert(id, t.ceil() as Ns);
    }

    /// Run every decision due at a time before `limit` (or at it, `inclusive`).
    fn run(&mut self, limit: Ns, inclusive: bool) {
        let limit = limit as f64;
        loop {
            let first = *self.first_arrival.get_or_insert_with(|| {
                self.queue
                    .iter()
                    .take(self.m.p.ncq_depth as usize)
                    .map(|p| p.arrival)
                    .min()
            });
            let t = match (self.dirty.is_empty(), first) {
                (false, _) => self.mech_free,
                (true, Some(a)) => self.mech_free.max(a as f64),
                (true, None) => return,
            };
            if t > limit || (!inclusive && t >= limit) {
                return;
            }
            self.decide(t);
        }
    }

    /// The mechanism is free at `t`: take its next command.
    fn decide(&mut self, t: f64) {
        let n = self.m.p.ncq_depth as usize;
        let mut arrived = std::mem::take(&mut self.scratch);
        arrived.clear();
        arrived.extend(
            self.queue
                .iter()
                .take(n)
                .enumerate()
                .filter(|(_, p)| p.arrival as f64 <= t)
                .map(|(i, _)| i),
        );
        self.decide_among(t, &arrived);
        self.scratch = arrived;
    }

    /// [`Self::decide`] among the queue indices `arrived`.
    fn decide_among(&mut self, t: f64, arrived: &[usize]) {
        // Flushes are rare: count them rather than look for one each time.
        let flush_waits =
            self.flushes_queued > 0 && arrived.iter().any(|&i| self.queue[i].r.op == SimOp::Flush);
        let only_flushes = arrived.iter().all(|&i| self.queue[i].r.op == SimOp::Flush);
        if !self.dirty.is_empty() && (flush_waits || only_flushes || !self.waiting.is_empty()) {
            self.destage(t);
            return;
        }
        if flush_waits {
            let i = *arrived
                .iter()
                .find(|&&i| self.queue[i].r.op == SimOp::Flush)
                .expect("a flush waits");
            let p = self.queue.remove(i);
            self.flushes_queued -= 1;
            self.first_arrival = None;
            self.c.flushes += 1;
            self.finish(p.id, t + self.m.p.overhead_ns as f64);
            self.mech_free = self.mech_free.max(t);
            return;
        }
        let best = self.sptf(t, arrived);
        let p = self.queue.remove(best);
        self.first_arrival = None;
        let ov = self.overhead_left(t, &p);
        let end = match p.r.op {
            SimOp::Read => self.serve_read(t, ov, &p.r),
            _ => self.media_write(t, ov, p.r.offset, p.r.len),
        };
        self.finish(p.id, end);
    }

    /// Seek + rotation to `o` from the head at `t`; a request that starts
    /// where the head stopped needs no seek.
    fn access_ns(&self, t: f64, o: u64, write: bool) -> f64 {
        if o == self.head_off {
            return self.m.rot_wait_ns(t, self.m.angle_of(o));
        }
        self.m.position_ns(self.head_track, t, o, write)
    }

    fn move_head(&mut self, o: u64) {
        let k = self.m.track_of(o);
        if k != self.head_track {
            self.c.seeks += 1;
        }
    }

    /// A write to the media (host write, or destage with no overhead `ov`).
    /// Returns when it is on the media.
    fn media_write(&mut self, t: f64, ov: f64, o: u64, len: u64) -> f64 {
        let start = t + ov + self.access_ns(t + ov, o, true);
        let end = start + self.m.media_ns(o, len);
        self.stop_stream(t);
        self.invalidate(o, o + len);
        self.move_head(o);
        self.head_track = self.m.track_of(o + len);
        self.head_off = o + len;
        self.mech_free = end;
        self.c.media_writes += 1;
        self.c.media_write_bytes += len;
        end
    }
}

impl SimModel for HddModel {
    fn submit(&mut self, now: Ns, arrival: Ns, r: SimReq) -> u64 {
        // Decide what is due before the arrival — but never past the
        // present: commands from other connections may still come first.
        self.run(arrival.min(now), arrival > now);
        let id = self.next_id;
        self.next_id += 1;
        self.c.requests += 1;
        self.c.bytes += r.len;
        let p = Pending {
            id,
            arrival,
            r,
            track: self.m.track_of(r.offset),
            angle: self.m.angle_of(r.offset),
            hit: Cell::new((u64::MAX, 0, false)),
        };
        let ov = self.m.p.overhead_ns as f64;
        match r.op {
            SimOp::Write if self.m.p.wcache && !r.fua => {
                let fits = self.dirty_bytes + r.len <= self.m.p.cache_bytes;
                if self.waiting.is_empty() && fits {
                    self.cache_write(arrival as f64, &p);
                } else {
                    self.waiting.push_back(p);
                }
            }
            SimOp::Trim => self.finish(id, arrival as f64 + ov),
            SimOp::Flush if !self.m.p.wcache => {
                self.c.flushes += 1;
                self.finish(id, arrival as f64 + ov);
            }
            _ => {
                self.flushes_queued += usize::from(p.r.op == SimOp::Flush);
                self.queue.push(p);
                self.first_arrival = None;
            }
        }
        self.run(now, true);
        id
    }

    fn advance(&mut self, now: Ns) {
        self.run(now, true);
    }

    fn decided(&mut self) -> &mut Decided {
        &mut self.done
    }

    fn next_event(&self, now: Ns) -> Ns {
        let free = self.mech_free.ceil() as Ns;
        if free > now {
            return free.max(now + 1_000);
        }
        let arrival = self
            .queue
            .iter()
            .map(|p| p.arrival)
            .filter(|&a| a > now)
            .min();
        arrival.unwrap_or(now).max(now + 1_000)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.c;
        vec![
            ("requests", c.requests),
            ("bytes", c.bytes),
            ("seeks", c.seeks),
            ("buffer_hits", c.buffer_hits),
            ("media_reads", c.media_reads),
            ("media_writes", c.media_writes),
            ("media_write_bytes", c.media_write_bytes),
            ("destages", c.destages),
            ("flushes", c.flushes),
            ("dirty_bytes", self.dirty_bytes),
        ]
    }
}
