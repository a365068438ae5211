//! The server's settings ([`ServerConfig`], the `[server]` table of a
//! target config) and their checks against the exports served.
//!
//! Its own module so that the connection code (`conn`) and the server
//! (`server`) both depend on it and not on each other.

use std::time::Duration;

use crate::error::TargetError;
use crate::export::ExportSet;
use crate::net::ListenAddr;
use crate::pacing::PacingParams;

/// Server settings (the `[server]` table of a target config).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub listen: ListenAddr,
    /// Allow a TCP address that is not loopback.
    pub allow_remote: bool,
    /// Open connections at most (default 64).
    pub max_connections: usize,
    /// Largest READ or WRITE payload, advertised as the maximum payload
    /// (default and most: 64 MiB, as nbdkit).
    pub max_request_bytes: u32,
    /// Worker threads per connection for stacks that may block (default 16).
    pub workers: usize,
    /// Requests in flight per connection at most (default 1024).
    pub max_inflight: usize,
    /// READ/WRITE data in flight per connection at most, bytes (default
    /// 512 MiB; one request is always let in, however large).
    pub max_inflight_bytes: u64,
    /// Time a client has to finish the handshake (default 30 s).
    pub handshake_timeout: Duration,
    /// Time connections get to finish after a shutdown (default 10 s).
    pub shutdown_grace: Duration,
    /// IO pacing: a shared pool of data buffers (see [`crate::pacing`]);
    /// `None`: every request gets its buffer at once.
    pub pacing: Option<PacingParams>,
    /// Serving threads under `SCHED_FIFO` (`[server] realtime`,
    /// `--realtime`); the server refuses to start when the host refuses it.
    pub realtime: bool,
    /// How connections receive requests (`[server] conn_io`, `--conn-io`).
    pub conn_io: ConnIo,
    /// Whether replies' data go to Unix-socket clients by `vmsplice` +
    /// `splice` instead of a copying `writev` (`[server] zero_copy`,
    /// `--zero-copy`; see `conn/splice.rs`).
    pub zero_copy: ZeroCopy,
}

/// `FromStr` and `Display` for a setting spelled as one of a few words,
/// from one table, so parsing and printing cannot disagree; a word not in
/// it is refused naming every one allowed.
macro_rules! keywords {
    ($ty:ident { $($variant:ident: $word:literal),+ $(,)? }) => {
        impl std::str::FromStr for $ty {
            type Err = String;

            fn from_str(s: &str) -> Result<$ty, String> {
                match s {
                    $($word => Ok($ty::$variant),)+
                    _ => Err(format!(
                        "'{s}' is not one of {}",
                        [$($word),+].join(", ")
                    )),
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(match self {
                    $($ty::$variant => $word,)+
                })
            }
        }
    };
}

/// How reply data is written to a Unix-socket client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZeroCopy {
    /// Spliced when a set's replies are large enough (≥ 16 KiB each on
    /// average) and the set small enough (≤ 128 KiB) to repay it; copied
    /// otherwise, and on TCP.
    Auto,
    /// Every set of replies with data spliced; refused with a TCP listener.
    On,
    /// Always copied (`writev`): the default, as splicing measured no
    /// cheaper for 4 KiB replies on the lab's VM (docs/performance.md, part 4).
    #[default]
    Off,
}

keywords!(ZeroCopy {
    Auto: "auto",
    On: "on",
    Off: "off"
});

/// How a connection's reader receives requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConnIo {
    /// io_uring where the host allows it, else threads.
    Auto,
    /// io_uring (multishot receive, a bounded spin before sleeping); the
    /// server refuses to start where the host refuses io_uring.
    Uring,
    /// A blocking `recv` on the connection's thread (the default: on the
    /// lab's loaded 2-CPU VM io_uring cost more CPU per request, see
    /// docs/performance.md, part 4).
    #[default]
    Threads,
}

keywords!(ConnIo {
    Auto: "auto",
    Uring: "uring",
    Threads: "threads"
});

/// Largest allowed `max_request_bytes`.
pub const MAX_REQUEST_LIMIT_BYTES: u32 = 64 << 20;

impl ServerConfig {
    /// Defaults, listening on `listen`.
    pub fn new(listen: ListenAddr) -> ServerConfig {
        ServerConfig {
            listen,
            allow_remote: false,
            max_connections: 64,
            max_request_bytes: MAX_REQUEST_LIMIT_BYTES,
            workers: 16,
            max_inflight: 1024,
            max_inflight_bytes: 512 << 20,
            handshake_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(10),
            pacing: None,
            realtime: false,
            conn_io: ConnIo::Threads,
            zero_copy: ZeroCopy::default(),
        }
    }

    pub(crate) fn validate(&self, exports: &ExportSet) -> Result<(), TargetError> {
        self.validate_settings()?;
        let bad = |k: &str, m: String| Err(TargetError::config(format!("server.{k}"), m));
        for e in exports.iter() {
            let pref = e.caps().preferred_block_bytes;
            if self.max_request_bytes < pref {
                let m = format!(
                    "{} is less than export '{}''s preferred block size {pref} (the spec forbids it)",
                    self.max_request_bytes,
                    e.name()
                );
                return bad("max_request_bytes", m);
            }
        }
        Ok(())
    }

    /// The checks that need no export: run before any device is built, so
    /// that a refused setting creates no backing file.
    pub(crate) fn validate_settings(&self) -> Result<(), TargetError> {
        let bad = |k: &str, m: String| Err(TargetError::config(format!("server.{k}"), m));
        if self.max_connections == 0 {
            return bad("max_connections", "must be at least 1".into());
        }
        if self.workers == 0 || self.workers > 1024 {
            return bad(
                "workers",
                format!("{} is not between 1 and 1024", self.workers),
            );
        }
        if self.max_inflight == 0 {
            return bad("max_inflight", "must be at least 1".into());
        }
        if self.max_inflight_bytes == 0 {
            return bad("max_inflight_bytes", "must be more than 0".into());
        }
        if self.max_request_bytes > MAX_REQUEST_LIMIT_BYTES {
            return bad(
                "max_request_bytes",
                format!("{} is more than 64 MiB", self.max_request_bytes),
            );
        }
        if let Some(p) = &self.pacing {
            p.validate().map_err(|m| TargetError::config("pacing", m))?;
            let cap = p.max_request_bytes();
            if u64::from(self.max_request_bytes) > cap {
                let m = format!(
                    "{} is more than one request may hold under pacing ({cap} bytes: unit x min(buffers, export_limit)); lower it or raise pacing.unit",
                    self.max_request_bytes
                );
                return bad("max_request_bytes", m);
            }
        }
        if self.handshake_timeout.is_zero() || self.shutdown_grace.is_zero() {
            return bad("handshake_timeout", "timeouts must be more than 0".into());
        }
        if self.zero_copy == ZeroCopy::On && matches!(self.listen, ListenAddr::Tcp(_)) {
            let m = "\"on\" needs a Unix socket listener (TCP replies are copied); use \"auto\" or \"off\"";
            return bad("zero_copy", m.into());
        }
        Ok(())
    }
}
