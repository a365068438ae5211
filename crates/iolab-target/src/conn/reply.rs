//! Sending replies: from any thread, in completion order, possibly held.
//!
//! A [`Replier`] is shared by a connection's reader, its workers and its
//! timer. Whoever finishes a request hands the [`Done`] to
//! [`Replier::complete`]: if a delay layer set a hold time still in the
//! future, the reply goes to the connection's timer thread (started with
//! the connection, with 1 ns timer slack so holds end on time); otherwise it is
//! written at once. The reader, which runs requests on fast stacks inline,
//! instead collects the replies it can give without waiting and writes them
//! together ([`Replier::send_all`]). Writes are serialised by one lock on
//! the socket; how a reply is written, counted and retired is in `write`.
//!
//! The replier also counts requests in flight, so the reader can cap them
//! ([`Replier::begin`]) and wait for all of them before closing.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::Shutdown;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use std::os::fd::AsRawFd;

use super::splice::Splicer;
use crate::buf::{AlignedBuf, BufCache};
use crate::measure::Recorder;
use crate::net::Stream;
use crate::pacing::Grant;
use crate::stack::ticket::{Due, Tickets};
use crate::stack::{BlockError, Op};

/// A request ready to be answered.
#[derive(Debug)]
pub(crate) struct Done {
    pub cookie: u64,
    /// The op it counts under (`None`: an unknown command, not counted).
    pub op: Option<Op>,
    /// Bytes moved when successful.
    pub bytes: u64,
    /// `Some(offset)` for a READ (its reply carries data).
    pub read_offset: Option<u64>,
    pub buf: Option<AlignedBuf>,
    /// Pacing buffers, given back once the reply is written (dropped).
    pub grant: Option<Grant>,
    pub result: Result<(), BlockError>,
    /// Start of the server-side latency.
    pub started: Instant,
    pub hold_until: Option<Instant>,
    /// Completions a device decides later (sim-hdd's NCQ); see `stack::ticket`.
    pub tickets: Tickets,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What [`Replier::begin`] and [`Replier::wait_idle`] wait on.
#[derive(Debug, Default)]
struct InFlight {
    requests: usize,
    bytes: u64,
    waiters: usize,
}

/// The socket, scratch space for reply headers, and the zero-copy sender
/// when there is one (used under its lock).
#[derive(Debug)]
pub(super) struct Out {
    pub stream: Stream,
    pub heads: Vec<u8>,
    pub zc: Option<Splicer>,
}

impl Drop for Out {
    fn drop(&mut self) {
        if let Some(z) = self.zc.take() {
            z.retire(self.stream.as_raw_fd());
        }
    }
}

/// The sending side of one connection.
#[derive(Debug)]
pub(crate) struct Replier {
    out: Mutex<Out>,
    pub(super) structured: bool,
    broken: AtomicBool,
    /// Requests and data bytes in flight, and threads waiting on `idle`.
    inflight: Mutex<InFlight>,
    limits: (usize, u64),
    idle: Condvar,
    pub bufs: BufCache,
    pub(super) rec: Arc<Recorder>,
    timer: OnceLock<Timer>,
}

impl Replier {
    /// `limits`: at most this many requests and data bytes in flight.
    pub fn new(out: Stream, structured: bool, rec: Arc<Recorder>, limits: (usize, u64)) -> Replier {
        Replier {
            out: Mutex::new(Out {
                stream: out,
                heads: Vec::with_capacity(1024),
                zc: None,
            }),
            structured,
            broken: AtomicBool::new(false),
            inflight: Mutex::new(InFlight::default()),
            limits,
            idle: Condvar::new(),
            bufs: BufCache::default(),
            rec,
            timer: OnceLock::new(),
        }
    }

    /// Send reply data through `zc` (see `conn/splice.rs`).
    pub fn with_splicer(self, zc: Option<Splicer>) -> Replier {
        self.out.lock().unwrap_or_else(PoisonError::into_inner).zc = zc;
        self
    }

    /// Take a slot for one more request carrying `data_bytes`, waiting
    /// while the limits are reached (a request is always let in when
    /// nothing else is in flight, however large).
    pub fn begin(&self, data_bytes: u64) {
        let mut f = lock(&self.inflight);
        while self.is_full(&f, data_bytes) {
            f = self.wait(f);
        }
        f.requests += 1;
        f.bytes += data_bytes;
    }

