//! The posixaio backend (fio's `posixaio`): POSIX AIO through the C
//! library. `aio_read`/`aio_write`/`aio_fsync` start each request as it is
//! queued (as fio's posixaio does; `commit` has nothing left to hand
//! over), `aio_error` tells whether one is done, `aio_suspend` waits for
//! the first of those in flight, and `aio_return` collects each result.
//!
//! glibc carries the requests out on its own threads, so up to iodepth
//! requests are really in flight, with or without direct=1 (unlike libaio,
//! whose buffered requests complete inside io_submit).
//!
//! A request the library refuses to start (`aio_read` failing, e.g. with
//! `EAGAIN` when it cannot start a thread) completes with `-errno` at the
//! next `reap`; an error of the transfer itself comes back the same way.
//! Dropping the backend with requests in flight cancels and waits for
//! them, so no library thread writes into a buffer after its owner is gone.

use std::os::fd::RawFd;

use super::{Backend, BackendConfig, Completion, Op, OpenFile, Queued, Request};
use crate::EngineError;

pub struct PosixAioBackend {
    fds: Vec<RawFd>,
    /// One control block per slot (iodepth, and one more for a sync
    /// request on a quiet queue). Allocated once: the library holds their
    /// addresses while the requests are in flight.
    cbs: Box<[libc::aiocb]>,
    /// Slots whose request is in flight.
    inflight: Vec<u32>,
    /// Requests that failed to start, completed at the next reap.
    failed: Vec<Completion>,
    /// Started since the last commit.
    started: u32,
    /// `aio_suspend`'s list, kept to avoid allocating per wait.
    waiting: Vec<*const libc::aiocb>,
}

impl std::fmt::Debug for PosixAioBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PosixAioBackend(inflight={})", self.inflight.len())
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

impl PosixAioBackend {
    /// Wait until at least one request in flight is done (or a signal
    /// interrupts the wait).
    fn suspend(&mut self) -> std::io::Result<()> {
        self.waiting.clear();
        let cbs = &self.cbs;
        self.waiting
            .extend(self.inflight.iter().map(|&s| &cbs[s as usize] as *const _));
        // Safety: every pointer is a control block of a request in flight,
        // alive as long as the backend; a null timeout waits without limit.
        let r = unsafe {
            libc::aio_suspend(
                self.waiting.as_ptr(),
                self.waiting.len() as libc::c_int,
                std::ptr::null(),
            )
        };
        match (r, errno()) {
            (0, _) | (_, libc::EINTR) | (_, libc::EAGAIN) => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }

    /// Move the finished requests in flight to `out`, at most `max` of
    /// them; how many were moved.
    fn collect(&mut self, max: usize, out: &mut Vec<Completion>) -> usize {
        let mut moved = 0;
        let mut i = 0;
        while i < self.inflight.len() && moved < max {
            let slot = self.inflight[i];
            let cb = &mut self.cbs[slot as usize];
            // Safety: `cb` is the control block of a request in flight.
            let e = unsafe { libc::aio_error(cb) };
            if e == libc::EINPROGRESS {
                i += 1;
                continue;
            }
            // Safety: the request is done; aio_return is called once for it.
            let r = unsafe { libc::aio_return(cb) };
            let result = if e == 0 { r as i64 } else { -i64::from(e) };
            out.push(Completion { slot, result });
            self.inflight.swap_remove(i);
            moved += 1;
        }
        moved
    }
}

impl Backend for PosixAioBackend {
    const NAME: &'static str = "posixaio";
    const SYNC: bool = false;

