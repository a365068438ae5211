//! The cache layer's operations: reads (hits, misses, read-ahead), writes
//! (write-back with destage and the high-water mark, write-through), flush.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::*;
use crate::stack::raid::{pass, ticket_of, After};
use crate::stack::{BlockError, Layer, ZeroReq};

/// What the controller forwards to the host at a time on a read miss (a
/// strip: the data arrives from the members a strip at a time).
const FORWARD_PIECE_BYTES: usize = 64 << 10;

/// When a request may complete: an instant, and tickets decided later.
type Due2 = (Instant, Vec<Arc<dyn Completion>>);

fn hold(ctx: &mut IoCtx, (t, tickets): Due2) {
    ctx.hold_until_at(t);
    tickets.into_iter().for_each(|x| ctx.add_ticket(x));
}

impl CacheLayer {
    /// Whether this read (at `offset`, `len`) sets read-ahead going.
    fn wants_ahead(&self, st: &mut State, offset: u64, len: u64) -> bool {
        st.seq_run = if offset == st.last_end && offset > 0 {
            st.seq_run + 1
        } else {
            0
        };
        st.last_end = offset + len;
        match self.p.read {
            ReadPolicy::None => false,
            ReadPolicy::Ahead => true,
            ReadPolicy::Adaptive => st.seq_run >= 1,
        }
    }

    /// Keep read-ahead `ahead` bytes beyond `end`: fetch the missing lines
    /// in one read below (a raid spreads it over every member at once).
    fn read_ahead(&self, st: &mut State, end: u64) -> BlockResult {
        let size = self.next.caps().size_bytes;
        let first = end.div_ceil(LINE) * LINE;
        let from = if st.fetched_end >= first && st.fetched_end <= end + self.p.ahead_bytes {
            st.fetched_end
        } else {
            first
        };
        let to = ((end + self.p.ahead_bytes).div_ceil(LINE) * LINE).min(size);
        if to <= from || (to - from) * 8 < self.p.ahead_bytes.min(size - from) {
            return Ok(());
        }
        let mut data = vec![0u8; (to - from) as usize];
        let mut c = self.below(st);
        self.next.read_at(&mut c, &mut data, from)?;
        Self::overlay(st, &mut data, from);
        bump(&self.n.readahead_reads, 1);
        bump(&self.n.readahead_bytes, data.len() as u64);
        let ready_at = c.hold_until();
        let ready_ticket = ticket_of(&mut c);
        for (i, chunk) in data.chunks(LINE as usize).enumerate() {
            let li = from / LINE + i as u64;
            let line = Line {
                data: chunk.into(),
                ready_at,
                ready_ticket: ready_ticket.clone(),
            };
            if st.lines.insert(li, line).is_none() {
                st.fifo.push_back(li);
            }
        }
        while st.lines.len() as u64 > self.p.size_bytes / LINE {
            let Some(old) = st.fifo.pop_front() else {
                break;
            };
            st.lines.remove(&old);
        }
        st.fetched_end = to;
        Ok(())
    }

    /// Copy `buf` from the lines when every one is there; when the last of
    /// them arrives (an instant, or now, and the fetches still undecided).
    fn from_lines(st: &State, buf: &mut [u8], off: u64) -> Option<Due2> {
        let end = off + buf.len() as u64;
        let range = off / LINE..end.div_ceil(LINE);
        if !range.clone().all(|li| st.lines.contains_key(&li)) {
            return None;
        }
        let mut ready = st.clock();
        let mut tickets: Vec<Arc<dyn Completion>> = Vec::new();
        for li in range {
            let l = &st.lines[&li];
            let ls = li * LINE;
            let (a, b) = (off.max(ls), end.min(ls + l.data.len() as u64));
            if b <= a {
                return None;
            }
            buf[(a - off) as usize..(b - off) as usize]
                .copy_from_slice(&l.data[(a - ls) as usize..(b - ls) as usize]);
            ready = ready.max(l.ready_at.unwrap_or(ready));
            if let Some(t) = &l.ready_ticket {
                if !tickets.iter().any(|x| Arc::ptr_eq(x, t)) {
                    tickets.push(t.clone());
                }
            }
        }
        Some((ready, tickets))
    }

