//! Torn-write protection (`atomic=1`): writes carry `RWF_ATOMIC` (Linux
//! 6.11+) through `pwritev2` (pvsync2), `aio_rw_flags` (libaio) or the
//! SQE's `rw_flags` (io_uring), as fio does.
//!
//! The kernel rejects an atomic write the file cannot take (EINVAL, or
//! EOPNOTSUPP without support); rather than fail the first write, the run
//! asks the file first: `statx(STATX_WRITE_ATOMIC)` gives the smallest and
//! largest atomic write unit (0 when the file system or device has none),
//! and a job whose write block sizes are outside them, or not a power of
//! two (the kernel's rule), is refused naming the limits.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use iolab_core::job::{BsSpec, IoDir, PreparedJob};

use super::BackendConfig;
use crate::EngineError;

/// The `RWF_*` flags a write carries (0 when atomic is off).
pub fn write_flags(cfg: &BackendConfig) -> libc::c_int {
    if cfg.engine.atomic {
        libc::RWF_ATOMIC
    } else {
        0
    }
}

/// A file's atomic write limits, bytes (0, 0 = none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicLimits {
    pub unit_min_bytes: u32,
    pub unit_max_bytes: u32,
}

/// `statx(fd, "", AT_EMPTY_PATH, STATX_WRITE_ATOMIC)`.
pub fn limits(file: &File) -> std::io::Result<AtomicLimits> {
    // Safety: statx is plain data; zero is a valid bit pattern for it.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // Safety: a valid descriptor, an empty NUL-terminated path with
    // AT_EMPTY_PATH, and a statx buffer the kernel writes into.
    let r = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_WRITE_ATOMIC,
            &mut stx,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if stx.stx_mask & libc::STATX_WRITE_ATOMIC == 0 {
        return Ok(AtomicLimits {
            unit_min_bytes: 0,
            unit_max_bytes: 0,
        });
    }
    Ok(AtomicLimits {
        unit_min_bytes: stx.stx_atomic_write_unit_min,
        unit_max_bytes: stx.stx_atomic_write_unit_max,
    })
}

/// Refuses a job with atomic=1 whose writes `file` (at `path`) cannot
/// take atomically; Ok when atomic is off or the job does not write.
pub fn check(file: &File, path: &Path, job: &PreparedJob) -> Result<(), EngineError> {
    if !job.engine.atomic || !job.writes() {
        return Ok(());
    }
    let err = |reason: String| EngineError::File {
        path: path.to_path_buf(),
        reason: format!("job '{}': atomic=1: {reason}", job.name),
    };
    let lim = limits(file).map_err(|e| err(format!("statx(STATX_WRITE_ATOMIC) failed: {e}")))?;
    check_sizes(&job.bs[IoDir::Write as usize], lim).map_err(err)
}

/// The rule itself: every write size a power of two within the limits.
pub fn check_sizes(bs: &BsSpec, lim: AtomicLimits) -> Result<(), String> {
    if lim.unit_max_bytes == 0 {
        return Err(
            "the file system or device offers no torn-write protection here (statx \
             STATX_WRITE_ATOMIC: atomic_write_unit_max = 0 bytes); use a file or device \
             that supports atomic writes, or atomic=0"
                .into(),
        );
    }
    let sizes: Vec<u64> = match bs {
        BsSpec::Fixed(b) => vec![*b],
        BsSpec::Range { min, max } => vec![*min, *max],
        BsSpec::Split(s) => s.iter().map(|(b, _)| *b).collect(),
    };
    let (lo, hi) = (u64::from(lim.unit_min_bytes), u64::from(lim.unit_max_bytes));
    let range = matches!(bs, BsSpec::Range { .. });
    for b in sizes {
        if b < lo || b > hi || !b.is_power_of_two() || (range && lo != hi) {
            return Err(format!(
                "write block size {b} bytes is not one the file takes atomically: \
                 atomic_write_unit_min = {lo} bytes, atomic_write_unit_max = {hi} bytes \
                 (statx STATX_WRITE_ATOMIC), and each write must be a power of two \
                 between them{}",
                if range {
                    "; bsrange gives sizes in between, use bs= or bssplit="
                } else {
                    ""
                }
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_must_be_powers_of_two_within_the_units() {
        let lim = AtomicLimits {
            unit_min_bytes: 4096,
            unit_max_bytes: 65536,
        };
        assert!(check_sizes(&BsSpec::Fixed(16384), lim).is_ok());
        let e = check_sizes(&BsSpec::Fixed(131072), lim).unwrap_err();
        assert!(e.contains("atomic_write_unit_max = 65536"), "{e}");
        assert!(check_sizes(&BsSpec::Fixed(2048), lim).is_err());
        assert!(check_sizes(&BsSpec::Fixed(12288), lim).is_err());
        assert!(check_sizes(&BsSpec::Split(vec![(4096, 50), (65536, 50)]), lim).is_ok());
        assert!(check_sizes(
            &BsSpec::Range {
                min: 4096,
                max: 8192
            },
            lim
        )
        .is_err());
        let none = AtomicLimits {
            unit_min_bytes: 0,
            unit_max_bytes: 0,
        };
        let e = check_sizes(&BsSpec::Fixed(4096), none).unwrap_err();
        assert!(e.contains("no torn-write protection"), "{e}");
    }

    #[test]
    fn write_flags_carry_rwf_atomic_only_when_asked() {
        let mut cfg = BackendConfig::default();
        assert_eq!(write_flags(&cfg), 0);
        cfg.engine.atomic = true;
        assert_eq!(write_flags(&cfg), libc::RWF_ATOMIC);
    }
}
