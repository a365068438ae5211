//! The psync backend: `pread(2)`/`pwrite(2)` at the request's offset
//! (fio's `psync`, its default engine on Linux). The shared synchronous
//! machinery (EINTR, syncs, completion in `queue`) is in `blocking`.

use std::os::fd::RawFd;

use super::blocking::{BlockingBackend, Syscall};
use super::{BackendConfig, Op, Request};

#[derive(Debug)]
pub struct Pread;

impl Syscall for Pread {
    const NAME: &'static str = "psync";
    fn new(_cfg: &BackendConfig) -> Self {
        Pread
    }
    #[inline]
    unsafe fn rw(&mut self, fd: RawFd, req: &Request) -> isize {
        let (off, len) = (req.offset as libc::off_t, req.len as usize);
        // Safety: the caller guarantees `fd` is open and `buf` holds `len` bytes.
        unsafe {
            match req.op {
                Op::Write => libc::pwrite(fd, req.buf.cast_const().cast(), len, off),
                _ => libc::pread(fd, req.buf.cast(), len, off),
            }
        }
    }
}

pub type PsyncBackend = BlockingBackend<Pread>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, OpenFile, Queued};
    use std::io::Write;
    use std::os::fd::AsRawFd;

    /// Tests queue into buffers that outlive the request's completion.
    fn q<B: Backend>(b: &mut B, r: &Request) -> std::io::Result<Queued> {
        // Safety: every caller here keeps the buffer alive and untouched
        // until the completion is reaped (the queue contract).
        unsafe { b.queue(r) }
    }

    #[test]
    fn reads_writes_and_reports_errno() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[7u8; 8192]).unwrap();
        let cfg = BackendConfig {
            iodepth: 1,
            buffers: Vec::new(),
            nbd: None,
            sync_writes: false,
            engine: Default::default(),
            trims: false,
            trims_reset_zones: false,
        };
        let mut b = PsyncBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
        let mut buf = vec![0u8; 4096];
        let mut rq = Request {
            slot: 3,
            op: Op::Read,
            file: 0,
            offset: 4096,
            len: 4096,
            buf: buf.as_mut_ptr(),
            ioprio: 0,
        };
        let Queued::Done(c) = q(&mut b, &rq).unwrap() else {
            panic!("psync must complete in queue")
        };
        assert_eq!((c.slot, c.result), (3, 4096));
        assert!(buf.iter().all(|&x| x == 7));
        // A read at end of file transfers 0 bytes (the worker treats it as an error).
        rq.offset = 8192;
        let Queued::Done(c) = q(&mut b, &rq).unwrap() else {
            panic!()
        };
        assert_eq!(c.result, 0);
        // A closed descriptor gives -EBADF, not a panic.
        let mut bad = PsyncBackend::open(&[OpenFile { fd: -1, region_end: 0 }], &cfg).unwrap();
        let Queued::Done(c) = q(&mut bad, &rq).unwrap() else {
            panic!()
        };
        assert_eq!(c.result, -i64::from(libc::EBADF));
    }
}
