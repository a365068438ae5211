//! Workers: one OS thread per worker (one numjobs clone of a job).
//!
//! A worker owns everything its I/O touches — backend, aligned buffers,
//! generator, rate limiter, histograms — so the per-I/O path takes no lock
//! and allocates nothing. Its life:
//!
//! 1. [`spawn`]: the thread pins itself (cpus_allowed), opens its backend
//!    (an io_uring ring must be created by the thread that submits to it)
//!    and reports ready or the set-up error;
//! 2. it waits for its stonewall group's start instant ([`WorkerHandle::go`]),
//!    then for `startdelay`;
//! 3. it runs the loop ([`io_loop`]): ramp, measured window, intervals;
//! 4. it drains what is in flight, runs `end_fsync`, reads back and checks
//!    what it wrote (do_verify: the verify phase), and returns a
//!    [`WorkerOutcome`]: the result of what it did, and the error that
//!    stopped it, if any.
//!
//! Modules: [`buffers`] (aligned buffers), `content` and `verify` (what
//! writes carry, verified chunks), `data` (the verify log and phase),
//! [`clock`] (monotonic ns, waits),
//! [`record`] (stats, intervals, ramp), `io_loop` (the hot path), `waits`
//! (quiesce, syncs, sleeps), [`thread`] (spawning, pinning, dispatch on
//! the backend).

pub mod buffers;
pub mod clock;
mod content;
mod data;
pub(crate) mod dedupe;
mod errors;
mod fill;
mod flow;
mod handoff;
mod io_loop;
pub mod iolog;
mod lat_target;
pub mod lockmem;
mod overlap;
pub mod placement;
mod pre_read;
pub mod prio;
mod ratemin;
pub mod record;
mod think;
pub mod thread;
mod verify;
mod waits;

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iolab_core::engines::Target;
use iolab_core::gen::{IoGen, IoUnit};
use iolab_core::job::PreparedJob;
use iolab_core::rate::RateLimiter;
use iolab_core::stats::{IntervalSample, WorkerResult};

use crate::backend::cpuio::CpuBurner;
use crate::backend::{Backend, BackendConfig, Completion, Op, OpenFile};
use crate::EngineError;
use buffers::AlignedBufs;
use io_loop::Slot;
use record::Recorder;

pub use thread::{spawn, WorkerHandle};

/// Which worker: index of its job in the run, and its clone index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WorkerId {
    pub job: u32,
    pub worker: u32,
}

/// What workers tell the run while they run (progress only: the result
/// comes back through the thread's return value).
#[derive(Debug)]
pub enum WorkerMsg {
    /// The measured window began (ramp over) at this CLOCK_MONOTONIC instant.
    Measuring { id: WorkerId, mono_ns: u64 },
    /// An interval closed. `ramp` samples are progress only.
    Interval {
        id: WorkerId,
        sample: Box<IntervalSample>,
        ramp: bool,
    },
    /// The worker finished (result ready to join).
    Finished { id: WorkerId },
}

/// A worker's result so far (its measured window up to the interval just
/// closed, or its final result once it ended; no series), sent when the run
/// asked for interim reports ([`WorkerSpec::cumulative`]).
pub type CumulativeMsg = (WorkerId, Box<WorkerResult>);

/// Shared by every worker of a run.
#[derive(Debug, Default)]
pub struct Control {
    /// Stop issuing, drain, return what was done; later groups do not start.
    pub stop: AtomicBool,
    /// Stop the stonewall group running now (exitall with exit_what=group
    /// or stonewall); the coordinator clears it before the next group.
    pub end_group: AtomicBool,
    /// The run's flow groups (fio's flow_id).
    pub flows: flow::FlowRegistry,
    /// Stop the workers of one job (by index), the others going on.
    pub job_stop: Vec<AtomicBool>,
}

impl Control {
    /// The control of a run of `jobs` jobs.
    pub fn for_jobs(jobs: usize) -> Control {
        Control {
            job_stop: (0..jobs).map(|_| AtomicBool::new(false)).collect(),
            ..Control::default()
        }
    }

