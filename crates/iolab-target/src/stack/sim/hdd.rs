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

use std::collections::{BTreeMap, HashMap, VecDeque};

use super::hdd_mech::{HddParams, Mech, Ns};
use super::{SimModel, SimOp, SimReq};

/// Largest destage operation: bounds how long a read waits behind one.
const DESTAGE_MAX_BYTES: u64 = 256 << 10;
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
}

/// The look-ahead the head is doing: it read up to `end` at time `t` and
/// goes on reading until `cap` or until it moves.
#[derive(Debug, Clone, Copy)]
struct Stream {
    start: u64,
    end: u64,
    t: f64,
    cap: u64,
}

/// The disk's state on the virtual clock.
#[derive(Debug)]
pub struct HddModel {
    m: Mech,
    queue: VecDeque<Pending>,
    /// Cached writes waiting for room in the cache.
    waiting: VecDeque<Pending>,
    mech_free: f64,
    head_track: u64,
    head_off: u64,
    stream: Option<Stream>,
    segs: VecDeque<(u64, u64)>,
    dirty: BTreeMap<u64, u64>,
    dirty_bytes: u64,
    done: HashMap<u64, Ns>,
    next_id: u64,
    pub c: HddCounters,
}

impl HddModel {
    pub fn new(p: HddParams) -> HddModel {
        HddModel {
            m: Mech::new(p),
            queue: VecDeque::new(),
            waiting: VecDeque::new(),
            mech_free: 0.0,
            head_track: 0,
            head_off: 0,
            stream: None,
            segs: VecDeque::new(),
            dirty: BTreeMap::new(),
            dirty_bytes: 0,
            done: HashMap::new(),
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
            let first = self
                .queue
                .iter()
                .take(self.m.p.ncq_depth as usize)
                .map(|p| p.arrival)
                .min();
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
        let arrived: Vec<usize> = (0..self.queue.len().min(n))
            .filter(|&i| self.queue[i].arrival as f64 <= t)
            .collect();
        let flush_waits = arrived.iter().any(|&i| self.queue[i].r.op == SimOp::Flush);
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
            let p = self.queue.remove(i).expect("index from the queue");
            self.c.flushes += 1;
            self.finish(p.id, t + self.m.p.overhead_ns as f64);
            self.mech_free = self.mech_free.max(t);
            return;
        }
        // SPTF; ties go to the earlier arrival (lower index).
        let best = arrived
            .iter()
            .map(|&i| (self.positioning(t, &self.queue[i]), i))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
            .map(|(_, i)| i)
            .expect("a command has arrived by t");
        let p = self.queue.remove(best).expect("index from the queue");
        let ov = self.overhead_left(t, &p);
        let end = match p.r.op {
            SimOp::Read => self.serve_read(t, ov, &p.r),
            _ => self.media_write(t, ov, p.r.offset, p.r.len),
        };
        self.finish(p.id, end);
    }

    /// The command overhead still to pay at `t`: a command queued while
    /// the mechanism was busy has been decoded meanwhile (NCQ overlaps it).
    fn overhead_left(&self, t: f64, p: &Pending) -> f64 {
        let ov = self.m.p.overhead_ns as f64;
        (ov - (t - p.arrival as f64)).max(0.0)
    }

    /// How far the data of `p` is from the head at `t` (0: in the buffer or
    /// streaming past it).
    fn positioning(&self, t: f64, p: &Pending) -> f64 {
        let r = &p.r;
        if r.op == SimOp::Read && (self.continues(t, r) || self.buffer_hit(r)) {
            return 0.0;
        }
        let ov = self.overhead_left(t, p);
        ov + self.access_ns(t + ov, r.offset, r.op != SimOp::Read)
    }

    /// Seek + rotation to `o` from the head at `t`; a request that starts
    /// where the head stopped needs no seek.
    fn access_ns(&self, t: f64, o: u64, write: bool) -> f64 {
        if o == self.head_off {
            return self.m.rot_wait_ns(t, self.m.angle_of(o));
        }
        self.m.position_ns(self.head_track, t, o, write)
    }

    /// Where the look-ahead has read up to at `t`.
    fn prefetched(&self, s: &Stream, t: f64) -> u64 {
        let more = ((t - s.t).max(0.0) * self.m.rate_at(s.end)) as u64;
        s.end.saturating_add(more).min(s.cap)
    }

    /// A hit in an older segment or in dirty cached data.
    fn buffer_hit(&self, r: &SimReq) -> bool {
        let (s, e) = (r.offset, r.offset + r.len);
        let in_segs = self.segs.iter().any(|&(a, b)| a <= s && e <= b);
        let in_dirty = self
            .dirty
            .range(..=s)
            .next_back()
            .is_some_and(|(_, &end)| e <= end);
        in_segs || in_dirty
    }

    /// Whether `r` starts in what the look-ahead has read by `t`, and the
    /// look-ahead can give all of it (read already, or still reading).
    fn continues(&self, t: f64, r: &SimReq) -> bool {
        let Some(st) = self.stream else {
            return false;
        };
        let upto = self.prefetched(&st, t);
        let e = r.offset + r.len;
        st.start <= r.offset && r.offset <= upto && (e <= upto || upto < st.cap)
    }

