//! The psync backend: `pread(2)`/`pwrite(2)`, `fsync(2)`/`fdatasync(2)`,
//! one request at a time inside [`Backend::queue`] (fio's `psync`).
//!
//! Requests complete before `queue` returns ([`Queued::Done`]), so the
//! worker records no submission latency for it: clat = lat = the system
//! call's duration. The result is the byte count the call returned (a short
//! transfer is the worker's business) or `-errno`. `EINTR` is retried here:
//! it says nothing about the storage.

use std::os::fd::RawFd;

use super::{Backend, BackendConfig, Completion, Op, OpenFile, Queued, Request};
use crate::EngineError;

#[derive(Debug)]
pub struct PsyncBackend {
    fds: Vec<RawFd>,
    iodepth: u32,
}

impl PsyncBackend {
    fn call(&self, req: &Request) -> i64 {
        let fd = self.fds[req.file as usize];
        loop {
            let off = req.offset as libc::off_t;
            let len = req.len as usize;
            // Safety: `fd` is open for the backend's lifetime (the worker owns
            // the files and drops the backend first); `buf` points to at least
            // `len` bytes the worker owns and does not touch until this call
            // returns (the Request contract).
            let ret = unsafe {
                match req.op {
                    Op::Read => libc::pread(fd, req.buf.cast(), len, off) as i64,
                    Op::Write => libc::pwrite(fd, req.buf.cast_const().cast(), len, off) as i64,
                    Op::Fsync => i64::from(libc::fsync(fd)),
                    Op::Fdatasync => i64::from(libc::fdatasync(fd)),
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

impl Backend for PsyncBackend {
    const NAME: &'static str = "psync";
    const SYNC: bool = true;

    fn open(files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, EngineError> {
        Ok(PsyncBackend {
            fds: files.iter().map(|f| f.fd).collect(),
            iodepth: cfg.iodepth,
        })
    }

    #[inline]
    unsafe fn queue(&mut self, req: &Request) -> std::io::Result<Queued> {
        Ok(Queued::Done(Completion {
            slot: req.slot,
            result: self.call(req),
        }))
    }

    fn commit(&mut self) -> std::io::Result<u32> {
        Ok(0)
    }

    fn reap(&mut self, _min: u32, _max: u32, _out: &mut Vec<Completion>) -> std::io::Result<u32> {
        Ok(0)
    }

    fn notes(&self) -> Vec<String> {
        if self.iodepth > 1 {
            // Said, not silently ignored: fio prints the same warning.
            vec![format!(
                "psync is synchronous: iodepth={} is capped at 1 (one I/O at a time per worker)",
                self.iodepth
            )]
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        };
        let mut b = PsyncBackend::open(&[OpenFile { fd: f.as_raw_fd() }], &cfg).unwrap();
        let mut buf = vec![0u8; 4096];
        let mut rq = Request {
            slot: 3,
            op: Op::Read,
            file: 0,
            offset: 4096,
            len: 4096,
            buf: buf.as_mut_ptr(),
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
        let mut bad = PsyncBackend::open(&[OpenFile { fd: -1 }], &cfg).unwrap();
        let Queued::Done(c) = q(&mut bad, &rq).unwrap() else {
            panic!()
        };
        assert_eq!(c.result, -i64::from(libc::EBADF));
    }
}
