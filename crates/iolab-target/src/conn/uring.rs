//! The connection's receive side on io_uring ([`UringInput`]): requests
//! arrive without a system call per read and, most of the time, without
//! the reader sleeping.
//!
//! On the threads path the reader blocks in `recv` whenever the client has
//! not sent its next request yet; with one fio job that is nearly every
//! request, and the sleep and wake-up were 39 % of the target's CPU
//! (docs/performance.md, part 4). Here one multishot receive stays armed on
//! the socket and the kernel copies whatever the client sent into a ring
//! of provided buffers ([`RECV_BUFS`] × [`RECV_BUF_BYTES`]). The ring
//! runs those copies only when the reader enters it
//! (`IORING_SETUP_DEFER_TASKRUN`, 6.1+), so requests arriving while the
//! reader works cost it nothing, and one `io_uring_enter` takes all that
//! came in meanwhile (measured: ~10 requests per wake-up where `recv` took
//! 4.5). For a client that keeps its queue full ([`Pace`]) the reader
//! also lingers briefly ([`LINGER`]) before looking, so that one wake-up
//! brings a set of requests and one write answers them.
//!
//! A bounded spin on the completion ring before sleeping was built and
//! dropped: on this 2-CPU machine it took the client's CPU and cost more
//! server CPU per request than the sleeps it saved (docs/performance.md).
//!
//! Kernels without provided-buffer rings or multishot receive (before 5.19
//! and 6.0) get a single-shot `recv` per wait into a buffer of the
//! connection's own, found out on the first completion that refuses
//! multishot ([`Mode`]). Where io_uring itself is missing or refused, the
//! server uses the threads path (`[server] conn_io`, see
//! [`crate::server_config::ConnIo`]).
//!
//! Bytes go to the request parser through [`std::io::Read`] plus
//! [`Input::buffered`], the same interface as the threads path's
//! `Lingering` (conn/linger.rs), so the transmission code is one for both.

use std::collections::VecDeque;
use std::io::{self, BufReader, Read};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

use io_uring::{cqueue, opcode, types, IoUring};

use crate::net::Stream;

/// What the transmission phase reads requests from.
pub(crate) trait Input: Read {
    /// Bytes received and not read yet: reading this many will not wait
    /// for the client.
    fn buffered(&mut self) -> usize;

    /// A request's header was parsed (the receive side may pace itself by it).
    fn note_request(&mut self) {}
}

/// Provided receive buffers per connection.
pub(crate) const RECV_BUFS: u16 = 16;
/// Bytes per provided receive buffer (1 MiB per connection in all).
pub(crate) const RECV_BUF_BYTES: usize = 64 * 1024;
/// The buffer group id of the ring's only group.
const BGID: u16 = 0;
/// `user_data` of the receive; of its cancellation.
const RECV: u64 = 1;
const CANCEL: u64 = 2;
/// Submission and completion queue entries (a multishot receive posts a
/// completion per copy; the reader reaps them before each wait).
const RING_ENTRIES: u32 = 64;
/// `IORING_ENTER_GETEVENTS`: run deferred completions (and wait for some).
const ENTER_GETEVENTS: u32 = 1;

/// How bytes are received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// One armed multishot receive into the provided-buffer ring.
    Multishot,
    /// One `recv` per wait into `own` (no provided-buffer ring, or the
    /// kernel refused multishot).
    Single,
}

/// A run of received bytes not read yet: in provided buffer `bid`, or
/// (`None`) in the connection's own buffer.
#[derive(Debug)]
struct Seg {
    bid: Option<u16>,
    pos: usize,
    end: usize,
}

/// The provided-buffer ring: entries shared with the kernel, and the
/// buffers they point at.
struct BufRing {
    /// `RECV_BUFS` entries, page-aligned; the tail is in entry 0.
    entries: *mut types::BufRingEntry,
    layout: std::alloc::Layout,
    data: Box<[u8]>,
    tail: u16,
}

impl BufRing {
    fn new() -> io::Result<BufRing> {
        let bytes = usize::from(RECV_BUFS) * std::mem::size_of::<types::BufRingEntry>();
        let layout =
            std::alloc::Layout::from_size_align(bytes.max(4096), 4096).map_err(io::Error::other)?;
        // Safety: the layout has a non-zero size.
        let entries = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<types::BufRingEntry>();
        if entries.is_null() {
            return Err(io::ErrorKind::OutOfMemory.into());
        }
        let data = vec![0u8; usize::from(RECV_BUFS) * RECV_BUF_BYTES].into_boxed_slice();
        Ok(BufRing {
            entries,
            layout,
            data,
            tail: 0,
        })
    }

