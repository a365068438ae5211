//! The cpuio engine (fio's `cpuio`): no I/O at all; each worker burns
//! `cpuload` percent of one CPU, in cycles of `cpuchunks` microseconds —
//! busy for the load's share of the cycle, asleep for the rest. Used to
//! load a host beside the I/O jobs.
//!
//! Its backend is the null one ([`CpuioBackend`]): there is nothing to queue, and cycles are not
//! I/Os, so the worker runs [`CpuBurner::cycle`] instead of its I/O loop
//! (no I/O is reported; the run's CPU accounting shows the load).
//!
//! `cpumode=qsort` (fio's) burns the busy part by sorting freshly drawn
//! random numbers instead of the arithmetic loop: real work on memory,
//! which draws more power than the noop loop.
//!
//! The busy part is measured in the thread's own CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`), not wall time: on a busy host the thread
//! still gets its share of work done, and the cycle stretches instead.

use std::hint::black_box;
use std::time::{Duration, Instant};

use iolab_core::job::CpuMode;

/// cpuio's row in the engine table names this: the null backend, opened
/// but never queued to, since the worker burns CPU instead of its I/O loop.
pub type CpuioBackend = super::null::NullBackend;

/// Numbers sorted per qsort round (32 KiB of u64: a cache-sized array).
const QSORT_LEN: usize = 4096;

/// One worker's burn settings.
#[derive(Debug, Clone, Copy)]
pub struct CpuBurner {
    busy_ns: u64,
    cycle_ns: u64,
    mode: CpuMode,
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: `ts` is a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl CpuBurner {
    pub fn new(load_pct: u32, chunk_us: u64) -> CpuBurner {
        let cycle_ns = chunk_us.max(1) * 1000;
        CpuBurner {
            busy_ns: cycle_ns * u64::from(load_pct.min(100)) / 100,
            cycle_ns,
            mode: CpuMode::Noop,
        }
    }

    pub fn with_mode(self, mode: CpuMode) -> CpuBurner {
        CpuBurner { mode, ..self }
    }

    /// One cycle: burn `busy_ns` of this thread's CPU time, then sleep for
    /// what is left of the cycle's wall time (nothing when the burn itself
    /// took that long). Returns the arrays sorted (qsort; 0 for noop).
    pub fn cycle(&self) -> u64 {
        let start = Instant::now();
        let until = thread_cpu_ns() + self.busy_ns;
        let sorts = match self.mode {
            CpuMode::Noop => {
                noop_until(until);
                0
            }
            CpuMode::Qsort => sorts_until(until),
        };
        let rest = Duration::from_nanos(self.cycle_ns).saturating_sub(start.elapsed());
        if !rest.is_zero() {
            std::thread::sleep(rest);
        }
        sorts
    }
}

fn noop_until(until_cpu_ns: u64) {
    let mut x = 0x9e37_79b9_u64;
    while thread_cpu_ns() < until_cpu_ns {
        // Work the compiler cannot drop; the clock is read every 1000 rounds.
        for _ in 0..1000 {
            x = black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
    }
}

/// Fill an array with random numbers and sort it, again and again until the
/// thread's CPU clock reaches `until`; returns how many arrays were sorted
/// (each checked sorted, so the work cannot be dropped).
fn sorts_until(until_cpu_ns: u64) -> u64 {
    let mut v = vec![0u64; QSORT_LEN];
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    let mut sorts = 0;
    while thread_cpu_ns() < until_cpu_ns {
        for e in v.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *e = x;
        }
        v.sort_unstable();
        assert!(black_box(&v).is_sorted());
        sorts += 1;
    }
    sorts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_burns_its_share_of_thread_cpu_time() {
        let b = CpuBurner::new(40, 50_000);
        let t0 = thread_cpu_ns();
        b.cycle();
        let used = thread_cpu_ns() - t0;
        // 20 ms asked; the clock is read every 1000 rounds (a few µs).
        assert!((20_000_000..22_000_000).contains(&used), "{used} ns");
    }

    #[test]
    fn qsort_mode_sorts_and_burns_its_share() {
        let b = CpuBurner::new(40, 50_000).with_mode(CpuMode::Qsort);
        let t0 = thread_cpu_ns();
        let sorts = b.cycle();
        let used = thread_cpu_ns() - t0;
        assert!(sorts > 0, "qsort mode sorts");
        assert_eq!(CpuBurner::new(10, 10_000).cycle(), 0, "noop mode does not");
        // 20 ms asked; one sort of 4096 numbers takes well under 1 ms.
        assert!((20_000_000..23_000_000).contains(&used), "{used} ns");
    }
}