    /// True once this worker's group must stop issuing.
    #[inline]
    pub fn halted(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.stop.load(Relaxed) || self.end_group.load(Relaxed)
    }

    /// True once job `job`'s workers must stop issuing: the group's stop,
    /// or the job's own (`Run::stop_job`).
    #[inline]
    pub fn job_halted(&self, job: usize) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.halted() || self.job_stop.get(job).is_some_and(|f| f.load(Relaxed))
    }
}

/// Everything a worker needs, built by `Run::prepare`.
#[derive(Debug)]
pub struct WorkerSpec {
    pub id: WorkerId,
    pub job: Arc<PreparedJob>,
    /// One per generator region (`IoUnit::file` indexes them).
    pub paths: Vec<PathBuf>,
    /// The open files, in the same order; empty for the null engine.
    pub files: Vec<File>,
    pub gen: IoGen,
    pub rate: Option<RateLimiter>,
    /// CPUs to pin to (already resolved from cpus_allowed and its policy).
    pub cpus: Option<Vec<usize>>,
    pub interval_ns: u64,
    /// Keep the measured intervals in the result (false when the run
    /// streams them to an interval log).
    pub keep_series: bool,
    /// Where to send the worker's result so far at each measured interval
    /// and at its end (`Run::snapshot`); None: not asked for.
    pub cumulative: Option<std::sync::mpsc::Sender<CumulativeMsg>>,
    pub host: String,
    pub bufs: AlignedBufs,
    /// Who the worker is to the dedupe streams (job, dedupe_global place).
    pub dedupe_peer: dedupe::DedupePeer,
}

/// What a worker returns: what it did, and what stopped it early.
#[derive(Debug, Default)]
pub struct WorkerOutcome {
    pub result: WorkerResult,
    pub error: Option<EngineError>,
}

/// Loop parameters, resolved once from the job.
#[derive(Debug, Clone, Copy)]
struct Params {
    iodepth: u32,
    batch_submit: u32,
    complete_min: u32,
    complete_max: u32,
    thinktime_ns: u64,
    fsync_every: u32,
    fdatasync_every: u32,
    end_fsync: bool,
    runtime_ns: Option<u64>,
    startdelay_ns: u64,
    ramp_ns: u64,
    /// `invalidate=1` on buffered I/O: drop the files' cached pages at the
    /// start of every pass after the first (a time_based run wrapping
    /// around, each of `loops`), as fio does (its loop_cache_invalidate and
    /// the reopen of each loop). Without it a buffered time_based read of a
    /// file the page cache can hold measures the cache after one pass
    /// where fio measures the device every pass.
    invalidate_passes: bool,
    /// `pre_read`: read the regions into the page cache before the run.
    pre_read: bool,
}

impl Params {
    /// The queue settings are the prepared job's: fio's depth rules
    /// (iodepth_batch 0 = iodepth, caps at iodepth, complete_max's default)
    /// are applied once, by the option layer (`queueing` in
    /// iolab_core's options/finish.rs). A complete_min of 0 stays 0 there,
    /// as written; the worker reaps only when it must, and then at least one
    /// completion (`Worker::reap`), which is what fio does with a full queue.
    fn of(job: &PreparedJob) -> Params {
        Params {
            iodepth: job.iodepth,
            batch_submit: job.iodepth_batch_submit,
            complete_min: job.iodepth_batch_complete_min,
            complete_max: job.iodepth_batch_complete_max,
            thinktime_ns: job.thinktime_ns,
            fsync_every: job.fsync,
            fdatasync_every: job.fdatasync,
            end_fsync: job.end_fsync,
            runtime_ns: job.runtime_ns.filter(|&r| r > 0),
            startdelay_ns: job.startdelay_ns,
            ramp_ns: job.ramp_time_ns,
            invalidate_passes: job.engine.invalidate && !job.direct,
            pre_read: job.engine.pre_read,
        }
    }
}