    /// Give buffer `bid` to the kernel.
    fn provide(&mut self, bid: u16) {
        let i = usize::from(self.tail & (RECV_BUFS - 1));
        let addr = self.data[usize::from(bid) * RECV_BUF_BYTES..].as_ptr() as u64;
        // Safety: `i < RECV_BUFS`, within the allocation; the kernel reads
        // an entry only once the tail below covers it.
        let e = unsafe { &mut *self.entries.add(i) };
        e.set_addr(addr);
        e.set_len(RECV_BUF_BYTES as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
        // Safety: the tail field is entry 0's `resv`, a u16 in the
        // allocation, written only here; the kernel reads it atomically.
        let tail = unsafe { &*(types::BufRingEntry::tail(self.entries).cast::<AtomicU16>()) };
        tail.store(self.tail, Ordering::Release);
    }

    fn buf(&self, bid: u16) -> &[u8] {
        &self.data[usize::from(bid) * RECV_BUF_BYTES..][..RECV_BUF_BYTES]
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // Safety: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.entries.cast(), self.layout) }
    }
}

/// Whether the client keeps requests coming without waiting for their
/// replies (a deep queue), learnt from how long the reader waits for the
/// next request: a client at QD 1 sends its next request only after its
/// reply has crossed the socket and woken it; a deep one has the next on
/// its way already (a few µs). Only then does the reader linger
/// ([`LINGER`]) before looking for more: one sleep then brings a set of
/// requests, where each had cost a wake-up and a write of its own.
///
/// A linger that brings fewer than two requests was wasted (a fast
/// client at QD 1 can look deep): the reader then holds off lingering for
/// a number of waits that doubles with each such miss, up to
/// [`MAX_HOLDOFF`] — at QD 1 at most one request in that many is held.
#[derive(Debug)]
pub(crate) struct Pace {
    /// Average wait for the next request, ns (exponential, 1/8).
    pub wait_ns: u64,
    /// Waits left before the next linger; what a miss sets it to next.
    skip: u32,
    holdoff: u32,
    /// The last wait was a linger; requests parsed since the last wait.
    lingered: bool,
    batch: u32,
}

/// A wait shorter than this on average marks a deep client.
pub(crate) const DEEP_WAIT: Duration = Duration::from_micros(6);
/// How long the reader lets a deep client's requests gather.
pub(crate) const LINGER: Duration = Duration::from_micros(12);
/// Most waits without a linger after misses.
pub(crate) const MAX_HOLDOFF: u32 = 1024;

impl Default for Pace {
    fn default() -> Pace {
        // Not deep until seen to be.
        Pace {
            wait_ns: 10 * DEEP_WAIT.as_nanos() as u64,
            skip: 0,
            holdoff: 8,
            lingered: false,
            batch: 0,
        }
    }
}

impl Pace {
    /// Whether to linger before this wait. Judges the last linger first.
    pub fn linger(&mut self) -> bool {
        if std::mem::take(&mut self.lingered) {
            if self.batch >= 2 {
                self.holdoff = (self.holdoff / 2).max(8);
            } else {
                self.missed();
            }
        }
        self.batch = 0;
        if self.skip > 0 {
            self.skip -= 1;
            return false;
        }
        self.lingered = self.wait_ns < DEEP_WAIT.as_nanos() as u64;
        self.lingered
    }

    /// A wait (not a linger) for the next request took `ns`.
    pub fn note_wait(&mut self, ns: u64) {
        self.lingered = false;
        self.wait_ns = (7 * self.wait_ns + ns.min(1_000_000)) / 8;
    }

    /// One more request parsed.
    pub fn note_request(&mut self) {
        self.batch += 1;
    }

