//! The vsync backend (fio's `vsync`): `lseek(2)` then `readv(2)`/`writev(2)`,
//! one system call for each run of neighbouring requests.
//!
//! As in fio, requests staged between two commits (up to
//! `iodepth_batch_submit` of them) are merged into one vector while each
//! continues the previous one: same file, same direction, its offset where
//! the previous one ends, at most iodepth (and `IOV_MAX`) requests. A
//! request that does not continue the run starts the next one; a sync
//! request is a run of its own (`fsync`/`fdatasync`). With the default
//! `iodepth_batch_submit=1` every request is its own call, as in fio.
//!
//! The calls block, so they run when the worker waits for completions
//! (`reap`), oldest run first, and only as many runs as the wait needs;
//! `commit` closes the runs. An I/O's clat is then the call that moved it
//! (fio times its synchronous engines the same way: lat = clat); each
//! completion carries the instant its call returned ([`Backend::completed_at`]),
//! so a completion handed back by a later `reap` keeps its own time.
//! Like fio's vsync, a `reap` hands back every completion of the calls it
//! made, whatever `iodepth_batch_complete_max` says: the worker then has
//! that many free slots and stages as many again, so runs stay as long as
//! in fio (with one per reap, the worker would refill one slot at a time and
//! later runs would be single requests).
//!
//! A short transfer goes on from where it stopped, within the call; a call
//! that transfers nothing (end of file) leaves the rest of the run with
//! what it got (the worker treats 0 bytes as an error, a partial request
//! as a short one). `EINTR` is retried; another error fails the rest of
//! the run with `-errno`.

use std::collections::VecDeque;
use std::os::fd::RawFd;

use super::{Backend, BackendConfig, Completion, Op, OpenFile, Queued, Request};
use crate::worker::clock::now_ns;
use crate::EngineError;

/// The most iovecs one `readv`/`writev` takes (Linux's `UIO_MAXIOV`).
const IOV_MAX: usize = 1024;

#[derive(Debug)]
pub struct VsyncBackend {
    fds: Vec<RawFd>,
    /// Longest run: `IOV_MAX` (one commit stages at most iodepth).
    max_run: usize,
    /// Staged since the last commit, in order.
    staged: Vec<Request>,
    /// Committed requests, in order, and the lengths of their runs.
    pending: VecDeque<Request>,
    runs: VecDeque<usize>,
    /// Done, not yet handed back.
    ready: VecDeque<Completion>,
    /// When each slot's request completed (CLOCK_MONOTONIC ns).
    done_ns: Vec<u64>,
    /// One run's iovecs and results, kept to avoid allocating per run.
    iov: Vec<libc::iovec>,
    results: Vec<i64>,
}

impl VsyncBackend {
    /// True if `next` continues the run that ends with `last`.
    fn continues(last: &Request, next: &Request) -> bool {
        matches!(next.op, Op::Read | Op::Write)
            && next.op == last.op
            && next.file == last.file
            && next.offset == last.offset + u64::from(last.len)
    }

    /// Execute the oldest committed run; its completions go to `ready`.
    fn run_one(&mut self) {
        let Some(n) = self.runs.pop_front() else {
            return;
        };
        let first = self.pending[0];
        let fd = self.fds[first.file as usize];
        self.results.clear();
        match first.op {
            Op::Fsync | Op::Fdatasync => {
                // Safety: `fd` is open for the backend's lifetime.
                let r = retry_eintr(|| unsafe {
                    if first.op == Op::Fsync {
                        libc::fsync(fd) as isize
                    } else {
                        libc::fdatasync(fd) as isize
                    }
                });
                self.results.push(r.map_or_else(|e| -e, |r| r as i64));
            }
            Op::Trim => unreachable!("trims are answered by backend::trim::Trims"),
            Op::Read | Op::Write => {
                let run = self.pending.range(..n);
                transfer(fd, run, &mut self.iov, &mut self.results);
            }
        }
        let now = now_ns();
        for (req, &result) in self.pending.drain(..n).zip(&self.results) {
            self.done_ns[req.slot as usize] = now;
            self.ready.push_back(Completion {
                slot: req.slot,
                result,
            });
        }
    }
}