/// The state of one running worker. Field order matters: the backend (and
/// with it an io_uring ring and its buffer registration) drops before the
/// buffers and files it points into. What the loop keeps is grouped by
/// what it is for: [`Queue`], [`Source`], [`Syncs`], [`Pacing`], [`Limits`]
/// (plain owned parts: no indirection on the per-I/O path).
pub(crate) struct Worker<B: Backend> {
    backend: B,
    bufs: AlignedBufs,
    /// Kept open for the backend's descriptors; dropped after it.
    _files: Vec<File>,
    paths: Vec<PathBuf>,
    p: Params,
    q: Queue,
    src: Source,
    syncs: Syncs,
    pacing: Pacing,
    limits: Limits,
    /// The engine's clock, the worker's own copy (no shared read per I/O).
    clk: clock::Clock,
    last_ns: u64,
    rec: Recorder,
    error: Option<EngineError>,
    ctl: Arc<Control>,
    data: data::DataState,
    /// cpuio: burn CPU instead of doing I/O.
    burner: Option<CpuBurner>,
    /// Each I/O's priority (prio, cmdprio options); None when none is set.
    prio: Option<prio::PrioPicker>,
    /// Per-I/O records (per_io_log); None when no log asks for them.
    iolog: Option<iolog::IoLogWriter>,
    /// `write_iolog`: fio's text log of the issued I/O; None when not asked.
    wlog: Option<iolog::FioIoLog>,
    /// serialize_overlap: the busy slots' byte ranges.
    overlap: Option<overlap::Overlap>,
    /// Index of the worker's job in the run (its `Control::job_stop`).
    job_index: usize,
    /// When the stop flags are next looked at (see `Worker::stopping`).
    halt_check_ns: std::cell::Cell<u64>,
}

/// The queue: one slot per iodepth, which are free, how many are in
/// flight, and the reused vectors a batch is built and reaped in
/// (allocated once, at the queue's size).
struct Queue {
    slots: Vec<Slot>,
    /// Free slot indexes (a stack).
    free: Vec<u32>,
    inflight: u32,
    /// Completions of one reap.
    comps: Vec<Completion>,
    /// Completions reaped and released, recorded later in the turn
    /// (`handoff`): each slot's state when it completed; the first
    /// `done_len` are waiting.
    done: Vec<(u32, Slot)>,
    done_len: usize,
    /// The clock reading those completions were reaped at.
    done_ns: u64,
    /// The units of the batch being issued, with their due times.
    batch: Vec<(IoUnit, u64)>,
    /// The slots of that batch handed to the backend, not yet committed.
    staged: Vec<u32>,
}

/// What to issue next: the generator, a unit taken but not due yet, the
/// rate schedule, and what io_size and number_ios still allow.
struct Source {
    gen: IoGen,
    /// The generator (or the verify phase) has nothing more.
    gen_done: bool,
    /// A unit taken from the generator but not due yet, with its due time.
    pending: Option<(IoUnit, u64)>,
    /// The loop waits until this instant before issuing.
    wait_due: Option<u64>,
    rate: Option<RateLimiter>,
    /// Where the rate schedule starts (when I/O starts).
    rate_origin_ns: u64,
    /// What io_size and number_ios still allow the generator to issue.
    bytes_left: u64,
    ios_left: u64,
}

/// Write tracking: the writes counted per file (fsync / fdatasync every
/// N), which files were written (end_fsync, the verify phase's flush),
/// and the sync the loop owes.
struct Syncs {
    writes: Vec<u32>,
    written: Vec<bool>,
    sync_due: Option<(u32, Op)>,
}

/// Submission control: what holds issuing back besides the rate — flow
/// groups, the latency_target search, thinktime, io_submit_mode.
struct Pacing {
    /// flow, latency_target and io_submit_mode.
    control: iolab_core::job::IoControl,
    /// This worker's place in its flow group while it runs.
    flow: Option<flow::FlowMember>,
    /// The last batch stopped because the flow held the worker back.
    flow_held: bool,
    /// The latency_target search, and what it asked of the loop.
    lat: Option<lat_target::LatTarget>,
    lat_step: lat_target::Step,
    lat_done: bool,
    /// io_submit_mode=offload: never wait on a completion for a due I/O.
    offload: bool,
    /// thinktime: when the loop quiesces and stalls.
    think: Option<think::Think>,
}

