//! The latency-target search (fio's `latency_target`, `latency_window`,
//! `latency_percentile`, `latency_run`): find the highest queue depth at
//! which the job's total latency meets the target.
//!
//! The worker starts at depth 1. At the end of each window it judges the
//! window's completions: when at least `latency_percentile` % of them took
//! no longer than the target, the window succeeded and the depth goes up
//! (doubling until a window has failed, then halfway to the lowest failed
//! depth); otherwise it goes down halfway to the highest good depth. At
//! 100 % one I/O over the target fails the window at once. When a success
//! leaves the depth where it was, the search has settled: the queue is
//! drained, the statistics start afresh and one more window runs at that
//! depth, after which the job ends — unless `latency_run`, which keeps
//! adjusting for the whole run. Three successes in a row one below the
//! highest failed depth raise that bound by one (the device may have
//! improved). Written from fio's documented algorithm (io_u.c), in iolab's
//! worker: the depth caps the I/Os in flight, nothing else changes.

use iolab_core::job::IoControl;

/// What the worker must do after an event of the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Nothing.
    Go,
    /// Drain the queue (the depth went down, or the final window starts);
    /// `reset`: start the statistics afresh (the final window).
    Quiesce { reset: bool },
    /// The final window is over: the job ends.
    Done,
    /// An I/O missed the target at depth 1 with latency_percentile=100.
    Missed,
}

#[derive(Debug, Clone)]
pub(super) struct LatTarget {
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    run: bool,
    max_qd: u32,
    /// The depth in force.
    pub(super) qd: u32,
    low: u32,
    high: u32,
    stable: u32,
    window_start_ns: u64,
    ios: u64,
    failed: u64,
    end_run: bool,
}

impl LatTarget {
    /// The search of a job, or None when it has no latency_target.
    pub(super) fn new(c: &IoControl, iodepth: u32) -> Option<LatTarget> {
        (c.latency_target_ns > 0).then(|| LatTarget {
            target_ns: c.latency_target_ns,
            window_ns: c.latency_window_ns.max(1),
            percentile: c.latency_percentile,
            run: c.latency_run,
            max_qd: iodepth.max(1),
            qd: 1,
            low: 1,
            high: iodepth.max(1),
            stable: 0,
            window_start_ns: 0,
            ios: 0,
            failed: 0,
            end_run: false,
        })
    }

    pub(super) fn start(&mut self, now_ns: u64) {
        self.new_window(now_ns);
    }

    fn new_window(&mut self, now_ns: u64) {
        self.window_start_ns = now_ns;
        self.ios = 0;
        self.failed = 0;
    }

    /// One I/O completed with total latency `lat_ns` at `now_ns`.
    #[inline]
    pub(super) fn completed(&mut self, lat_ns: u64, now_ns: u64) -> Step {
        self.ios += 1;
        if lat_ns <= self.target_ns {
            return Step::Go;
        }
        if self.percentile < 100.0 {
            self.failed += 1;
            return Step::Go;
        }
        self.window_failed(now_ns)
    }

    /// Judge the window if it is over (called from the loop).
    #[inline]
    pub(super) fn check(&mut self, now_ns: u64) -> Step {
        if now_ns < self.window_start_ns + self.window_ns || self.ios == 0 {
            // A window without completions says nothing: it goes on.
            return Step::Go;
        }
        let ok_pct = (self.ios - self.failed) as f64 * 100.0 / self.ios as f64;
        if ok_pct >= self.percentile {
            self.window_succeeded(now_ns)
        } else {
            self.window_failed(now_ns)
        }
    }

    fn window_failed(&mut self, now_ns: u64) -> Step {
        if self.qd == 1 {
            if self.percentile >= 100.0 {
                return Step::Missed;
            }
            // Already at the bottom: judge the next window at depth 1.
            self.new_window(now_ns);
            return Step::Go;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        self.new_window(now_ns);
        Step::Quiesce { reset: false }
    }

    fn window_succeeded(&mut self, now_ns: u64) -> Step {
        let before = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = if self.high != self.max_qd {
            (self.qd + self.high) / 2
        } else {
            self.qd * 2
        }
        .min(self.max_qd);
        self.new_window(now_ns);
        if self.run || self.qd != before {
            return Step::Go;
        }
        if self.end_run {
            return Step::Done;
        }
        self.end_run = true;
        Step::Quiesce { reset: true }
    }

    pub(super) fn target_ns(&self) -> u64 {
        self.target_ns
    }
}

impl super::Pacing {
    /// A completion's latency into the search; a step it asks for is kept
    /// for `lat_follow` (a miss is never overwritten).
    #[inline]
    pub(super) fn lat_completed(&mut self, lat_ns: u64, now_ns: u64) {
        if let Some(l) = self.lat.as_mut() {
            let step = l.completed(lat_ns, now_ns);
            if step != Step::Go && self.lat_step != Step::Missed {
                self.lat_step = step;
            }
        }
    }
}

impl<B: super::Backend> super::Worker<B> {
    /// Whether the latency search's depth is reached (the loop must reap).
    #[inline]
    pub(super) fn lat_full(&self) -> bool {
        self.pacing
            .lat
            .as_ref()
            .is_some_and(|l| self.q.inflight >= l.qd)
    }

