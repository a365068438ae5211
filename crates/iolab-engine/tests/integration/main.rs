//! iolab-engine's integration tests: one test binary (as ripgrep does), one
//! module per area. Run one area with
//! `cargo test -p iolab-engine --test integration layout::`.
//!
//! Index:
//! - [`engine`]: whole runs against known truths — exact counts and bytes
//!   (null engine), files through psync and io_uring, timing, rate, stop;
//! - [`layout`]: safety checks and file preparation — files, O_DIRECT,
//!   regions, block devices (real loop devices need root: under `CI=true`
//!   a test that cannot get one fails instead of skipping);
//! - [`errors`]: continue_on_error, ignore_error against injected EIO and
//!   a device that fills up (ENOSPC);
//! - [`offsets`]: offset_increment, each clone's region;
//! - [`nbd`]: the nbd backend in whole runs against an in-process iolab
//!   target (and nbdkit when installed);
//! - [`nbd_control`]: latency_target and io_submit_mode against an export
//!   with a known injected delay;
//! - [`nbd_overlap`]: serialize_overlap and verify at a deep queue, counted
//!   at an in-process target device;
//! - [`nbd_wire`]: the nbd backend used directly: data read back, TCP, the
//!   OPT_EXPORT_NAME fallback.
//!
//! One binary means one process: a test that starts a command goes through
//! `layout::system::forking`, so no fork copies a device claim that a
//! device test holds (see `layout/system.rs`).

mod engine;
mod errors;
mod layout;
mod nbd;
mod nbd_control;
mod nbd_overlap;
mod nbd_wire;
mod offsets;