/// Stopping rules besides runtime and the generator: exitall, rate_min,
/// fill_device, and the error policy.
struct Limits {
    /// exitall and exitall_on_error are read at the end.
    job_amounts: iolab_core::job::Amounts,
    /// rate_min / rate_iops_min, and the (I/Os, bytes) completed per direction.
    ratemin: Option<ratemin::RateMin>,
    done: [(u64, u64); 2],
    /// fill_device: ENOSPC ends the writing ([`fill`]); and whether it did.
    fill_device: bool,
    space_full: bool,
    /// Failures counted, and which end the job (continue_on_error).
    errs: errors::ErrorState,
}

impl<B: Backend> std::fmt::Debug for Worker<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Worker<{}>(inflight={})", B::NAME, self.q.inflight)
    }
}

/// The error for a failed I/O; `result` is `-errno`, or 0 for a transfer
/// that moved nothing (end of file).
pub(crate) fn io_failed(
    path: PathBuf,
    offset: u64,
    len: u64,
    dir: &'static str,
    result: i64,
) -> EngineError {
    let source = if result < 0 {
        std::io::Error::from_raw_os_error((-result) as i32)
    } else {
        std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "0 bytes transferred (past the end of the file?)",
        )
    };
    EngineError::IoFailed {
        path,
        offset,
        len,
        dir,
        source,
    }
}

