//! `io_submit_mode=offload`: submission decoupled from completion.
//!
//! fio's offload mode hands each I/O to a pool of submitting threads, so
//! the job's thread keeps its rate schedule whatever the device's
//! completions are doing. Here the pool is `iodepth` submitter threads,
//! each with its own instance of the job's backend `B` opened on the same
//! files (an io_uring ring or NBD connection per thread, as each must be
//! used by the thread that made it). A submitter takes one request at a
//! time, runs it to completion with `B` (queue; commit and reap one when
//! `B` is asynchronous), reads the clock, and sends back the completion
//! with that instant. To the worker this backend is asynchronous: `queue`
//! stages, `commit` hands the staged requests to the pool, `reap` collects
//! completions, and [`Backend::completed_at`] gives each one's completion
//! instant, so its latency does not include the time it waited to be
//! reaped while the worker was sleeping until the next I/O's due time.

use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::{Backend, BackendConfig, Completion, OpenFile, Queued, Request};
use crate::worker::clock::now_ns;
use crate::EngineError;

/// A request moved to a submitter thread.
struct Work(Request);

// Safety: the request's buffer belongs to this request until its
// completion is reaped (the contract of `Backend::queue`); only the one
// submitter thread that takes it touches the buffer meanwhile.
unsafe impl Send for Work {}

/// The offload pool over backend `B`.
pub struct OffloadBackend<B: Backend> {
    work: Option<Sender<Work>>,
    done: Receiver<(Completion, u64)>,
    staged: Vec<Request>,
    /// Completion instant of each slot's last completion (CLOCK_MONOTONIC ns).
    done_at: Vec<u64>,
    threads: Vec<JoinHandle<()>>,
    notes: Vec<String>,
    _b: std::marker::PhantomData<fn() -> B>,
}

impl<B: Backend> std::fmt::Debug for OffloadBackend<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "OffloadBackend<{}>({} threads)",
            B::NAME,
            self.threads.len()
        )
    }
}

/// Run one request to its end with `b` (opened at depth 1, so it sees slot
/// 0; the completion goes back under the worker's slot).
fn run_one<B: Backend>(b: &mut B, req: &Request, out: &mut Vec<Completion>) -> Completion {
    let mut c = run_at_slot0(b, &Request { slot: 0, ..*req }, out);
    c.slot = req.slot;
    c
}

fn run_at_slot0<B: Backend>(b: &mut B, req: &Request, out: &mut Vec<Completion>) -> Completion {
    // Safety: the caller (the worker, through `OffloadBackend::queue`)
    // keeps the buffer for this request until its completion is reaped.
    match unsafe { b.queue(req) } {
        Ok(Queued::Done(c)) => c,
        Ok(Queued::Staged) => {
            let failed = |e: std::io::Error| Completion {
                slot: req.slot,
                result: -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
            };
            if let Err(e) = b.commit() {
                return failed(e);
            }
            out.clear();
            while out.is_empty() {
                if let Err(e) = b.reap(1, 1, out) {
                    return failed(e);
                }
            }
            out[0]
        }
        Err(e) => Completion {
            slot: req.slot,
            result: -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
        },
    }
}

fn submitter<B: Backend>(
    files: Vec<OpenFile>,
    cfg: ThreadCfg,
    work: Arc<Mutex<Receiver<Work>>>,
    done: Sender<(Completion, u64)>,
    ready: Sender<Result<Vec<String>, EngineError>>,
) {
    let one = BackendConfig {
        iodepth: 1,
        buffers: Vec::new(),
        nbd: cfg.nbd,
        sync_writes: cfg.sync_writes,
        engine: cfg.engine,
        trims: cfg.trims,
        trims_reset_zones: cfg.trims_reset_zones,
    };
    let mut b = match B::open(&files, &one) {
        Ok(b) => b,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let _ = ready.send(Ok(b.notes()));
    drop(ready);
    let mut out = Vec::with_capacity(1);
    loop {
        let next = work.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(Work(req)) = next else {
            return; // the backend was dropped
        };
        // A panic in the engine must not leave the worker waiting for this
        // completion forever: it gets an error, and this thread ends.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_one(&mut b, &req, &mut out)
        }));
        let (c, ok) = match run {
            Ok(c) => (c, true),
            Err(_) => {
                let failed = Completion {
                    slot: req.slot,
                    result: -i64::from(libc::EIO),
                };
                (failed, false)
            }
        };
        if done.send((c, now_ns())).is_err() || !ok {
            return;
        }
    }
}

