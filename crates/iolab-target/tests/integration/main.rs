//! Integration tests of iolab-target: a real server on a private Unix
//! socket, driven by a minimal NBD client written here from the spec, and
//! by real peers (qemu-io, qemu-img, nbdinfo, nbdcopy) when installed.
//!
//! - client: the minimal NBD client.
//! - util: start/stop a target; export shorthands.
//! - handshake: options (GO, INFO, LIST, EXPORT_NAME, ABORT, unknown).
//! - conn_io: the io_uring and threads receive paths answer alike.
//! - io: data round trips, pipelining, out-of-order replies, multi-conn.
//! - errors: every error reply the server sends, and when.
//! - malformed: hostile or broken clients never disturb another client.
//! - layers: delay timing, split exports, error injection, stats layer.
//! - http: the stats endpoint (JSON, Prometheus text, reset).
//! - imports: the target's import rules, read from the source (the stack
//!   reaches nothing above it; no cycle between top-level modules).
//! - pacing: IO pacing bound, progress, per-export limits.
//! - lifecycle: shutdown, connection limit, server-side counters, file durability.
//! - interop: real peers from Debian packages (skipped when missing, unless CI=true).
//! - zero_copy: spliced replies carry the data written, inline or held.
//! - fuzz_corpus: the committed cargo-fuzz corpus replayed through the fuzz harnesses.
//!
//! Layout of the crate's tests: this one integration binary (a module per
//! area); unit tests in the `mod tests` of the file they test, or, where
//! they would take the file past 400 lines, in `<file>/tests.rs`, where
//! Rust finds `mod tests;` of `<file>.rs` without a `#[path]`
//! (`config/tests.rs` for `config/mod.rs`). fuzz_corpus's `#[path]` is
//! the one needed: the harnesses are the fuzz crate's source.

mod client;
mod conn_io;
mod errors;
mod fuzz_corpus;
mod handshake;
mod http;
mod imports;
mod interop;
mod io;
mod lab_live;
mod layers;
mod lifecycle;
mod malformed;
mod pacing;
mod util;
mod zero_copy;
