//! The null backend: no I/O at all, every request completes at once.
//!
//! It measures what the tool itself costs per I/O. Like fio's `null`
//! engine it is asynchronous in shape: `queue` stages a request, `commit`
//! makes the staged requests complete, `reap` hands the completions back.
//! So a null job goes through exactly the worker path a real asynchronous
//! job does (generator, batching, timestamps, histograms) — only the
//! kernel is missing. Reads and writes complete with their full length,
//! syncs with 0.
//!
//! `reap` never blocks: with nothing committed there is nothing that could
//! ever complete, so asking for more than is ready returns what is ready.
//!
//! One difference from fio, on purpose: fio's null refuses a new request
//! while committed ones are not reaped yet (`FIO_Q_BUSY`), so with the
//! default `iodepth_batch=1` it has one I/O in flight whatever `iodepth`
//! says. iolab's null keeps `iodepth` requests in flight, like a device
//! with zero latency: its latency is the time the worker takes to go round
//! the queue, and its IOPS what the worker path can do at that depth.

use std::collections::VecDeque;

use super::{Backend, BackendConfig, Completion, Op, OpenFile, Queued, Request};
use crate::EngineError;

/// Requests in order of queueing, bounded by the worker's iodepth: the
/// first `done` of them are committed (complete), the rest staged. One
/// queue, so a commit moves nothing.
#[derive(Debug)]
pub struct NullBackend {
    queue: VecDeque<Completion>,
    done: usize,
}

impl Backend for NullBackend {
    const NAME: &'static str = "null";
    const SYNC: bool = false;
    const TRIMS: bool = true;

    fn open(_files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, EngineError> {
        // One extra entry for a sync request issued on a quiesced queue.
        let cap = cfg.iodepth as usize + 1;
        Ok(NullBackend {
            queue: VecDeque::with_capacity(cap),
            done: 0,
        })
    }

    #[inline]
    unsafe fn queue(&mut self, req: &Request) -> std::io::Result<Queued> {
        let result = match req.op {
            Op::Read | Op::Write | Op::Trim => i64::from(req.len),
            Op::Fsync | Op::Fdatasync => 0,
        };
        self.queue.push_back(Completion {
            slot: req.slot,
            result,
        });
        Ok(Queued::Staged)
    }

    #[inline]
    fn commit(&mut self) -> std::io::Result<u32> {
        let n = self.queue.len() - self.done;
        self.done = self.queue.len();
        Ok(n as u32)
    }

    #[inline]
    fn reap(&mut self, _min: u32, max: u32, out: &mut Vec<Completion>) -> std::io::Result<u32> {
        let n = (max as usize).min(self.done);
        // A plain loop: `extend(drain(..n))` is an out-of-line call per reap.
        for _ in 0..n {
            if let Some(c) = self.queue.pop_front() {
                out.push(c);
            }
        }
        self.done -= n;
        Ok(n as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(slot: u32, op: Op, len: u32) -> Request {
        Request {
            slot,
            op,
            file: 0,
            offset: 0,
            len,
            buf: std::ptr::null_mut(),
            ioprio: 0,
        }
    }

    /// Tests queue into buffers that outlive the request's completion.
    fn q<B: Backend>(b: &mut B, r: &Request) -> std::io::Result<Queued> {
        // Safety: every caller here keeps the buffer alive and untouched
        // until the completion is reaped (the queue contract).
        unsafe { b.queue(r) }
    }

    #[test]
    fn staged_requests_complete_on_commit_only() {
        let cfg = BackendConfig {
            iodepth: 4,
            buffers: Vec::new(),
            nbd: None,
            sync_writes: false,
            engine: Default::default(),
            trims: false,
            trims_reset_zones: false,
        };
        let mut b = NullBackend::open(&[], &cfg).unwrap();
        let mut out = Vec::new();
        q(&mut b, &req(0, Op::Read, 4096)).unwrap();
        q(&mut b, &req(1, Op::Fsync, 0)).unwrap();
        assert_eq!(b.reap(1, 8, &mut out).unwrap(), 0, "nothing committed yet");
        assert_eq!(b.commit().unwrap(), 2);
        assert_eq!(b.reap(0, 1, &mut out).unwrap(), 1, "max is honoured");
        assert_eq!(b.reap(0, 8, &mut out).unwrap(), 1);
        assert_eq!((out[0].slot, out[0].result), (0, 4096));
        assert_eq!((out[1].slot, out[1].result), (1, 0));
    }
}
