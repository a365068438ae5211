//! The nbd backend: the engine's own NBD client (`ioengine=nbd`).
//!
//! - Each worker opens `nbd_connections` connections to the job's `uri=`
//!   ([`handshake`]: fixed newstyle, NO_ZEROES, OPT_GO with a fallback to
//!   OPT_EXPORT_NAME) and spreads its requests over them round-robin.
//! - No helper threads: `queue` appends the request (and a write's payload)
//!   to the connection's output buffer, `commit` sends each buffer with one
//!   `send`, `reap` receives replies — blocking in `recv` (one connection)
//!   or `poll` (several) only until `min` completions are in. Every
//!   timestamp stays the worker's own, per I/O, as for io_uring.
//! - The cookie of a request is its slot; replies are matched by cookie in
//!   any order. Only simple replies are used (structured replies are never
//!   negotiated). Errors come back as `-errno` (NBD's error values are
//!   Linux's).
//! - fsync/fdatasync become NBD_CMD_FLUSH: on one connection when the
//!   server advertises CAN_MULTI_CONN (or there is one connection), else
//!   on every connection. A server without SEND_FLUSH has no write cache to
//!   flush, so the sync completes at once (said in the notes). `sync=`
//!   makes writes FUA (the server must advertise SEND_FUA).

mod conn;
pub mod handshake;
pub mod wire;

use std::collections::VecDeque;
use std::io;

use iolab_core::job::NbdTarget;
use rustix::event::{PollFd, PollFlags};

use super::{Backend, BackendConfig, Completion, Op, OpenFile, Queued, Request};
use crate::EngineError;
use conn::{Conn, Received};
pub use handshake::{connect, ExportInfo};

/// A request in flight, by slot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pending {
    op: Op,
    buf: *mut u8,
    len: u32,
    /// Replies still to come (a flush may go to every connection).
    waiting: u32,
    /// Bytes, or the first `-errno` of its replies.
    result: i64,
}

impl Default for Pending {
    fn default() -> Pending {
        Pending {
            op: Op::Read,
            buf: std::ptr::null_mut(),
            len: 0,
            waiting: 0,
            result: 0,
        }
    }
}

#[derive(Debug)]
pub struct NbdBackend {
    target: NbdTarget,
    info: ExportInfo,
    conns: Vec<Conn>,
    next: usize,
    slots: Vec<Pending>,
    ready: VecDeque<Completion>,
    staged: u32,
    fua: bool,
    notes: Vec<String>,
}

/// The job's target, or the error of a backend opened without one.
fn target_of(cfg: &BackendConfig) -> Result<NbdTarget, EngineError> {
    cfg.nbd.clone().ok_or_else(|| EngineError::Backend {
        engine: "nbd",
        reason: "no uri= given to the nbd backend".into(),
    })
}

impl NbdBackend {
    fn open_err(&self, reason: String) -> EngineError {
        EngineError::Backend {
            engine: Self::NAME,
            reason: format!(
                "{} (export '{}'): {reason}",
                self.target.uri, self.target.export
            ),
        }
    }

    fn check(&mut self, cfg: &BackendConfig) -> Result<(), EngineError> {
        let f = self.info.flags;
        if cfg.sync_writes && f & wire::tflags::SEND_FUA == 0 {
            return Err(self.open_err(
                "sync= asks for FUA writes, but the export does not advertise SEND_FUA; drop sync="
                    .into(),
            ));
        }
        self.fua = cfg.sync_writes;
        if f & wire::tflags::SEND_FLUSH == 0 {
            self.notes.push(format!(
                "nbd: {} does not advertise SEND_FLUSH (no write cache): fsync completes without a request",
                self.target.uri
            ));
        }
        if self.conns.len() > 1 && f & wire::tflags::CAN_MULTI_CONN == 0 {
            self.notes.push(format!(
                "nbd: {} does not advertise CAN_MULTI_CONN: each fsync is a FLUSH on all {} connections",
                self.target.uri,
                self.conns.len()
            ));
        }
        if cfg.trims && f & wire::tflags::SEND_TRIM == 0 {
            return Err(self.open_err(
                "the job trims, but the export does not advertise SEND_TRIM (it takes no \
                 NBD_CMD_TRIM); use a trimming export or a job without trims"
                    .into(),
            ));
        }
        if f & wire::tflags::READ_ONLY != 0 {
            self.notes
                .push(format!("nbd: {} is read-only", self.target.uri));
        }
        Ok(())
    }

