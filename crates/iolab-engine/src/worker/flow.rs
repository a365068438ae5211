//! Flow control (fio's `flow`, `flow_id`, `flow_sleep`): workers of jobs
//! sharing a flow id keep their I/O counts in the ratio of their weights.
//!
//! Each flow group has a shared I/O counter and the sum of the weights of
//! the workers running in it. Before taking an I/O, a worker compares its
//! own share of the group's I/Os with its share of the weights; when it is
//! ahead it is held back (the I/O is not taken), otherwise the I/O counts
//! on both counters. A worker joins its group when it starts and leaves it
//! (taking its I/Os and weight out) when it ends, so workers of later
//! stonewall groups, or ones that finished, do not hold others back — the
//! same rule as fio's flow.c, written from its documented behaviour.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The shared state of one flow id.
#[derive(Debug)]
struct FlowGroup {
    /// I/Os admitted by the group's running workers, plus 1 (so the first
    /// worker's share is defined).
    ios: AtomicU64,
    /// Sum of the running workers' weights.
    weight: AtomicU64,
}

/// Every flow group of a run, by flow id.
#[derive(Debug, Default)]
pub struct FlowRegistry {
    groups: Mutex<HashMap<u32, Arc<FlowGroup>>>,
}

impl FlowRegistry {
    /// Join flow `id` with `weight` (> 0).
    pub(crate) fn join(&self, id: u32, weight: u32) -> FlowMember {
        let mut groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        let g = groups
            .entry(id)
            .or_insert_with(|| {
                Arc::new(FlowGroup {
                    ios: AtomicU64::new(1),
                    weight: AtomicU64::new(0),
                })
            })
            .clone();
        g.weight.fetch_add(u64::from(weight), Ordering::Relaxed);
        FlowMember {
            group: g,
            weight: u64::from(weight),
            ios: 0,
            held: 0,
        }
    }
}

/// One worker's place in its flow group; leaves the group when dropped.
#[derive(Debug)]
pub(crate) struct FlowMember {
    group: Arc<FlowGroup>,
    weight: u64,
    /// I/Os this worker was admitted.
    ios: u64,
    /// Times it was held back (for the note at the end).
    pub(crate) held: u64,
}

impl FlowMember {
    /// Whether the worker may take one more I/O now; if so it is counted.
    #[inline]
    pub(crate) fn admit(&mut self) -> bool {
        // Acquire: a member's leaving (Release, after it set a stop flag)
        // makes that flag visible to this worker's next look at it.
        let total = self.group.ios.load(Ordering::Acquire).max(1);
        let weights = self.group.weight.load(Ordering::Acquire).max(1);
        // ios/total > weight/weights, in integers (no rounding at small counts).
        if u128::from(self.ios) * u128::from(weights) > u128::from(self.weight) * u128::from(total)
        {
            self.held += 1;
            return false;
        }
        self.group.ios.fetch_add(1, Ordering::Relaxed);
        self.ios += 1;
        true
    }
}

impl Drop for FlowMember {
    fn drop(&mut self) {
        self.group.ios.fetch_sub(self.ios, Ordering::Release);
        self.group.weight.fetch_sub(self.weight, Ordering::Release);
    }
}

impl<B: super::Backend> super::Worker<B> {
    /// Join the job's flow group, if it has one (when I/O starts).
    pub(super) fn flow_join(&mut self) {
        let c = &self.pacing.control;
        if c.flow > 0 {
            self.pacing.flow = Some(self.ctl.flows.join(c.flow_id, c.flow));
            // From now on it looks at the stop flags on every turn (stopping).
            self.halt_check_ns.set(0);
        }
    }

    /// The worker was held back by its flow: wait as fio does — drain the
    /// queue and sleep `flow_sleep`, or (without one) wait for a completion
    /// when there is one to wait for, else give the CPU away once.
    pub(super) fn flow_wait(&mut self) -> Result<(), crate::EngineError> {
        if self.pacing.control.flow_sleep_us > 0 {
            self.quiesce()?;
            let until = self.last_ns + self.pacing.control.flow_sleep_us * 1000;
            self.sleep_until(until);
        } else if self.q.inflight > 0 {
            self.reap(1)?;
        } else {
            std::thread::yield_now();
            self.clock();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two members driven in turn, each taking an I/O whenever admitted:
    /// their counts end in the ratio of the weights.
    #[test]
    fn admitted_counts_follow_the_weights() {
        let reg = FlowRegistry::default();
        let mut a = reg.join(7, 1);
        let mut b = reg.join(7, 8);
        let mut other = reg.join(8, 1); // another flow id: never held back by 7
        let (mut na, mut nb) = (0u64, 0u64);
        for _ in 0..90_000 {
            na += u64::from(a.admit());
            nb += u64::from(b.admit());
            assert!(other.admit());
        }
        assert!(na > 0 && nb > 0);
        let ratio = nb as f64 / na as f64;
        assert!((ratio - 8.0).abs() < 0.01, "ratio {ratio}");
        // A member that leaves takes its weight out: b alone is never held.
        drop(a);
        let held = b.held;
        for _ in 0..100 {
            assert!(b.admit());
        }
        assert_eq!(b.held, held);
    }
}
