//! The worker's clock: CLOCK_MONOTONIC in nanoseconds, and waiting until an
//! instant of it.
//!
//! `clock_gettime(CLOCK_MONOTONIC)` is a vDSO call (no system call with the
//! TSC clock source; ~20 ns here), the same clock `Instant` and the CPU
//! samples use, and a plain `u64` is cheaper to store per slot and subtract
//! than an `Instant`. The worker takes one reading per submitted batch and
//! one per reaped batch, not one per I/O.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Busy-wait this close to a deadline instead of sleeping: a sleeping
/// thread wakes up late by the timer slack plus scheduling, tens of µs.
const SPIN_NS: u64 = 30_000;
/// Longest single sleep, so a stop request is seen promptly.
const MAX_SLEEP_NS: u64 = 20_000_000;

/// CLOCK_MONOTONIC, ns.
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep, then spin, until `deadline_ns` (CLOCK_MONOTONIC). Returns the
/// time it woke up, or `None` early if `stop` was raised.
pub fn wait_until(deadline_ns: u64, stop: &AtomicBool) -> Option<u64> {
    loop {
        let now = now_ns();
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        if now >= deadline_ns {
            return Some(now);
        }
        let left = deadline_ns - now;
        if left > SPIN_NS {
            std::thread::sleep(Duration::from_nanos((left - SPIN_NS).min(MAX_SLEEP_NS)));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Lower this thread's timer slack to 1 µs (default 50 µs) so sleeps for
/// rate limiting and thinktime end when asked. Best effort.
pub fn tighten_timer_slack() {
    // Safety: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong, 0, 0, 0) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_until_deadline_and_stops_early() {
        let stop = AtomicBool::new(false);
        let t0 = now_ns();
        let woke = wait_until(t0 + 2_000_000, &stop).unwrap();
        assert!(
            woke >= t0 + 2_000_000 && woke < t0 + 50_000_000,
            "{}",
            woke - t0
        );
        stop.store(true, Ordering::Relaxed);
        assert_eq!(wait_until(now_ns() + 10_000_000_000, &stop), None);
    }
}
