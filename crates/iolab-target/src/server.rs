//! The NBD server: listen, accept, one thread per connection, and a clean
//! shutdown.
//!
//! [`Server::bind`] checks the settings ([`ServerConfig`]) against the
//! exports and binds the socket; [`Server::serve`] accepts connections
//! until [`ServerHandle::shutdown`] (or [`Server::shutdown`]) is called —
//! from another thread or a signal handler's thread. Shutdown then:
//! 1. stops accepting (a Unix socket file is removed);
//! 2. stops every connection's reading: options still being negotiated
//!    get `NBD_REP_ERR_SHUTDOWN`, requests still arriving get
//!    `NBD_ESHUTDOWN`, a silent client is let go after a short timeout,
//!    and every request already received is run and answered;
//! 3. after `shutdown_grace`, cuts connections that are still open (a
//!    client that stopped reading its replies);
//! 4. flushes every export, so acknowledged writes are on stable storage,
//!    and returns (an error if a flush failed).
//!
//! Connections over `max_connections` are closed at once after accept (NBD
//! has no way to refuse politely before the handshake) and counted.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags};

use crate::conn::{self, Env};
use crate::control::MemberControl;
use crate::error::TargetError;
use crate::export::ExportSet;
use crate::net::{ListenAddr, Listener, Stream};
use crate::pacing::Pacer;
pub use crate::server_config::{ConnIo, ServerConfig, MAX_REQUEST_LIMIT_BYTES};
use crate::stack::IoCtx;
use crate::stats::{ConnCounters, NamedRecorder, Stats};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// State shared by the server and its handles.
#[derive(Debug)]
struct Shared {
    env: Arc<Env>,
    /// Open connections (a clone of each socket, to stop them at shutdown).
    conns: Mutex<HashMap<u64, Stream>>,
    conns_changed: Condvar,
    wake_tx: UnixStream,
    next_id: AtomicU64,
    members: Arc<MemberControl>,
}

/// Stops a server and reads its counters, from any thread.
#[derive(Debug, Clone)]
pub struct ServerHandle {
    shared: Arc<Shared>,
}

impl ServerHandle {
    /// Begin a clean shutdown; [`Server::serve`] returns when it is done.
    pub fn shutdown(&self) {
        self.shared.env.shutting_down.store(true, Ordering::Relaxed);
        // The accept loop polls the other end; a full pipe already wakes it.
        let _ = (&self.shared.wake_tx).write(&[1]);
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shared.env.is_shutting_down()
    }

    /// The server-side measurements.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.shared.env.stats
    }

    /// The member control plane: fail or restore RAID members while serving.
    pub fn members(&self) -> &Arc<MemberControl> {
        &self.shared.members
    }

    /// Connections open now.
    pub fn connections(&self) -> usize {
        lock(&self.shared.conns).len()
    }
}

/// A bound NBD server.
#[derive(Debug)]
pub struct Server {
    listener: Listener,
    addr: ListenAddr,
    wake_rx: UnixStream,
    handle: ServerHandle,
}

impl Server {
    /// Check the settings and bind.
    pub fn bind(cfg: ServerConfig, exports: ExportSet) -> Result<Server, TargetError> {
        Server::bind_with_layers(cfg, exports, Vec::new())
    }

    /// [`Server::bind`], with the counters of the stack's stats layers.
    pub fn bind_with_layers(
        cfg: ServerConfig,
        exports: ExportSet,
        layers: Vec<NamedRecorder>,
    ) -> Result<Server, TargetError> {
        let mut cfg = cfg;
        cfg.validate(&exports)?;
        if cfg.realtime {
            conn::check_realtime().map_err(|m| TargetError::config("server.realtime", m))?;
        }
        cfg.conn_io = resolve_conn_io(cfg.conn_io)?;
        let listener =
            Listener::bind(&cfg.listen, cfg.allow_remote).map_err(TargetError::Listen)?;
        let addr = listener
            .local_addr()
            .map_err(|e| TargetError::io("listening address", e))?;
        let (wake_tx, wake_rx) =
            UnixStream::pair().map_err(|e| TargetError::io("wake-up socket pair", e))?;
        wake_rx
            .set_nonblocking(true)
            .map_err(|e| TargetError::io("wake-up socket", e))?;
        let pacer = cfg.pacing.map(Pacer::new);
        let stats = Arc::new(Stats::new(&exports, layers, pacer.clone())?);
        let members = Arc::new(MemberControl::new(&exports));
        let env = Arc::new(Env {
            exports,
            cfg,
            stats,
            pacer,
            shutting_down: Default::default(),
        });
        let shared = Arc::new(Shared {
            env,
            conns: Mutex::default(),
            conns_changed: Condvar::new(),
            wake_tx,
            next_id: AtomicU64::new(0),
            members,
        });
        Ok(Server {
            listener,
            addr,
            wake_rx,
            handle: ServerHandle { shared },
        })
    }

