//! Trims on files and block devices, for every engine whose backend does
//! not trim itself ([`Backend::TRIMS`] false): [`Trims`] wraps the backend
//! and answers [`Op::Trim`] with the system call fio's engines make —
//! `ioctl(BLKDISCARD)` on a block device — or, on a regular file,
//! `fallocate(PUNCH_HOLE | KEEP_SIZE)` (fio 3.33's general engines send
//! BLKDISCARD to a file too and fail with ENOTTY; its `falloc` engine
//! punches holes, as iolab does: the size stays, the blocks read back as
//! zeroes and are given back to the file system).
//!
//! With `zonemode=zbd` a trim is a zone reset, which moves only the
//! emulated write pointer (as fio's emulation over regular files does):
//! it completes at once, with no system call.
//!
//! Like fio, a trim is done synchronously inside `queue` on every engine:
//! a synchronous backend returns it as [`Queued::Done`], a queued one keeps
//! the completion for the next `reap`, so the worker sees it as it sees any
//! other completion. Everything else goes to the wrapped backend.

use std::os::fd::RawFd;

use super::{Backend, BackendConfig, Completion, Op, OpenFile, Queued, Request};
use crate::EngineError;

/// `BLKDISCARD` = `_IO(0x12, 119)` (linux/fs.h).
const BLKDISCARD: libc::c_ulong = 0x1277;

/// How one open file is trimmed.
#[derive(Debug, Clone, Copy)]
enum Kind {
    PunchHole,
    Discard,
}

#[derive(Debug)]
pub struct Trims<B> {
    inner: B,
    files: Vec<(RawFd, Kind)>,
    /// Queued backends: trims done in `queue`, handed out by `reap`.
    done: Vec<Completion>,
    /// zonemode=zbd: trims are zone resets (see the module doc).
    resets_only: bool,
}

impl<B> Trims<B> {
    /// Trims `req.len` bytes at `req.offset`: `len` or `-errno`.
    fn trim(&self, req: &Request) -> i64 {
        if self.resets_only {
            return i64::from(req.len);
        }
        let (fd, kind) = self.files[req.file as usize];
        let (off, len) = (req.offset, u64::from(req.len));
        // Safety: `fd` is open for the backend's lifetime (the worker owns
        // the files and drops the backend first); the range is plain data.
        let ret = unsafe {
            match kind {
                Kind::PunchHole => libc::fallocate(
                    fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    off as libc::off_t,
                    len as libc::off_t,
                ),
                Kind::Discard => {
                    let range: [u64; 2] = [off, len];
                    libc::ioctl(fd, BLKDISCARD, range.as_ptr())
                }
            }
        };
        if ret == 0 {
            i64::from(req.len)
        } else {
            let errno = std::io::Error::last_os_error().raw_os_error();
            -i64::from(errno.unwrap_or(libc::EIO))
        }
    }
}

fn kind_of(fd: RawFd) -> Result<Kind, EngineError> {
    // Safety: an all-zero stat is a valid value of this plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // Safety: `st` is a valid out-parameter; a bad fd is an error, not UB.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(EngineError::Backend {
            engine: "trim",
            reason: format!("fstat: {}", std::io::Error::last_os_error()),
        });
    }
    Ok(if st.st_mode & libc::S_IFMT == libc::S_IFBLK {
        Kind::Discard
    } else {
        Kind::PunchHole
    })
}

impl<B: Backend> Backend for Trims<B> {
    const NAME: &'static str = B::NAME;
    const SYNC: bool = B::SYNC;
    const TRIMS: bool = true;

