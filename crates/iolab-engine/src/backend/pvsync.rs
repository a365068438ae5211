//! The pvsync backend: `preadv(2)`/`pwritev(2)` with one iovec (fio's
//! `pvsync`). The shared synchronous machinery is in `blocking`.

use std::os::fd::RawFd;

use super::blocking::{BlockingBackend, Syscall};
use super::{BackendConfig, Op, Request};

/// `preadv`/`pwritev`.
#[derive(Debug)]
pub struct Vectored;

/// One iovec over the request's buffer.
pub(super) fn iovec(req: &Request) -> libc::iovec {
    libc::iovec {
        iov_base: req.buf.cast(),
        iov_len: req.len as usize,
    }
}

impl Syscall for Vectored {
    const NAME: &'static str = "pvsync";
    fn new(_cfg: &BackendConfig) -> Self {
        Vectored
    }
    #[inline]
    unsafe fn rw(&mut self, fd: RawFd, req: &Request) -> isize {
        let iov = iovec(req);
        let off = req.offset as libc::off_t;
        // Safety: one iovec over the caller's buffer of `len` bytes.
        unsafe {
            match req.op {
                Op::Write => libc::pwritev(fd, &iov, 1, off),
                _ => libc::preadv(fd, &iov, 1, off),
            }
        }
    }
}

pub type PvsyncBackend = BlockingBackend<Vectored>;
