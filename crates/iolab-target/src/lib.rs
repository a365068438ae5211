//! iolab-target: the NBD server and its block stack.
//!
//! - [`proto`]: the NBD protocol as pure functions over bytes (handshake,
//!   requests, replies), fuzzable on their own.
//! - [`stack`]: the [`stack::BlockDev`] trait, backends (memory, file,
//!   null, simulated disks), the RAID levels (`stack/raid/`), layers
//!   (split, delay, inject, corrupt, stats, cache) and the forwarding
//!   [`stack::Layer`] they are written with. The bottom of the crate: it
//!   imports only [`op`], [`measure`], [`proto`] and [`buf`]
//!   (docs/architecture.md; tests/integration/imports.rs checks it).
//! - [`config`]: a target from a TOML file or compact command-line specs.
//! - [`export`]: an export (name, read-only, stack) and the set served.
//! - [`server`]: [`Server`] — listen, accept, one thread per connection,
//!   clean shutdown; [`server_config`]: its settings, [`ServerConfig`].
//! - `conn` (private): one connection — handshake, pipelined requests,
//!   out-of-order replies, held replies for delay layers.
//! - [`stats`] and [`measure`]: server-side per-export counters and latency
//!   histograms, CPU, and the resettable snapshot; [`counters`]: the named
//!   counters each piece of a stack publishes, per window.
//! - [`http`] and [`metrics`]: the stats endpoint (JSON, Prometheus text,
//!   atomic snapshot-and-reset), which also serves [`control`]: failing
//!   and restoring RAID members while serving ([`MemberControl`]).
//! - [`lab`]: the lab runner — a stack built from a spec, driven on a
//!   virtual clock.
//! - [`op`]: [`op::Op`], the operations of a block request (a leaf module,
//!   shared by the stack and the measurement).
//! - [`net`]: Unix and TCP listening addresses (loopback unless allowed).
//! - [`buf`]: O_DIRECT-aligned data buffers.
//! - [`pacing`]: IO pacing, a shared pool of data buffers with per-worker
//!   caches, a FIFO pending queue and per-export limits.

pub mod buf;
pub mod config;
mod conn;
pub mod control;
pub mod counters;
pub mod error;
pub mod export;
pub mod http;
pub mod lab;
pub mod measure;
pub mod metrics;
pub mod net;
pub mod op;
pub mod pacing;
pub mod proto;
pub mod server;
pub mod server_config;
pub mod stack;
pub mod stats;

pub use control::MemberControl;
pub use error::TargetError;
pub use export::{Export, ExportSet};
pub use net::ListenAddr;
pub use server::{RunningServer, Server, ServerHandle};
pub use server_config::ServerConfig;
pub use stats::{Stats, StatsSnapshot};
