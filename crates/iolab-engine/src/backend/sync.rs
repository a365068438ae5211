//! The sync backend: `lseek(2)` then `read(2)`/`write(2)` (fio's `sync`).
//! Two system calls per I/O where psync needs one, so it costs more CPU;
//! that is the point of offering it. The shared synchronous machinery is in
//! `blocking`.

use std::os::fd::RawFd;

use super::blocking::{BlockingBackend, Syscall};
use super::{BackendConfig, Op, Request};

#[derive(Debug)]
pub struct SeekThenRw;

impl Syscall for SeekThenRw {
    const NAME: &'static str = "sync";
    fn new(_cfg: &BackendConfig) -> Self {
        SeekThenRw
    }
    #[inline]
    unsafe fn rw(&mut self, fd: RawFd, req: &Request) -> isize {
        // Safety: plain lseek on an open descriptor.
        if unsafe { libc::lseek(fd, req.offset as libc::off_t, libc::SEEK_SET) } < 0 {
            return -1;
        }
        let len = req.len as usize;
        // Safety: the caller guarantees `buf` holds `len` bytes.
        unsafe {
            match req.op {
                Op::Write => libc::write(fd, req.buf.cast_const().cast(), len),
                _ => libc::read(fd, req.buf.cast(), len),
            }
        }
    }
}

pub type SyncBackend = BlockingBackend<SeekThenRw>;
