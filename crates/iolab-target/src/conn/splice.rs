//! Zero-copy reply data over a Unix socket: `vmsplice` + `splice`.
//!
//! `writev` on an AF_UNIX socket copies every byte of a reply into a fresh
//! skb page; on an idle machine, with client and server on different CPUs,
//! that copy was half the target's CPU per 4 KiB read (docs/performance.md,
//! part 4). A [`Splicer`] instead hands the kernel references to the reply
//! pages: `vmsplice` maps a set's headers and data into a per-connection
//! pipe (no copy), and `splice` moves the pipe's pages into the socket
//! (`unix_stream_sendmsg` with `MSG_SPLICE_PAGES`, which takes page
//! references). The client's `recv` copies out of those same pages.
//!
//! So a spliced buffer must not be reused until the client has read it.
//! The splicer parks each one ([`Splicer::park`]) with the stream offset of
//! its end, counted in bytes spliced, and gives them back
//! ([`Splicer::reclaim`]) once `ioctl(SIOCOUTQ)` proves them read. On
//! AF_UNIX `SIOCOUTQ` is `unix_outq_len` = `sk_wmem_alloc_get(sk)`, and
//! `unix_stream_sendmsg` charges spliced bytes to it (`if (msg->msg_flags &
//! MSG_SPLICE_PAGES) { … refcount_add(size, &sk->sk_wmem_alloc); }`,
//! net/unix/af_unix.c since 6.5); the charge is released only when the
//! reader has consumed the whole skb and it is freed (`sock_wfree`). Hence
//! outq ≥ the bytes not yet read, and every spliced byte before
//! `spliced − outq` has been read — a bound that errs only on the safe
//! side (outq also counts skb overhead and bytes written by `writev`).
//!
//! The check is lazy: one `ioctl` once [`RECLAIM_AT`] buffers or
//! [`RECLAIM_BYTES`] are parked, not one per reply. The bound holds for a
//! client that copies its data out with `recv`/`read` (every NBD client
//! known: qemu, libnbd, the kernel's): one that moved it on with
//! `splice(2)` would keep references to these pages after `SIOCOUTQ` drops. A broken connection's parked buffers are dropped
//! with it; at close, buffers the client has still not read are leaked
//! rather than freed (their pages could be handed out again by the
//! allocator while the client reads them) — at most a socket buffer's
//! worth, and only when the server closes first on a client that left
//! replies unread.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::buf::AlignedBuf;
use crate::net::Stream;
use crate::server_config::ZeroCopy;

/// Pipe capacity asked for: a full set of 32 replies of 4 KiB (64 pages
/// with their headers) fits, so a typical set is one `vmsplice`.
const PIPE_BYTES: i32 = 1 << 20;

/// Parked buffers that trigger a check of what the client has read.
pub(super) const RECLAIM_AT: usize = 64;
/// … or parked bytes: large replies must not keep many MiB out of the
/// buffer cache (and beyond `max_inflight_bytes`) until 64 have been sent.
pub(super) const RECLAIM_BYTES: u64 = 4 << 20;
/// Header buffers the splicer keeps for reuse (a set's headers are at most
/// a few KiB: they are never taken from the data-buffer cache, whose
/// newest buffer may be many MiB).
const HEAD_POOL: usize = 64;
/// A header buffer's size: a set's headers (32 replies of at most a
/// structured error chunk each) fit; larger sets get a buffer of their own.
const HEAD_BYTES: usize = 4096;

/// `zero_copy = "auto"` splices a set of replies whose data averages at
/// least this much per reply. Smaller replies cost more spliced than
/// copied (docs/performance.md, part 4): every reply's header is a pipe
/// buffer and an skb fragment of its own, so a 4 KiB reply fills two
/// fragments where `writev` copies both into one, and the extra system
/// calls (`vmsplice`, `splice`, now and then `ioctl`) outweigh a 4 KiB copy.
pub(super) const AUTO_MIN_REPLY_BYTES: u64 = 16 * 1024;
/// … and at most this much data in all: a spliced set fills the socket's
/// buffer (about 208 KiB) at once, so the reader, which sends inline,
/// sleeps until the client has read it — a context switch per 256 KiB
/// spliced, where the copying `writev` kept pace with the client.
pub(super) const AUTO_MAX_SET_BYTES: u64 = 128 * 1024;