    fn serve_read(&mut self, t: f64, ov: f64, r: &SimReq) -> f64 {
        let e = r.offset + r.len;
        let seg = self.segment_bytes();
        if self.continues(t, r) {
            let mut st = self.stream.expect("continues() saw it");
            let upto = self.prefetched(&st, t);
            let end = if e <= upto {
                self.c.buffer_hits += 1;
                t + ov + self.m.iface_ns(r.len)
            } else {
                // The media reaches e at this pace; the host waits for it.
                self.c.media_reads += 1;
                let media_end = st.t + self.m.media_ns(st.end, e - st.end);
                st.end = e;
                st.t = media_end;
                (t + ov).max(media_end)
            };
            // The host is consuming: while the look-ahead still runs, it
            // reads one more segment past what was asked (once it stopped
            // at its cap, the next read beyond is a new access).
            if upto < st.cap || st.end == e {
                st.cap = st.cap.max(e + seg);
            }
            st.start = st.start.max(e.saturating_sub(seg));
            self.stream = Some(st);
            self.head_track = self.m.track_of(st.end);
            self.head_off = st.end;
            self.mech_free = end;
            return end;
        }
        if self.buffer_hit(r) {
            self.c.buffer_hits += 1;
            let end = t + ov + self.m.iface_ns(r.len);
            self.mech_free = end;
            return end;
        }
        self.c.media_reads += 1;
        let start = t + ov + self.access_ns(t + ov, r.offset, false);
        let end = start + self.m.media_ns(r.offset, r.len);
        self.stop_stream(t);
        self.move_head(r.offset);
        self.stream = Some(Stream {
            start: r.offset,
            end: e,
            t: end,
            cap: e + seg,
        });
        self.head_track = self.m.track_of(e);
        self.head_off = e;
        self.mech_free = end;
        end
    }

    /// Keep what the look-ahead read as a segment (its last segment's
    /// worth); the head moves on.
    fn stop_stream(&mut self, t: f64) {
        if let Some(st) = self.stream.take() {
            let upto = self.prefetched(&st, t);
            let start = st.start.max(upto.saturating_sub(self.segment_bytes()));
            if upto > start {
                if self.segs.len() + 1 >= self.m.p.segments as usize {
                    self.segs.pop_front();
                }
                if self.m.p.segments > 1 {
                    self.segs.push_back((start, upto));
                }
            }
        }
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
        self.segs.retain(|&(a, b)| b <= o || a >= o + len);
        self.move_head(o);
        self.head_track = self.m.track_of(o + len);
        self.head_off = o + len;
        self.mech_free = end;
        self.c.media_writes += 1;
        self.c.media_write_bytes += len;
        end
    }

    /// Write one dirty extent (or its first 256 KiB) to the media.
    fn destage(&mut self, t: f64) {
        let h = self.head_off;
        let near = self
            .dirty
            .range(h..)
            .take(DESTAGE_CANDIDATES)
            .chain(self.dirty.range(..h).rev().take(DESTAGE_CANDIDATES))
            .map(|(&s, &e)| (s, e));
        let (s, e) = near
            .map(|(s, e)| (self.access_ns(t, s, true), s, e))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
            .map(|(_, s, e)| (s, e))
            .expect("destage runs with dirty data");
        let len = (e - s).min(DESTAGE_MAX_BYTES);
        self.dirty.remove(&s);
        if s + len < e {
            self.dirty.insert(s + len, e);
        }
        self.dirty_bytes -= len;
        self.c.destages += 1;
        let end = self.media_write(t, 0.0, s, len);
        self.accept_waiting(end);
    }

    /// Take cached writes that now fit, at `t`.
    fn accept_waiting(&mut self, t: f64) {
        while let Some(p) = self.waiting.front() {
            if self.dirty_bytes + p.r.len > self.m.p.cache_bytes {
                return;
            }
            let p = self.waiting.pop_front().expect("peeked");
            self.cache_write(t.max(p.arrival as f64), &p);
        }
    }

    fn cache_write(&mut self, t: f64, p: &Pending) {
        let end = t + self.m.p.overhead_ns as f64 + self.m.iface_ns(p.r.len);
        // An idle mechanism starts destaging this data once it is here.
        self.mech_free = self.mech_free.max(t);
        self.add_dirty(p.r.offset, p.r.offset + p.r.len);
        self.segs
            .retain(|&(a, b)| b <= p.r.offset || a >= p.r.offset + p.r.len);
        self.finish(p.id, end);
    }

    /// Mark `[s, e)` dirty, merging with touching extents.
    fn add_dirty(&mut self, mut s: u64, mut e: u64) {
        let touching: Vec<(u64, u64)> = self
            .dirty
            .range(..=e)
            .rev()
            .take_while(|&(_, &end)| end >= s)
            .map(|(&a, &b)| (a, b))
            .collect();
        for (a, b) in touching {
            self.dirty.remove(&a);
            self.dirty_bytes -= b - a;
            s = s.min(a);
            e = e.max(b);
        }
        self.dirty.insert(s, e);
        self.dirty_bytes += e - s;
    }

    /// Bytes in the write cache not yet on the media.
    pub fn dirty_bytes(&self) -> u64 {
        self.dirty_bytes
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
        let p = Pending { id, arrival, r };
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
            _ => self.queue.push_back(p),
        }
        self.run(now, true);
        id
    }

    fn advance(&mut self, now: Ns) {
        self.run(now, true);
    }

    fn take_done(&mut self, id: u64) -> Option<Ns> {
        self.done.remove(&id)
    }

    fn forget(&mut self, id: u64) {
        self.done.remove(&id);
    }

    fn next_event(&self, now: Ns) -> Ns {
        let free = self.mech_free.ceil() as Ns;
        let arrival = self
            .queue
            .iter()
            .map(|p| p.arrival)
            .filter(|&a| a > now)
            .min();
        let t = if free > now {
            free
        } else {
            arrival.unwrap_or(now)
        };
        t.max(now + 1_000)
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