/// `lseek` then `readv`/`writev` over one run of requests; each request's
/// byte count (or `-errno`) into `got`.
fn transfer<'a>(
    fd: RawFd,
    run: impl ExactSizeIterator<Item = &'a Request> + Clone,
    iov: &mut Vec<libc::iovec>,
    got: &mut Vec<i64>,
) {
    let n = run.len();
    let first = *run.clone().next().expect("a run has a request");
    iov.clear();
    iov.extend(run.map(|r| libc::iovec {
        iov_base: r.buf.cast(),
        iov_len: r.len as usize,
    }));
    got.resize(n, 0);
    // Safety: plain lseek on an open descriptor.
    if unsafe { libc::lseek(fd, first.offset as libc::off_t, libc::SEEK_SET) } < 0 {
        got.fill(-i64::from(errno()));
        return;
    }
    let mut at = 0; // the first iovec not yet filled
    while at < n {
        let count = (n - at) as libc::c_int;
        // Safety: each iovec lies in its request's buffer (the first one
        // advanced past what was moved), which the queue contract keeps
        // valid until the completion is reaped; `fd` is open.
        let r = retry_eintr(|| unsafe {
            match first.op {
                Op::Write => libc::writev(fd, iov[at..].as_ptr(), count),
                _ => libc::readv(fd, iov[at..].as_ptr(), count),
            }
        });
        let mut moved = match r {
            Ok(0) => return,
            Ok(m) => m as usize,
            Err(e) => {
                got[at..].fill(-e);
                return;
            }
        };
        while moved > 0 && at < n {
            let v = &mut iov[at];
            let take = moved.min(v.iov_len);
            got[at] += take as i64;
            moved -= take;
            v.iov_base = v.iov_base.cast::<u8>().wrapping_add(take).cast();
            v.iov_len -= take;
            if v.iov_len == 0 {
                at += 1;
            }
        }
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Call `f` until it does not fail with `EINTR`: its result, or `errno`.
fn retry_eintr(mut f: impl FnMut() -> isize) -> Result<isize, i64> {
    loop {
        let r = f();
        if r >= 0 {
            return Ok(r);
        }
        let e = errno();
        if e != libc::EINTR {
            return Err(i64::from(e));
        }
    }
}

impl Backend for VsyncBackend {
    const NAME: &'static str = "vsync";
    const SYNC: bool = false;

    fn open(files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, EngineError> {
        let depth = cfg.iodepth.max(1) as usize;
        Ok(VsyncBackend {
            fds: files.iter().map(|f| f.fd).collect(),
            max_run: depth.min(IOV_MAX),
            staged: Vec::with_capacity(depth + 1),
            pending: VecDeque::with_capacity(depth + 1),
            runs: VecDeque::with_capacity(depth + 1),
            ready: VecDeque::with_capacity(depth + 1),
            // A sync request on a quiet queue uses slot iodepth.
            done_ns: vec![0; depth + 1],
            iov: Vec::with_capacity(depth),
            results: Vec::with_capacity(depth),
        })
    }

    unsafe fn queue(&mut self, req: &Request) -> std::io::Result<Queued> {
        self.staged.push(*req);
        Ok(Queued::Staged)
    }

    fn commit(&mut self) -> std::io::Result<u32> {
        let n = self.staged.len();
        let mut run = 0;
        for req in self.staged.drain(..) {
            let joins = run > 0
                && run < self.max_run
                && self.pending.back().is_some_and(|last| Self::continues(last, &req));
            if joins {
                run += 1;
            } else {
                if run > 0 {
                    self.runs.push_back(run);
                }
                run = 1;
            }
            self.pending.push_back(req);
        }
        if run > 0 {
            self.runs.push_back(run);
        }
        Ok(n as u32)
    }

    fn reap(&mut self, min: u32, _max: u32, out: &mut Vec<Completion>) -> std::io::Result<u32> {
        while self.ready.len() < min as usize && !self.runs.is_empty() {
            self.run_one();
        }
        // All of them, as fio's vsync getevents: see the module doc.
        let n = self.ready.len();
        out.extend(self.ready.drain(..));
        Ok(n as u32)
    }

    fn completed_at(&self, slot: u32) -> Option<u64> {
        self.done_ns.get(slot as usize).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    fn req(slot: u32, op: Op, offset: u64, buf: &mut [u8]) -> Request {
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

    fn backend(f: &std::fs::File, iodepth: u32) -> VsyncBackend {
        let cfg = BackendConfig {
            iodepth,
            ..BackendConfig::default()
        };
        VsyncBackend::open(&[OpenFile { fd: f.as_raw_fd(), region_end: 0 }], &cfg).unwrap()
    }

    fn queue(b: &mut VsyncBackend, r: &Request) {
        // Safety: every buffer here outlives the reap of its request.
        assert!(matches!(unsafe { b.queue(r) }.unwrap(), Queued::Staged));
    }

    #[test]
    fn merges_neighbours_of_one_commit_and_moves_the_right_bytes() {
        let mut f = tempfile::tempfile().unwrap();
        let content: Vec<u8> = (0..16384u32).map(|i| (i / 7) as u8).collect();
        f.write_all(&content).unwrap();
        let mut b = backend(&f, 4);
        let mut bufs = vec![vec![0u8; 4096]; 4];
        // 0, 4096 and 8192 continue each other; 0 again starts a new run.
        let offsets = [0, 4096, 8192, 0];
        for (i, (buf, off)) in bufs.iter_mut().zip(offsets).enumerate() {
            queue(&mut b, &req(i as u32, Op::Read, off, buf));
        }
        assert_eq!(b.commit().unwrap(), 4);
        assert_eq!(b.runs.iter().copied().collect::<Vec<_>>(), [3, 1]);
        let mut out = Vec::new();
        // One completion asked: the first run (three requests) is done, and
        // all three come back (as from fio's vsync), the second run waits.
        assert_eq!(b.reap(1, 1, &mut out).unwrap(), 3);
        assert_eq!((b.ready.len(), b.runs.len()), (0, 1));
        assert_eq!(b.reap(1, 1, &mut out).unwrap(), 1);
        let slots: Vec<(u32, i64)> = out.iter().map(|c| (c.slot, c.result)).collect();
        assert_eq!(slots, [(0, 4096), (1, 4096), (2, 4096), (3, 4096)]);
        for (buf, off) in bufs.iter().zip(offsets) {
            assert_eq!(&buf[..], &content[off as usize..off as usize + 4096]);
        }
        assert!(b.completed_at(0).unwrap() <= b.completed_at(3).unwrap());
    }

    #[test]
    fn runs_do_not_cross_commits_directions_or_iov_max() {
        let f = tempfile::tempfile().unwrap();
        f.set_len(1 << 16).unwrap();
        let mut b = backend(&f, 8);
        // As IOV_MAX would at a depth beyond 1024: runs of at most 2.
        b.max_run = 2;
        let mut bufs = vec![vec![1u8; 512]; 6];
        let ops = [Op::Write, Op::Write, Op::Write, Op::Read, Op::Read, Op::Read];
        for (i, buf) in bufs.iter_mut().take(5).enumerate() {
            queue(&mut b, &req(i as u32, ops[i], 512 * i as u64, buf));
        }
        b.commit().unwrap();
        // The limit splits the writes 2 + 1; the reads 3 and 4 continue.
        assert_eq!(b.runs.iter().copied().collect::<Vec<_>>(), [2, 1, 2]);
        queue(&mut b, &req(5, Op::Read, 512 * 5, &mut bufs[5]));
        b.commit().unwrap();
        // A new commit starts a new run even where the offset continues.
        assert_eq!(b.runs.iter().copied().collect::<Vec<_>>(), [2, 1, 2, 1]);
        let mut out = Vec::new();
        assert_eq!(b.reap(6, 6, &mut out).unwrap(), 6);
        assert!(out.iter().all(|c| c.result == 512));
    }

    #[test]
    fn end_of_file_and_errors_reach_each_request() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[9u8; 6144]).unwrap();
        let mut b = backend(&f, 4);
        let mut bufs = vec![vec![0u8; 4096]; 3];
        for (i, buf) in bufs.iter_mut().enumerate() {
            queue(&mut b, &req(i as u32, Op::Read, 4096 * i as u64, buf));
        }
        b.commit().unwrap();
        let mut out = Vec::new();
        b.reap(3, 3, &mut out).unwrap();
        let got: Vec<i64> = out.iter().map(|c| c.result).collect();
        assert_eq!(got, [4096, 2048, 0], "short, then end of file");
        assert!(bufs[1][..2048].iter().all(|&x| x == 9));
        // A closed descriptor: -EBADF for every request of the run, and a sync.
        let cfg = BackendConfig {
            iodepth: 2,
            ..BackendConfig::default()
        };
        let mut bad = VsyncBackend::open(&[OpenFile { fd: -1, region_end: 0 }], &cfg).unwrap();
        queue(&mut bad, &req(0, Op::Read, 0, &mut bufs[0]));
        queue(&mut bad, &req(1, Op::Read, 4096, &mut bufs[1]));
        let mut sync = req(2, Op::Fsync, 0, &mut []);
        sync.buf = std::ptr::null_mut();
        queue(&mut bad, &sync);
        bad.commit().unwrap();
        out.clear();
        bad.reap(3, 3, &mut out).unwrap();
        let ebadf = -i64::from(libc::EBADF);
        let got: Vec<i64> = out.iter().map(|c| c.result).collect();
        assert_eq!(got, [ebadf, ebadf, ebadf]);
    }
}