/// The splicer for a connection on `stream` under `mode`: none for TCP or
/// `off`; under `auto` none either when `make` (the pipe) fails, which
/// under `on` is the connection's error.
pub(super) fn for_conn(
    mode: ZeroCopy,
    stream: &Stream,
    make: impl FnOnce() -> io::Result<Splicer>,
) -> io::Result<Option<Splicer>> {
    if mode == ZeroCopy::Off || matches!(stream, Stream::Tcp(_)) {
        return Ok(None);
    }
    match (make(), mode) {
        (Ok(mut s), ZeroCopy::Auto) => {
            s.min_reply_bytes = AUTO_MIN_REPLY_BYTES;
            s.max_set_bytes = AUTO_MAX_SET_BYTES;
            Ok(Some(s))
        }
        (Ok(s), _) => Ok(Some(s)),
        (Err(e), ZeroCopy::On) => Err(io::Error::new(e.kind(), format!("zero-copy pipe: {e}"))),
        (Err(_), _) => Ok(None),
    }
}

/// The pipe and the spliced buffers of one connection.
#[derive(Debug)]
pub(crate) struct Splicer {
    /// Sets whose data averages fewer bytes per reply are written by `writev`.
    min_reply_bytes: u64,
    /// So are sets carrying more data than this.
    max_set_bytes: u64,
    pipe_r: OwnedFd,
    pipe_w: OwnedFd,
    /// Bytes spliced into the socket since the connection started.
    spliced: u64,
    /// Buffers still referenced by the socket, with the value of
    /// `spliced` at their end and whether they hold headers, oldest first.
    parked: VecDeque<(u64, AlignedBuf, bool)>,
    /// Bytes of the parked buffers.
    parked_bytes: u64,
    /// Header buffers read by the client, for the next sets.
    heads: Vec<AlignedBuf>,
}

fn cvt(r: isize) -> io::Result<usize> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