impl<B: Backend> Worker<B> {
    /// Open the backend on the spec's files and buffers (in the worker's thread).
    fn new(
        spec: WorkerSpec,
        ctl: Arc<Control>,
        rec: Recorder,
    ) -> Result<(Worker<B>, IdleParts), EngineError> {
        let p = Params::of(&spec.job);
        let open: Vec<OpenFile> = spec
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| OpenFile {
                fd: std::os::fd::AsRawFd::as_raw_fd(f),
                region_end: spec.gen.region_end(i),
            })
            .collect();
        let cfg = BackendConfig {
            iodepth: p.iodepth,
            buffers: spec.bufs.regions(),
            nbd: spec.job.nbd.clone(),
            sync_writes: spec.job.writes() && spec.job.sync != iolab_core::job::SyncMode::None,
            engine: spec.job.engine.clone(),
            trims: spec.job.trims(),
            trims_reset_zones: spec.job.zones.mode == iolab_core::job::ZoneMode::Zbd,
        };
        let backend = B::open(&open, &cfg)?;
        let prio_seed = spec.gen.seed() ^ 0x5bd1_e995;
        let iolog = match &spec.job.worker.per_io_log {
            Some(dir) => Some(iolog::IoLogWriter::create(
                dir,
                spec.id.job,
                spec.id.worker,
            )?),
            None => None,
        };
        let wlog = match &spec.job.replay.write_iolog {
            Some(path) => Some(iolog::FioIoLog::create(path, &spec.paths)?),
            None => None,
        };
        let n = spec.paths.len();
        let mut data = data::DataState::new(
            &spec.job,
            spec.gen.seed(),
            spec.gen.bytes_per_pass(),
            spec.dedupe_peer,
        );
        let errs = errors::ErrorState::new(&spec.job.errors, &spec.job.name, spec.id.worker);
        if errs.continues_on_verify() {
            data.continue_on_mismatch();
        }
        let mut bufs = spec.bufs;
        data.initial_fill(bufs.as_mut_slice());
        let w = Worker {
            backend,
            bufs,
            _files: spec.files,
            paths: spec.paths,
            p,
            q: Queue {
                slots: vec![Slot::default(); p.iodepth as usize],
                free: (0..p.iodepth).rev().collect(),
                inflight: 0,
                comps: Vec::with_capacity(p.iodepth as usize + 1),
                done: Vec::new(),
                done_len: 0,
                done_ns: 0,
                batch: Vec::with_capacity(p.batch_submit as usize),
                staged: Vec::with_capacity(p.batch_submit as usize),
            },
            src: Source {
                gen: spec.gen,
                gen_done: false,
                pending: None,
                wait_due: None,
                rate: spec.rate,
                rate_origin_ns: 0,
                bytes_left: spec.job.amounts.io_size.unwrap_or(u64::MAX),
                ios_left: spec.job.amounts.number_ios.unwrap_or(u64::MAX),
            },
            syncs: Syncs {
                writes: vec![0; n],
                written: vec![false; n],
                sync_due: None,
            },
            pacing: Pacing {
                control: spec.job.control.clone(),
                flow: None,
                flow_held: false,
                lat: lat_target::LatTarget::new(&spec.job.control, p.iodepth),
                lat_step: lat_target::Step::Go,
                lat_done: false,
                offload: spec.job.control.submit_mode == iolab_core::job::SubmitMode::Offload,
                think: think::Think::new(&spec.job),
            },
            limits: Limits {
                job_amounts: spec.job.amounts.clone(),
                ratemin: ratemin::RateMin::new(&spec.job),
                done: [(0, 0); 2],
                fill_device: spec.job.zones.fill_device,
                space_full: false,
                errs,
            },
            clk: clock::Clock::get(),
            last_ns: 0,
            rec,
            error: None,
            ctl,
            data,
            burner: (spec.job.ioengine.caps().target == Target::NoIo).then(|| {
                CpuBurner::new(spec.job.engine.cpuload, spec.job.engine.cpuchunks_us)
                    .with_mode(spec.job.worker.cpumode)
            }),
            prio: prio::PrioPicker::new(&spec.job, prio_seed),
            iolog,
            wlog,
            overlap: overlap::Overlap::new(
                spec.job.data.serialize_overlap,
                p.iodepth as usize,
                B::SYNC,
            ),
            job_index: spec.id.job as usize,
            halt_check_ns: std::cell::Cell::new(0),
        };
        Ok((
            w,
            IdleParts {
                worker: spec.id.worker,
                host: spec.host,
            },
        ))
    }

    pub(crate) fn notes(&self) -> Vec<String> {
        self.backend.notes()
    }

    fn backend_err(&self, op: &str, e: std::io::Error) -> EngineError {
        EngineError::Backend {
            engine: B::NAME,
            reason: format!("{op} failed: {e}"),
        }
    }

    /// Run from the group's start instant to the end; never panics on I/O
    /// errors (they come back in the outcome).
    fn run(&mut self, start_ns: u64, parts: IdleParts) -> WorkerOutcome {
        let Some(origin) = clock::wait_until(start_ns + self.p.startdelay_ns, &self.ctl.stop)
        else {
            return WorkerOutcome {
                result: self.rec.finish(0, parts.worker, parts.host),
                error: None,
            };
        };
        if let Some(w) = self.wlog.as_mut() {
            w.start(origin);
        }
        let replay_paced = self.src.gen.replay_due_ns().is_some();
        if self.src.rate.is_some() || self.p.thinktime_ns > 0 || replay_paced {
            clock::tighten_timer_slack();
        }
        self.last_ns = origin;
        self.src.rate_origin_ns = origin;
        self.rec.begin(origin, self.p.ramp_ns);
        self.flow_join();
        if let Some(l) = self.pacing.lat.as_mut() {
            l.start(origin);
        }
        if let Some(burner) = self.burner {
            while !self.stopping() {
                burner.cycle();
                self.clock();
            }
        } else if let Err(e) = self.main_loop() {
            self.error.get_or_insert(e);
        }
        if let Err(e) = self.quiesce() {
            self.error.get_or_insert(e);
        }
        // As fio's do_io: end_fsync closes the I/O phase, before the verify.
        if self.p.end_fsync && self.error.is_none() {
            self.end_fsync();
        }
        self.verify_phase();
        let end = self.clock();
        if let Some(Err(e)) = self.iolog.as_mut().map(iolog::IoLogWriter::finish) {
            self.error.get_or_insert(e);
        }
        if let Some(Err(e)) = self.wlog.as_mut().map(|w| w.finish(end)) {
            self.error.get_or_insert(e);
        }
        let a = &self.limits.job_amounts;
        if a.exitall || (a.exitall_on_error && self.error.is_some()) {
            self.limits.errs.exit_others(&self.ctl);
        }
        // Leave the flow group (after a stop, so the others never run free).
        self.pacing.flow = None;
        let mut result = self.rec.finish(end, parts.worker, parts.host);
        self.limits.errs.report(&mut result);
        result.latency_depth = self.pacing.lat.as_ref().map(|l| l.qd);
        WorkerOutcome {
            result,
            error: self.error.take(),
        }
    }

    /// After the writes: read back and check what was logged (do_verify),
    /// unless the run was stopped or failed; then report any mismatch.
    fn verify_phase(&mut self) {
        let stopped = self.ctl.halted();
        if self.data.verify_pending() && self.error.is_none() && !stopped {
            // The I/O phase ends here (fio's per-direction runtime).
            let io_end = self.clock();
            self.rec.end_phase(io_end);
            self.data.phase = true;
            self.src.gen_done = false;
            let mut verified = self.drop_written();
            if verified.is_ok() && self.error.is_none() {
                verified = self.main_loop().and_then(|()| self.quiesce());
            }
            if let Err(e) = verified {
                self.error.get_or_insert(e);
            }
        }
        if let Some(e) = self
            .data
            .error()
            .and_then(|e| self.limits.errs.verify_failed(e))
        {
            self.error.get_or_insert(e);
        }
    }

    /// A pass after the first began: drop the files' cached pages
    /// ([`Params::invalidate_passes`]). As fio's loop_cache_invalidate, a
    /// failure is not the job's error (the first drop, at open, reported
    /// one already). Runs before the pass's first I/O is stamped, so its
    /// time is the run's, never an I/O's latency.
    #[cold]
    #[inline(never)]
    fn drop_cached_for_pass(&mut self) {
        for (f, path) in self._files.iter().zip(&self.paths) {
            let _ = crate::layout::drop_cached_pages(f, path);
        }
    }

    /// As fio's do_verify: sync what was written and drop the files'
    /// cached pages, so the verify reads come from the device (their time
    /// is the verify phase's, as in fio).
    fn drop_written(&mut self) -> Result<(), EngineError> {
        for f in 0..self.paths.len() {
            if self.syncs.written[f] && self.sync_unrecorded(f as u32, Op::Fsync)?.is_none() {
                return Ok(()); // the failed flush is the job's error; nothing to verify against
            }
        }
        for (f, path) in self._files.iter().zip(&self.paths) {
            crate::layout::drop_cached_pages(f, path)?;
        }
        Ok(())
    }

    fn end_fsync(&mut self) {
        for f in 0..self.paths.len() {
            if self.syncs.written[f] {
                if let Err(e) = self.sync(f as u32, Op::Fsync) {
                    self.error.get_or_insert(e);
                    return;
                }
            }
        }
    }
}