    /// Destage the dirty data that fills aligned stripes within the
    /// extent at `key`, in one write.
    fn destage_full_stripes(&self, st: &mut State, key: u64) -> BlockResult {
        let len = st.dirty[&key].data.len() as u64;
        let a = key.div_ceil(self.stripe) * self.stripe;
        let b = (key + len) / self.stripe * self.stripe;
        if b > a {
            let data = Self::cut(st, key, a, b);
            self.destage(st, a, &data, false)?;
        }
        Ok(())
    }

    /// Above the high-water mark, destage the oldest extents until the
    /// dirty data is down to half of it.
    fn destage_oldest(&self, st: &mut State) -> BlockResult {
        let high = (self.p.size_bytes as f64 * self.p.high_water) as u64;
        if st.dirty_bytes <= high {
            return Ok(());
        }
        while st.dirty_bytes > high / 2 {
            let Some(key) = st.dirty.iter().min_by_key(|(_, e)| e.tick).map(|(k, _)| *k) else {
                break;
            };
            let len = st.dirty[&key].data.len() as u64;
            let data = Self::cut(st, key, key, key + len);
            self.destage(st, key, &data, false)?;
        }
        Ok(())
    }

    /// When the cache has room again for what it holds: now, or when
    /// enough destages (oldest known completion first) have completed.
    fn room_at(&self, st: &mut State) -> Due2 {
        let now = st.clock();
        st.inflight.retain_mut(|d| !d.complete(now));
        let mut held = st.dirty_bytes + st.inflight.iter().map(|d| d.bytes).sum::<u64>();
        let mut due = (now, Vec::new());
        if held <= self.p.size_bytes {
            return due;
        }
        st.inflight.sort_by_key(|d| d.done);
        for d in &st.inflight {
            held -= d.bytes;
            due.0 = due.0.max(d.done);
            due.1.extend(d.ticket.clone());
            if held <= self.p.size_bytes {
                break;
            }
        }
        due
    }

    /// Every destage in flight has completed.
    fn all_destaged(st: &mut State) -> Due2 {
        let now = st.clock();
        st.inflight.retain_mut(|d| !d.complete(now));
        let t = st.inflight.iter().map(|d| d.done).max().unwrap_or(now);
        (
            t,
            st.inflight
                .iter()
                .filter_map(|d| d.ticket.clone())
                .collect(),
        )
    }

    /// Destage every dirty extent touching `[off, end)` (all with `None`);
    /// when those destages complete.
    fn destage_range(
        &self,
        st: &mut State,
        range: Option<(u64, u64)>,
        fua: bool,
    ) -> Result<Due2, BlockError> {
        let keys: Vec<u64> = st
            .dirty
            .iter()
            .filter(|(k, e)| range.is_none_or(|(a, b)| **k < b && **k + e.data.len() as u64 > a))
            .map(|(k, _)| *k)
            .collect();
        let mut due = (st.clock(), Vec::new());
        for k in keys {
            let len = st.dirty[&k].data.len() as u64;
            let data = Self::cut(st, k, k, k + len);
            let (t, ticket) = self.destage(st, k, &data, fua)?;
            due.0 = due.0.max(t);
            due.1.extend(ticket);
        }
        Ok(due)
    }

    pub fn counter_values(&self) -> Vec<(String, u64)> {
        let n = &self.n;
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let dirty = self.lock().dirty_bytes;
        vec![
            ("read_hits".into(), load(&n.read_hits)),
            ("read_misses".into(), load(&n.read_misses)),
            ("readahead_reads".into(), load(&n.readahead_reads)),
            ("readahead_bytes".into(), load(&n.readahead_bytes)),
            ("write_back_writes".into(), load(&n.write_back)),
            ("write_through_writes".into(), load(&n.write_through)),
            ("destages".into(), load(&n.destages)),
            ("destage_bytes".into(), load(&n.destage_bytes)),
            ("flushes".into(), load(&n.flushes)),
            ("dirty_bytes".into(), dirty),
        ]
    }
}

/// A layer: caps and the stack's walk forward to the device beneath, as
/// for every layer; the data operations are the cache's own.
impl Layer for CacheLayer {
    fn next(&self) -> &Arc<dyn BlockDev> {
        &self.next
    }

    fn label(&self) -> String {
        let w = match self.p.write {
            WritePolicy::Back => "back",
            WritePolicy::Through => "through",
        };
        let r = match self.p.read {
            ReadPolicy::None => "none",
            ReadPolicy::Ahead => "ahead",
            ReadPolicy::Adaptive => "adaptive",
        };
        format!("cache({},write={w},read={r})", fmt_bytes(self.p.size_bytes))
    }

