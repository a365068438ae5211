//! Backends: how one worker issues I/O.
//!
//! The shape mirrors fio's engines and io_uring's SQ/CQ split:
//! [`Backend::queue`] stages one request, [`Backend::commit`] hands staged
//! requests to the kernel, [`Backend::reap`] collects completions.
//! Synchronous backends (psync, sync, pvsync, pvsync2; see `blocking`)
//! complete inside `queue` and say so
//! through [`Queued::Done`]. Workers are generic over `B: Backend`, so the
//! per-I/O path is statically dispatched.
//!
//! Which backend an engine uses is a row of the engine table
//! (`iolab_core::engines`): [`engine_backends`] expands the rows here, once,
//! into the engine modules' declarations (one file each, named by the
//! row), [`with_backend`] — the one dispatch from an engine to its backend
//! type, made when a worker starts — and a compile-time check that each
//! backend's [`Backend::SYNC`] agrees with its row. The modules below are
//! the shared machinery that no row names.

pub mod atomic;
pub mod blocking;
pub mod offload;
pub mod trim;

use std::os::fd::RawFd;

use iolab_core::engines::IoEngine;
use iolab_core::job::IoDir;

/// What runs with a worker's backend type: [`with_backend`] calls
/// `run::<B>` with the type the engine table names.
pub trait WithBackend {
    type Output;
    fn run<B: Backend>(self) -> Self::Output;
}

/// Expands the engine table's rows in this crate (see the module doc).
macro_rules! engine_backends {
    ($(
        $variant:ident {
            name: $name:literal,
            backend: $module:ident :: $backend:ident,
            caps: $caps:expr,
            help: $help:literal $(,)?
        }
    ),* $(,)?) => {
        $(pub mod $module;)*

        /// Runs `w` with `engine`'s backend, behind the offload pool of
        /// submitter threads under `offload`. Chosen once per worker; the
        /// per-I/O path inside is statically dispatched.
        pub fn with_backend<W: WithBackend>(engine: IoEngine, offload: bool, w: W) -> W::Output {
            match (engine, offload) {
                $(
                    (IoEngine::$variant, false) => w.run::<trim::Trims<$module::$backend>>(),
                    (IoEngine::$variant, true) => {
                        w.run::<offload::OffloadBackend<trim::Trims<$module::$backend>>>()
                    }
                )*
            }
        }

        const _: () = {
            $(assert!(
                <$module::$backend as Backend>::SYNC == IoEngine::$variant.caps().synchronous,
                concat!("Backend::SYNC disagrees with the engine table's row ", $name)
            );)*
        };
    };
}

iolab_core::engine_table!(engine_backends);

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Fsync,
    Fdatasync,
    /// Discard `len` bytes at `offset` (no buffer): see [`trim`].
    Trim,
}

impl From<IoDir> for Op {
    fn from(d: IoDir) -> Op {
        match d {
            IoDir::Read => Op::Read,
            IoDir::Write => Op::Write,
            IoDir::Trim => Op::Trim,
        }
    }
}

/// One request. `slot` identifies the in-flight slot (and its buffer) and
/// comes back in the completion.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub slot: u32,
    pub op: Op,
    /// Index into the files the backend was opened with.
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    /// Buffer of at least `len` bytes, owned by the worker (see the
    /// contract of [`Backend::queue`]). Null for Fsync/Fdatasync.
    pub buf: *mut u8,
    /// Linux ioprio value of this request (0: none; io_uring and libaio
    /// pass it with the request, see `iolab_core::job::prio`).
    pub ioprio: u16,
}

/// A completed request: `result` is bytes transferred, or `-errno`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Completion {
    pub slot: u32,
    pub result: i64,
}

/// Outcome of [`Backend::queue`].
#[derive(Debug, Clone, Copy)]
pub enum Queued {
    /// Staged; will be submitted by the next `commit`.
    Staged,
    /// Already complete (synchronous backends).
    Done(Completion),
}

/// An open file handed to a backend.
#[derive(Debug, Clone, Copy)]
pub struct OpenFile {
    pub fd: RawFd,
    /// Where the job's I/O in this file ends (its region's offset + size):
    /// the mmap backend maps that much of a file with no size of its own
    /// (a character device such as /dev/zero). 0 when unknown.
    pub region_end: u64,
}

/// Set-up parameters common to all backends.
#[derive(Debug, Clone, Default)]
pub struct BackendConfig {
    pub iodepth: u32,
    /// The worker's buffers (registered with io_uring when possible).
    pub buffers: Vec<(*mut u8, usize)>,
    /// The server of an `ioengine=nbd` job (None for the other backends).
    pub nbd: Option<iolab_core::job::NbdTarget>,
    /// `sync=` was given: the nbd backend sends writes with FUA (file
    /// backends get O_SYNC/O_DSYNC from the open flags instead).
    pub sync_writes: bool,
    /// Engine-specific options (`hipri`, …).
    pub engine: iolab_core::job::EngineOptions,
    /// The job trims (`rw=trim`, …): [`trim::Trims`] looks at the files,
    /// the nbd backend checks the export accepts trims.
    pub trims: bool,
    /// `zonemode=zbd`: a trim is a zone reset, which only moves the
    /// emulated write pointer (the generator did that): no system call.
    pub trims_reset_zones: bool,
}

pub trait Backend: Sized {
    const NAME: &'static str;
    /// True if `queue` completes requests itself (no commit/reap needed).
    const SYNC: bool;
    /// True if the backend issues [`Op::Trim`] itself (nbd, null); the
    /// others get trims from [`trim::Trims`] around them.
    const TRIMS: bool = false;

    fn open(files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, crate::EngineError>;
    /// Stages one request (or completes it, for synchronous backends).
    ///
    /// # Safety
    /// The one contract of every backend, stated here once: unless `req.op`
    /// is `Fsync`/`Fdatasync` (where `buf` may be null), `req.buf` points to
    /// at least `req.len` bytes, valid for reads and writes, that the caller
    /// neither touches nor frees until this request's completion has come
    /// back (from `queue` as [`Queued::Done`], or from `reap`); the kernel or
    /// the backend may read or write them until then. `req.file` indexes the
    /// files the backend was opened with, which stay open as long as it.
    unsafe fn queue(&mut self, req: &Request) -> std::io::Result<Queued>;
    /// Submit staged requests; returns how many were submitted. The default
    /// is for synchronous backends, which stage nothing.
    fn commit(&mut self) -> std::io::Result<u32> {
        Ok(0)
    }
    /// Wait for at least `min` completions (0 = don't wait) and append up to
    /// `max` of them to `out`; returns how many were appended (vsync appends
    /// every completion of the calls it made, as fio's does: the worker takes
    /// all that come back). The default is for synchronous backends, whose
    /// requests complete in `queue`.
    fn reap(&mut self, _min: u32, _max: u32, _out: &mut Vec<Completion>) -> std::io::Result<u32> {
        Ok(0)
    }
    /// When the request of `slot` last completed (CLOCK_MONOTONIC ns), for
    /// a backend that knows it better than the worker's reap time (the
    /// offload pool); None: the reap time is the completion time.
    fn completed_at(&self, _slot: u32) -> Option<u64> {
        None
    }
    /// What the backend decided at set-up that the user should know (e.g.
    /// io_uring fell back to unregistered buffers), one line each.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}