impl Splicer {
    /// A splicer with its own pipe (non-blocking, sized to [`PIPE_BYTES`]
    /// where the host lets it; a smaller pipe only means more system calls).
    pub fn new() -> io::Result<Splicer> {
        let mut fds = [0; 2];
        // SAFETY: `fds` is a valid out-array of two ints.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded: both descriptors are open and ours alone.
        let (pipe_r, pipe_w) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: F_SETPIPE_SZ on an open pipe; failure (a user over the
        // pipe-user-pages limit) leaves the default size.
        let _ = unsafe { libc::fcntl(pipe_w.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES) };
        Ok(Splicer {
            min_reply_bytes: 1,
            max_set_bytes: u64::MAX,
            pipe_r,
            pipe_w,
            spliced: 0,
            parked: VecDeque::new(),
            parked_bytes: 0,
            heads: Vec::new(),
        })
    }

    /// Whether to splice a set of `replies` replies with data carrying
    /// `data_bytes` in all (else `writev` it).
    pub fn takes(&self, replies: u64, data_bytes: u64) -> bool {
        replies > 0
            && data_bytes >= self.min_reply_bytes * replies
            && data_bytes <= self.max_set_bytes
    }

    /// Send `parts` in order on `sock` without copying them. Their memory
    /// must stay unchanged until [`Splicer::reclaim`] returns it: the
    /// caller parks every buffer behind `parts` right after, whether this
    /// succeeds or not (a part may be in the pipe or the socket either way).
    pub fn send(&mut self, sock: RawFd, parts: &[&[u8]]) -> io::Result<()> {
        let mut iov: Vec<libc::iovec> = parts
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| libc::iovec {
                iov_base: p.as_ptr() as *mut libc::c_void,
                iov_len: p.len(),
            })
            .collect();
        let mut at = 0;
        while at < iov.len() {
            let n = (iov.len() - at).min(libc::UIO_MAXIOV as usize);
            // SAFETY: `iov[at..at + n]` describes live slices of `parts`;
            // vmsplice only reads the pages (no SPLICE_F_GIFT).
            let r = unsafe {
                libc::vmsplice(
                    self.pipe_w.as_raw_fd(),
                    iov[at..].as_ptr(),
                    n,
                    libc::SPLICE_F_NONBLOCK,
                )
            };
            // The pipe is empty here (each round drains it), so vmsplice
            // always moves something: no progress is an error, not a wait.
            let moved = match cvt(r) {
                Ok(0) => {
                    return Err(io::Error::other(
                        "vmsplice moved nothing into an empty pipe",
                    ))
                }
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            advance(&mut iov, &mut at, moved);
            self.drain(sock, moved)?;
        }
        Ok(())
    }

    /// Move `bytes` (all the pipe holds) into the socket, waiting for room.
    fn drain(&mut self, sock: RawFd, mut bytes: usize) -> io::Result<()> {
        while bytes > 0 {
            // SAFETY: both descriptors are open; null offsets (pipe and socket).
            let r = unsafe {
                libc::splice(
                    self.pipe_r.as_raw_fd(),
                    std::ptr::null_mut(),
                    sock,
                    std::ptr::null_mut(),
                    bytes,
                    libc::SPLICE_F_MOVE,
                )
            };
            match cvt(r) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    bytes -= n;
                    self.spliced += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// A buffer holding `heads`, from the splicer's own pool.
    pub fn head_buf(&mut self, heads: &[u8]) -> AlignedBuf {
        let mut b = match self.heads.pop() {
            Some(b) if b.capacity() >= heads.len() => b,
            _ => AlignedBuf::new(heads.len().max(HEAD_BYTES)),
        };
        b.set_len(heads.len());
        b.copy_from_slice(heads);
        b
    }

    /// Keep data buffer `buf` until the client has read everything spliced
    /// so far.
    pub fn park(&mut self, buf: AlignedBuf) {
        self.park_as(buf, false);
    }

    /// Keep header buffer `buf` (from [`Splicer::head_buf`]) likewise.
    pub fn park_head(&mut self, buf: AlignedBuf) {
        self.park_as(buf, true);
    }

    fn park_as(&mut self, buf: AlignedBuf, head: bool) {
        self.parked_bytes += buf.capacity() as u64;
        self.parked.push_back((self.spliced, buf, head));
    }

    /// Whether enough is parked to check what the client has read.
    pub fn should_reclaim(&self) -> bool {
        self.parked.len() >= RECLAIM_AT || self.parked_bytes >= RECLAIM_BYTES
    }

    /// Buffers parked.
    #[cfg(test)]
    pub fn parked(&self) -> usize {
        self.parked.len()
    }

    /// The parked data buffers the client has read, given that `outq`
    /// bytes written to the socket are still unread (`SIOCOUTQ`); header
    /// buffers read go back to the splicer's pool.
    pub fn release_read(&mut self, outq: u64) -> Vec<AlignedBuf> {
        let read_to = self.spliced.saturating_sub(outq);
        let n = self.parked.partition_point(|&(end, _, _)| end <= read_to);
        let mut data = Vec::with_capacity(n);
        for (_, b, head) in self.parked.drain(..n) {
            self.parked_bytes -= b.capacity() as u64;
            if !head {
                data.push(b);
            } else if self.heads.len() < HEAD_POOL {
                self.heads.push(b);
            }
        }
        data
    }

    /// [`Splicer::release_read`] with the socket's own `SIOCOUTQ`.
    pub fn reclaim(&mut self, sock: RawFd) -> io::Result<Vec<AlignedBuf>> {
        Ok(self.release_read(outq(sock)?))
    }

    /// At close: free what the client has read and leak the rest (see the
    /// module docs).
    pub fn retire(mut self, sock: RawFd) {
        let outq = outq(sock).unwrap_or(u64::MAX);
        drop(self.release_read(outq));
        for (_, b, _) in self.parked.drain(..) {
            std::mem::forget(b);
        }
    }
}

/// Bytes written to `sock` that its peer has not read yet (`SIOCOUTQ`).
fn outq(sock: RawFd) -> io::Result<u64> {
    let mut n: libc::c_int = 0;
    // SAFETY: SIOCOUTQ (= TIOCOUTQ) writes one int.
    if unsafe { libc::ioctl(sock, libc::TIOCOUTQ, &mut n) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n.max(0) as u64)
}

/// Skip `n` bytes of `iov` from entry `at` on.
fn advance(iov: &mut [libc::iovec], at: &mut usize, mut n: usize) {
    while n > 0 {
        let v = &mut iov[*at];
        let k = n.min(v.iov_len);
        // SAFETY: `k` ≤ the entry's length: the pointer stays in its slice.
        v.iov_base = unsafe { v.iov_base.cast::<u8>().add(k) }.cast();
        v.iov_len -= k;
        n -= k;
        if v.iov_len == 0 {
            *at += 1;
        }
    }
}

#[cfg(test)]
mod tests;
