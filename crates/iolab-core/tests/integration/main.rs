//! iolab-core's integration tests: one test binary (as ripgrep does), one
//! module per area of the crate. Run one area with
//! `cargo test -p iolab-core --test integration summary::`.
//!
//! Index:
//! - [`cpu`]: /proc/stat and /proc/cpuinfo parsers, clock sources, %CPU and
//!   c/B against seed 000's numbers, a live reading of burnt CPU;
//! - [`gen`]: the per-worker generator — coverage, exact bytes, alignment,
//!   mix, seeds, distributions;
//! - [`gen_files`]: several files — file_service_type and its :N;
//! - [`hlog`]: interval logs — a stream's exact merges whatever the
//!   arrival order, per-worker records, a log cut at any byte;
//! - [`options`]: units (against fio 3.33), the option table, job
//!   validation and the messages bad input gets;
//! - [`rate`]: rate control — mean rate, spacing, Poisson statistics;
//! - [`summary`]: the summary against known answers — merged percentiles,
//!   IOPS, series, CPU per host and group, the group figures and merged
//!   hosts, the Python fixture.

mod cpu;
mod gen;
mod gen_files;
mod gen_zones;
mod hlog;
mod options;
mod rate;
mod summary;
