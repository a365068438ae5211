//! Readings from the kernel: process and thread rusage, CLOCK_MONOTONIC,
//! the `cpu` line of /proc/stat, online CPUs and USER_HZ.
//!
//! `libc` rather than `std`: `std` offers neither getrusage nor raw
//! CLOCK_MONOTONIC nanoseconds (`Instant` is opaque), and the result must
//! carry the same clock the workers stamp their intervals with.

use std::io;

use super::{CpuSample, SysTicks};

/// A reading now: process user/system time, the monotonic clock and the
/// system-wide ticks of /proc/stat.
pub fn sample() -> io::Result<CpuSample> {
    let ru = rusage(libc::RUSAGE_SELF)?;
    let stat = std::fs::read_to_string("/proc/stat")?;
    let sys = parse_proc_stat(&stat).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok(CpuSample {
        mono_ns: monotonic_ns()?,
        proc_user_ns: timeval_ns(ru.ru_utime),
        proc_sys_ns: timeval_ns(ru.ru_stime),
        sys,
    })
}

/// The calling thread's `(user_ns, sys_ns, context switches)` — voluntary
/// plus involuntary — from getrusage(RUSAGE_THREAD). Workers read it at
/// the start and end of their measured window.
pub fn thread_rusage() -> (u64, u64, u64) {
    // getrusage fails only for a bad `who` or a bad pointer, neither of
    // which can happen here; a zero reading would show as no CPU used.
    match rusage(libc::RUSAGE_THREAD) {
        Ok(ru) => (
            timeval_ns(ru.ru_utime),
            timeval_ns(ru.ru_stime),
            (ru.ru_nvcsw as u64).saturating_add(ru.ru_nivcsw as u64),
        ),
        Err(_) => (0, 0, 0),
    }
}

/// Parse the aggregate `cpu` line of /proc/stat (ticks of USER_HZ).
///
/// Fields: user nice system idle iowait irq softirq steal [guest
/// guest_nice]. The kernel already counts guest time in user (and
/// guest_nice in nice), so those two are not added again. Kernels older
/// than 2.6.11 lack steal; it reads as 0 then.
pub fn parse_proc_stat(text: &str) -> Result<SysTicks, String> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("cpu"))
        .ok_or_else(|| "/proc/stat has no aggregate 'cpu' line".to_string())?;
    let mut v = [0u64; 8];
    let fields: Vec<&str> = line.split_whitespace().skip(1).collect();
    if fields.len() < 7 {
        return Err(format!(
            "/proc/stat 'cpu' line has {} fields, expected at least 7: {line}",
            fields.len()
        ));
    }
    for (slot, f) in v.iter_mut().zip(&fields) {
        *slot = f
            .parse()
            .map_err(|_| format!("/proc/stat 'cpu' line: '{f}' is not a tick count: {line}"))?;
    }
    let [user, nice, system, idle, iowait, irq, softirq, steal] = v;
    Ok(SysTicks {
        user,
        nice,
        system,
        idle,
        iowait,
        irq,
        softirq,
        steal,
    })
}

/// CPUs online now (sysconf(_SC_NPROCESSORS_ONLN)); /proc/stat's `cpu`
/// line sums over exactly these. Not the affinity mask: the system-wide
/// figures are about the whole machine.
pub fn online_cpus() -> u32 {
    // Safety: sysconf has no preconditions; it only reads a system value.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u32::try_from(n).ok().filter(|&n| n > 0).unwrap_or(1)
}

/// Ticks per second of /proc/stat (sysconf(_SC_CLK_TCK), 100 on Linux).
pub fn user_hz() -> u64 {
    // Safety: sysconf has no preconditions; it only reads a system value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(hz).ok().filter(|&h| h > 0).unwrap_or(100)
}

fn rusage(who: libc::c_int) -> io::Result<libc::rusage> {
    // Safety: rusage is plain old data, valid when zeroed.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // Safety: `ru` is a valid, writable rusage for the call's duration.
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    if rc == 0 {
        Ok(ru)
    } else {
        Err(io::Error::last_os_error())
    }
}

fn monotonic_ns() -> io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: `ts` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

fn timeval_ns(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000
}
