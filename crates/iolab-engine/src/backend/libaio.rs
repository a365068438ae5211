//! The libaio backend: Linux native AIO through its system calls
//! (`io_setup`, `io_submit`, `io_getevents`, `io_destroy`), as fio's
//! `libaio` engine uses them through libaio.so. No crate wraps these well
//! and the library is a thin shim over the syscalls, so they are called
//! directly via `libc::syscall`; `struct io_event` is the kernel's ABI
//! (linux/aio_abi.h), written here because libc does not define it.
//!
//! `queue` fills an iocb and stages it; `commit` submits every staged
//! iocb with as few `io_submit` calls as the kernel allows (it may take
//! fewer than offered: the rest are offered again); `reap` calls
//! `io_getevents(min, max)` — the worker passes iodepth_batch_complete_min
//! and _max, and stages iodepth_batch_submit requests per commit, so those
//! options mean what they mean in fio. Syncs go through the ring too
//! (`IOCB_CMD_FSYNC`/`FDSYNC`, Linux 4.18+).
//!
//! Without O_DIRECT, Linux performs the I/O inside `io_submit` (buffered
//! AIO is synchronous); the options layer warns about it, as fio's HOWTO
//! does.

use std::io;
use std::os::fd::RawFd;

use super::{Backend, BackendConfig, Completion, Op, OpenFile, Queued, Request};
use crate::EngineError;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;

/// linux/aio_abi.h: aio_reqprio holds the request's ioprio.
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// `struct io_event` (linux/aio_abi.h).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

pub struct LibaioBackend {
    ctx: libc::c_ulong,
    fds: Vec<RawFd>,
    /// One iocb per slot (iodepth + the sync slot); the kernel reads them
    /// during io_submit only, but they stay put anyway.
    iocbs: Vec<libc::iocb>,
    /// Pointers to the staged iocbs, in order; `submitted` of them are done.
    staged: Vec<*mut libc::iocb>,
    events: Vec<IoEvent>,
    /// `aio_rw_flags` of writes (`RWF_ATOMIC` under atomic=1).
    write_flags: libc::c_int,
}

impl std::fmt::Debug for LibaioBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibaioBackend")
            .field("ctx", &self.ctx)
            .field("staged", &self.staged.len())
            .finish_non_exhaustive()
    }
}

fn last_err() -> io::Error {
    io::Error::last_os_error()
}

impl Backend for LibaioBackend {
    const NAME: &'static str = "libaio";
    const SYNC: bool = false;

    fn open(files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, EngineError> {
        // One extra slot for a sync issued on a quiesced queue.
        let slots = cfg.iodepth.max(1) as usize + 1;
        let mut ctx: libc::c_ulong = 0;
        // Safety: io_setup writes the new context id into `ctx`.
        let r = unsafe { libc::syscall(libc::SYS_io_setup, slots as libc::c_long, &mut ctx) };
        if r < 0 {
            return Err(EngineError::Backend {
                engine: Self::NAME,
                reason: format!(
                    "io_setup({slots}) failed: {} (is fs.aio-max-nr too small?)",
                    last_err()
                ),
            });
        }
        // Safety: iocb is plain data; zero is its documented neutral value.
        let zero: libc::iocb = unsafe { std::mem::zeroed() };
        Ok(LibaioBackend {
            ctx,
            fds: files.iter().map(|f| f.fd).collect(),
            iocbs: vec![zero; slots],
            staged: Vec::with_capacity(slots),
            events: vec![IoEvent::default(); slots],
            write_flags: super::atomic::write_flags(cfg),
        })
    }

    #[inline]
    unsafe fn queue(&mut self, req: &Request) -> io::Result<Queued> {
        let cb = &mut self.iocbs[req.slot as usize];
        cb.aio_data = u64::from(req.slot);
        cb.aio_fildes = self.fds[req.file as usize] as u32;
        cb.aio_lio_opcode = match req.op {
            Op::Read => IOCB_CMD_PREAD,
            Op::Write => IOCB_CMD_PWRITE,
            Op::Fsync => IOCB_CMD_FSYNC,
            Op::Fdatasync => IOCB_CMD_FDSYNC,
            Op::Trim => unreachable!("trims are answered by backend::trim::Trims"),
        };
        // The kernel refuses a sync iocb that names a buffer or range.
        let data = matches!(req.op, Op::Read | Op::Write);
        cb.aio_buf = if data { req.buf as u64 } else { 0 };
        cb.aio_nbytes = if data { u64::from(req.len) } else { 0 };
        cb.aio_offset = if data { req.offset as i64 } else { 0 };
        cb.aio_rw_flags = if req.op == Op::Write {
            self.write_flags
        } else {
            0
        };
        // fio's cmdprio: the request carries its own priority
        // (IOCB_FLAG_IOPRIO); without one the kernel uses the thread's.
        cb.aio_reqprio = if data { req.ioprio as i16 } else { 0 };
        cb.aio_flags = if data && req.ioprio != 0 {
            IOCB_FLAG_IOPRIO
        } else {
            0
        };
        self.staged.push(cb);
        Ok(Queued::Staged)
    }

    fn commit(&mut self) -> io::Result<u32> {
        let mut done = 0;
        while done < self.staged.len() {
            let rest = &mut self.staged[done..];
            // Safety: each pointer is an iocb of ours describing a buffer the
            // worker keeps until completion (queue's contract).
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    rest.len() as libc::c_long,
                    rest.as_mut_ptr(),
                )
            };
            if r < 0 {
                let e = last_err();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                if e.raw_os_error() == Some(libc::EAGAIN) && done > 0 {
                    break; // resources busy: the rest goes with the next commit
                }
                self.staged.drain(..done);
                return Err(e);
            }
            done += r as usize;
        }
        self.staged.drain(..done);
        Ok(done as u32)
    }

    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        if !self.staged.is_empty() {
            self.commit()?;
        }
        let max = (max as usize).min(self.events.len());
        let min = (min as usize).min(max);
        loop {
            // Safety: `events` has room for `max` events; no timeout (NULL).
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if r < 0 {
                let e = last_err();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(e);
            }
            for ev in &self.events[..r as usize] {
                out.push(Completion {
                    slot: ev.data as u32,
                    result: ev.res,
                });
            }
            return Ok(r as u32);
        }
    }
}

