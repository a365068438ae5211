//! Integration tests of the engine, each against a known truth (counts,
//! bytes, file contents, elapsed time, fio's semantics).
//!
//! Index:
//! - `common`: a complete `PreparedJob` with fio's defaults, and run helpers.
//! - `counts`: null engine — exact I/O counts, bytes, histogram counts, the
//!   read/write mix, stonewall groups.
//! - `data`: buffer contents on disk (zlib, duplicate blocks) and verify.
//! - `files`: psync and io_uring on real files (O_DIRECT): bytes read, data
//!   written and read back, fsync counts, I/O errors.
//! - `nrfiles`: files iolab creates (nrfiles, filesize, filename_format).
//! - `verify_mix`: verify with a read/write mix (what is checked, counts).
//! - `shape`: sequence distribution, dedupe modes and dedupe_global, on disk.
//! - `timing`: runtime and ramp, intervals, rate limiting, thinktime,
//!   start(at), stop(), progress.

#[path = "engine/common.rs"]
mod common;
#[path = "engine/counts.rs"]
mod counts;
#[path = "engine/data.rs"]
mod data;
#[path = "engine/files.rs"]
mod files;
#[path = "engine/nrfiles.rs"]
mod nrfiles;
#[path = "engine/shape.rs"]
mod shape;
#[path = "engine/timing.rs"]
mod timing;
#[path = "engine/verify_mix.rs"]
mod verify_mix;