/// What the worker hands to its result but not to the loop.
#[derive(Debug)]
struct IdleParts {
    worker: u32,
    host: String,
}

impl<B: Backend> Worker<B> {
    /// The outcome of a worker that does no I/O: `create_only` (no error)
    /// or a refusal at its start (`error`).
    fn without_io(&mut self, parts: IdleParts, error: Option<EngineError>) -> WorkerOutcome {
        WorkerOutcome {
            result: self.rec.finish(0, parts.worker, parts.host),
            error,
        }
    }
}

impl<B: Backend> Drop for Worker<B> {
    fn drop(&mut self) {
        // The kernel may still write into the buffers of in-flight I/Os (a
        // panic unwound through the loop): wait for them; if even that
        // fails, leak the buffers rather than free memory the kernel uses.
        if self.q.inflight > 0 {
            let mut out = Vec::new();
            while self.q.inflight > 0 {
                out.clear();
                match self
                    .backend
                    .reap(self.q.inflight, self.q.inflight, &mut out)
                {
                    Ok(n) if n > 0 => self.q.inflight -= n,
                    _ => break,
                }
            }
            if self.q.inflight > 0 {
                let leaked = std::mem::replace(&mut self.bufs, AlignedBufs::new(1, 1, 0));
                std::mem::forget(leaked);
            }
        }
    }
}