    fn open(files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, EngineError> {
        let inner = B::open(files, cfg)?;
        let files = if B::TRIMS || !cfg.trims {
            Vec::new()
        } else {
            let kinds: Result<Vec<(RawFd, Kind)>, EngineError> =
                files.iter().map(|f| Ok((f.fd, kind_of(f.fd)?))).collect();
            kinds?
        };
        Ok(Trims {
            inner,
            files,
            done: Vec::new(),
            resets_only: cfg.trims_reset_zones,
        })
    }

    #[inline]
    unsafe fn queue(&mut self, req: &Request) -> std::io::Result<Queued> {
        if B::TRIMS || req.op != Op::Trim {
            // Safety: forwarded from our caller (the same contract).
            return unsafe { self.inner.queue(req) };
        }
        let c = Completion {
            slot: req.slot,
            result: self.trim(req),
        };
        if B::SYNC {
            return Ok(Queued::Done(c));
        }
        self.done.push(c);
        Ok(Queued::Staged)
    }

    #[inline]
    fn commit(&mut self) -> std::io::Result<u32> {
        self.inner.commit()
    }

    #[inline]
    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> std::io::Result<u32> {
        if B::TRIMS || self.done.is_empty() {
            return self.inner.reap(min, max, out);
        }
        let n = self.done.len().min(max as usize);
        out.extend(self.done.drain(..n));
        let n = n as u32;
        if n == max {
            return Ok(n);
        }
        Ok(n + self.inner.reap(min.saturating_sub(n), max - n, out)?)
    }

    fn completed_at(&self, slot: u32) -> Option<u64> {
        self.inner.completed_at(slot)
    }

    fn notes(&self) -> Vec<String> {
        self.inner.notes()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;

    use super::*;
    use crate::backend::null::NullBackend;
    use crate::backend::psync::PsyncBackend;
    use crate::backend::uring::UringBackend;

    fn cfg(trims: bool) -> BackendConfig {
        BackendConfig {
            iodepth: 4,
            trims,
            ..Default::default()
        }
    }

    fn trim(slot: u32, offset: u64, len: u32) -> Request {
        Request {
            slot,
            op: Op::Trim,
            file: 0,
            offset,
            len,
            buf: std::ptr::null_mut(),
            ioprio: 0,
        }
    }

    /// A file of 64 KiB of non-zero bytes, all allocated.
    fn file() -> std::fs::File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[7u8; 65536]).unwrap();
        f.sync_all().unwrap();
        f
    }

    fn zeroed(f: &std::fs::File, offset: u64, len: usize) -> bool {
        let mut buf = vec![1u8; len];
        std::os::unix::fs::FileExt::read_exact_at(f, &mut buf, offset).unwrap();
        buf.iter().all(|&b| b == 0)
    }

    #[test]
    fn a_synchronous_engine_punches_the_hole_inside_queue() {
        let f = file();
        let files = [OpenFile {
            fd: f.as_raw_fd(),
            region_end: 0,
        }];
        let mut b = Trims::<PsyncBackend>::open(&files, &cfg(true)).unwrap();
        // Safety: a trim carries no buffer.
        let Queued::Done(c) = (unsafe { b.queue(&trim(2, 16384, 16384)) }).unwrap() else {
            panic!("psync completes a trim in queue")
        };
        assert_eq!((c.slot, c.result), (2, 16384));
        assert!(zeroed(&f, 16384, 16384) && !zeroed(&f, 0, 16384));
        assert_eq!(f.metadata().unwrap().len(), 65536, "KEEP_SIZE");
        assert!(f.metadata().unwrap().blocks() * 512 <= 65536 - 16384 + 4096);
    }

    #[test]
    fn a_queued_engine_hands_the_trim_back_at_reap() {
        let f = file();
        let files = [OpenFile {
            fd: f.as_raw_fd(),
            region_end: 0,
        }];
        let Ok(mut b) = Trims::<UringBackend>::open(&files, &cfg(true)) else {
            return; // no io_uring here (seccomp): nothing to show
        };
        // Safety: a trim carries no buffer.
        let queued = unsafe { b.queue(&trim(1, 0, 8192)) };
        assert!(matches!(queued, Ok(Queued::Staged)));
        b.commit().unwrap();
        let mut out = Vec::new();
        assert_eq!(b.reap(1, 4, &mut out).unwrap(), 1);
        assert_eq!((out[0].slot, out[0].result), (1, 8192));
        assert!(zeroed(&f, 0, 8192));
    }

    #[test]
    fn a_failed_trim_is_an_errno_and_null_trims_nothing() {
        let mut b = Trims::<PsyncBackend>::open(
            &[OpenFile {
                fd: -1,
                region_end: 0,
            }],
            &cfg(false),
        )
        .unwrap();
        b.files = vec![(-1, Kind::PunchHole)];
        // Safety: a trim carries no buffer.
        let Queued::Done(c) = (unsafe { b.queue(&trim(0, 0, 4096)) }).unwrap() else {
            panic!()
        };
        assert_eq!(c.result, -i64::from(libc::EBADF));
        // The null engine answers trims itself, moving nothing.
        let mut n = Trims::<NullBackend>::open(&[], &cfg(true)).unwrap();
        // Safety: a trim carries no buffer.
        unsafe { n.queue(&trim(5, 0, 4096)) }.unwrap();
        n.commit().unwrap();
        let mut out = Vec::new();
        n.reap(1, 1, &mut out).unwrap();
        assert_eq!((out[0].slot, out[0].result), (5, 4096));
    }
}
