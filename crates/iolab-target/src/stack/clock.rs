//! The present, as the stack sees it: the wall clock when serving, the
//! lab runner's virtual clock when it drives a stack (lab.rs).
//!
//! Pieces that decide by the present — a simulated disk deciding what its
//! mechanism does next, the controller cache's firmware, a delay counting
//! from now — read [`now`]. Serving, that is `Instant::now()`. The lab
//! runner drives a stack on a virtual clock on one thread and sets the
//! present to each instant it simulates ([`VirtualNow`]), so the stack
//! decides at the same moments there as it does live: a simulated disk
//! that is free when a request arrives decides it at once in both, and a
//! dependent step (RAID 5's writes after its reads) starts after what it
//! depends on in both. (Before this, the lab runner's devices saw the wall
//! clock — an hour before the virtual one — so they never decided at a
//! request's arrival, and RAID 5's writes started before their reads
//! were decided: with the disk cache on, the reads then found the new data
//! in the drive's cache, and the model served write-through 3x faster than
//! the live stack.)

use std::cell::Cell;
use std::time::Instant;

thread_local! {
    static VIRTUAL: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The present: the virtual one set on this thread, else the wall clock.
pub fn now() -> Instant {
    VIRTUAL.with(Cell::get).unwrap_or_else(Instant::now)
}

/// While alive, [`now`] on this thread is the instant last [`set`](VirtualNow::set).
#[derive(Debug)]
pub struct VirtualNow(());

impl VirtualNow {
    /// Start a virtual clock at `t` on this thread.
    pub fn start(t: Instant) -> VirtualNow {
        VIRTUAL.with(|v| v.set(Some(t)));
        VirtualNow(())
    }

    /// Move the present to `t`.
    pub fn set(&self, t: Instant) {
        VIRTUAL.with(|v| v.set(Some(t)));
    }
}

impl Drop for VirtualNow {
    fn drop(&mut self) {
        VIRTUAL.with(|v| v.set(None));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn virtual_on_this_thread_only_and_until_dropped() {
        let t = Instant::now() + Duration::from_secs(3600);
        {
            let v = VirtualNow::start(t);
            assert_eq!(now(), t);
            v.set(t + Duration::from_secs(1));
            assert_eq!(now(), t + Duration::from_secs(1));
            let other = std::thread::spawn(now).join().unwrap();
            assert!(other < t, "another thread sees the wall clock");
        }
        assert!(now() < t, "the wall clock again once dropped");
    }
}
