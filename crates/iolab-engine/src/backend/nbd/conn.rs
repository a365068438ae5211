//! One NBD connection in the transmission phase: requests are appended to
//! an output buffer and sent in one `send` per commit; replies are read
//! with as few `recv` calls as possible into a receive buffer and matched
//! to their slot by cookie (in any order). A READ's payload is copied from
//! the receive buffer into the slot's buffer, or, when a large payload is
//! still to come, received straight into it.

use std::io;
use std::os::fd::OwnedFd;

use rustix::net::{RecvFlags, SendFlags};

use super::wire::{self, SIMPLE_REPLY_BYTES};
use super::Pending;
use crate::backend::{Completion, Op};

/// Receive buffer size: 64 replies of 4 KiB reads fit in one `recv`.
const RECV_BUF_BYTES: usize = 256 << 10;
/// Payload still to come above which it is received into the slot's buffer
/// directly (one copy saved; the extra `recv` is worth it for large reads).
const DIRECT_RECV_BYTES: usize = 64 << 10;

#[derive(Debug)]
pub(super) struct Conn {
    fd: OwnedFd,
    out: Vec<u8>,
    sent: usize,
    rbuf: Box<[u8]>,
    rstart: usize,
    rend: usize,
    /// A READ whose payload is being received: (slot, bytes received).
    payload: Option<(u32, u32)>,
    /// Requests sent and not answered, for messages.
    pub inflight: u32,
}

/// What [`Conn::receive`] learnt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Received {
    Bytes,
    WouldBlock,
}

impl Conn {
    pub fn new(fd: OwnedFd) -> Conn {
        Conn {
            fd,
            out: Vec::with_capacity(64 << 10),
            sent: 0,
            rbuf: vec![0u8; RECV_BUF_BYTES].into_boxed_slice(),
            rstart: 0,
            rend: 0,
            payload: None,
            inflight: 0,
        }
    }

    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// Stage one request (header, and the payload of a write).
    pub fn push(
        &mut self,
        flags: u16,
        cmd: u16,
        cookie: u64,
        offset: u64,
        payload: &[u8],
        len: u32,
    ) {
        wire::put_request(&mut self.out, flags, cmd, cookie, offset, len);
        self.out.extend_from_slice(payload);
        self.inflight += 1;
    }

    pub fn wants_send(&self) -> bool {
        self.sent < self.out.len()
    }

    /// Send what is staged without blocking; true if any byte went out.
    pub fn send(&mut self) -> io::Result<bool> {
        let mut progressed = false;
        while self.wants_send() {
            let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
            match rustix::net::send(&self.fd, &self.out[self.sent..], flags) {
                Ok(n) => {
                    self.sent += n;
                    progressed = true;
                }
                Err(rustix::io::Errno::AGAIN) => break,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(io::Error::from(e)),
            }
        }
        if !self.wants_send() {
            self.out.clear();
            self.sent = 0;
        }
        Ok(progressed)
    }