    fn open(files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, EngineError> {
        let slots = cfg.iodepth.max(1) as usize + 1;
        // Safety: aiocb is a plain C struct; all zeroes is its empty value.
        let empty = || unsafe { std::mem::zeroed::<libc::aiocb>() };
        Ok(PosixAioBackend {
            fds: files.iter().map(|f| f.fd).collect(),
            cbs: (0..slots).map(|_| empty()).collect(),
            inflight: Vec::with_capacity(slots),
            failed: Vec::new(),
            started: 0,
            waiting: Vec::with_capacity(slots),
        })
    }

    unsafe fn queue(&mut self, req: &Request) -> std::io::Result<Queued> {
        let cb = &mut self.cbs[req.slot as usize];
        // Safety: as in `open`; the slot's previous request was reaped.
        *cb = unsafe { std::mem::zeroed() };
        cb.aio_fildes = self.fds[req.file as usize];
        cb.aio_offset = req.offset as libc::off_t;
        cb.aio_buf = req.buf.cast();
        cb.aio_nbytes = req.len as usize;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        // Safety: the control block stays put until the request is reaped,
        // and the buffer is the caller's per the queue contract.
        let r = unsafe {
            match req.op {
                Op::Read => libc::aio_read(cb),
                Op::Write => libc::aio_write(cb),
                Op::Fsync => libc::aio_fsync(libc::O_SYNC, cb),
                Op::Fdatasync => libc::aio_fsync(libc::O_DSYNC, cb),
                Op::Trim => unreachable!("trims are answered by backend::trim::Trims"),
            }
        };
        if r == 0 {
            self.inflight.push(req.slot);
            self.started += 1;
        } else {
            self.failed.push(Completion {
                slot: req.slot,
                result: -i64::from(errno()),
            });
        }
        Ok(Queued::Staged)
    }

    fn commit(&mut self) -> std::io::Result<u32> {
        Ok(std::mem::take(&mut self.started))
    }

    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> std::io::Result<u32> {
        // At most `max` come back, so waiting for more than that would wait
        // for nothing (the worker drains a queue with min = all in flight).
        let (max, min) = (max as usize, min.min(max) as usize);
        let mut got = self.failed.len().min(max);
        out.extend(self.failed.drain(..got));
        loop {
            got += self.collect(max - got, out);
            if got >= min || self.inflight.is_empty() {
                return Ok(got as u32);
            }
            self.suspend()?;
        }
    }
}

impl Drop for PosixAioBackend {
    fn drop(&mut self) {
        for &slot in &self.inflight {
            let cb = &mut self.cbs[slot as usize];
            // Safety: a request in flight; cancelling one already done is
            // harmless.
            unsafe { libc::aio_cancel(cb.aio_fildes, cb) };
        }
        let mut sink = Vec::new();
        while !self.inflight.is_empty() {
            self.collect(usize::MAX, &mut sink);
            if !self.inflight.is_empty() && self.suspend().is_err() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;

    fn backend(fd: RawFd, iodepth: u32) -> PosixAioBackend {
        let cfg = BackendConfig {
            iodepth,
            ..BackendConfig::default()
        };
        PosixAioBackend::open(&[OpenFile { fd, region_end: 0 }], &cfg).unwrap()
    }

    fn request(slot: u32, op: Op, offset: u64, buf: &mut [u8]) -> Request {
        Request {
            slot,
            op,
            file: 0,
            offset,
            len: buf.len() as u32,
            buf: buf.as_mut_ptr(),
            ioprio: 0,
        }
    }

    fn queue(b: &mut PosixAioBackend, r: &Request) {
        // Safety: every buffer here outlives the reap of its request.
        assert!(matches!(unsafe { b.queue(r) }.unwrap(), Queued::Staged));
    }

    #[test]
    fn requests_in_flight_together_move_the_right_bytes() {
        let mut f = tempfile::tempfile().unwrap();
        let content: Vec<u8> = (0..32768u32).map(|i| (i / 11) as u8).collect();
        f.write_all(&content).unwrap();
        let mut b = backend(f.as_raw_fd(), 8);
        let mut bufs = vec![vec![0u8; 4096]; 8];
        let offsets = [28672, 0, 8192, 4096, 20480, 12288, 24576, 16384];
        for (i, (buf, off)) in bufs.iter_mut().zip(offsets).enumerate() {
            queue(&mut b, &request(i as u32, Op::Read, off, buf));
        }
        assert_eq!(b.commit().unwrap(), 8);
        let mut out = Vec::new();
        let mut got = 0;
        while got < 8 {
            got += b.reap(1, 8, &mut out).unwrap();
        }
        let mut slots: Vec<(u32, i64)> = out.iter().map(|c| (c.slot, c.result)).collect();
        slots.sort_unstable();
        assert_eq!(slots, (0..8).map(|s| (s, 4096)).collect::<Vec<_>>());
        for (buf, off) in bufs.iter().zip(offsets) {
            assert_eq!(&buf[..], &content[off as usize..off as usize + 4096]);
        }
        // Writes and an fsync, then the bytes are in the file.
        let mut data = vec![0xa5u8; 4096];
        queue(&mut b, &request(0, Op::Write, 4096, &mut data));
        let mut none: [u8; 0] = [];
        let mut sync = request(1, Op::Fsync, 0, &mut none);
        sync.buf = std::ptr::null_mut();
        out.clear();
        b.reap(1, 1, &mut out).unwrap();
        assert_eq!((out[0].slot, out[0].result), (0, 4096));
        queue(&mut b, &sync);
        out.clear();
        b.reap(1, 1, &mut out).unwrap();
        assert_eq!((out[0].slot, out[0].result), (1, 0));
        let mut back = vec![0u8; 4096];
        f.read_exact_at(&mut back, 4096).unwrap();
        assert_eq!(back, data);
    }

    /// The worker drains its queue asking for all in flight with a smaller
    /// max: it gets max, then the rest, and never waits for nothing.
    #[test]
    fn min_above_max_returns_max() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[3u8; 8192]).unwrap();
        let mut b = backend(f.as_raw_fd(), 2);
        let mut bufs = vec![vec![0u8; 4096]; 2];
        for (i, buf) in bufs.iter_mut().enumerate() {
            queue(&mut b, &request(i as u32, Op::Read, 4096 * i as u64, buf));
        }
        let mut out = Vec::new();
        assert_eq!(b.reap(2, 1, &mut out).unwrap(), 1);
        assert_eq!(b.reap(1, 1, &mut out).unwrap(), 1);
        assert!(out.iter().all(|c| c.result == 4096));
        assert!(bufs.iter().flatten().all(|&x| x == 3));
    }

    #[test]
    fn errors_come_back_as_negative_errno() {
        let mut b = backend(-1, 2);
        let mut buf = vec![0u8; 512];
        queue(&mut b, &request(0, Op::Read, 0, &mut buf));
        b.commit().unwrap();
        let mut out = Vec::new();
        assert_eq!(b.reap(1, 1, &mut out).unwrap(), 1);
        assert_eq!(out[0].result, -i64::from(libc::EBADF));
    }
}
