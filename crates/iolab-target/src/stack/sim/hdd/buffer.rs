//! sim-hdd's buffer: the look-ahead (read) segments and the write cache,
//! as methods of [`HddModel`] (see hdd.rs for the rules they follow).
use super::{HddModel, Pending, Stream, DESTAGE_CANDIDATES, DESTAGE_MAX_BYTES, RECENT};
use crate::stack::sim::SimReq;

impl HddModel {
    /// Where the look-ahead has read up to at `t`.
    pub(super) fn prefetched(&self, s: &Stream, t: f64) -> u64 {
        let more = ((t - s.t).max(0.0) * s.rate) as u64;
        s.end.saturating_add(more).min(s.cap)
    }

    /// [`Self::buffer_hit`], remembered until the buffer changes: SPTF asks
    /// about every queued command at every decision.
    pub(super) fn buffer_hit_cached(&self, p: &Pending) -> bool {
        // Additions can only make a miss a hit, removals a hit a miss: a
        // cached hit stands until something is removed, a cached miss
        // needs only the ranges added since.
        let (added, removed, hit) = p.hit.get();
        if added == self.buf_added && removed == self.buf_removed {
            return hit;
        }
        let since = self.buf_added.wrapping_sub(added);
        let (s, e) = (p.r.offset, p.r.offset + p.r.len);
        let hit = if added == u64::MAX {
            self.buffer_hit(&p.r)
        } else if hit {
            removed == self.buf_removed || self.buffer_hit(&p.r)
        } else if since <= self.recent_len as u64 {
            // The `since` ranges added last, newest first.
            (1..=since as usize).any(|j| {
                let (a, b) = self.recent[(self.recent_next + RECENT - j) % RECENT];
                a <= s && e <= b
            })
        } else {
            self.buffer_hit(&p.r)
        };
        p.hit.set((self.buf_added, self.buf_removed, hit));
        hit
    }

    /// A hit in an older segment or in dirty cached data.
    pub(super) fn buffer_hit(&self, r: &SimReq) -> bool {
        let (s, e) = (r.offset, r.offset + r.len);
        let in_segs = self.segs.iter().any(|&(a, b)| a <= s && e <= b);
        let in_dirty = self
            .dirty
            .range(..=s)
            .next_back()
            .is_some_and(|(_, &end)| e <= end);
        in_segs || in_dirty
    }

    /// Whether `r` continues the stream the head is reading ahead: it
    /// starts in what the look-ahead has read by `t`, or — while the
    /// look-ahead still runs — further on within what it reads before it
    /// stops (the head reaches the first byte without a new access), and
    /// the look-ahead can give all of it. A read just ahead of the head is
    /// not a new access: one would wait for its sector to come round again
    /// (the command overhead lets the head pass it), a revolution more
    /// than letting the look-ahead read on (issue 25).
    pub(super) fn continues(&self, t: f64, r: &SimReq) -> bool {
        let Some(st) = self.stream else {
            return false;
        };
        stream_continues(&st, self.prefetched(&st, t), r)
    }

    /// How long after `t` the look-ahead reaches the first byte of `r`
    /// (0: read already), for a read that [`Self::continues`] the stream.
    pub(super) fn stream_wait_ns(&self, t: f64, r: &SimReq) -> f64 {
        self.stream.map_or(0.0, |st| {
            let upto = self.prefetched(&st, t);
            r.offset.saturating_sub(upto) as f64 / st.rate
        })
    }