    /// A linger brought too little: hold off the next ones.
    fn missed(&mut self) {
        self.lingered = false;
        self.skip = self.holdoff;
        self.holdoff = (self.holdoff * 2).min(MAX_HOLDOFF);
    }
}

/// The connection's receive side on io_uring (see the module docs).
pub(crate) struct UringInput {
    // Dropped first: the ring must go before the memory it writes to.
    ring: IoUring,
    bufs: Option<BufRing>,
    /// The handshake's leftover bytes, then (single-shot mode) each receive.
    own: Vec<u8>,
    segs: VecDeque<Seg>,
    buffered: usize,
    mode: Mode,
    /// A receive is submitted and has not posted its last completion.
    armed: bool,
    eof: bool,
    err: Option<io::Error>,
    pub(crate) pace: Pace,
    /// The ring runs completions only when the reader asks
    /// (`IORING_SETUP_DEFER_TASKRUN`): a linger is not cut short by them.
    deferred: bool,
    /// Kept open while the ring receives from it.
    stream: Stream,
}

impl std::fmt::Debug for UringInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringInput")
            .field("mode", &self.mode)
            .field("buffered", &self.buffered)
            .field("pace", &self.pace)
            .field("deferred", &self.deferred)
            .finish_non_exhaustive()
    }
}

/// Whether this host lets a process use io_uring with a provided-buffer
/// ring; the error says why not.
///
/// The ring is made on a thread of its own: the kernel tears a ring down
/// asynchronously and then signals each task that used it (task work),
/// which interrupts that task's next sleep with a timeout (`EINTR` from a
/// `recv` under `SO_RCVTIMEO`) — the server's caller must not be one.
pub(crate) fn probe() -> io::Result<Mode> {
    std::thread::Builder::new()
        .name("iolab-uring-probe".into())
        .spawn(|| {
            let ring = IoUring::new(4)?;
            Ok(register(&ring)?.map_or(Mode::Single, |_| Mode::Multishot))
        })?
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the io_uring probe panicked")))
}

/// Register a provided-buffer ring; `None` where the kernel has none.
fn register(ring: &IoUring) -> io::Result<Option<BufRing>> {
    let mut b = BufRing::new()?;
    // Safety: the entries stay allocated until the ring is dropped
    // (`UringInput` drops its ring first).
    let r = unsafe {
        ring.submitter()
            .register_buf_ring_with_flags(b.entries as u64, RECV_BUFS, BGID, 0)
    };
    match r {
        Ok(()) => {
            for bid in 0..RECV_BUFS {
                b.provide(bid);
            }
            Ok(Some(b))
        }
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(None),
        Err(e) => Err(e),
    }
}

impl UringInput {
    /// Take over the receive side of `reader`'s connection, with the bytes
    /// its buffer already holds (a request sent right after the handshake).
    pub fn new(reader: &BufReader<Stream>) -> io::Result<UringInput> {
        UringInput::with_mode(reader, None)
    }

    /// [`UringInput::new`]; `Some(Mode::Single)` forces single-shot receives.
    fn with_mode(reader: &BufReader<Stream>, force: Option<Mode>) -> io::Result<UringInput> {
        // Completions run on this thread when it asks, not whenever it runs
        // (6.1+); elsewhere without the linger.
        let (ring, deferred) = match IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(RING_ENTRIES)
        {
            Ok(r) => (r, true),
            Err(_) => (IoUring::new(RING_ENTRIES)?, false),
        };
        let bufs = match force {
            Some(Mode::Single) => None,
            _ => register(&ring)?,
        };
        let mode = if bufs.is_some() {
            Mode::Multishot
        } else {
            Mode::Single
        };
        let mut own = Vec::with_capacity(RECV_BUF_BYTES);
        own.extend_from_slice(reader.buffer());
        let mut u = UringInput {
            ring,
            bufs,
            own,
            segs: VecDeque::with_capacity(usize::from(RECV_BUFS) + 1),
            buffered: 0,
            mode,
            armed: false,
            eof: false,
            err: None,
            pace: Pace::default(),
            deferred,
            stream: reader.get_ref().try_clone()?,
        };
        if !u.own.is_empty() {
            u.push_seg(None, u.own.len());
        }
        Ok(u)
    }

    fn push_seg(&mut self, bid: Option<u16>, end: usize) {
        self.buffered += end;
        self.segs.push_back(Seg { bid, pos: 0, end });
    }

