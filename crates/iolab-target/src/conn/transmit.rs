//! The transmission phase: read requests, dispatch them, and close cleanly.
//!
//! For each request the reader: reads the 28-byte header (a wrong magic
//! ends the session: the stream has lost its framing); stamps the time it
//! was received (the start of its server-side latency, moved later by the
//! time its payload takes to arrive); decides what to do with a WRITE
//! payload (read it; read and discard it when the request is refused; or
//! end the session when it is too long to be worth reading — see
//! [`crate::proto::request::write_payload_action`]); judges the request
//! ([`crate::proto::request::check_request`]); takes an in-flight slot (at
//! most `max_inflight` requests and `max_inflight_bytes` of data per
//! connection: a client that pipelines without reading replies is slowed
//! down, not given unbounded memory); gets a data buffer — under IO pacing
//! from the shared pool, waiting for one there before its payload is read
//! (see [`crate::pacing`]) — and hands the request on.
//!
//! Replies to requests run inline are not written one by one: the reader
//! collects them and writes them together ([`Replier::send_all`]) as soon
//! as it would otherwise wait — before a read that its buffer cannot
//! satisfy (the next request is not fully here yet), before waiting for an
//! in-flight slot or a pacing buffer (which replies it holds may free) —
//! or when it holds [`MAX_BATCH_REPLIES`] replies or [`MAX_BATCH_BYTES`] of
//! data. A reply thus never waits for another request to arrive: it waits
//! at most for the requests already received to be run, and a burst of
//! pipelined requests costs one write instead of one per request.
//!
//! After NBD_CMD_DISC, end of stream, or server shutdown, the reader waits
//! for every request in flight to be answered, then stops the workers and
//! the timer. While the server shuts down, requests still arriving are
//! answered with `NBD_ESHUTDOWN`, as the spec asks.

use std::io::{self, Read};
use std::sync::Arc;
use std::time::Instant;

use super::exec::{Executor, Job};
use super::reply::{Done, Replier};
use super::splice::{self, Splicer};
use super::uring::Input;
use super::{read_message, End, Env};
use crate::net::Stream;
use crate::pacing::AcquireError;
use crate::proto::handshake::Selected;
use crate::proto::request::{
    check_request, parse_request, write_payload_action, Command, Geometry, PayloadAction,
    RequestHeader, REQUEST_BYTES,
};
use crate::proto::{cmd, Errno, ProtoError};
use crate::stack::{BlockError, Op};

/// Serve requests on `export` until the session ends, reading them from
/// `reader` (`Lingering` on the threads path, io_uring's `UringInput`).
pub(super) fn run<R: Input>(
    env: &Arc<Env>,
    id: u64,
    mut reader: R,
    writer: Stream,
    sel: Selected,
) -> End {
    let export = env
        .exports
        .get(sel.index)
        .expect("negotiation selects an existing export")
        .clone();
    let limits = (env.cfg.max_inflight, env.cfg.max_inflight_bytes);
    let zc = match splice::for_conn(env.cfg.zero_copy, &writer, Splicer::new) {
        Ok(z) => z,
        Err(e) => return End::Io(e),
    };
    let replier = Arc::new(
        Replier::new(
            writer,
            sel.structured_replies,
            export.recorder().clone(),
            limits,
        )
        .with_splicer(zc),
    );
    if let Err(e) = replier.start_timer(id, env.cfg.realtime) {
        return End::Io(e);
    }
    let mut exec = match Executor::new(
        export.dev().clone(),
        replier.clone(),
        (env.cfg.workers, env.cfg.realtime),
        id,
    ) {
        Ok(x) => x,
        Err(e) => {
            replier.close();
            return End::Io(e);
        }
    };
    let geo = Geometry {
        size_bytes: sel.size_bytes,
        min_block_bytes: export.caps().min_block_bytes,
        max_payload_bytes: env.cfg.max_request_bytes,
        tflags: sel.tflags,
        structured_replies: sel.structured_replies,
    };
    let end = Reader {
        env,
        reader: &mut reader,
        replier: &replier,
        exec: &exec,
        geo,
        conn_id: id,
        export_index: sel.index,
        batch: Vec::with_capacity(MAX_BATCH_REPLIES),
        batch_bytes: 0,
    }
    .serve();
    replier.wait_idle();
    exec.close();
    replier.close();
    // This connection's cached pacing buffers go back to the shared pool.
    if let Some(p) = &env.pacer {
        p.retire(id);
    }
    end
}

