//! The io_uring backend (the `io-uring` crate).
//!
//! - The ring has a power-of-two number of SQ entries ≥ iodepth (the CQ
//!   gets the kernel's default of twice that), so staging never finds the
//!   SQ full: the worker never has more than iodepth requests out.
//! - The worker's buffers are registered (`IORING_REGISTER_BUFFERS`, one
//!   per slot, buffer index = slot) and its files too (fixed descriptors,
//!   index = file index): reads and writes then go out as
//!   `READ_FIXED`/`WRITE_FIXED` on `Fixed` files, which spares the kernel a
//!   page pin and an fd lookup per I/O. When registration is refused (most
//!   often `ENOMEM` from `RLIMIT_MEMLOCK` for buffers) the backend falls back
//!   to plain `READ`/`WRITE` on raw descriptors and says so in [`Backend::notes`].
//! - `queue` only writes an SQE; `commit` is one `io_uring_enter`; `reap`
//!   waits (`submit_and_wait(min)`) only when fewer than `min` completions
//!   are already in the CQ, then drains up to `max`.
//! - Ring set-up flags: `SINGLE_ISSUER | DEFER_TASKRUN` where the kernel has
//!   them (6.1+): completions are then processed when the worker asks for
//!   them instead of interrupting it. Falls back to `COOP_TASKRUN` (5.19+),
//!   then to no flags. The ring must be created by the thread that uses it
//!   (the worker opens its backend itself). Measured on a 2-vCPU VM (virtio
//!   disk, 4k randread QD32, O_DIRECT and page cache): the three modes were
//!   within the run-to-run noise of each other (±15%), so the kernel's
//!   recommended mode for one submitting thread is kept.

use std::io;
use std::os::fd::RawFd;

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use super::{Backend, BackendConfig, Completion, Op, OpenFile, Queued, Request};
use crate::EngineError;

/// Set-up flags tried in order; the first the kernel accepts is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RingMode {
    DeferTaskrun,
    CoopTaskrun,
    Plain,
}

pub struct UringBackend {
    ring: IoUring<squeue::Entry, cqueue::Entry>,
    mode: RingMode,
    fds: Vec<RawFd>,
    fixed_files: bool,
    fixed_bufs: bool,
    staged: u32,
    notes: Vec<String>,
    /// `rw_flags` of writes (`RWF_ATOMIC` under atomic=1).
    write_flags: i32,
}

impl std::fmt::Debug for UringBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringBackend")
            .field("mode", &self.mode)
            .field("sq_entries", &self.ring.params().sq_entries())
            .field("fixed_files", &self.fixed_files)
            .field("fixed_bufs", &self.fixed_bufs)
            .finish()
    }
}