    /// [`Replier::begin`] if it would not wait; `false` (no slot taken) if it would.
    pub fn try_begin(&self, data_bytes: u64) -> bool {
        let mut f = lock(&self.inflight);
        if self.is_full(&f, data_bytes) {
            return false;
        }
        f.requests += 1;
        f.bytes += data_bytes;
        true
    }

    fn is_full(&self, f: &InFlight, data_bytes: u64) -> bool {
        let (max_n, max_bytes) = self.limits;
        f.requests > 0 && (f.requests >= max_n || f.bytes + data_bytes > max_bytes)
    }

    /// `requests` carrying `data_bytes` in all have been answered.
    pub(super) fn end(&self, requests: usize, data_bytes: u64) {
        let mut f = lock(&self.inflight);
        f.requests -= requests;
        f.bytes -= data_bytes;
        // std's futex condvar makes a wake syscall on every notify, waiters
        // or not; at one notify per reply that was a syscall per request.
        if f.waiters > 0 {
            self.idle.notify_all();
        }
    }

    /// Wait on `idle`, counted so that `end` knows whether to notify.
    fn wait<'a>(&self, mut f: MutexGuard<'a, InFlight>) -> MutexGuard<'a, InFlight> {
        f.waiters += 1;
        let mut f = self.idle.wait(f).unwrap_or_else(PoisonError::into_inner);
        f.waiters -= 1;
        f
    }

    /// Give up a slot taken by [`Replier::begin`] without replying (the
    /// client vanished before its request was complete).
    pub fn abandon(&self, buf: Option<AlignedBuf>) {
        let n = buf.as_ref().map_or(0, |b| b.len() as u64);
        self.bufs.put_all(buf);
        self.end(1, n);
    }

    /// Wait until every request has been answered.
    pub fn wait_idle(&self) {
        let mut f = lock(&self.inflight);
        while f.requests > 0 {
            f = self.wait(f);
        }
    }

    /// Whether writing to the client has failed (it went away).
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }

    /// Answer `done` now, or when its hold time comes.
    pub fn complete(&self, done: Done) {
        if let Some(due) = self.hold(done) {
            self.send(due);
        }
    }

    /// Give `done` to the timer when its hold time is still to come;
    /// otherwise hand it back, due now (the caller sends it).
    pub fn hold(&self, mut done: Done) -> Option<Done> {
        settle_tickets(&mut done, Instant::now());
        match done.hold_until {
            Some(t) if t > Instant::now() => {
                let timer = self
                    .timer
                    .get()
                    .expect("the timer starts with the connection");
                timer.push(done);
                None
            }
            _ => Some(done),
        }
    }

    /// Start the timer thread (under `SCHED_FIFO` with `realtime`); call
    /// once, before the first request.
    pub fn start_timer(self: &Arc<Self>, conn_id: u64, realtime: bool) -> std::io::Result<()> {
        let t = Timer::start(self.clone(), conn_id, realtime)?;
        self.timer
            .set(t)
            .map_err(|_| std::io::Error::other("timer started twice"))
    }

    /// Stop the timer thread (after [`Replier::wait_idle`]).
    pub fn close(&self) {
        if let Some(t) = self.timer.get() {
            t.close();
        }
    }

    pub(super) fn lock_out(&self) -> MutexGuard<'_, Out> {
        lock(&self.out)
    }

    /// The client is gone: stop writing, and wake the reader. Called by
    /// the holder of the writing side (`out`), so that no other sender
    /// writes between a failed write and this.
    pub(super) fn mark_broken_locked(&self, out: &Out) {
        self.broken.store(true, Ordering::Relaxed);
        let _ = out.stream.shutdown(Shutdown::Both);
    }
}

/// Poll `d`'s completion tickets: its hold time becomes their decided
/// completion, or the instant to ask again. `true` once all are decided.
fn settle_tickets(d: &mut Done, now: Instant) -> bool {
    if d.tickets.is_settled() {
        return true;
    }
    match d.tickets.poll(d.hold_until, now) {
        Due::At(t) => {
            d.hold_until = Some(t);
            true
        }
        Due::Recheck(t) => {
            d.hold_until = Some(t.max(now));
            false
        }
    }
}

/// A reply waiting for its hold time; ordered by (time, arrival).
#[derive(Debug)]
struct Held(Instant, u64, Done);

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.0, self.1) == (o.0, o.1)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(o.0, o.1))
    }
}

#[derive(Debug, Default)]
struct TimerState {
    heap: BinaryHeap<Reverse<Held>>,
    seq: u64,
    closing: bool,
}