    pub(super) fn serve_read(&mut self, t: f64, ov: f64, r: &SimReq) -> f64 {
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
                let media_end = st.t + (e - st.end) as f64 / st.rate;
                st.end = e;
                st.t = media_end;
                (t + ov).max(media_end)
            };
            // The host is consuming: while the look-ahead still runs, it
            // reads one more segment past what was asked.
            if upto < st.cap || st.end == e {
                st.cap = st.cap.max(e + seg);
            } else if e + seg > st.cap {
                // It had stopped with the segment full; this read frees
                // room, so the drive reads on from the cap (the head has
                // stayed on that track) when the cap's sector next comes
                // under the head: whole revolutions after it stopped.
                let stopped = st.t + (st.cap - st.end) as f64 / st.rate;
                let turns = ((t - stopped) / self.m.rev_ns).ceil().max(0.0);
                st.end = st.cap;
                st.t = stopped + turns * self.m.rev_ns;
                st.cap = e + seg;
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
            rate: self.m.rate_at(e),
        });
        self.head_track = self.m.track_of(e);
        self.head_off = e;
        self.mech_free = end;
        end
    }

    /// Keep what the look-ahead read as a segment (its last segment's
    /// worth); the head moves on.
    pub(super) fn stop_stream(&mut self, t: f64) {
        if let Some(st) = self.stream.take() {
            let upto = self.prefetched(&st, t);
            let start = st.start.max(upto.saturating_sub(self.segment_bytes()));
            if upto > start {
                if self.segs.len() + 1 >= self.m.p.segments as usize {
                    self.segs.pop_front();
                    self.buf_removed += 1;
                }
                if self.m.p.segments > 1 {
                    self.segs.push_back((start, upto));
                    self.note_added(start, upto);
                }
            }
        }
    }

    /// Write one dirty extent (or its first 256 KiB) to the media.
    pub(super) fn destage(&mut self, t: f64) {
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
        self.buf_removed += 1;
        if s + len < e {
            self.dirty.insert(s + len, e);
        }
        self.dirty_bytes -= len;
        self.c.destages += 1;
        let end = self.media_write(t, 0.0, s, len);
        self.accept_waiting(end);
    }

    /// Take cached writes that now fit, at `t`.
    pub(super) fn accept_waiting(&mut self, t: f64) {
        while let Some(p) = self.waiting.front() {
            if self.dirty_bytes + p.r.len > self.m.p.cache_bytes {
                return;
            }
            let p = self.waiting.pop_front().expect("peeked");
            self.cache_write(t.max(p.arrival as f64), &p);
        }
    }

    pub(super) fn cache_write(&mut self, t: f64, p: &Pending) {
        let end = t + self.m.p.overhead_ns as f64 + self.m.iface_ns(p.r.len);
        // An idle mechanism starts destaging this data once it is here.
        self.mech_free = self.mech_free.max(t);
        self.add_dirty(p.r.offset, p.r.offset + p.r.len);
        self.invalidate(p.r.offset, p.r.offset + p.r.len);
        self.finish(p.id, end);
    }

    /// A write of `[o, e)` makes those sectors of the look-ahead segments
    /// stale: drop them, and keep the rest of each segment (the larger
    /// side, so a segment stays one contiguous range). Dropping the whole
    /// segment would also throw away the read-ahead just past a
    /// read-modify-write's strip, which a drive keeps (RAID 5's next small
    /// write on this member reads exactly that: docs/raid-lab.md, 2B).
    pub(super) fn invalidate(&mut self, o: u64, e: u64) {
        for seg in self.segs.iter_mut() {
            let (a, b) = *seg;
            if b <= o || a >= e {
                continue;
            }
            let (before, after) = (o.saturating_sub(a), b.saturating_sub(e));
            *seg = if after >= before {
                (e.max(a), b)
            } else {
                (a, o)
            };
        }
        self.segs.retain(|&(a, b)| a < b);
        self.buf_removed += 1;
    }

    /// Mark `[s, e)` dirty, merging with touching extents.
    pub(super) fn add_dirty(&mut self, mut s: u64, mut e: u64) {
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
        self.note_added(s, e);
        self.dirty_bytes += e - s;
    }

    /// The buffer now also holds `[s, e)`.
    fn note_added(&mut self, s: u64, e: u64) {
        self.buf_added += 1;
        self.recent[self.recent_next] = (s, e);
        self.recent_next = (self.recent_next + 1) % RECENT;
        self.recent_len = (self.recent_len + 1).min(RECENT);
    }

    /// Bytes in the write cache not yet on the media.
    pub fn dirty_bytes(&self) -> u64 {
        self.dirty_bytes
    }
}

/// [`HddModel::continues`] for a look-ahead `st` that has read up to `upto`
/// (SPTF's lower bound computes `upto` once for all its candidates).
pub(super) fn stream_continues(st: &Stream, upto: u64, r: &SimReq) -> bool {
    let running = upto < st.cap;
    let e = r.offset + r.len;
    st.start <= r.offset
        && (r.offset <= upto || running && r.offset <= st.cap)
        && (e <= upto || running)
}
