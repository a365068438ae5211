//! Test helpers: a target on a private Unix socket whose lifetime ends with
//! the test (as nbdkit's tests do), export shorthands, a wait on a
//! condition with a deadline, and a gate layer that holds a request on the
//! stack until the test lets it go.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use iolab_target::stack::memory::MemoryDev;
use iolab_target::stack::{BlockDev, BlockResult, IoCtx, Layer};
use iolab_target::{
    Export, ExportSet, ListenAddr, RunningServer, Server, ServerConfig, ServerHandle, TargetError,
};

/// A running target on a socket in its own temporary directory.
pub struct Target {
    running: Option<RunningServer>,
    pub sock: PathBuf,
    pub dir: tempfile::TempDir,
}

impl Target {
    pub fn start(exports: Vec<Export>) -> Target {
        Target::start_with(exports, |_| {})
    }

    pub fn start_with(exports: Vec<Export>, tweak: impl FnOnce(&mut ServerConfig)) -> Target {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("nbd.sock");
        let mut cfg = ServerConfig::new(ListenAddr::Unix(sock.clone()));
        tweak(&mut cfg);
        let server = Server::bind(cfg, ExportSet::new(exports).unwrap()).unwrap();
        Target {
            running: Some(server.spawn().unwrap()),
            sock,
            dir,
        }
    }

    pub fn handle(&self) -> &ServerHandle {
        self.running.as_ref().unwrap().handle()
    }

    /// Shut down cleanly and return what serve() returned.
    pub fn stop(mut self) -> Result<(), TargetError> {
        self.running.take().unwrap().stop()
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            let _ = r.stop();
        }
    }
}

pub fn export(name: &str, dev: impl BlockDev + 'static) -> Export {
    Export::new(name, Arc::new(dev)).unwrap()
}

pub fn memory(name: &str, size: u64) -> Export {
    export(name, MemoryDev::new(size).unwrap())
}

/// Deterministic pseudo-random bytes.
pub fn pattern(seed: u64, n: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n).map(|_| rng.u8(..)).collect()
}

/// Wait until `cond` holds, checking every millisecond; fail naming `what`
/// if it does not within `limit` (generous: a deadline, not a timing).
pub fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A layer that counts the reads reaching it and holds read number
/// `hold_nth` (1-based) until [`Gate::open`] — on the thread running it,
/// so a connection's reader that runs its stack inline reads nothing more
/// meanwhile.
#[derive(Debug)]
pub struct Gate {
    next: Arc<dyn BlockDev>,
    hold_nth: u64,
    state: Mutex<(u64, bool)>,
    cv: Condvar,
}

impl Gate {
    pub fn new(next: Arc<dyn BlockDev>, hold_nth: u64) -> Arc<Gate> {
        Arc::new(Gate {
            next,
            hold_nth,
            state: Mutex::new((0, false)),
            cv: Condvar::new(),
        })
    }

    /// Wait until `n` reads have reached the layer.
    pub fn wait_entered(&self, n: u64) {
        let g = self.state.lock().unwrap();
        let (g, t) = self
            .cv
            .wait_timeout_while(g, Duration::from_secs(20), |s| s.0 < n)
            .unwrap();
        assert!(!t.timed_out(), "only {} of {n} reads reached the gate", g.0);
    }

    /// Let the held read (and every later one) through.
    pub fn open(&self) {
        self.state.lock().unwrap().1 = true;
        self.cv.notify_all();
    }
}

impl Layer for Gate {
    fn next(&self) -> &Arc<dyn BlockDev> {
        &self.next
    }

    fn label(&self) -> String {
        format!("gate(read {})", self.hold_nth)
    }

    fn read_at(&self, ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        let mut g = self.state.lock().unwrap();
        g.0 += 1;
        self.cv.notify_all();
        if g.0 == self.hold_nth {
            g = self.cv.wait_while(g, |s| !s.1).unwrap();
        }
        drop(g);
        self.next.read_at(ctx, buf, offset)
    }
}
