//! Test helpers: a target on a private Unix socket whose lifetime ends with
//! the test (as nbdkit's tests do), and export shorthands.

use std::path::PathBuf;
use std::sync::Arc;

use iolab_target::stack::memory::MemoryDev;
use iolab_target::stack::BlockDev;
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
