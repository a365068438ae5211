//! `lockmem`: memory a worker keeps locked (mlock) while it runs, as fio's
//! lockmem, so a run can be measured as if the machine had that much less
//! memory (less page cache for buffered I/O). The pages are an anonymous
//! mapping of the worker's own, touched by `mlock`, and unlocked and
//! unmapped when the worker ends, so the process's `VmLck` is back to
//! what it was once the run is over.
//!
//! Locked memory is limited per process by `RLIMIT_MEMLOCK` unless the
//! process has `CAP_IPC_LOCK`; [`check_limit`] refuses a run that would
//! go over it before any file is touched, naming the limit and `ulimit -l`.

use std::io;

use crate::EngineError;

/// `lockmem` bytes locked by one worker; unlocked when dropped.
#[derive(Debug)]
pub struct LockedMem {
    ptr: *mut libc::c_void,
    len: usize,
}

impl LockedMem {
    /// Lock `bytes` (none when 0). An error says what the limit is and what to do.
    pub fn new(bytes: u64) -> Result<Option<LockedMem>, EngineError> {
        if bytes == 0 {
            return Ok(None);
        }
        let len =
            usize::try_from(bytes).map_err(|_| refused(bytes, "larger than the address space"))?;
        // Safety: a new private anonymous mapping; nothing else refers to it.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(refused(bytes, &io::Error::last_os_error().to_string()));
        }
        // Safety: the range is the mapping just made.
        if unsafe { libc::mlock(ptr, len) } != 0 {
            let err = io::Error::last_os_error();
            // Safety: as above; it is unmapped once, here.
            unsafe { libc::munmap(ptr, len) };
            return Err(refused(bytes, &err.to_string()));
        }
        Ok(Some(LockedMem { ptr, len }))
    }
}

impl Drop for LockedMem {
    fn drop(&mut self) {
        // Safety: the mapping made in `new`, unmapped once (which unlocks it).
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// The process's soft `RLIMIT_MEMLOCK` in bytes (`None`: unlimited).
fn memlock_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // Safety: getrlimit writes the struct given.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) } != 0
        || r.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    Some(r.rlim_cur)
}

/// Whether the process may lock memory beyond its limit (`CAP_IPC_LOCK`
/// in its effective set, /proc/self/status).
fn may_exceed_limit() -> bool {
    const CAP_IPC_LOCK: u32 = 14;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let hex = s
                .lines()
                .find_map(|l| l.strip_prefix("CapEff:"))?
                .trim()
                .to_string();
            u64::from_str_radix(&hex, 16).ok()
        })
        .is_some_and(|caps| caps >> CAP_IPC_LOCK & 1 == 1)
}

/// Refuses a run whose workers running together would lock more than
/// `RLIMIT_MEMLOCK` allows: `need` is the most any stonewall group locks
/// at once (its workers' `lockmem`, summed).
pub fn check_limit(need: u64) -> Result<(), EngineError> {
    match memlock_limit() {
        Some(limit) if need > limit && !may_exceed_limit() => Err(EngineError::LockMem(format!(
            "lockmem: the workers running together would lock {} ({need} bytes), more than \
             RLIMIT_MEMLOCK allows ({}); raise the limit (ulimit -l {} or unlimited, in KiB) or \
             lower lockmem",
            fmt_bytes(need),
            fmt_bytes(limit),
            need.div_ceil(1024)
        ))),
        _ => Ok(()),
    }
}

fn refused(bytes: u64, why: &str) -> EngineError {
    let limit = memlock_limit().map_or_else(|| "unlimited".to_string(), fmt_bytes);
    EngineError::LockMem(format!(
        "lockmem={}: cannot lock {bytes} bytes: {why} (RLIMIT_MEMLOCK: {limit}); raise the \
         limit (ulimit -l, in KiB) or lower lockmem",
        fmt_bytes(bytes)
    ))
}

/// Bytes as a person reads them: whole MiB/GiB where exact, else bytes.
fn fmt_bytes(n: u64) -> String {
    const MIB: u64 = 1 << 20;
    match n {
        _ if n >= 1 << 30 && n.is_multiple_of(1 << 30) => format!("{} GiB", n >> 30),
        _ if n >= MIB && n.is_multiple_of(MIB) => format!("{} MiB", n / MIB),
        _ if n.is_multiple_of(1024) => format!("{} KiB", n / 1024),
        _ => format!("{n} bytes"),
    }
}