/// The parts of a [`BackendConfig`] a submitter thread needs (the buffer
/// list stays behind: each thread's backend uses the worker's buffers
/// unregistered).
struct ThreadCfg {
    nbd: Option<iolab_core::job::NbdTarget>,
    sync_writes: bool,
    engine: iolab_core::job::EngineOptions,
    trims: bool,
    trims_reset_zones: bool,
}

impl<B: Backend + 'static> Backend for OffloadBackend<B> {
    const NAME: &'static str = B::NAME;
    const SYNC: bool = false;

    fn open(files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, EngineError> {
        let n = cfg.iodepth.max(1) as usize;
        let (work_tx, work_rx) = mpsc::channel::<Work>();
        let work_rx = Arc::new(Mutex::new(work_rx));
        let (done_tx, done) = mpsc::channel();
        let (ready_tx, ready) = mpsc::channel();
        let mut threads = Vec::with_capacity(n);
        for i in 0..n {
            let files = files.to_vec();
            let tc = ThreadCfg {
                nbd: cfg.nbd.clone(),
                sync_writes: cfg.sync_writes,
                engine: cfg.engine.clone(),
                trims: cfg.trims,
                trims_reset_zones: cfg.trims_reset_zones,
            };
            let (w, d, r) = (work_rx.clone(), done_tx.clone(), ready_tx.clone());
            let t = std::thread::Builder::new()
                .name(format!("iolab-offload{i}"))
                .spawn(move || submitter::<B>(files, tc, w, d, r))
                .map_err(|e| {
                    EngineError::Lifecycle(format!("cannot start a submitter thread: {e}"))
                })?;
            threads.push(t);
        }
        drop(ready_tx);
        let mut me = OffloadBackend {
            work: Some(work_tx),
            done,
            staged: Vec::with_capacity(n),
            done_at: vec![0; n + 1],
            threads,
            notes: Vec::new(),
            _b: std::marker::PhantomData,
        };
        for _ in 0..n {
            match ready.recv() {
                Ok(Ok(notes)) => me.notes.extend(notes),
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    return Err(EngineError::Lifecycle(
                        "a submitter thread ended during set-up".into(),
                    ))
                }
            }
        }
        me.notes.sort();
        me.notes.dedup();
        Ok(me)
    }

    unsafe fn queue(&mut self, req: &Request) -> std::io::Result<Queued> {
        self.staged.push(*req);
        Ok(Queued::Staged)
    }

    fn commit(&mut self) -> std::io::Result<u32> {
        let n = self.staged.len() as u32;
        let tx = self.work.as_ref().expect("open until dropped");
        for req in self.staged.drain(..) {
            tx.send(Work(req))
                .map_err(|_| std::io::Error::other("the submitter threads are gone"))?;
        }
        Ok(n)
    }

    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> std::io::Result<u32> {
        let mut got = 0;
        while got < max.max(1) {
            let next = if got < min {
                self.done
                    .recv()
                    .map_err(|_| std::io::Error::other("the submitter threads are gone"))?
            } else {
                match self.done.try_recv() {
                    Ok(x) => x,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        return Err(std::io::Error::other("the submitter threads are gone"))
                    }
                }
            };
            let (c, at) = next;
            if let Some(slot) = self.done_at.get_mut(c.slot as usize) {
                *slot = at;
            }
            out.push(c);
            got += 1;
        }
        Ok(got)
    }

    fn completed_at(&self, slot: u32) -> Option<u64> {
        self.done_at.get(slot as usize).copied()
    }

    fn notes(&self) -> Vec<String> {
        let mut n = self.notes.clone();
        n.push(format!(
            "io_submit_mode=offload: {} submitter threads, each running one I/O at a time \
             with ioengine={}",
            self.threads.len(),
            B::NAME
        ));
        n
    }
}

impl<B: Backend> Drop for OffloadBackend<B> {
    fn drop(&mut self) {
        // Closing the work channel ends every submitter once its I/O is done.
        self.work = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
