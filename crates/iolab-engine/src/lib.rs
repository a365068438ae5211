//! iolab-engine: the load generator.
//!
//! - [`backend`]: the [`backend::Backend`] trait (queue / commit / reap, as
//!   fio's engines and io_uring's SQ/CQ) and one file per backend:
//!   io_uring, libaio, psync, sync, pvsync/pvsync2 (the synchronous ones
//!   share `blocking`), mmap, null, nbd; `cpuio` burns CPU instead. Workers
//!   are generic over it (static dispatch).
//! - [`layout`]: safety checks and file preparation before a run (create,
//!   size, fill with incompressible data; refuse devices and files iolab
//!   did not create unless allowed; O_DIRECT alignment).
//! - [`worker`]: one OS thread per worker; owns its backend, buffers (and
//!   what writes carry, and the verify log), generators and histograms; no
//!   locks on the per-I/O path.
//! - [`run`]: the lifecycle `prepare → start(at) → poll → stop → result`.

pub mod backend;
pub mod error;
pub mod layout;
pub mod run;
pub mod worker;

pub use error::EngineError;
pub use run::{Progress, Run, RunConfig};