    fn counters(&self) -> Vec<Counter> {
        self.counter_values()
            .into_iter()
            .map(|(n, v)| match n.as_str() {
                "dirty_bytes" => Counter::gauge(n, v),
                _ => Counter::total(n, v),
            })
            .collect()
    }

    fn read_at(&self, ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        let mut st = self.lock_at(ctx);
        let ahead = self.wants_ahead(&mut st, offset, buf.len() as u64);
        match Self::from_lines(&st, buf, offset) {
            Some((ready, tickets)) => {
                bump(&self.n.read_hits, 1);
                let cost = self.hit_cost(buf.len());
                ctx.hold_until_at(ready.max(st.clock()) + cost);
                for t in tickets {
                    ctx.add_ticket(Arc::new(After(t, cost)));
                }
            }
            None => {
                bump(&self.n.read_misses, 1);
                let mut c = self.below(&st);
                self.next.read_at(&mut c, buf, offset)?;
                // Store and forward: the data lands in the controller's
                // memory and crosses to the host as a hit's does (`hit +
                // bytes / hit_rate`), a piece at a time as the pieces
                // arrive: done one piece's cost after the last data
                // arrived, and no sooner than the whole transfer's cost
                // after the request went below.
                let start = st.clock() + self.p.miss;
                let piece = self.hit_cost(buf.len().min(FORWARD_PIECE_BYTES));
                let all = start + self.hit_cost(buf.len());
                ctx.hold_until_at(c.hold_until().map_or(all, |h| all.max(h + piece)));
                if let Some(t) = ticket_of(&mut c) {
                    ctx.add_ticket(Arc::new(After(t, piece)));
                }
            }
        }
        Self::overlay(&st, buf, offset);
        if ahead {
            self.read_ahead(&mut st, offset + buf.len() as u64)?;
        }
        Ok(())
    }

    fn write_at(&self, ctx: &mut IoCtx, buf: &[u8], offset: u64, fua: bool) -> BlockResult {
        let mut st = self.lock_at(ctx);
        Self::patch_lines(&mut st, buf, offset);
        if self.p.write == WritePolicy::Through {
            bump(&self.n.write_through, 1);
            let mut c = self.below(&st);
            self.next.write_at(&mut c, buf, offset, fua)?;
            pass(&mut c, ctx);
            return Ok(());
        }
        bump(&self.n.write_back, 1);
        let key = Self::insert_dirty(&mut st, offset, buf);
        ctx.hold_until_at(st.clock() + self.hit_cost(buf.len()));
        if fua {
            let end = offset + buf.len() as u64;
            hold(ctx, self.destage_range(&mut st, Some((offset, end)), true)?);
        } else {
            self.destage_full_stripes(&mut st, key)?;
            self.destage_oldest(&mut st)?;
            hold(ctx, self.room_at(&mut st));
        }
        Ok(())
    }

    fn flush(&self, ctx: &mut IoCtx) -> BlockResult {
        let mut st = self.lock_at(ctx);
        bump(&self.n.flushes, 1);
        self.destage_range(&mut st, None, false)?;
        let (last, tickets) = Self::all_destaged(&mut st);
        hold(ctx, (last, tickets));
        let mut c = IoCtx::starting_at(Some(last));
        self.next.flush(&mut c)?;
        pass(&mut c, ctx);
        Ok(())
    }

    fn trim(&self, ctx: &mut IoCtx, offset: u64, len: u64, fua: bool) -> BlockResult {
        let mut st = self.lock_at(ctx);
        self.destage_range(&mut st, Some((offset, offset + len)), false)?;
        st.lines
            .retain(|li, _| li * LINE + LINE <= offset || li * LINE >= offset + len);
        self.next.trim(ctx, offset, len, fua)
    }

    fn zero(&self, ctx: &mut IoCtx, z: ZeroReq) -> BlockResult {
        let (offset, len) = (z.offset, z.len_bytes);
        let mut st = self.lock_at(ctx);
        self.destage_range(&mut st, Some((offset, offset + len)), false)?;
        st.lines
            .retain(|li, _| li * LINE + LINE <= offset || li * LINE >= offset + len);
        self.next.zero(ctx, z)
    }
}
