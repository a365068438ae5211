//! sim-hdd's choice of the next command: shortest positioning time first
//! (SPTF) among the queued commands, as methods of [`HddModel`] (see
//! hdd.rs for when decisions are taken).
use super::{buffer, HddModel, Pending, Stream};
use crate::stack::sim::SimOp;

impl HddModel {
    /// Shortest positioning time first among the queue indices `arrived`;
    /// ties go to the earlier arrival (lower index).
    ///
    /// The same choice as taking [`Self::positioning`] of every command,
    /// at a fraction of the cost at deep queues (hand-written; no crate
    /// does SPTF): a cheap lower bound of each (overhead + the seek
    /// table's floor, no square root, no rotation) orders them, and the
    /// exact figure is computed only while a bound can still beat the best
    /// so far. A skipped command's bound already exceeds the best, so its
    /// exact figure would too (`lower_bound`): the pick, and every
    /// completion time, is unchanged.
    pub(super) fn sptf(&mut self, t: f64, arrived: &[usize]) -> usize {
        let mut bounds = std::mem::take(&mut self.bounds);
        bounds.clear();
        // Where the look-ahead is at t: the same for every command.
        let stream = self.stream.map(|st| (st, self.prefetched(&st, t)));
        bounds.extend(
            arrived
                .iter()
                .map(|&i| self.lower_bound(t, stream, &self.queue[i])),
        );
        // Start from the most promising command, then visit the rest in
        // queue order, skipping each whose bound exceeds the best so far.
        let first = (0..bounds.len())
            .min_by(|&a, &b| bounds[a].total_cmp(&bounds[b]))
            .expect("a command has arrived by t");
        let i0 = arrived[first];
        let mut best = (self.positioning(t, &self.queue[i0]), i0);
        for (k, &i) in arrived.iter().enumerate() {
            if k == first || bounds[k] > best.0 {
                continue;
            }
            let v = self.positioning(t, &self.queue[i]);
            if v.total_cmp(&best.0).then(i.cmp(&best.1)).is_lt() {
                best = (v, i);
            }
        }
        self.bounds = bounds;
        // Under test, every decision is checked against the exhaustive
        // pick (every command's exact positioning): the pruning must never
        // change a choice.
        #[cfg(test)]
        {
            let all = arrived
                .iter()
                .map(|&i| (self.positioning(t, &self.queue[i]), i))
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
                .map(|(_, i)| i);
            assert_eq!(all, Some(best.1), "SPTF pruning changed a decision");
        }
        best.1
    }

    /// A lower bound on [`Self::positioning`], in the same floating-point
    /// steps: `(ov + seek) + rotation` >= `ov + floor` because the floor
    /// is <= the seek and rotation >= 0 (IEEE addition is monotone).
    fn lower_bound(&self, t: f64, stream: Option<(Stream, u64)>, p: &Pending) -> f64 {
        let r = &p.r;
        if r.op == SimOp::Read {
            // `continues`, with the look-ahead's position computed once; 0
            // also bounds a read ahead of the head (its wait for the media):
            // the bound must never exceed `positioning`, or pruning would
            // skip the best candidate.
            let streaming = stream.is_some_and(|(st, upto)| buffer::stream_continues(&st, upto, r));
            if streaming || self.buffer_hit_cached(p) {
                return 0.0;
            }
        }
        let ov = self.overhead_left(t, p);
        if r.offset == self.head_off {
            return ov;
        }
        ov + self.m.seek_floor_ns(self.head_track, p.track)
    }

    /// The command overhead still to pay at `t`: a command queued while
    /// the mechanism was busy has been decoded meanwhile (NCQ overlaps it).
    pub(super) fn overhead_left(&self, t: f64, p: &Pending) -> f64 {
        let ov = self.m.p.overhead_ns as f64;
        (ov - (t - p.arrival as f64)).max(0.0)
    }

    /// How far the data of `p` is from the head at `t` (0: in the buffer or
    /// streaming past it; a read ahead of the look-ahead: until the head
    /// reaches it).
    pub(super) fn positioning(&self, t: f64, p: &Pending) -> f64 {
        let r = &p.r;
        if r.op == SimOp::Read {
            if self.continues(t, r) {
                return self.stream_wait_ns(t, r);
            }
            if self.buffer_hit_cached(p) {
                return 0.0;
            }
        }
        let ov = self.overhead_left(t, p);
        let t = t + ov;
        if r.offset == self.head_off {
            return ov + self.m.rot_wait_ns(t, p.angle);
        }
        let seek = self
            .m
            .seek_ns(self.head_track, p.track, r.op != SimOp::Read);
        ov + seek + self.m.rot_wait_ns(t + seek, p.angle)
    }
}