struct Reader<'a, R> {
    env: &'a Env,
    reader: &'a mut R,
    replier: &'a Arc<Replier>,
    exec: &'a Executor,
    geo: Geometry,
    /// The pacing worker this connection is (see [`crate::pacing`]).
    conn_id: u64,
    export_index: usize,
    /// Replies due now, not written yet (see the module docs).
    batch: Vec<Done>,
    /// Data bytes in `batch`.
    batch_bytes: u64,
}

/// Most replies the reader holds before writing them.
pub(super) const MAX_BATCH_REPLIES: usize = 32;
/// Most data bytes the reader holds before writing them.
pub(super) const MAX_BATCH_BYTES: u64 = 256 * 1024;

/// The op a request type counts under (unknown commands are not counted).
fn op_of_kind(kind: u16) -> Option<Op> {
    match kind {
        cmd::READ => Some(Op::Read),
        cmd::WRITE => Some(Op::Write),
        cmd::FLUSH => Some(Op::Flush),
        cmd::TRIM => Some(Op::Trim),
        cmd::WRITE_ZEROES => Some(Op::Zero),
        _ => None,
    }
}

impl<R: Input> Reader<'_, R> {
    fn serve(&mut self) -> End {
        let end = loop {
            match self.one() {
                Ok(true) => {}
                Ok(false) => break End::Closed,
                Err(end) => break end,
            }
        };
        self.flush();
        end
    }

    /// Keep a reply due now, writing the batch when it is full.
    fn push(&mut self, done: Done) {
        self.batch_bytes += done.buf.as_ref().map_or(0, |b| b.len() as u64);
        self.batch.push(done);
        if self.batch.len() >= MAX_BATCH_REPLIES || self.batch_bytes >= MAX_BATCH_BYTES {
            self.flush();
        }
    }

    /// Write every reply held.
    fn flush(&mut self) {
        if !self.batch.is_empty() {
            self.replier.send_all(&mut self.batch);
            self.batch_bytes = 0;
        }
    }

    /// Write the replies held unless the next `n` bytes are already read
    /// (reading them will not wait for the client).
    fn flush_unless_buffered(&mut self, n: usize) {
        if self.reader.buffered() < n {
            self.flush();
        }
    }

    /// Take an in-flight slot; the replies held go out first if it must
    /// wait (they may be what it waits for).
    fn begin(&mut self, data_bytes: u64) {
        if !self.replier.try_begin(data_bytes) {
            self.flush();
            self.replier.begin(data_bytes);
        }
    }

    /// Handle one request; `Ok(false)` when the session is over.
    fn one(&mut self) -> Result<bool, End> {
        let mut hb = [0u8; REQUEST_BYTES];
        self.flush_unless_buffered(REQUEST_BYTES);
        match read_message(self.reader, &mut hb) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            // A read timeout is how a shutdown stops a silent client.
            Err(e) if self.env.is_shutting_down() && is_timeout(&e) => return Ok(false),
            Err(e) => return Err(e.into()),
        }
        let received = Instant::now();
        self.reader.note_request();
        let h = parse_request(&hb).map_err(End::Protocol)?;
        let action = write_payload_action(&h, self.geo.max_payload_bytes);
        if action == PayloadAction::Disconnect {
            let limit_bytes = self.geo.max_payload_bytes;
            return Err(End::Protocol(ProtoError::PayloadTooLong {
                len_bytes: h.len_bytes,
                limit_bytes,
            }));
        }
        if self.env.is_shutting_down() {
            if h.kind == cmd::DISC {
                return Ok(false);
            }
            let e = BlockError::new(Errno::Shutdown, "server is shutting down");
            self.refuse(&h, action, e, received)?;
            return Ok(true);
        }
        match check_request(&h, &self.geo) {
            Ok(Command::Disconnect) => Ok(false),
            Ok(c) => self.dispatch(h.cookie, c, received).map(|()| true),
            Err(rej) => {
                self.refuse(&h, action, BlockError::new(rej.errno, rej.reason), received)?;
                Ok(true)
            }
        }
    }

    fn dispatch(&mut self, cookie: u64, cmd: Command, received: Instant) -> Result<(), End> {
        let data_len = match cmd {
            Command::Read { len_bytes, .. } | Command::Write { len_bytes, .. } => Some(len_bytes),
            _ => None,
        };
        // IO pacing: a request waits for its buffers before its payload is
        // read from the socket (the wait counts in its server latency).
        // Requests without data need no buffer, as in SPDK. The wait may be
        // for buffers that replies held here would release: they go first.
        let env = self.env; // a copy of the reference: `p` must not borrow `self`
        let grant = match (&env.pacer, data_len) {
            (Some(p), Some(n)) => {
                self.flush();
                match p.acquire(self.conn_id, self.export_index, n as usize) {
                    Ok(g) => Some(g),
                    Err(AcquireError::TooLarge(e)) => {
                        return self.refuse_too_large(cookie, &cmd, e, received)
                    }
                    // The server is stopping while this request starved.
                    Err(AcquireError::Closed) => return Err(End::Closed),
                }
            }
            _ => None,
        };
        self.begin(u64::from(data_len.unwrap_or(0)));
        let mut buf = data_len.map(|n| self.replier.bufs.get(n as usize));
        let mut started = received;
        if let (Command::Write { .. }, Some(n)) = (&cmd, data_len) {
            self.flush_unless_buffered(n as usize);
        }
        if let (Command::Write { .. }, Some(b)) = (&cmd, buf.as_mut()) {
            let t = Instant::now();
            if let Err(e) = self.reader.read_exact(b) {
                self.replier.abandon(buf);
                return Err(e.into());
            }
            // Moving the payload over the socket is wire time, not server time.
            started += t.elapsed();
        }
        let job = Job {
            cookie,
            cmd,
            buf,
            grant,
            started,
        };
        if let Some(done) = self.exec.submit(job) {
            self.push(done);
        }
        Ok(())
    }

    /// Answer a request that needs more pacing buffers than it may ever
    /// hold (config validation keeps this from happening: the advertised
    /// maximum payload fits) with EINVAL, consuming a WRITE's payload.
    fn refuse_too_large(
        &mut self,
        cookie: u64,
        cmd: &Command,
        e: crate::pacing::TooLarge,
        t: Instant,
    ) -> Result<(), End> {
        let (kind, len_bytes, offset) = match *cmd {
            Command::Read { offset, len_bytes } => (cmd::READ, len_bytes, offset),
            Command::Write {
                offset, len_bytes, ..
            } => (cmd::WRITE, len_bytes, offset),
            _ => unreachable!("only READ and WRITE hold buffers"),
        };
        let action = if kind == cmd::WRITE {
            PayloadAction::Discard
        } else {
            PayloadAction::None
        };
        let h = RequestHeader {
            flags: 0,
            kind,
            cookie,
            offset,
            len_bytes,
        };
        self.refuse(&h, action, BlockError::new(Errno::Inval, e.to_string()), t)
    }

    /// Answer a request with an error without running it (after consuming
    /// its payload, to keep the stream framed).
    fn refuse(
        &mut self,
        h: &RequestHeader,
        a: PayloadAction,
        e: BlockError,
        t: Instant,
    ) -> Result<(), End> {
        if matches!(a, PayloadAction::Read | PayloadAction::Discard) {
            self.flush_unless_buffered(h.len_bytes as usize);
            discard(self.reader, u64::from(h.len_bytes))?;
        }
        self.begin(0);
        self.push(Done {
            cookie: h.cookie,
            op: op_of_kind(h.kind),
            bytes: 0,
            read_offset: (h.kind == cmd::READ).then_some(h.offset),
            buf: None,
            grant: None,
            result: Err(e),
            started: t,
            hold_until: None,
            tickets: Default::default(),
        });
        Ok(())
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Read and drop `n` bytes.
fn discard(r: &mut impl Read, n: u64) -> io::Result<()> {
    let copied = io::copy(&mut r.take(n), &mut io::sink())?;
    if copied < n {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}
