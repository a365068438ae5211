//! What every synchronous file backend shares (psync, sync, pvsync,
//! pvsync2): one request at a time inside [`Backend::queue`], `EINTR`
//! retried (it says nothing about the storage), fsync/fdatasync, and the
//! iodepth note. Each engine supplies only its system call ([`Syscall`]).
//!
//! Requests complete before `queue` returns ([`Queued::Done`]), so the
//! worker records no submission latency: clat = lat = the call's duration.
//! The result is the byte count the call returned (a short transfer is the
//! worker's business) or `-errno`.

use std::os::fd::RawFd;

use super::{Backend, BackendConfig, Completion, Op, OpenFile, Queued, Request};
use crate::EngineError;

/// One engine's read/write system call.
pub trait Syscall: Sized {
    const NAME: &'static str;
    fn new(cfg: &BackendConfig) -> Self;
    /// One read or write of `req` on `fd`; the raw return value.
    ///
    /// # Safety
    /// `req` meets [`Backend::queue`]'s contract and `fd` is open.
    unsafe fn rw(&mut self, fd: RawFd, req: &Request) -> isize;
}

#[derive(Debug)]
pub struct BlockingBackend<S> {
    fds: Vec<RawFd>,
    iodepth: u32,
    call: S,
}

impl<S: Syscall> BlockingBackend<S> {
    /// # Safety
    /// As [`Backend::queue`].
    unsafe fn call(&mut self, req: &Request) -> i64 {
        let fd = self.fds[req.file as usize];
        loop {
            // Safety: `fd` is open for the backend's lifetime (the worker owns
            // the files and drops the backend first); the buffer is the
            // caller's per the queue contract.
            let ret = unsafe {
                match req.op {
                    Op::Read | Op::Write => self.call.rw(fd, req) as i64,
                    Op::Fsync => i64::from(libc::fsync(fd)),
                    Op::Fdatasync => i64::from(libc::fdatasync(fd)),
                    Op::Trim => unreachable!("trims are answered by backend::trim::Trims"),
                }
            };
            if ret >= 0 {
                return ret;
            }
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            if errno != libc::EINTR {
                return -i64::from(errno);
            }
        }
    }
}

impl<S: Syscall> Backend for BlockingBackend<S> {
    const NAME: &'static str = S::NAME;
    const SYNC: bool = true;

    fn open(files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, EngineError> {
        Ok(BlockingBackend {
            fds: files.iter().map(|f| f.fd).collect(),
            iodepth: cfg.iodepth,
            call: S::new(cfg),
        })
    }

    #[inline]
    unsafe fn queue(&mut self, req: &Request) -> std::io::Result<Queued> {
        // Safety: forwarded from our caller (the same contract).
        let result = unsafe { self.call(req) };
        Ok(Queued::Done(Completion {
            slot: req.slot,
            result,
        }))
    }

    fn notes(&self) -> Vec<String> {
        if self.iodepth > 1 {
            // Said, not silently ignored: fio prints the same warning.
            vec![format!(
                "{} is synchronous: iodepth={} is capped at 1 (one I/O at a time per worker)",
                S::NAME,
                self.iodepth
            )]
        } else {
            Vec::new()
        }
    }
}
