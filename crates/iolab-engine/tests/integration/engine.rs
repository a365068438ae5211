//! Integration tests of the engine, each against a known truth (counts,
//! bytes, file contents, elapsed time, fio's semantics).
//!
//! Index:
//! - `atomic`: atomic=1 (RWF_ATOMIC) against the file's statx limits.
//! - `common`: a complete `PreparedJob` with fio's defaults, and run helpers.
//! - `counts`: null engine — exact I/O counts, bytes, histogram counts, the
//!   read/write mix, stonewall groups.
//! - `data`: buffer contents on disk (zlib, duplicate blocks) and verify.
//! - `exits`: exitall with exit_what: which jobs and groups stop.
//! - `files`: psync and io_uring on real files (O_DIRECT): bytes read, data
//!   written and read back, fsync counts, I/O errors.
//! - `nrfiles`: files iolab creates (nrfiles, filesize, filename_format).
//! - `prio`: I/O priorities per request (counts per priority), the
//!   thread's ioprio and NUMA policy, per-I/O records against the histogram.
//! - `trims`: rw=trim and its kin on files (counts, holes), fio's
//!   verify-trim (trim_percentage, trim_backlog, trim_verify_zero).
//! - `verify_mix`: verify with a read/write mix (what is checked, counts).
//! - `shape`: sequence distribution, dedupe modes and dedupe_global, on disk.
//! - `think`: thinktime, thinktime_blocks(_type), _spin, _iotime.
//! - `timing`: runtime and ramp, intervals, rate limiting, start(at),
//!   stop(), progress.
//! - `zones`: zonemode=zbd and strided on real files, fill_device.

mod atomic;
mod common;
mod control;
mod counts;
mod data;
mod exits;
mod files;
mod nrfiles;
mod prio;
mod shape;
mod think;
mod timing;
mod trims;
mod verify_mix;
mod zones;
