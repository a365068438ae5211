//! The engine's error type. Messages name the file and the problem and say
//! what to do; the CLI prints them as one line.

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum EngineError {
    #[error(transparent)]
    Job(#[from] iolab_core::JobError),
    /// Writing would destroy data iolab did not create.
    #[error("refusing to write to {path}: {reason}")]
    Refused { path: PathBuf, reason: String },
    /// A file cannot be used as asked (missing directory, too small, not aligned...).
    #[error("{path}: {reason}")]
    File { path: PathBuf, reason: String },
    /// Laying out the files would need more space than the filesystem has.
    #[error(
        "not enough space in {dir}: need {need_bytes} bytes, {available_bytes} available; free some space or use a smaller size"
    )]
    NoSpace {
        dir: PathBuf,
        need_bytes: u64,
        available_bytes: u64,
    },
    /// An OS error on a named file, with the operation.
    #[error("{path}: {op}: {source}")]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The backend could not be set up (e.g. io_uring unavailable).
    #[error("{engine}: {reason}")]
    Backend {
        engine: &'static str,
        reason: String,
    },
    /// An I/O failed during the run.
    #[error("I/O error on {path} at offset {offset} ({len} bytes, {dir}): {source}")]
    IoFailed {
        path: PathBuf,
        offset: u64,
        len: u64,
        dir: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// Data read back is not what was written (verify=).
    #[error(
        "verify: {failures} of {verified} blocks checked failed; first on {path} at offset \
         {offset} ({len} bytes): {what} expected {expected}, found {found}"
    )]
    Verify {
        path: PathBuf,
        offset: u64,
        len: u64,
        what: &'static str,
        expected: String,
        found: String,
        failures: u64,
        verified: u64,
    },
    /// A worker fell below rate_min / rate_iops_min.
    #[error("rate_min: {0}")]
    TooSlow(String),
    /// latency_target cannot be met even at queue depth 1.
    #[error("latency_target: {0}")]
    LatencyTarget(String),
    /// `lockmem` cannot be locked (the limit and what to do are said).
    #[error("{0}")]
    LockMem(String),
    /// The run was used out of order (e.g. start twice).
    #[error("run lifecycle: {0}")]
    Lifecycle(String),
}