    /// The address bound (with the real port when 0 was asked).
    pub fn local_addr(&self) -> &ListenAddr {
        &self.addr
    }

    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// Begin a clean shutdown (same as the handle's).
    pub fn shutdown(&self) {
        self.handle.shutdown();
    }

    /// Serve on a new thread; stop it with [`RunningServer::stop`].
    pub fn spawn(self) -> Result<RunningServer, TargetError> {
        let (handle, addr) = (self.handle(), self.addr.clone());
        let thread = std::thread::Builder::new()
            .name("nbd-accept".into())
            .spawn(move || self.serve())
            .map_err(|e| TargetError::io("start the server thread", e))?;
        Ok(RunningServer {
            handle,
            addr,
            thread,
        })
    }

    /// Accept and serve connections until shutdown, then finish cleanly.
    pub fn serve(self) -> Result<(), TargetError> {
        let shared = self.handle.shared.clone();
        while !shared.env.is_shutting_down() {
            if self.wait_readable()? {
                self.accept_one(&shared);
            }
        }
        drop(self.listener);
        stop_connections(&shared);
        flush_exports(&shared.env)
    }

    /// Wait for a connection or a wake-up; true when one can be accepted.
    fn wait_readable(&self) -> Result<bool, TargetError> {
        let mut fds = [
            PollFd::from_borrowed_fd(self.listener.fd(), PollFlags::IN),
            PollFd::new(&self.wake_rx, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return Ok(false),
            Err(e) => return Err(TargetError::io("poll the listening socket", e.into())),
        }
        if !fds[1].revents().is_empty() {
            let _ = (&self.wake_rx).read(&mut [0u8; 64]);
        }
        Ok(!fds[0].revents().is_empty())
    }

    fn accept_one(&self, shared: &Arc<Shared>) {
        let stream = match self.listener.accept() {
            Ok(s) => s,
            Err(_) => {
                // Out of descriptors or a connection reset before accept:
                // back off briefly instead of spinning.
                std::thread::sleep(Duration::from_millis(20));
                return;
            }
        };
        let c = &shared.env.stats.conns;
        let mut conns = lock(&shared.conns);
        if conns.len() >= shared.env.cfg.max_connections {
            ConnCounters::bump(&c.refused);
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
        let Ok(registered) = stream.try_clone() else {
            return;
        };
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
        conns.insert(id, registered);
        drop(conns);
        ConnCounters::bump(&c.accepted);
        c.active.fetch_add(1, Ordering::Relaxed);
        let sh = shared.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("nbd-{id}"))
            .spawn(move || {
                conn::serve(&sh.env, id, stream);
                sh.env.stats.conns.active.fetch_sub(1, Ordering::Relaxed);
                lock(&sh.conns).remove(&id);
                sh.conns_changed.notify_all();
            });
        if spawned.is_err() {
            c.active.fetch_sub(1, Ordering::Relaxed);
            if let Some(s) = lock(&shared.conns).remove(&id) {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }
}

/// Stop reading on every connection, wait for them, cut the stragglers.
/// `auto` becomes `uring` where this host lets the server use io_uring,
/// else `threads`; `uring` is refused with the host's reason.
fn resolve_conn_io(c: ConnIo) -> Result<ConnIo, TargetError> {
    match (c, conn::probe_uring()) {
        (ConnIo::Threads, _) => Ok(ConnIo::Threads),
        (_, Ok(_)) => Ok(ConnIo::Uring),
        (ConnIo::Auto, Err(_)) => Ok(ConnIo::Threads),
        (ConnIo::Uring, Err(e)) => Err(TargetError::config(
            "server.conn_io",
            format!(
                "io_uring is unavailable here ({e}); use conn_io = \"threads\" (--conn-io threads)"
            ),
        )),
    }
}

fn stop_connections(shared: &Shared) {
    // A request waiting for pacing buffers that nothing will release
    // (starved, see crate::pacing) must not hold the stop up.
    if let Some(p) = &shared.env.pacer {
        p.close();
    }
    for s in lock(&shared.conns).values() {
        // Requests already received are still answered; reads end at once
        // (or after a second for a client that keeps sending).
        let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
        let _ = s.shutdown(Shutdown::Read);
    }
    let deadline = Instant::now() + shared.env.cfg.shutdown_grace;
    let mut conns = lock(&shared.conns);
    while !conns.is_empty() {
        let now = Instant::now();
        if now >= deadline {
            for s in conns.values() {
                let _ = s.shutdown(Shutdown::Both);
            }
            // Cut sockets end their threads promptly; wait for that.
            let (c, _) = shared
                .conns_changed
                .wait_timeout_while(conns, Duration::from_secs(5), |c| !c.is_empty())
                .unwrap_or_else(PoisonError::into_inner);
            drop(c);
            return;
        }
        conns = shared
            .conns_changed
            .wait_timeout(conns, deadline - now)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

/// Flush every export that can be flushed; the first failure is returned.
fn flush_exports(env: &Env) -> Result<(), TargetError> {
    let mut first_err = None;
    for e in env.exports.iter().filter(|e| e.caps().can_flush) {
        if let Err(err) = e.dev().flush(&mut IoCtx::new()) {
            first_err.get_or_insert(TargetError::Flush {
                export: e.name().to_string(),
                msg: err.msg,
            });
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// A server serving on its own thread.
#[derive(Debug)]
pub struct RunningServer {
    handle: ServerHandle,
    addr: ListenAddr,
    thread: JoinHandle<Result<(), TargetError>>,
}

impl RunningServer {
    pub fn handle(&self) -> &ServerHandle {
        &self.handle
    }

    pub fn local_addr(&self) -> &ListenAddr {
        &self.addr
    }

    /// Whether the server thread has ended (after a shutdown, or an error).
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Wait for the server thread without asking it to stop.
    pub fn join(self) -> Result<(), TargetError> {
        self.thread
            .join()
            .unwrap_or_else(|_| Err(TargetError::Listen("the server thread panicked".into())))
    }

    /// Shut down cleanly and wait for the server thread.
    pub fn stop(self) -> Result<(), TargetError> {
        self.handle.shutdown();
        self.thread
            .join()
            .unwrap_or_else(|_| Err(TargetError::Listen("the server thread panicked".into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Export;
    use crate::stack::memory::MemoryDev;

    fn exports() -> ExportSet {
        ExportSet::new(vec![Export::new(
            "m",
            Arc::new(MemoryDev::new(4096).unwrap()),
        )
        .unwrap()])
        .unwrap()
    }

    #[test]
    fn settings_are_checked_and_name_their_key() {
        let base = ServerConfig::new("127.0.0.1:0".parse().unwrap());
        type Tweak = fn(&mut ServerConfig);
        let cases: [(Tweak, &str); 5] = [
            (|c| c.max_connections = 0, "server.max_connections"),
            (|c| c.workers = 0, "server.workers"),
            (
                |c| c.max_request_bytes = MAX_REQUEST_LIMIT_BYTES + 1,
                "server.max_request_bytes",
            ),
            (|c| c.max_request_bytes = 512, "server.max_request_bytes"),
            (|c| c.max_inflight_bytes = 0, "server.max_inflight_bytes"),
        ];
        for (tweak, key) in cases {
            let mut c = base.clone();
            tweak(&mut c);
            let e = Server::bind(c, exports()).unwrap_err().to_string();
            assert!(e.starts_with(key), "{e}");
        }
        assert!(Server::bind(base, exports()).is_ok());
    }

    #[test]
    fn shutdown_before_serve_returns_at_once() {
        let s = Server::bind(ServerConfig::new("127.0.0.1:0".parse().unwrap()), exports()).unwrap();
        assert!(matches!(s.local_addr(), ListenAddr::Tcp(a) if a.port() != 0));
        s.shutdown();
        assert!(s.handle().is_shutting_down());
        s.serve().unwrap();
    }
}