    /// Act on the search: what a completion asked, else the window's end.
    /// True when the loop should look again before issuing.
    pub(super) fn lat_follow(&mut self) -> Result<bool, crate::EngineError> {
        let Some(l) = self.pacing.lat.as_mut() else {
            return Ok(false);
        };
        let step = match std::mem::replace(&mut self.pacing.lat_step, Step::Go) {
            Step::Go => l.check(self.last_ns),
            s => s,
        };
        match step {
            Step::Go => Ok(false),
            Step::Quiesce { reset } => {
                self.quiesce()?;
                if reset {
                    let now = self.clock();
                    self.rec.restart(now);
                }
                Ok(true)
            }
            Step::Done => {
                self.pacing.lat_done = true;
                Ok(true)
            }
            Step::Missed => {
                let target = l.target_ns();
                self.error
                    .get_or_insert(crate::EngineError::LatencyTarget(format!(
                        "an I/O took longer than latency_target={target} ns at queue depth 1 \
                     (latency_percentile=100): the target cannot be met; raise it or lower \
                     latency_percentile"
                    )));
                Ok(true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(target_ns: u64, iodepth: u32, pct: f64) -> LatTarget {
        let c = IoControl {
            latency_target_ns: target_ns,
            latency_window_ns: 1000,
            latency_percentile: pct,
            ..IoControl::default()
        };
        LatTarget::new(&c, iodepth).unwrap()
    }

    /// A device model whose latency is depth × 100 µs (one request at a
    /// time, served in turn): the search settles at the highest depth
    /// within the target, runs one final window there, and ends.
    fn settle(target_ns: u64, iodepth: u32) -> (u32, Vec<u32>) {
        let mut s = search(target_ns, iodepth, 100.0);
        let mut now = 0;
        s.start(now);
        let mut depths = vec![s.qd];
        for _ in 0..1000 {
            now += 100;
            let lat = u64::from(s.qd) * 100_000;
            match s.completed(lat, now) {
                Step::Missed => panic!("missed at depth 1"),
                Step::Go | Step::Quiesce { .. } => {}
                Step::Done => return (s.qd, depths),
            }
            match s.check(now) {
                Step::Done => return (s.qd, depths),
                Step::Missed => panic!("missed"),
                _ => {}
            }
            if depths.last() != Some(&s.qd) {
                depths.push(s.qd);
            }
        }
        panic!("no end: {depths:?}");
    }

    #[test]
    fn settles_at_the_highest_depth_within_the_target() {
        for (target_us, want) in [(100, 1), (250, 2), (1_000, 10), (1_250, 12), (5_000, 32)] {
            let (qd, path) = settle(target_us * 1000, 32);
            assert_eq!(qd, want, "target {target_us} us: path {path:?}");
        }
        // Doubling first, then bisection: 1 2 4 8 16 (fails) 12 10 11 (fails) 10.
        let (_, path) = settle(1_000_000, 32);
        assert_eq!(&path[..5], &[1, 2, 4, 8, 16], "{path:?}");
    }

    #[test]
    fn percentile_counts_a_share_and_depth_one_miss_is_fatal_at_100() {
        let mut s = search(1000, 8, 90.0);
        s.start(0);
        // 95 of 100 within the target: the window succeeds, depth doubles.
        for i in 0..100 {
            assert_eq!(s.completed(if i < 5 { 2000 } else { 500 }, 10), Step::Go);
        }
        assert_eq!(s.check(1000), Step::Go);
        assert_eq!(s.qd, 2);
        // 80 of 100: it fails, back to 1.
        for i in 0..100 {
            s.completed(if i < 20 { 2000 } else { 500 }, 1500);
        }
        assert_eq!(s.check(2000), Step::Quiesce { reset: false });
        assert_eq!(s.qd, 1);
        let mut strict = search(1000, 8, 100.0);
        strict.start(0);
        assert_eq!(strict.completed(1001, 5), Step::Missed);
    }
}
