//! The connection's receive side on io_uring ([`UringInput`]): requests
//! arrive without a system call per read and, most of the time, without
//! the reader sleeping.
//!
//! On the threads path the reader blocks in `recv` whenever the client has
//! not sent its next request yet; with one fio job that is nearly every
//! request, and the sleep and wake-up were 39 % of the target's CPU
//! (docs/performance.md, part 4). Here one multishot receive stays armed on
//! the socket: the kernel copies whatever the client sends into a ring of
//! provided buffers ([`RECV_BUFS`] × [`RECV_BUF_BYTES`]) and posts a
//! completion per copy, even while the reader runs. When the reader has
//! nothing left to parse it first spins on the completion ring in user
//! space — no system call per look — for at most the CPU cost of going to
//! sleep and being woken, measured on this connection
//! ([`Spin`]; a classic two-competitive choice: spinning never costs more
//! than twice the best of spinning and sleeping), and only then sleeps in
//! `io_uring_enter`.
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
//! `BufReader`, so the transmission code is one for both.

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
}

impl Input for BufReader<Stream> {
    fn buffered(&mut self) -> usize {
        self.buffer().len()
    }
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

/// The bounded spin before a sleep, sized by what a sleep costs.
///
/// A sleep's cost is the CPU time the reader spends inside a waiting
/// `io_uring_enter` (going off the CPU, being woken, coming back), read
/// from the thread's CPU clock around one wait in [`SAMPLE_EVERY`] and
/// averaged; the spin lasts that long, within [`MIN_SPIN`] and
/// [`MAX_SPIN`].
#[derive(Debug)]
pub(crate) struct Spin {
    pub ns: u64,
    sleeps: u64,
}

/// One sleep's cost is measured in this many.
const SAMPLE_EVERY: u64 = 8;
const MIN_SPIN: Duration = Duration::from_nanos(500);
const MAX_SPIN: Duration = Duration::from_micros(20);

impl Default for Spin {
    fn default() -> Spin {
        // ~4 µs per sleep on the lab's VM until measured here.
        Spin {
            ns: 4_000,
            sleeps: 0,
        }
    }
}

impl Spin {
    fn note(&mut self, cpu_ns: u64) {
        let lo = MIN_SPIN.as_nanos() as u64;
        let hi = MAX_SPIN.as_nanos() as u64;
        self.ns = ((7 * self.ns + cpu_ns) / 8).clamp(lo, hi);
    }
}

/// CPU time of the calling thread, ns.
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
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
    /// Submitted to the ring but not to the kernel yet.
    unsubmitted: bool,
    eof: bool,
    err: Option<io::Error>,
    pub(crate) spin: Spin,
    /// Kept open while the ring receives from it.
    stream: Stream,
}

impl std::fmt::Debug for UringInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringInput")
            .field("mode", &self.mode)
            .field("buffered", &self.buffered)
            .field("spin", &self.spin)
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
        let ring = IoUring::builder().build(RING_ENTRIES)?;
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
            unsubmitted: false,
            eof: false,
            err: None,
            spin: Spin::default(),
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
        self.unsubmitted = true;
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

    /// Wait until bytes, the end of the stream or an error arrive.
    fn fill(&mut self) -> io::Result<()> {
        while self.segs.is_empty() && !self.eof && self.err.is_none() {
            if !self.armed {
                self.arm()?;
            }
            if self.unsubmitted {
                self.enter(0)?;
            }
            if self.reap() > 0 {
                continue;
            }
            let until = Instant::now() + Duration::from_nanos(self.spin.ns);
            while self.ring.completion().is_empty() && Instant::now() < until {
                std::hint::spin_loop();
            }
            if self.reap() > 0 {
                continue;
            }
            self.spin.sleeps += 1;
            let sample = self.spin.sleeps.is_multiple_of(SAMPLE_EVERY);
            let t0 = if sample { thread_cpu_ns() } else { 0 };
            self.enter(1)?;
            if sample {
                self.spin.note(thread_cpu_ns().saturating_sub(t0));
            }
        }
        Ok(())
    }

    /// Submit what is queued and wait for `want` completions.
    fn enter(&mut self, want: usize) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => {
                    self.unsubmitted = false;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl Input for UringInput {
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
mod tests {
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    use super::*;

    /// A `UringInput` on one end of a socket pair whose handshake left
    /// `leftover` in the reader's buffer; the other end.
    fn input(leftover: &[u8], force: Option<Mode>) -> (UringInput, UnixStream) {
        let (a, mut b) = UnixStream::pair().unwrap();
        b.write_all(leftover).unwrap();
        let mut r = BufReader::new(Stream::Unix(a));
        if !leftover.is_empty() {
            // Fill the reader's buffer, as the handshake's reads would.
            assert_eq!(std::io::BufRead::fill_buf(&mut r).unwrap(), leftover);
        }
        (UringInput::with_mode(&r, force).unwrap(), b)
    }

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    /// The truth: every byte written, in order, through any mix of the
    /// handshake's leftover, many receives and reads that span them.
    fn reads_back_what_was_written(force: Option<Mode>) {
        // 4 MiB: four times the provided buffers, so the receive runs out
        // of buffers and is re-armed as they are read.
        let data = pattern(4 << 20);
        let (mut u, mut peer) = input(&data[..100], force);
        assert_eq!(u.buffered(), 100, "the leftover counts as received");
        let rest = data[100..].to_vec();
        let w = std::thread::spawn(move || {
            for c in rest.chunks(28 + 4096) {
                peer.write_all(c).unwrap();
            }
        });
        let mut got = vec![0u8; data.len()];
        let mut at = 0;
        while at < got.len() {
            let n = (at % 5000 + 1).min(got.len() - at);
            u.read_exact(&mut got[at..at + n]).unwrap();
            at += n;
        }
        w.join().unwrap();
        assert!(got == data, "bytes differ");
        let mut one = [0u8; 1];
        assert_eq!(
            u.read(&mut one).unwrap(),
            0,
            "end of stream after the peer closed"
        );
    }

    #[test]
    fn multishot_reads_back_what_was_written() {
        let (u, _) = input(b"", None);
        assert_eq!(u.mode, Mode::Multishot, "this kernel has multishot receive");
        reads_back_what_was_written(None);
    }

    #[test]
    fn single_shot_reads_back_what_was_written() {
        reads_back_what_was_written(Some(Mode::Single));
    }

    #[test]
    fn a_shutdown_ends_the_stream_and_a_drop_cancels_the_receive() {
        let (mut u, peer) = input(b"", None);
        let mut b = [0u8; 4];
        // Arm the receive: nothing has arrived yet.
        assert_eq!(u.buffered(), 0);
        peer.shutdown(std::net::Shutdown::Write).unwrap();
        assert_eq!(u.read(&mut b).unwrap(), 0);
        // Armed again on a live socket, then dropped: the drop waits for
        // the cancelled receive's last completion.
        let (mut u, _peer) = input(b"", None);
        u.arm().unwrap();
        u.enter(0).unwrap();
        drop(u);
    }

    #[test]
    fn the_spin_follows_the_measured_cost_of_a_sleep_within_bounds() {
        let mut s = Spin::default();
        for _ in 0..100 {
            s.note(10_000);
        }
        assert!((9_900..=10_000).contains(&s.ns), "{}", s.ns);
        for _ in 0..100 {
            s.note(1_000_000);
        }
        assert_eq!(s.ns, MAX_SPIN.as_nanos() as u64);
        for _ in 0..100 {
            s.note(0);
        }
        assert_eq!(s.ns, MIN_SPIN.as_nanos() as u64);
    }
}
