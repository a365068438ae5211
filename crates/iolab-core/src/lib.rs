//! iolab-core: everything about an I/O experiment that is not the doing of I/O.
//!
//! - [`units`]: fio-compatible parsing of sizes, times and percentages.
//! - [`engines`]: the engine table — each I/O engine's name, capabilities
//!   and backend in one row, read by the options and by iolab-engine.
//! - [`options`]: the declarative option table (name, type, default, help) —
//!   the single source for validation, `--help` and docs.
//! - [`job`]: [`job::JobSpec`] (raw fio-style options) → [`job::PreparedJob`]
//!   (validated, typed). Every unknown or unsupported option is an error.
//! - [`gen`]: per-worker generators: offsets (sequential, random with a
//!   full-coverage random map, distributions), block sizes, read/write mix.
//! - [`rate`]: rate control (linear, poisson) with intended issue times for
//!   coordinated-omission-free latency.
//! - [`hist`]: the latency histogram (HdrHistogram) and its error bound.
//! - [`prom`]: latency histograms as Prometheus histograms that merge (one
//!   bucket layout for every `/metrics` iolab serves).
//! - [`stats`]: per-direction statistics, interval samples, worker/job/run
//!   results and their exact merges.
//! - [`summary`]: a run result → what people and tools read (IOPS, bytes/s,
//!   latency statistics and percentiles, time series, group CPU, c/B).
//! - [`cpu`]: process and system CPU accounting → %CPU, cycles per I/O, c/B.
//!
//! This crate never depends on PyO3 and is tested with `cargo test` alone.

pub mod cpu;
pub mod engines;
pub mod error;
pub mod gen;
pub mod hist;
pub mod job;
pub mod options;
pub mod prom;
pub mod rate;
pub mod stats;
pub mod summary;
pub mod units;

pub use error::{CoreError, JobError};

/// iolab's version, written into every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
