//! The worker's clock: CLOCK_MONOTONIC's time line in nanoseconds, and
//! waiting until an instant of it.
//!
//! Every time in the engine (issue, submit and completion instants, the
//! run's start, rate schedules, offload completions) comes from [`now_ns`]
//! or a copy of its [`Clock`], so they all share one time line.
//!
//! Where the kernel itself keeps time with the TSC (clock source `tsc`: an
//! invariant TSC it found synchronised across CPUs), the clock reads the
//! TSC directly, as fio's default `clocksource=cpu` does: a plain `rdtsc`
//! is ~10 ns here, `clock_gettime(CLOCK_MONOTONIC)` ~20 ns (its vDSO issues
//! an ordered `rdtscp` and a sequence-lock read). The ticks are turned into
//! CLOCK_MONOTONIC nanoseconds by a scale measured once per process
//! against CLOCK_MONOTONIC over [`CALIBRATE_NS`] (error ≈ 30 ns over that
//! window: a few ppm, so two readings a second apart differ from
//! CLOCK_MONOTONIC's by a few µs at most, and a latency of 1 ms by a few ns).
//! Anywhere else (another clock source, another architecture) it is
//! `clock_gettime(CLOCK_MONOTONIC)` itself. The worker takes one reading
//! per submitted batch (before staging and after the commit) and one per
//! reaped batch, not one per I/O; at a full queue the reap's reading is
//! also the next batch's start (`handoff`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Busy-wait this close to a deadline instead of sleeping: a sleeping
/// thread wakes up late by the timer slack plus scheduling, tens of µs.
const SPIN_NS: u64 = 30_000;
/// Longest single sleep, so a stop request is seen promptly.
const MAX_SLEEP_NS: u64 = 20_000_000;
/// How long the TSC is measured against CLOCK_MONOTONIC (once per process).
pub const CALIBRATE_NS: u64 = 10_000_000;

/// CLOCK_MONOTONIC from the kernel, ns.
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// TSC ticks → CLOCK_MONOTONIC ns: `base_ns + (tsc − base_tsc) × scale / 2³²`.
#[derive(Debug, Clone, Copy)]
struct TscScale {
    base_tsc: u64,
    base_ns: u64,
    ns_per_tick_q32: u64,
}

/// The engine's clock (see the module doc); `Copy`, so a worker keeps its
/// own and reads it without touching shared memory.
#[derive(Debug, Clone, Copy)]
pub struct Clock(Option<TscScale>);

static CLOCK: OnceLock<Clock> = OnceLock::new();

impl Clock {
    /// The process's clock (calibrated on first use).
    pub fn get() -> Clock {
        *CLOCK.get_or_init(|| Clock(tsc::calibrate()))
    }

    /// True when readings come from the TSC.
    pub fn is_tsc(&self) -> bool {
        self.0.is_some()
    }

    /// Now, ns on CLOCK_MONOTONIC's time line.
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        match self.0 {
            Some(s) => {
                let ticks = tsc::read().saturating_sub(s.base_tsc);
                s.base_ns + ((u128::from(ticks) * u128::from(s.ns_per_tick_q32)) >> 32) as u64
            }
            None => monotonic_ns(),
        }
    }
}

/// Now, ns on CLOCK_MONOTONIC's time line (the engine's one clock).
#[inline]
pub fn now_ns() -> u64 {
    Clock::get().now_ns()
}

#[cfg(target_arch = "x86_64")]
mod tsc {
    use super::{monotonic_ns, TscScale, CALIBRATE_NS};

    #[inline(always)]
    pub fn read() -> u64 {
        // Safety: rdtsc has no preconditions; `calibrate` only hands out a
        // scale (so this is only reached) where the TSC is invariant.
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    /// (ticks, ns) read together: the pair with the tightest bracket of a
    /// few tries, so a preemption between the reads does not skew it.
    fn pair() -> (u64, u64) {
        let mut best = (u64::MAX, 0, 0);
        for _ in 0..16 {
            let a = read();
            let ns = monotonic_ns();
            let b = read();
            if b.wrapping_sub(a) < best.0 {
                best = (b.wrapping_sub(a), a + (b - a) / 2, ns);
            }
        }
        (best.1, best.2)
    }

    /// The kernel keeps CLOCK_MONOTONIC with the TSC (so it found it
    /// invariant and synchronised across CPUs).
    fn kernel_uses_tsc() -> bool {
        let p = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
        std::fs::read_to_string(p).is_ok_and(|s| s.trim() == "tsc")
    }

    pub fn calibrate() -> Option<TscScale> {
        if !kernel_uses_tsc() {
            return None;
        }
        let (t0, n0) = pair();
        std::thread::sleep(std::time::Duration::from_nanos(CALIBRATE_NS));
        let (t1, n1) = pair();
        let (ticks, ns) = (t1.checked_sub(t0)?, n1.checked_sub(n0)?);
        let scale = ((u128::from(ns) << 32) / u128::from(ticks.max(1))) as u64;
        // 100 MHz ..= 20 GHz, else something is off: use the kernel's clock.
        let ok = (1u64 << 32) / 20..=(1u64 << 32) * 10;
        ok.contains(&scale).then_some(TscScale {
            base_tsc: t1,
            base_ns: n1,
            ns_per_tick_q32: scale,
        })
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod tsc {
    use super::TscScale;

    pub fn read() -> u64 {
        0
    }

    pub fn calibrate() -> Option<TscScale> {
        None
    }
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

    /// One try: the clock against CLOCK_MONOTONIC over 50 ms; `None` if a
    /// preemption got between the paired reads (then the try says nothing).
    fn lapse_error_ns(c: &Clock) -> Option<u64> {
        let (a, m0, b) = (c.now_ns(), monotonic_ns(), c.now_ns());
        assert!(a <= b, "{a} > {b}");
        std::thread::sleep(Duration::from_millis(50));
        // Warm both paths again after the sleep (a cold first read is µs late).
        (0..8).for_each(|_| _ = (c.now_ns(), monotonic_ns()));
        let (d, m1, e) = (c.now_ns(), monotonic_ns(), c.now_ns());
        if b - a > 20_000 || e - d > 20_000 {
            return None;
        }
        // The kernel's readings lie between the clock's on both sides.
        assert!(a <= m0 + 100_000 && m0 <= b + 100_000, "{a} {m0} {b}");
        Some((m1 - m0).abs_diff(d - a))
    }

    #[test]
    fn follows_clock_monotonic() {
        let c = Clock::get();
        // 50 ms agree to 2 µs (the 50 ms carry a few ppm of scale error
        // and the two brackets' widths) in one of a few tries.
        let errs: Vec<_> = (0..10).filter_map(|_| lapse_error_ns(&c)).collect();
        assert!(
            errs.iter().any(|&e| e < 2_000),
            "{errs:?} tsc {}",
            c.is_tsc()
        );
    }

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
