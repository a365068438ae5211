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
//! - fio's io_uring options are honoured ([`iolab_core::job::UringOptions`]):
//!   `fixedbufs=0`/`registerfiles=0` skip the registrations;
//!   `sqthread_poll` (+ `sqthread_poll_cpu`) sets up `SQPOLL` (+ `SQ_AFF`),
//!   where the kernel refuses DEFER_TASKRUN and COOP_TASKRUN beside it, so
//!   the ring falls back to plain set-up; `hipri` sets up `IOPOLL`;
//!   `nonvectored=0` issues `READV`/`WRITEV` of one segment;
//!   `uncached` sets `RWF_DONTCACHE` on reads and writes; `force_async=N`
//!   marks every Nth request `IOSQE_ASYNC`.

use std::io;
use std::os::fd::RawFd;

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use iolab_core::job::UringOptions;

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
    /// `rw_flags` of writes (`RWF_ATOMIC` under atomic=1, `RWF_DONTCACHE`
    /// under uncached=1).
    write_flags: i32,
    /// `rw_flags` of reads (`RWF_DONTCACHE` under uncached=1).
    read_flags: i32,
    /// `nonvectored=0`: one iovec per slot for READV/WRITEV, which must
    /// stay in place until the request completes.
    iovecs: Option<Box<[libc::iovec]>>,
    /// `force_async=N` (0 = never) and requests queued since the last
    /// `IOSQE_ASYNC` one.
    force_async: u32,
    since_async: u32,
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

