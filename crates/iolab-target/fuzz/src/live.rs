//! The `server` harness: fuzz bytes sent to a real iolab target running in
//! this process on a Unix socket in a private temporary directory.
//!
//! Each input is one connection: the bytes are written by one thread
//! while another reads whatever the server answers, until the server
//! hangs up. The server must hang up (the input ends with a shutdown of
//! the client's write side, so every session ends: EOF in the handshake,
//! or DISC/EOF in transmission) within [`HANG_LIMIT`], must not panic (a
//! panic in a server thread aborts under libFuzzer), and must still greet
//! and answer a well-behaved client afterwards, which is checked every
//! [`PROBE_EVERY`] inputs and by [`server_finish`]. After each input the
//! harness also waits for the server to drop the connection from its
//! table, so that no connection thread is still running (and holding
//! memory LeakSanitizer would flag) when the next input starts.

use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use iolab_target::proto::{opt, rep, IHAVEOPT, NBDMAGIC, OPT_REPLY_MAGIC};
use iolab_target::stack::memory::MemoryDev;
use iolab_target::{
    Export, ExportSet, ListenAddr, RunningServer, Server, ServerConfig, ServerHandle,
};

use super::MAX_PAYLOAD_BYTES;

/// Longest a session may take to end after the client stops sending.
pub const HANG_LIMIT: Duration = Duration::from_secs(10);
/// How often (in inputs) a well-behaved client checks the server.
pub const PROBE_EVERY: u64 = 64;

struct Live {
    dir: PathBuf,
    sock: PathBuf,
    handle: ServerHandle,
    running: Mutex<Option<RunningServer>>,
}

static LIVE: OnceLock<Live> = OnceLock::new();
static SESSIONS: AtomicU64 = AtomicU64::new(0);

/// Send `data` as one client connection and read until the server hangs up.
pub fn server(data: &[u8]) {
    let live = LIVE.get_or_init(start);
    let mut s = UnixStream::connect(&live.sock).expect("connect to the fuzzed server");
    s.set_read_timeout(Some(HANG_LIMIT)).expect("read timeout");
    s.set_write_timeout(Some(HANG_LIMIT))
        .expect("write timeout");
    let mut w = s.try_clone().expect("clone the client socket");
    std::thread::scope(|scope| {
        scope.spawn(move || {
            // The server may hang up before taking every byte: allowed.
            let _ = w.write_all(data);
            let _ = w.shutdown(Shutdown::Write);
        });
        drain(&mut s);
    });
    wait_closed(&live.handle);
    if SESSIONS
        .fetch_add(1, Ordering::Relaxed)
        .is_multiple_of(PROBE_EVERY)
    {
        probe(&live.sock);
        wait_closed(&live.handle);
    }
}

/// Probe the server once more, stop it and remove its directory (for
/// the stable corpus replay; the fuzzer itself never ends this way).
pub fn server_finish() {
    let Some(live) = LIVE.get() else { return };
    probe(&live.sock);
    let running = live.running.lock().expect("server lock").take();
    if let Some(r) = running {
        r.stop().expect("the fuzzed server stops cleanly");
    }
    let _ = std::fs::remove_dir_all(&live.dir);
}

fn start() -> Live {
    ignore_sigpipe();
    let dir = std::env::temp_dir().join(format!("iolab-target-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create the socket directory");
    let sock = dir.join("nbd.sock");
    let _ = std::fs::remove_file(&sock);
    let mut cfg = ServerConfig::new(ListenAddr::Unix(sock.clone()));
    // Small reads keep each input fast; many connections because a closed
    // one may still be counted for a moment after its hang-up.
    cfg.max_request_bytes = MAX_PAYLOAD_BYTES;
    cfg.max_connections = 1024;
    cfg.workers = 2;
    cfg.handshake_timeout = HANG_LIMIT / 2;
    let memory = |size| Arc::new(MemoryDev::new(size).expect("memory backend"));
    let exports = vec![
        Export::new("m", memory(1 << 20))
            .and_then(|e| e.with_description("writable memory"))
            .expect("export m"),
        Export::new("ro", memory(64 * 1024))
            .expect("export ro")
            .with_read_only(true),
    ];
    let set = ExportSet::new(exports).expect("export set");
    let server = Server::bind(cfg, set).expect("bind the fuzzed server");
    let running = server.spawn().expect("spawn the fuzzed server");
    Live {
        dir,
        sock,
        handle: running.handle().clone(),
        running: Mutex::new(Some(running)),
    }
}

/// Wait until the server has finished with every connection (its thread
/// removes the connection last); still open after [`HANG_LIMIT`] is a bug.
fn wait_closed(handle: &ServerHandle) {
    let start = Instant::now();
    while handle.connections() > 0 {
        assert!(
            start.elapsed() < HANG_LIMIT,
            "a connection the client closed is still open after {HANG_LIMIT:?}"
        );
        std::thread::sleep(Duration::from_micros(20));
    }
}

/// libFuzzer's own `main` does not ignore SIGPIPE as Rust's does; a write
/// to a socket the peer closed must fail with EPIPE, not kill the process.
fn ignore_sigpipe() {
    // Safety: setting a signal disposition to SIG_IGN installs no handler
    // code and races with nothing in this process that relies on SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Read until the server hangs up; a timeout is a hang (a bug).
fn drain(s: &mut UnixStream) {
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return,
            Err(e) => panic!("server neither hung up nor answered within {HANG_LIMIT:?}: {e}"),
        }
    }
}

/// A well-behaved client: greeting, client flags, NBD_OPT_ABORT → ACK.
fn probe(sock: &Path) {
    let mut s = UnixStream::connect(sock).expect("probe: connect");
    s.set_read_timeout(Some(HANG_LIMIT))
        .expect("probe: timeout");
    let mut g = [0u8; 18];
    s.read_exact(&mut g).expect("probe: greeting");
    assert_eq!(g[0..8], NBDMAGIC.to_be_bytes(), "probe: greeting magic");
    let mut msg = 3u32.to_be_bytes().to_vec(); // FIXED_NEWSTYLE | NO_ZEROES
    msg.extend_from_slice(&IHAVEOPT.to_be_bytes());
    msg.extend_from_slice(&opt::ABORT.to_be_bytes());
    msg.extend_from_slice(&0u32.to_be_bytes());
    s.write_all(&msg).expect("probe: send ABORT");
    let mut r = [0u8; 20];
    s.read_exact(&mut r).expect("probe: ABORT reply");
    assert_eq!(r[0..8], OPT_REPLY_MAGIC.to_be_bytes(), "probe: reply magic");
    assert_eq!(
        r[12..16],
        rep::ACK.to_be_bytes(),
        "probe: ABORT acknowledged"
    );
}