impl Drop for LibaioBackend {
    fn drop(&mut self) {
        // Safety: our context; io_destroy waits for anything still in flight.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    fn q(b: &mut LibaioBackend, r: &Request) {
        // Safety: the buffers below outlive their completions.
        unsafe { b.queue(r) }.unwrap();
    }

    #[test]
    fn reads_writes_syncs_and_reports_errno() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[7u8; 16384]).unwrap();
        let cfg = BackendConfig {
            iodepth: 4,
            ..BackendConfig::default()
        };
        let mut b = LibaioBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
        let mut rd = vec![0u8; 4096];
        let mut wr = vec![9u8; 4096];
        let req = |slot, op, offset, buf: *mut u8| Request {
            slot,
            op,
            file: 0,
            offset,
            len: 4096,
            buf,
            ioprio: 0,
        };
        q(&mut b, &req(0, Op::Read, 4096, rd.as_mut_ptr()));
        q(&mut b, &req(1, Op::Write, 8192, wr.as_mut_ptr()));
        assert_eq!(b.commit().unwrap(), 2);
        let mut out = Vec::new();
        while out.len() < 2 {
            b.reap(1, 4, &mut out).unwrap();
        }
        out.sort_by_key(|c| c.slot);
        assert_eq!((out[0].result, out[1].result), (4096, 4096));
        assert!(rd.iter().all(|&x| x == 7));
        q(&mut b, &req(4, Op::Fdatasync, 0, std::ptr::null_mut()));
        out.clear();
        b.reap(1, 1, &mut out).unwrap();
        assert_eq!((out[0].slot, out[0].result), (4, 0));
        let mut back = vec![0u8; 4096];
        // Safety: plain pread into a local buffer of the right size.
        let n = unsafe { libc::pread(f.as_raw_fd(), back.as_mut_ptr().cast(), 4096, 8192) };
        assert_eq!(n, 4096);
        assert!(back.iter().all(|&x| x == 9), "the write reached the file");
        // Writing through a read-only descriptor fails with EBADF in the event
        // or at submit; either way it is an error, never a panic.
        let ro = std::fs::File::open(format!("/proc/self/fd/{}", f.as_raw_fd())).unwrap();
        let mut b = LibaioBackend::open(&[OpenFile { fd: ro.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
        q(&mut b, &req(0, Op::Write, 0, wr.as_mut_ptr()));
        match b.commit() {
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EBADF)),
            Ok(_) => {
                out.clear();
                b.reap(1, 1, &mut out).unwrap();
                assert_eq!(out[0].result, -i64::from(libc::EBADF));
            }
        }
    }
}