/// One thread per connection that sends held replies when they are due.
#[derive(Debug)]
struct Timer {
    state: Arc<(Mutex<TimerState>, Condvar)>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Timer {
    fn start(r: Arc<Replier>, conn_id: u64, realtime: bool) -> std::io::Result<Timer> {
        let state: Arc<(Mutex<TimerState>, Condvar)> = Arc::default();
        let s = state.clone();
        let (tuned_tx, tuned_rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(format!("nbd-{conn_id}-timer"))
            .spawn(move || {
                let tuned = super::sched::tune_current(realtime);
                let ok = tuned.is_ok();
                let _ = tuned_tx.send(tuned);
                if ok {
                    timer_loop(&s, &r)
                }
            })?;
        // The thread's scheduling is part of the connection's set-up: a
        // refusal ends the connection with the reason, never silently.
        let tuned = tuned_rx
            .recv()
            .unwrap_or_else(|_| Err(std::io::Error::other("the reply timer did not start")));
        if let Err(e) = tuned {
            let _ = thread.join();
            return Err(std::io::Error::new(e.kind(), format!("reply timer: {e}")));
        }
        Ok(Timer {
            state,
            thread: Mutex::new(Some(thread)),
        })
    }

    fn push(&self, d: Done) {
        let (m, cv) = &*self.state;
        let mut st = lock(m);
        let t = d.hold_until.expect("only held replies reach the timer");
        st.seq += 1;
        let seq = st.seq;
        st.heap.push(Reverse(Held(t, seq, d)));
        cv.notify_one();
    }

    fn close(&self) {
        let (m, cv) = &*self.state;
        lock(m).closing = true;
        cv.notify_one();
        if let Some(h) = lock(&self.thread).take() {
            let _ = h.join();
        }
    }
}

/// Longest the timer wakes ahead of a hold's end to spin the rest.
const MAX_LEAD_NS: u64 = 200_000;

/// Send held replies when due.
///
/// A thread woken by a timed wait comes back some tens of µs late on a
/// busy or virtual machine, which would add that much to every delay. So
/// the timer learns how late its wake-ups are (a running average), wakes
/// that much early, and waits out the last stretch: holds end within a few
/// µs, and no thread busy-waits for a whole hold. That stretch is spun when
/// one reply is held and yielded when several are: at deep queues held
/// replies are due every few tens of µs, so a spinning timer would keep one
/// CPU busy and push the connection's reader and the client off it — on 2
/// CPUs that showed as wire latency growing 30 → 330 µs from QD 1 to 32;
/// yielding keeps it at 30–50 µs. A lone hold is spun because a yield on a
/// busy machine may give the CPU away for a whole time slice (a 1 ms hold
/// came out 6 % long that way).
fn timer_loop(state: &(Mutex<TimerState>, Condvar), r: &Replier) {
    let (m, cv) = state;
    let mut lead_ns: u64 = 20_000;
    let mut st = lock(m);
    loop {
        let Some(t) = st.heap.peek().map(|Reverse(h)| h.0) else {
            if st.closing {
                return;
            }
            st = cv.wait(st).unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        let now = Instant::now();
        let lead = Duration::from_nanos(lead_ns);
        if t <= now {
            let Reverse(Held(_, _, mut d)) = st.heap.pop().expect("peeked");
            // A completion still undecided, or decided for later: wait again.
            if !settle_tickets(&mut d, now) || d.hold_until.is_some_and(|h| h > now) {
                st.seq += 1;
                let (h, seq) = (d.hold_until.expect("set by settle_tickets"), st.seq);
                st.heap.push(Reverse(Held(h, seq, d)));
                continue;
            }
            drop(st);
            r.send(d);
            st = lock(m);
        } else if t - now <= lead {
            // One hold: spin (holds are sparse, the spin costs little and a
            // yield could hand the CPU away for a whole time slice). Several:
            // holds end every few µs, so spinning would keep the CPU busy —
            // yield it to a runnable reader or client meanwhile.
            let dense = st.heap.len() > 1;
            drop(st);
            while Instant::now() < t {
                if dense {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
            st = lock(m);
        } else {
            let wake_at = t - lead;
            let (g, res) = cv
                .wait_timeout(st, wake_at - now)
                .unwrap_or_else(PoisonError::into_inner);
            st = g;
            if res.timed_out() {
                let late_ns = Instant::now().saturating_duration_since(wake_at).as_nanos() as u64;
                lead_ns = ((7 * lead_ns + late_ns) / 8).clamp(1_000, MAX_LEAD_NS);
            }
        }
    }
}