fn build_ring(entries: u32) -> io::Result<(IoUring, RingMode)> {
    let mut last_err = None;
    for mode in [
        RingMode::DeferTaskrun,
        RingMode::CoopTaskrun,
        RingMode::Plain,
    ] {
        let mut b = IoUring::builder();
        match mode {
            RingMode::DeferTaskrun => b.setup_single_issuer().setup_defer_taskrun(),
            RingMode::CoopTaskrun => b.setup_coop_taskrun(),
            RingMode::Plain => &mut b,
        };
        match b.build(entries) {
            Ok(ring) => return Ok((ring, mode)),
            // EINVAL: this kernel does not know the flag; try the next set.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL)))
}

impl UringBackend {
    fn register(&mut self, cfg: &BackendConfig) {
        match self.ring.submitter().register_files(&self.fds) {
            Ok(()) => self.fixed_files = true,
            Err(e) => self.notes.push(format!(
                "io_uring: registering files failed ({e}); using plain descriptors"
            )),
        }
        if cfg.buffers.is_empty() || cfg.buffers.len() > u16::MAX as usize {
            return;
        }
        let iovecs: Vec<libc::iovec> = cfg
            .buffers
            .iter()
            .map(|&(p, len)| libc::iovec {
                iov_base: p.cast(),
                iov_len: len,
            })
            .collect();
        // Safety: the buffers are owned by the worker, which keeps them
        // alive and in place for the backend's whole life (it drops the
        // backend, and with it the ring and its registrations, first).
        match unsafe { self.ring.submitter().register_buffers(&iovecs) } {
            Ok(()) => self.fixed_bufs = true,
            Err(e) => self.notes.push(format!(
                "io_uring: registering {} buffers failed ({e}; raise `ulimit -l` to allow it); using unregistered buffers",
                iovecs.len()
            )),
        }
    }

    fn entry(&self, req: &Request) -> squeue::Entry {
        let fixed_buf = self.fixed_bufs && (req.op == Op::Read || req.op == Op::Write);
        macro_rules! with_fd {
            ($build:expr) => {
                if self.fixed_files {
                    $build(types::Fixed(req.file))
                } else {
                    $build(types::Fd(self.fds[req.file as usize]))
                }
            };
        }
        let e = match (req.op, fixed_buf) {
            (Op::Read, true) => {
                with_fd!(
                    |fd| opcode::ReadFixed::new(fd, req.buf, req.len, req.slot as u16)
                        .offset(req.offset)
                        .ioprio(req.ioprio)
                        .build()
                )
            }
            (Op::Write, true) => {
                with_fd!(
                    |fd| opcode::WriteFixed::new(fd, req.buf, req.len, req.slot as u16)
                        .offset(req.offset)
                        .rw_flags(self.write_flags)
                        .ioprio(req.ioprio)
                        .build()
                )
            }
            (Op::Read, false) => with_fd!(|fd| opcode::Read::new(fd, req.buf, req.len)
                .offset(req.offset)
                .ioprio(req.ioprio)
                .build()),
            (Op::Write, false) => with_fd!(|fd| opcode::Write::new(fd, req.buf, req.len)
                .offset(req.offset)
                .rw_flags(self.write_flags)
                .ioprio(req.ioprio)
                .build()),
            (Op::Fsync, _) => with_fd!(|fd| opcode::Fsync::new(fd).build()),
            (Op::Fdatasync, _) => {
                with_fd!(|fd| opcode::Fsync::new(fd)
                    .flags(types::FsyncFlags::DATASYNC)
                    .build())
            }
            (Op::Trim, _) => unreachable!("trims are answered by backend::trim::Trims"),
        };
        e.user_data(u64::from(req.slot))
    }

    /// One `io_uring_enter` that submits what is staged and waits for `want`
    /// completions; `EINTR` is retried (a signal is not a storage error).
    fn enter(&mut self, want: usize) -> io::Result<usize> {
        loop {
            let r = if want == 0 && self.staged == 0 && self.mode == RingMode::DeferTaskrun {
                // Deferred completions are only posted by an enter with
                // GETEVENTS; the crate's submit() omits it when want == 0.
                // Safety: no argument pointer is passed.
                unsafe {
                    self.ring.submitter().enter::<libc::sigset_t>(
                        0,
                        0,
                        io_uring::EnterFlags::GETEVENTS.bits(),
                        None,
                    )
                }
            } else {
                self.ring.submitter().submit_and_wait(want)
            };
            match r {
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                r => {
                    if r.is_ok() {
                        self.staged = 0;
                    }
                    return r;
                }
            }
        }
    }
}

impl Backend for UringBackend {
    const NAME: &'static str = "io_uring";
    const SYNC: bool = false;

    fn open(files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, EngineError> {
        let entries = cfg.iodepth.max(1).next_power_of_two();
        let (ring, mode) = build_ring(entries).map_err(|e| EngineError::Backend {
            engine: Self::NAME,
            reason: format!("cannot create a ring of {entries} entries: {e} (is io_uring disabled by kernel.io_uring_disabled?)"),
        })?;
        let mut b = UringBackend {
            ring,
            mode,
            fds: files.iter().map(|f| f.fd).collect(),
            fixed_files: false,
            fixed_bufs: false,
            staged: 0,
            notes: Vec::new(),
            write_flags: super::atomic::write_flags(cfg),
        };
        b.register(cfg);
        Ok(b)
    }

    #[inline]
    unsafe fn queue(&mut self, req: &Request) -> io::Result<Queued> {
        let e = self.entry(req);
        // Safety: the buffer and descriptor stay valid until the completion
        // is reaped (Request contract; the worker drains before it frees).
        unsafe { self.ring.submission().push(&e) }.map_err(|_| {
            io::Error::other("io_uring submission queue full (more requests than iodepth)")
        })?;
        self.staged += 1;
        Ok(Queued::Staged)
    }

    #[inline]
    fn commit(&mut self) -> io::Result<u32> {
        if self.staged == 0 {
            return Ok(0);
        }
        self.enter(0).map(|n| n as u32)
    }

    #[inline]
    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        let ready = self.ring.completion().len() as u32;
        if ready < min || (ready == 0 && self.mode == RingMode::DeferTaskrun) || self.staged > 0 {
            self.enter(min as usize)?;
        }
        let mut n = 0;
        for cqe in self.ring.completion().take(max as usize) {
            out.push(Completion {
                slot: cqe.user_data() as u32,
                result: i64::from(cqe.result()),
            });
            n += 1;
        }
        Ok(n)
    }

    fn notes(&self) -> Vec<String> {
        let mut v = self.notes.clone();
        let mode = match self.mode {
            RingMode::DeferTaskrun => "SINGLE_ISSUER|DEFER_TASKRUN",
            RingMode::CoopTaskrun => "COOP_TASKRUN (kernel lacks DEFER_TASKRUN)",
            RingMode::Plain => "no set-up flags (kernel lacks COOP_TASKRUN)",
        };
        v.push(format!(
            "io_uring ring of {} entries, {mode}",
            self.ring.params().sq_entries()
        ));
        v
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
    fn fixed_read_write_and_fsync_round_trip() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[1u8; 16384]).unwrap();
        let mut bufs = [vec![0u8; 4096], vec![9u8; 4096]];
        let cfg = BackendConfig {
            iodepth: 3,
            buffers: bufs.iter_mut().map(|b| (b.as_mut_ptr(), b.len())).collect(),
            nbd: None,
            sync_writes: false,
            engine: Default::default(),
            trims: false,
            trims_reset_zones: false,
        };
        let mut b = UringBackend::open(&[OpenFile { fd: f.as_raw_fd() }], &cfg).unwrap();
        assert_eq!(b.ring.params().sq_entries(), 4);
        assert!(b.fixed_files && b.fixed_bufs, "{:?}", b.notes());
        let rd = Request {
            slot: 0,
            op: Op::Read,
            file: 0,
            offset: 4096,
            len: 4096,
            buf: cfg.buffers[0].0,
            ioprio: 0,
        };
        let wr = Request {
            slot: 1,
            op: Op::Write,
            file: 0,
            offset: 8192,
            len: 4096,
            buf: cfg.buffers[1].0,
            ioprio: 0,
        };
        assert!(matches!(q(&mut b, &rd).unwrap(), Queued::Staged));
        q(&mut b, &wr).unwrap();
        assert_eq!(b.commit().unwrap(), 2);
        let mut out = Vec::new();
        while out.len() < 2 {
            b.reap(1, 8, &mut out).unwrap();
        }
        out.sort_by_key(|c| c.slot);
        assert_eq!((out[0].result, out[1].result), (4096, 4096));
        assert!(bufs[0].iter().all(|&x| x == 1));
        q(
            &mut b,
            &Request {
                slot: 2,
                op: Op::Fdatasync,
                file: 0,
                offset: 0,
                len: 0,
                buf: std::ptr::null_mut(),
                ioprio: 0,
            },
        )
        .unwrap();
        b.commit().unwrap();
        out.clear();
        b.reap(1, 8, &mut out).unwrap();
        assert_eq!((out[0].slot, out[0].result), (2, 0));
        let mut back = vec![0u8; 4096];
        // Safety: plain pread into a local buffer of the right size.
        let n = unsafe { libc::pread(f.as_raw_fd(), back.as_mut_ptr().cast(), 4096, 8192) };
        assert_eq!(n, 4096);
        assert!(back.iter().all(|&x| x == 9), "the write reached the file");
    }

    #[test]
    fn errors_come_back_as_negative_errno() {
        let f = tempfile::tempfile().unwrap();
        let cfg = BackendConfig {
            iodepth: 1,
            buffers: Vec::new(),
            nbd: None,
            sync_writes: false,
            engine: Default::default(),
            trims: false,
            trims_reset_zones: false,
        };
        // A read-only view of a descriptor: write to an O_RDONLY file gives EBADF.
        let path = format!("/proc/self/fd/{}", f.as_raw_fd());
        let ro = std::fs::File::open(path).unwrap();
        let mut b = UringBackend::open(&[OpenFile { fd: ro.as_raw_fd() }], &cfg).unwrap();
        let mut buf = vec![0u8; 512];
        q(
            &mut b,
            &Request {
                slot: 0,
                op: Op::Write,
                file: 0,
                offset: 0,
                len: 512,
                buf: buf.as_mut_ptr(),
                ioprio: 0,
            },
        )
        .unwrap();
        b.commit().unwrap();
        let mut out = Vec::new();
        b.reap(1, 1, &mut out).unwrap();
        assert_eq!(out[0].result, -i64::from(libc::EBADF));
        assert!(!b.notes().is_empty());
    }
}
