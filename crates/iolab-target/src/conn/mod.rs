//! One client connection: the handshake, then the transmission phase.
//!
//! Each connection has its own thread (the reader), which runs the
//! handshake ([`handshake`], driving the pure state machine in
//! [`crate::proto::handshake`] over the socket, with a time limit so a
//! silent client cannot hold a connection slot) and then reads requests
//! ([`transmit`]). Requests run inline or on the connection's workers
//! ([`exec`]) and are answered, possibly out of order and possibly held by
//! a delay layer, through the connection's [`reply::Replier`]. Nothing is
//! shared between connections but the exports' block stacks and counters,
//! so a misbehaving client can only end its own session.

mod exec;
mod linger;
mod reply;
mod sched;
mod splice;
mod transmit;
mod uring;
mod write;

use std::io::{self, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use linger::Lingering;
pub(crate) use sched::check_realtime;
pub(crate) use uring::probe as probe_uring;

use crate::export::ExportSet;
use crate::net::Stream;
use crate::pacing::Pacer;
use crate::proto::handshake::{
    greeting, parse_client_flags, parse_option_header, Catalog, ExportInfo, Negotiation, Outcome,
    Selected,
};
use crate::proto::ProtoError;
use crate::server_config::{ConnIo, ServerConfig};
use crate::stats::{ConnCounters, Stats};

/// Reader buffer: large enough to take many pipelined small requests per
/// system call; large payloads bypass it.
const READ_BUF_BYTES: usize = 128 * 1024;

/// What every connection of a server shares.
#[derive(Debug)]
pub(crate) struct Env {
    pub exports: ExportSet,
    pub cfg: ServerConfig,
    pub stats: Arc<Stats>,
    /// The IO pacing pool, when configured.
    pub pacer: Option<Arc<Pacer>>,
    pub shutting_down: AtomicBool,
}

impl Env {
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Relaxed)
    }
}

/// How a session ended.
#[derive(Debug)]
pub(crate) enum End {
    /// The client disconnected or aborted, or the server shut down.
    Closed,
    /// The client broke the protocol; the session was cut.
    Protocol(ProtoError),
    /// The client vanished in the middle of a message.
    Truncated,
    /// A socket or thread error.
    Io(io::Error),
}

impl From<io::Error> for End {
    fn from(e: io::Error) -> End {
        match e.kind() {
            io::ErrorKind::UnexpectedEof => End::Truncated,
            _ => End::Io(e),
        }
    }
}

/// The exports as negotiation sees them.
struct Offer<'a>(&'a Env);

impl Offer<'_> {
    fn info(&self, index: usize) -> Option<ExportInfo<'_>> {
        let e = self.0.exports.get(index)?;
        let c = e.caps();
        Some(ExportInfo {
            index,
            name: e.name(),
            description: e.description(),
            size_bytes: c.size_bytes,
            tflags: e.tflags(),
            min_block_bytes: c.min_block_bytes,
            preferred_block_bytes: c.preferred_block_bytes,
            max_payload_bytes: self.0.cfg.max_request_bytes,
        })
    }
}

impl Catalog for Offer<'_> {
    fn len(&self) -> usize {
        self.0.exports.len()
    }
    fn get(&self, index: usize) -> Option<ExportInfo<'_>> {
        self.info(index)
    }
    fn find(&self, name: &str) -> Option<ExportInfo<'_>> {
        self.0.exports.find(name).and_then(|(i, _)| self.info(i))
    }
}

/// Serve one accepted connection to its end and count how it ended.
pub(crate) fn serve(env: &Arc<Env>, id: u64, stream: Stream) {
    let c = &env.stats.conns;
    if let Err(e) = sched::tune_current(env.cfg.realtime) {
        c.note_error(format!("connection {id}: thread scheduling: {e}"));
    }
    let why = match run(env, id, stream) {
        End::Closed => return,
        End::Protocol(e) => e.to_string(),
        End::Truncated => "the client closed the connection in the middle of a message".into(),
        End::Io(e) => {
            c.note_error(format!("connection {id}: {e}"));
            return;
        }
    };
    ConnCounters::bump(&c.protocol_errors);
    c.note_error(format!("connection {id}: {why}"));
}

fn run(env: &Arc<Env>, id: u64, stream: Stream) -> End {
    let setup = || -> io::Result<BufReader<Stream>> {
        stream.set_read_timeout(Some(env.cfg.handshake_timeout))?;
        Ok(BufReader::with_capacity(
            READ_BUF_BYTES,
            stream.try_clone()?,
        ))
    };
    let mut reader = match setup() {
        Ok(r) => r,
        Err(e) => return End::Io(e),
    };
    let mut writer = stream;
    let sel = match handshake(env, &mut reader, &mut writer) {
        Ok(Some(sel)) => sel,
        Ok(None) => return End::Closed,
        Err(end) => return end,
    };
    if let Err(e) = writer.set_read_timeout(None) {
        return End::Io(e);
    }
    match env.cfg.conn_io {
        ConnIo::Threads => transmit::run(env, id, Lingering::new(reader), writer, sel),
        // The server checked at start that the host allows io_uring; a
        // ring refused now (out of memory) fails this connection alone
        // when uring was asked for, and falls back when it was not.
        ConnIo::Uring | ConnIo::Auto => match uring::UringInput::new(&reader) {
            Ok(input) => transmit::run(env, id, input, writer, sel),
            Err(e) if env.cfg.conn_io == ConnIo::Uring => {
                End::Io(io::Error::new(e.kind(), format!("io_uring: {e}")))
            }
            Err(_) => transmit::run(env, id, Lingering::new(reader), writer, sel),
        },
    }
}

/// Greeting, client flags, options; `Ok(None)` when the client aborted.
fn handshake(env: &Env, r: &mut impl Read, w: &mut impl Write) -> Result<Option<Selected>, End> {
    w.write_all(&greeting())?;
    let mut flags = [0u8; 4];
    if !read_message(r, &mut flags)? {
        return Ok(None);
    }
    let flags = parse_client_flags(flags).map_err(End::Protocol)?;
    let mut neg = Negotiation::new(flags);
    let (mut data, mut out) = (Vec::new(), Vec::new());
    loop {
        let mut h = [0u8; 16];
        if !read_message(r, &mut h)? {
            return Ok(None);
        }
        let h = parse_option_header(&h).map_err(End::Protocol)?;
        data.resize(h.len_bytes as usize, 0);
        r.read_exact(&mut data)?;
        out.clear();
        let outcome = neg.handle(
            &Offer(env),
            env.is_shutting_down(),
            h.option,
            &data,
            &mut out,
        );
        w.write_all(&out)?;
        match outcome {
            Outcome::Continue => {}
            Outcome::Abort => return Ok(None),
            Outcome::Transmit(sel) => return Ok(Some(sel)),
            Outcome::Disconnect(e) => return Err(End::Protocol(e)),
        }
    }
}

/// Read a whole message into `buf`: `Ok(false)` when the peer closed the
/// connection before its first byte (a clean end), `UnexpectedEof` when
/// it closed in the middle.
pub(crate) fn read_message(r: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}