    fn slot_mut(&mut self, slot: u32) -> &mut Pending {
        let i = slot as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, Pending::default());
        }
        &mut self.slots[i]
    }

    fn queue_flush(&mut self, slot: u32) {
        if self.info.flags & wire::tflags::SEND_FLUSH == 0 {
            self.ready.push_back(Completion { slot, result: 0 });
            return;
        }
        let every = self.conns.len() > 1 && self.info.flags & wire::tflags::CAN_MULTI_CONN == 0;
        let targets: Vec<usize> = if every {
            (0..self.conns.len()).collect()
        } else {
            vec![self.round_robin()]
        };
        *self.slot_mut(slot) = Pending {
            op: Op::Fsync,
            buf: std::ptr::null_mut(),
            len: 0,
            waiting: targets.len() as u32,
            result: 0,
        };
        for c in targets {
            self.conns[c].push(0, wire::cmd::FLUSH, u64::from(slot), 0, &[], 0);
        }
    }

    fn round_robin(&mut self) -> usize {
        let c = self.next;
        self.next = (self.next + 1) % self.conns.len();
        c
    }

    /// One pass over the connections without blocking: send what is
    /// staged, receive what has come. True if anything moved.
    fn pump(&mut self) -> io::Result<bool> {
        let mut moved = false;
        for c in &mut self.conns {
            moved |= c.send()?;
            moved |= c.receive(false, &mut self.slots, &mut self.ready)? == Received::Bytes;
        }
        Ok(moved)
    }

    /// Block until a connection can make progress (readable, or writable
    /// with output pending).
    fn wait(&mut self) -> io::Result<()> {
        let mut fds: Vec<PollFd<'_>> = self
            .conns
            .iter()
            .map(|c| {
                let mut ev = PollFlags::IN;
                if c.wants_send() {
                    ev |= PollFlags::OUT;
                }
                PollFd::new(c.fd(), ev)
            })
            .collect();
        loop {
            match rustix::event::poll(&mut fds, None) {
                Ok(_) => return Ok(()),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn err(&self, e: io::Error) -> io::Error {
        io::Error::new(
            e.kind(),
            format!("{} (export '{}'): {e}", self.target.uri, self.target.export),
        )
    }
}

impl Backend for NbdBackend {
    const NAME: &'static str = "nbd";
    const SYNC: bool = false;
    const TRIMS: bool = true;

    fn open(_files: &[OpenFile], cfg: &BackendConfig) -> Result<Self, EngineError> {
        let target = target_of(cfg)?;
        let mut conns = Vec::new();
        let mut info = None;
        for _ in 0..target.connections.max(1) {
            let c = connect(&target).map_err(|e| EngineError::Backend {
                engine: Self::NAME,
                reason: e.to_string(),
            })?;
            info.get_or_insert(c.info);
            conns.push(Conn::new(c.fd));
        }
        let mut b = NbdBackend {
            info: info.expect("at least one connection"),
            target,
            conns,
            next: 0,
            slots: vec![Pending::default(); cfg.iodepth.max(1) as usize],
            ready: VecDeque::with_capacity(cfg.iodepth as usize + 1),
            staged: 0,
            fua: false,
            notes: Vec::new(),
        };
        b.check(cfg)?;
        Ok(b)
    }

    #[inline]
    unsafe fn queue(&mut self, req: &Request) -> io::Result<Queued> {
        self.staged += 1;
        let (cmd, flags, payload): (u16, u16, &[u8]) = match req.op {
            Op::Fsync | Op::Fdatasync => {
                self.queue_flush(req.slot);
                return Ok(Queued::Staged);
            }
            Op::Read => (wire::cmd::READ, 0, &[]),
            Op::Trim => (wire::cmd::TRIM, 0, &[]),
            Op::Write => {
                let fua = if self.fua { wire::cmd_flag::FUA } else { 0 };
                // Safety: the worker's buffer holds `len` bytes for this
                // request (Request contract); they are copied out right here.
                let data = unsafe { std::slice::from_raw_parts(req.buf, req.len as usize) };
                (wire::cmd::WRITE, fua, data)
            }
        };
        *self.slot_mut(req.slot) = Pending {
            op: req.op,
            buf: req.buf,
            len: req.len,
            waiting: 1,
            result: i64::from(req.len),
        };
        let c = self.round_robin();
        self.conns[c].push(
            flags,
            cmd,
            u64::from(req.slot),
            req.offset,
            payload,
            req.len,
        );
        Ok(Queued::Staged)
    }

    /// Sends everything staged. While the socket is full, replies are
    /// received too (kept for the next `reap`), so that a server blocked
    /// on sending them cannot deadlock against us.
    #[inline]
    fn commit(&mut self) -> io::Result<u32> {
        let n = std::mem::take(&mut self.staged);
        while self.conns.iter().any(Conn::wants_send) {
            if !self.pump().map_err(|e| self.err(e))? {
                self.wait().map_err(|e| self.err(e))?;
            }
        }
        Ok(n)
    }

    #[inline]
    fn reap(&mut self, min: u32, max: u32, out: &mut Vec<Completion>) -> io::Result<u32> {
        let min = min as usize;
        if self.ready.len() < min || self.ready.is_empty() {
            self.pump().map_err(|e| self.err(e))?;
        }
        while self.ready.len() < min {
            if self.conns.len() == 1 && !self.conns[0].wants_send() {
                // One connection: block in recv itself, no poll needed.
                self.conns[0]
                    .receive(true, &mut self.slots, &mut self.ready)
                    .map_err(|e| self.err(e))?;
            } else {
                self.wait().map_err(|e| self.err(e))?;
                self.pump().map_err(|e| self.err(e))?;
            }
        }
        let n = self.ready.len().min(max as usize);
        out.extend(self.ready.drain(..n));
        Ok(n as u32)
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

impl Drop for NbdBackend {
    fn drop(&mut self) {
        // Best effort: tell the server we are leaving (NBD_CMD_DISC), so it
        // does not log an abrupt disconnect. Errors are of no interest now.
        for c in &mut self.conns {
            c.push(0, wire::cmd::DISC, 0, 0, &[], 0);
            let _ = c.send();
        }
    }
}
