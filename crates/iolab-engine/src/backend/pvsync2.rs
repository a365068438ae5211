//! The pvsync2 backend: `preadv2(2)`/`pwritev2(2)` with one iovec (fio's
//! `pvsync2`), which pass `RWF_HIPRI` under `hipri` so the kernel polls
//! for the completion, and `RWF_ATOMIC` on writes under atomic=1. The
//! shared synchronous machinery is in `blocking`.

use std::os::fd::RawFd;

use super::blocking::{BlockingBackend, Syscall};
use super::pvsync::iovec;
use super::{BackendConfig, Op, Request};

/// `preadv2`/`pwritev2` with these `RWF_*` flags (writes add `RWF_ATOMIC`
/// under atomic=1, see `atomic`).
#[derive(Debug)]
pub struct Vectored2 {
    flags: libc::c_int,
    write_flags: libc::c_int,
}

impl Syscall for Vectored2 {
    const NAME: &'static str = "pvsync2";
    fn new(cfg: &BackendConfig) -> Self {
        let flags = if cfg.engine.hipri { libc::RWF_HIPRI } else { 0 };
        Vectored2 {
            flags,
            write_flags: flags | super::atomic::write_flags(cfg),
        }
    }
    #[inline]
    unsafe fn rw(&mut self, fd: RawFd, req: &Request) -> isize {
        let iov = iovec(req);
        let off = req.offset as libc::off_t;
        // Safety: one iovec over the caller's buffer of `len` bytes.
        unsafe {
            match req.op {
                Op::Write => libc::pwritev2(fd, &iov, 1, off, self.write_flags),
                _ => libc::preadv2(fd, &iov, 1, off, self.flags),
            }
        }
    }
}

pub type Pvsync2Backend = BlockingBackend<Vectored2>;

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::EngineOptions;

    #[test]
    fn hipri_sets_rwf_hipri_only_when_asked() {
        let mut cfg = BackendConfig::default();
        assert_eq!(Vectored2::new(&cfg).flags, 0);
        cfg.engine = EngineOptions {
            hipri: true,
            ..EngineOptions::default()
        };
        assert_eq!(Vectored2::new(&cfg).flags, libc::RWF_HIPRI);
    }
}