fn build_ring(entries: u32, opts: &UringOptions, iopoll: bool) -> io::Result<(IoUring, RingMode)> {
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
        if opts.sqthread_poll {
            b.setup_sqpoll(SQPOLL_IDLE_MS);
            if let Some(cpu) = opts.sqthread_poll_cpu {
                b.setup_sqpoll_cpu(cpu);
            }
        }
        if iopoll {
            b.setup_iopoll();
        }
        match b.build(entries) {
            Ok(ring) => return Ok((ring, mode)),
            // EINVAL: this kernel does not know the flag (or refuses the
            // combination, as SQPOLL with the taskrun modes); try the next set.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL)))
}

/// How long an idle SQPOLL thread spins before it sleeps (fio's and the
/// kernel's default: one second).
const SQPOLL_IDLE_MS: u32 = 1000;

/// `force_async=N`: whether the request after `since` plain ones is the
/// Nth (0 = never).
fn async_due(n: u32, since: u32) -> bool {
    n != 0 && since + 1 >= n
}

impl UringBackend {
    fn register(&mut self, cfg: &BackendConfig) {
        let opts = &cfg.engine.uring;
        if !opts.registerfiles {
            self.notes
                .push("io_uring: files not registered (registerfiles=0)".into());
        } else {
            match self.ring.submitter().register_files(&self.fds) {
                Ok(()) => self.fixed_files = true,
                Err(e) => self.notes.push(format!(
                    "io_uring: registering files failed ({e}); using plain descriptors"
                )),
            }
        }
        if !opts.fixedbufs || !opts.nonvectored {
            let why = if opts.fixedbufs { "nonvectored=0" } else { "fixedbufs=0" };
            self.notes
                .push(format!("io_uring: buffers not registered ({why})"));
            return;
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

    /// The iovec of `req`'s slot, for READV/WRITEV (`nonvectored=0`). The
    /// table is sized once at open (one per slot, never moved), so the
    /// kernel's pointer stays valid until the request completes.
    fn iovec(&mut self, req: &Request) -> Option<*const libc::iovec> {
        if !matches!(req.op, Op::Read | Op::Write) {
            return None;
        }
        let v = self.iovecs.as_mut()?.get_mut(req.slot as usize)?;
        *v = libc::iovec {
            iov_base: req.buf.cast(),
            iov_len: req.len as usize,
        };
        Some(v)
    }

    fn entry(&mut self, req: &Request) -> squeue::Entry {
        macro_rules! with_fd {
            ($build:expr) => {
                if self.fixed_files {
                    $build(types::Fixed(req.file))
                } else {
                    $build(types::Fd(self.fds[req.file as usize]))
                }
            };
        }
        if let Some(iov) = self.iovec(req) {
            let (rf, wf) = (self.read_flags, self.write_flags);
            let e = match req.op {
                Op::Read => with_fd!(|fd| opcode::Readv::new(fd, iov, 1)
                    .offset(req.offset)
                    .rw_flags(rf)
                    .ioprio(req.ioprio)
                    .build()),
                _ => with_fd!(|fd| opcode::Writev::new(fd, iov, 1)
                    .offset(req.offset)
                    .rw_flags(wf)
                    .ioprio(req.ioprio)
                    .build()),
            };
            return e.user_data(u64::from(req.slot));
        }
        let fixed_buf = self.fixed_bufs && (req.op == Op::Read || req.op == Op::Write);
        let e = match (req.op, fixed_buf) {
            (Op::Read, true) => {
                with_fd!(
                    |fd| opcode::ReadFixed::new(fd, req.buf, req.len, req.slot as u16)
                        .offset(req.offset)
                        .rw_flags(self.read_flags)
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
                .rw_flags(self.read_flags)
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

/// The options that shaped the ring, for the error when it cannot be made.
fn ring_options(opts: &UringOptions, iopoll: bool) -> String {
    let mut v = Vec::new();
    if opts.sqthread_poll {
        v.push("SQPOLL");
    }
    if opts.sqthread_poll_cpu.is_some() && opts.sqthread_poll {
        v.push("SQ_AFF");
    }
    if iopoll {
        v.push("IOPOLL (hipri)");
    }
    if v.is_empty() {
        String::new()
    } else {
        format!(" with {}", v.join("|"))
    }
}

impl Backend for UringBackend {
    const NAME: &'static str = "io_uring";
    const SYNC: bool = false;

    fn open(files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, EngineError> {
        let entries = cfg.iodepth.max(1).next_power_of_two();
        let opts = &cfg.engine.uring;
        let (ring, mode) =
            build_ring(entries, opts, cfg.engine.hipri).map_err(|e| EngineError::Backend {
                engine: Self::NAME,
                reason: format!(
                    "cannot create a ring of {entries} entries{}: {e} (is io_uring disabled by \
                     kernel.io_uring_disabled?)",
                    ring_options(opts, cfg.engine.hipri)
                ),
            })?;
        let dontcache = if opts.uncached { libc::RWF_DONTCACHE } else { 0 };
        let mut b = UringBackend {
            ring,
            mode,
            fds: files.iter().map(|f| f.fd).collect(),
            fixed_files: false,
            fixed_bufs: false,
            staged: 0,
            notes: Vec::new(),
            write_flags: super::atomic::write_flags(cfg) | dontcache,
            read_flags: dontcache,
            iovecs: (!opts.nonvectored).then(|| {
                let slots = cfg.buffers.len().max(cfg.iodepth as usize).max(1);
                let empty = libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                };
                vec![empty; slots].into_boxed_slice()
            }),
            force_async: opts.force_async,
            since_async: 0,
        };
        b.register(cfg);
        Ok(b)
    }

    #[inline]
    unsafe fn queue(&mut self, req: &Request) -> io::Result<Queued> {
        let mut e = self.entry(req);
        if self.force_async != 0 {
            if async_due(self.force_async, self.since_async) {
                e = e.flags(squeue::Flags::ASYNC);
                self.since_async = 0;
            } else {
                self.since_async += 1;
            }
        }
        // Safety: the buffer and descriptor stay valid until the completion
        // is reaped (Request contract; the worker drains before it frees).
        while unsafe { self.ring.submission().push(&e) }.is_err() {
            // Under SQPOLL the kernel thread moves the SQ head only after
            // its whole batch, so a request handed to io-wq can complete
            // before its entry is released: wait for the entry (SQ_WAIT).
            if !self.ring.params().is_setup_sqpoll() {
                return Err(io::Error::other(
                    "io_uring submission queue full (more requests than iodepth)",
                ));
            }
            match self.ring.submitter().squeue_wait() {
                Err(e) if e.raw_os_error() != Some(libc::EINTR) => return Err(e),
                _ => {}
            }
        }
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
            RingMode::Plain if self.ring.params().is_setup_sqpoll() => {
                "no taskrun flags (SQPOLL excludes them)"
            }
            RingMode::Plain => "no set-up flags (kernel lacks COOP_TASKRUN)",
        };
        let p = self.ring.params();
        let mut extra = String::new();
        if p.is_setup_sqpoll() {
            extra.push_str(", SQPOLL");
        }
        if p.is_setup_iopoll() {
            extra.push_str(", IOPOLL");
        }
        v.push(format!(
            "io_uring ring of {} entries, {mode}{extra}",
            p.sq_entries()
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
        let mut b = UringBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
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
        let mut b = UringBackend::open(&[OpenFile { fd: ro.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
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

    fn cfg_with(iodepth: u32, bufs: &mut [Vec<u8>], uring: UringOptions) -> BackendConfig {
        BackendConfig {
            iodepth,
            buffers: bufs.iter_mut().map(|b| (b.as_mut_ptr(), b.len())).collect(),
            nbd: None,
            sync_writes: false,
            engine: iolab_core::job::EngineOptions {
                uring,
                ..Default::default()
            },
            trims: false,
            trims_reset_zones: false,
        }
    }

    fn read_req(slot: u32, offset: u64, buf: *mut u8) -> Request {
        Request {
            slot,
            op: Op::Read,
            file: 0,
            offset,
            len: 4096,
            buf,
            ioprio: 0,
        }
    }

    /// Queues `reqs`, submits them and waits for all their completions.
    fn run_all(b: &mut UringBackend, reqs: &[Request]) -> Vec<Completion> {
        for r in reqs {
            q(b, r).unwrap();
        }
        b.commit().unwrap();
        let mut out = Vec::new();
        while out.len() < reqs.len() {
            b.reap(1, 8, &mut out).unwrap();
        }
        out.sort_by_key(|c| c.slot);
        out
    }

    /// Names of this process's threads (`/proc/self/task/*/comm`).
    fn thread_names() -> Vec<(i32, String)> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|e| {
                let e = e.ok()?;
                let tid = e.file_name().to_str()?.parse().ok()?;
                let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
                Some((tid, comm.trim().to_string()))
            })
            .collect()
    }

    fn gettid() -> i32 {
        // Safety: gettid has no arguments and cannot fail.
        unsafe { libc::gettid() }
    }

    fn file_of(pages: usize, byte: u8) -> std::fs::File {
        // On the crate's own file system, not /tmp (often tmpfs, which has
        // neither O_DIRECT polling nor RWF_DONTCACHE).
        let mut f = tempfile::tempfile_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        f.write_all(&vec![byte; pages * 4096]).unwrap();
        f.sync_all().unwrap();
        f
    }

    #[test]
    fn opcodes_follow_fixedbufs_and_nonvectored() {
        let f = file_of(2, 3);
        let codes = |uring: UringOptions| {
            let mut bufs = vec![vec![0u8; 4096]];
            let cfg = cfg_with(1, &mut bufs, uring);
            let mut b = UringBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
            let e = b.entry(&read_req(0, 0, cfg.buffers[0].0));
            let w = b.entry(&Request {
                op: Op::Write,
                ..read_req(0, 0, cfg.buffers[0].0)
            });
            (format!("{e:?}"), format!("{w:?}"), b.notes().join("; "))
        };
        let has = |dbg: &str, code: u8| dbg.contains(&format!("op_code: {code},"));
        let (r, w, _) = codes(UringOptions::default());
        assert!(has(&r, opcode::ReadFixed::CODE) && has(&w, opcode::WriteFixed::CODE), "{r} {w}");
        let (r, w, notes) = codes(UringOptions {
            fixedbufs: false,
            ..Default::default()
        });
        assert!(has(&r, opcode::Read::CODE) && has(&w, opcode::Write::CODE), "{r} {w}");
        assert!(notes.contains("fixedbufs=0"), "{notes}");
        let (r, w, notes) = codes(UringOptions {
            nonvectored: false,
            ..Default::default()
        });
        assert!(has(&r, opcode::Readv::CODE) && has(&w, opcode::Writev::CODE), "{r} {w}");
        assert!(notes.contains("nonvectored=0"), "{notes}");
    }

    #[test]
    fn vectored_and_unregistered_requests_read_the_file() {
        let f = file_of(4, 7);
        for uring in [
            UringOptions {
                nonvectored: false,
                ..Default::default()
            },
            UringOptions {
                fixedbufs: false,
                registerfiles: false,
                ..Default::default()
            },
        ] {
            let mut bufs = vec![vec![0u8; 4096], vec![0u8; 4096]];
            let cfg = cfg_with(2, &mut bufs, uring.clone());
            let mut b = UringBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
            assert!(!b.fixed_bufs);
            assert_eq!(b.fixed_files, uring.registerfiles);
            let out = run_all(
                &mut b,
                &[read_req(0, 0, cfg.buffers[0].0), read_req(1, 8192, cfg.buffers[1].0)],
            );
            assert_eq!((out[0].result, out[1].result), (4096, 4096));
            assert!(bufs.iter().all(|b| b.iter().all(|&x| x == 7)));
        }
    }

    #[test]
    fn force_async_marks_every_nth_request() {
        let pattern: Vec<bool> = (0..6)
            .scan(0u32, |since, _| {
                let due = async_due(3, *since);
                *since = if due { 0 } else { *since + 1 };
                Some(due)
            })
            .collect();
        assert_eq!(pattern, [false, false, true, false, false, true]);
        assert!((0..4).all(|s| !async_due(0, s)));
        assert!((0..4).all(|s| async_due(1, s)));
    }

    #[test]
    fn force_async_hands_requests_to_the_kernels_workers() {
        // IOSQE_ASYNC sends a request to io-wq, whose threads are named
        // iou-wrk-<tid of the ring's owner>; a page-cache read without it
        // completes inline and starts none. Each test runs on its own
        // thread, so the name is this test's alone.
        let f = file_of(2, 5);
        let mine = format!("iou-wrk-{}", gettid());
        let mut bufs = vec![vec![0u8; 4096]];
        let cfg = cfg_with(1, &mut bufs, UringOptions::default());
        let mut b = UringBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
        let out = run_all(&mut b, &[read_req(0, 0, cfg.buffers[0].0)]);
        assert_eq!(out[0].result, 4096);
        assert!(!thread_names().iter().any(|(_, n)| *n == mine), "inline read used io-wq");
        drop(b);
        let cfg = cfg_with(
            1,
            &mut bufs,
            UringOptions {
                force_async: 1,
                ..Default::default()
            },
        );
        let mut b = UringBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
        let out = run_all(&mut b, &[read_req(0, 4096, cfg.buffers[0].0)]);
        assert_eq!(out[0].result, 4096);
        assert!(
            thread_names().iter().any(|(_, n)| *n == mine),
            "no io-wq worker after an IOSQE_ASYNC request: {:?}",
            thread_names()
        );
    }

    #[test]
    fn sqthread_poll_runs_a_kernel_thread_on_the_named_cpu() {
        let f = file_of(2, 9);
        // Safety: sysconf only reads a system constant.
        let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as u32;
        let cpu = cpus - 1;
        let mut bufs = vec![vec![0u8; 4096]];
        let cfg = cfg_with(
            1,
            &mut bufs,
            UringOptions {
                sqthread_poll: true,
                sqthread_poll_cpu: Some(cpu),
                ..Default::default()
            },
        );
        let mut b = UringBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
        assert!(b.ring.params().is_setup_sqpoll());
        assert!(b.notes().iter().any(|n| n.contains("SQPOLL")), "{:?}", b.notes());
        let out = run_all(&mut b, &[read_req(0, 0, cfg.buffers[0].0)]);
        assert_eq!(out[0].result, 4096);
        assert!(bufs[0].iter().all(|&x| x == 9));
        let mine = format!("iou-sqp-{}", gettid());
        let (tid, _) = thread_names()
            .into_iter()
            .find(|(_, n)| *n == mine)
            .expect("the SQPOLL thread");
        // Safety: a zeroed cpu_set_t is a valid empty set; the kernel fills it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // Safety: set is a valid cpu_set_t of the size passed.
        let rc = unsafe { libc::sched_getaffinity(tid, std::mem::size_of_val(&set), &mut set) };
        assert_eq!(rc, 0);
        let on: Vec<u32> = (0..cpus)
            // Safety: CPU_ISSET reads a bit of a valid set.
            .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) })
            .collect();
        assert_eq!(on, [cpu], "the SQPOLL thread runs on the CPU named");
    }

    #[test]
    fn sqthread_poll_waits_for_an_entry_the_kernel_has_not_released() {
        // One entry, every other request handed to io-wq (and uncached, so
        // reads go to the disk): a completion can come back before the
        // SQPOLL thread moves the SQ head past its entry. Without the wait
        // this failed about one run in three here.
        let f = file_of(64, 6);
        let mut bufs = vec![vec![0u8; 4096]];
        let cfg = cfg_with(
            1,
            &mut bufs,
            UringOptions {
                sqthread_poll: true,
                force_async: 2,
                uncached: true,
                ..Default::default()
            },
        );
        let mut b = UringBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
        assert_eq!(b.ring.params().sq_entries(), 1);
        for i in 0..20000u64 {
            let out = run_all(&mut b, &[read_req(0, (i * 7919 % 64) * 4096, cfg.buffers[0].0)]);
            assert_eq!(out[0].result, 4096, "request {i}");
        }
    }

    #[test]
    fn hipri_sets_up_a_polled_ring() {
        let f = file_of(2, 1);
        let mut bufs = vec![vec![0u8; 4096]];
        let mut cfg = cfg_with(1, &mut bufs, UringOptions::default());
        cfg.engine.hipri = true;
        let b = UringBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
        assert!(b.ring.params().is_setup_iopoll());
        assert!(b.notes().iter().any(|n| n.contains("IOPOLL")), "{:?}", b.notes());
    }

    /// Pages of `f`'s first `pages` pages that are in the page cache.
    fn resident(f: &std::fs::File, pages: usize) -> usize {
        let len = pages * 4096;
        // Safety: a shared read-only mapping of an open file, unmapped below.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0)
        };
        assert_ne!(p, libc::MAP_FAILED);
        let mut v = vec![0u8; pages];
        // Safety: v has one byte per page of the mapping.
        let rc = unsafe { libc::mincore(p, len, v.as_mut_ptr()) };
        // Safety: p/len is the mapping made above.
        unsafe { libc::munmap(p, len) };
        assert_eq!(rc, 0);
        v.iter().filter(|&&b| b & 1 == 1).count()
    }

    #[test]
    fn uncached_reads_leave_no_pages_in_the_cache() {
        // Two files, so that read-ahead of one read cannot serve the other.
        let read_all = |uring: UringOptions| {
            let f = file_of(8, 4);
            // Safety: advice on an open descriptor.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            assert_eq!(resident(&f, 8), 0, "the file starts out of the cache");
            let mut bufs: Vec<Vec<u8>> = (0..8).map(|_| vec![0u8; 4096]).collect();
            let cfg = cfg_with(8, &mut bufs, uring);
            let mut b = UringBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap();
            let reqs: Vec<Request> = (0..8)
                .map(|i| read_req(i, u64::from(i) * 4096, cfg.buffers[i as usize].0))
                .collect();
            let out = run_all(&mut b, &reqs);
            (out, resident(&f, 8))
        };
        let (out, cached) = read_all(UringOptions {
            uncached: true,
            ..Default::default()
        });
        if out[0].result == -i64::from(libc::EOPNOTSUPP) {
            // This file system has no RWF_DONTCACHE: the flag reached the
            // kernel (without it the read succeeds, as checked next).
            assert!(out.iter().all(|c| c.result == -i64::from(libc::EOPNOTSUPP)));
        } else {
            assert!(out.iter().all(|c| c.result == 4096), "{out:?}");
            assert_eq!(cached, 0, "RWF_DONTCACHE reads left pages cached");
        }
        let (out, cached) = read_all(UringOptions::default());
        assert!(out.iter().all(|c| c.result == 4096), "{out:?}");
        assert_eq!(cached, 8, "plain buffered reads are cached");
    }
}