    /// One `recv` (blocking or not), then every complete reply is matched
    /// to its slot; finished slots go to `ready`.
    pub fn receive(
        &mut self,
        block: bool,
        slots: &mut [Pending],
        ready: &mut std::collections::VecDeque<Completion>,
    ) -> io::Result<Received> {
        let flags = if block {
            RecvFlags::empty()
        } else {
            RecvFlags::DONTWAIT
        };
        let got = match self.direct_target(slots) {
            Some((slot, at, room)) => {
                // Safety: the slot's buffer holds `len` bytes and belongs to
                // this request until it completes (Request contract); `at +
                // room <= len`, and nothing else reads or writes it meanwhile.
                let dst = unsafe {
                    std::slice::from_raw_parts_mut(slots[slot as usize].buf.add(at), room)
                };
                let r = recv(&self.fd, dst, flags)?;
                if let Some(n) = r {
                    self.payload = Some((slot, (at + n) as u32));
                    if at + n == slots[slot as usize].len as usize {
                        self.payload = None;
                        finish(slots, ready, slot, None);
                    }
                }
                r
            }
            None => {
                self.compact();
                let r = recv(&self.fd, &mut self.rbuf[self.rend..], flags)?;
                if let Some(n) = r {
                    self.rend += n;
                }
                r
            }
        };
        match got {
            None => return Ok(Received::WouldBlock),
            Some(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the server closed the connection with {} requests unanswered",
                        self.inflight
                    ),
                ))
            }
            Some(_) => {}
        }
        self.parse(slots, ready)?;
        Ok(Received::Bytes)
    }

    /// Where to receive straight into a slot's buffer: (slot, offset, bytes).
    fn direct_target(&self, slots: &[Pending]) -> Option<(u32, usize, usize)> {
        let (slot, got) = self.payload?;
        let rest = (slots[slot as usize].len - got) as usize;
        (self.rstart == self.rend && rest >= DIRECT_RECV_BYTES).then_some((
            slot,
            got as usize,
            rest,
        ))
    }

    fn compact(&mut self) {
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        } else if self.rbuf.len() - self.rend < SIMPLE_REPLY_BYTES * 4 {
            self.rbuf.copy_within(self.rstart..self.rend, 0);
            self.rend -= self.rstart;
            self.rstart = 0;
        }
    }

    /// Consume every complete reply (and payload bytes) in the buffer.
    fn parse(
        &mut self,
        slots: &mut [Pending],
        ready: &mut std::collections::VecDeque<Completion>,
    ) -> io::Result<()> {
        loop {
            let avail = self.rend - self.rstart;
            if let Some((slot, got)) = self.payload {
                let p = &slots[slot as usize];
                let n = avail.min((p.len - got) as usize);
                if n == 0 {
                    return Ok(());
                }
                // Safety: as in `receive`: `got + n <= len`, the slot's
                // buffer is this request's until it completes.
                let dst = unsafe { std::slice::from_raw_parts_mut(p.buf.add(got as usize), n) };
                dst.copy_from_slice(&self.rbuf[self.rstart..self.rstart + n]);
                self.rstart += n;
                let got = got + n as u32;
                if got == p.len {
                    self.payload = None;
                    finish(slots, ready, slot, None);
                } else {
                    self.payload = Some((slot, got));
                }
                continue;
            }
            if avail < SIMPLE_REPLY_BYTES {
                return Ok(());
            }
            let hdr: &[u8; SIMPLE_REPLY_BYTES] = self.rbuf
                [self.rstart..self.rstart + SIMPLE_REPLY_BYTES]
                .try_into()
                .expect("16 bytes");
            self.rstart += SIMPLE_REPLY_BYTES;
            self.reply(wire::parse_simple_reply(hdr), slots, ready)?;
        }
    }

    fn reply(
        &mut self,
        hdr: Option<(u32, u64)>,
        slots: &mut [Pending],
        ready: &mut std::collections::VecDeque<Completion>,
    ) -> io::Result<()> {
        let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
        let (error, cookie) =
            hdr.ok_or_else(|| bad("reply with a bad magic (not a simple reply)".into()))?;
        let slot = u32::try_from(cookie)
            .ok()
            .filter(|&s| (s as usize) < slots.len() && slots[s as usize].waiting > 0)
            .ok_or_else(|| {
                bad(format!(
                    "reply for cookie {cookie}, which has no request in flight"
                ))
            })?;
        self.inflight = self.inflight.saturating_sub(1);
        let p = slots[slot as usize];
        if error != 0 {
            // NBD error values are Linux's errno values (EPERM, EIO, …).
            finish(slots, ready, slot, Some(-i64::from(error)));
        } else if p.op == Op::Read && p.len > 0 {
            self.payload = Some((slot, 0));
        } else {
            finish(slots, ready, slot, None);
        }
        Ok(())
    }
}

/// One reply for `slot` arrived; its completion is ready when the last one
/// (of a flush sent on every connection) has.
fn finish(
    slots: &mut [Pending],
    ready: &mut std::collections::VecDeque<Completion>,
    slot: u32,
    error: Option<i64>,
) {
    let p = &mut slots[slot as usize];
    if let Some(e) = error {
        p.result = p.result.min(e);
    }
    p.waiting -= 1;
    if p.waiting == 0 {
        ready.push_back(Completion {
            slot,
            result: p.result,
        });
    }
}

/// `recv` that maps EAGAIN to `None` and retries EINTR.
fn recv(fd: &OwnedFd, buf: &mut [u8], flags: RecvFlags) -> io::Result<Option<usize>> {
    loop {
        match rustix::net::recv(fd, &mut *buf, flags) {
            Ok((n, _)) => return Ok(Some(n)),
            Err(rustix::io::Errno::AGAIN) => return Ok(None),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(io::Error::from(e)),
        }
    }
}