    /// Queue the receive (submitted by the next enter).
    fn arm(&mut self) -> io::Result<()> {
        let fd = types::Fd(raw_fd(&self.stream));
        let sqe = match self.mode {
            Mode::Multishot => opcode::RecvMulti::new(fd, BGID).build(),
            Mode::Single => {
                self.own.resize(RECV_BUF_BYTES, 0);
                let p = self.own.as_mut_ptr();
                opcode::Recv::new(fd, p, RECV_BUF_BYTES as u32).build()
            }
        };
        // Safety: the provided buffers (multishot) or `own` (single: not
        // touched until this receive completes, as it is armed only with
        // no bytes left in it) outlive the receive: see `Drop`.
        unsafe { self.ring.submission().push(&sqe.user_data(RECV)) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        self.armed = true;
        Ok(())
    }

    /// Take every completion posted; the number taken.
    fn reap(&mut self) -> usize {
        let mut n = 0;
        loop {
            let next = self.ring.completion().next();
            let Some(c) = next else { break };
            n += 1;
            if c.user_data() == RECV {
                self.on_recv(c.result(), c.flags());
            }
        }
        n
    }

    fn on_recv(&mut self, res: i32, flags: u32) {
        if !cqueue::more(flags) {
            self.armed = false;
        }
        match res {
            0 => self.eof = true,
            n if n > 0 => match cqueue::buffer_select(flags) {
                Some(bid) => self.push_seg(Some(bid), n as usize),
                None => self.push_seg(None, n as usize),
            },
            e => match -e {
                // Every provided buffer holds unread bytes: re-armed once
                // some are read.
                libc::ENOBUFS | libc::EINTR | libc::EAGAIN => {}
                libc::EINVAL if self.mode == Mode::Multishot => self.mode = Mode::Single,
                errno => self.err = Some(io::Error::from_raw_os_error(errno)),
            },
        }
    }

    /// Wait until bytes, the end of the stream or an error arrive: for a
    /// deep client, after a linger (see [`Pace`]).
    fn fill(&mut self) -> io::Result<()> {
        while self.segs.is_empty() && !self.eof && self.err.is_none() {
            if !self.armed {
                self.arm()?;
            }
            if self.deferred && self.pace.linger() {
                std::thread::sleep(LINGER);
                self.enter(0)?;
                if self.reap() > 0 {
                    continue;
                }
                self.pace.missed();
            }
            let t0 = Instant::now();
            self.enter(1)?;
            self.pace.note_wait(t0.elapsed().as_nanos() as u64);
            self.reap();
        }
        Ok(())
    }

    /// Submit what is queued, run the completions the kernel deferred, and
    /// wait for `want` of them.
    fn enter(&mut self, want: u32) -> io::Result<()> {
        let to_submit = self.ring.submission().len() as u32;
        loop {
            // Safety: no argument is passed.
            let r = unsafe {
                self.ring.submitter().enter::<libc::sigset_t>(
                    to_submit,
                    want,
                    ENTER_GETEVENTS,
                    None,
                )
            };
            match r {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl Input for UringInput {
    fn note_request(&mut self) {
        self.pace.note_request();
    }

    fn buffered(&mut self) -> usize {
        // Whatever the kernel posted meanwhile counts (no system call).
        self.reap();
        self.buffered
    }
}

impl Read for UringInput {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        self.fill()?;
        let Some(seg) = self.segs.front_mut() else {
            return match self.err.take() {
                Some(e) => Err(e),
                None => Ok(0),
            };
        };
        let src = match (seg.bid, &self.bufs) {
            (Some(bid), Some(b)) => &b.buf(bid)[seg.pos..seg.end],
            _ => &self.own[seg.pos..seg.end],
        };
        let n = src.len().min(out.len());
        out[..n].copy_from_slice(&src[..n]);
        seg.pos += n;
        self.buffered -= n;
        if seg.pos == seg.end {
            let bid = seg.bid;
            self.segs.pop_front();
            if let (Some(bid), Some(b)) = (bid, self.bufs.as_mut()) {
                b.provide(bid);
            }
        }
        Ok(n)
    }
}

impl Drop for UringInput {
    /// Cancel the receive and wait for its last completion, so the kernel
    /// writes to no buffer after it is freed.
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let c = opcode::AsyncCancel::new(RECV).build().user_data(CANCEL);
        // Safety: cancelling refers to no memory of ours.
        if unsafe { self.ring.submission().push(&c) }.is_err() {
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(1);
        while self.armed && Instant::now() < deadline {
            let ts = types::Timespec::new().nsec(10_000_000);
            let args = types::SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => {}
                Err(_) => break,
            }
            self.reap();
        }
    }
}

/// The raw descriptor of a stream, for the ring.
fn raw_fd(s: &Stream) -> i32 {
    match s {
        Stream::Unix(s) => s.as_raw_fd(),
        Stream::Tcp(s) => s.as_raw_fd(),
    }
}

#[cfg(test)]
mod tests;
