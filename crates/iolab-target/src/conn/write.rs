//! Writing replies to the socket: one at a time or many in one system call.
//!
//! A reply is a header (simple reply, OFFSET_DATA or NONE chunk, or ERROR
//! chunk) and, for a successful READ, its data. [`Replier::send_all`]
//! writes a set of replies as one vectored write (headers and data, no
//! copy): the connection's reader hands it every reply it answered inline
//! since it last had to wait for the client (see `transmit`), so a burst
//! of pipelined requests costs one `writev` — one socket buffer, one
//! wake-up of the client — instead of one per request. Workers and the
//! timer send single replies through the same path.
//!
//! Just before the write — so that a client never sees a reply the target
//! has not counted yet, and a stats window bracketed by the client is
//! exact — every reply's latency (started → now, one clock read for the
//! set), and for a held reply how late after its hold time it goes out
//! (`hold_late_ns`: the truth of a delay layer's hold), is recorded in the
//! export's recorder under one lock; after it,
//! the buffers go back to the cache, pacing buffers are released, and the
//! in-flight count drops, each once per set.

use std::io::IoSlice;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use super::reply::{Done, Out, Replier};
use super::splice::Splicer;
use crate::measure::Sample;
use crate::net::write_all_vectored;
use crate::proto::chunk;
use crate::proto::reply::{chunk_header, error_chunk, offset_data_header, simple_reply};

/// Replies per vectored write (two slices each; far below `IOV_MAX`).
const REPLIES_PER_WRITE: usize = 32;

impl Replier {
    /// Answer one request now.
    pub(super) fn send(&self, mut done: Done) {
        self.send_slice(std::slice::from_mut(&mut done));
    }

    /// Answer every request in `dones` (in order) and empty it.
    pub(crate) fn send_all(&self, dones: &mut Vec<Done>) {
        self.send_slice(dones);
        dones.clear();
    }

    fn send_slice(&self, dones: &mut [Done]) {
        // Counted before the write: a spliced reply's buffer is parked by it.
        let data_bytes = dones
            .iter()
            .map(|d| d.buf.as_ref().map_or(0, |b| b.len() as u64))
            .sum();
        if !self.is_broken() {
            let mut out = self.lock_out();
            // Checked again under the lock: a sender that failed marks the
            // connection broken before it lets go, so no one writes after a
            // failed write (a failed splice may leave part of its set in the
            // pipe, which the next splice would send as its own).
            if !self.is_broken() {
                self.record(dones, Instant::now());
                let res = dones
                    .chunks_mut(REPLIES_PER_WRITE)
                    .try_for_each(|c| self.write_replies(&mut out, c));
                if res.is_err() {
                    self.mark_broken_locked(&out);
                }
            }
        }
        self.retire(dones, data_bytes);
    }

    /// Count `dones` as answered at `now`.
    fn record(&self, dones: &[Done], now: Instant) {
        let samples = dones.iter().filter_map(|d| {
            let op = d.op?;
            Some(Sample {
                op,
                bytes: d.bytes,
                ok: d.result.is_ok(),
                lat_ns: now.saturating_duration_since(d.started).as_nanos() as u64,
                hold_late_ns: d
                    .hold_until
                    .map(|t| now.saturating_duration_since(t).as_nanos() as u64),
            })
        });
        self.rec.record_all(samples);
    }

    /// After the write: buffers back to the cache (those not parked by a
    /// splice), pacing buffers released (a waiting request may run),
    /// in-flight slots freed.
    fn retire(&self, dones: &mut [Done], data_bytes: u64) {
        for d in dones.iter_mut() {
            // Released outside the cache's lock: a release may wake a waiter.
            drop(d.grant.take());
        }
        self.bufs
            .put_all(dones.iter_mut().filter_map(|d| d.buf.take()));
        self.end(dones.len(), data_bytes);
    }

    /// Write up to [`REPLIES_PER_WRITE`] replies in one vectored write, or
    /// splice them when the connection has a splicer and they carry enough
    /// data.
    fn write_replies(&self, out: &mut Out, dones: &mut [Done]) -> std::io::Result<()> {
        let Out { stream, heads, zc } = out;
        heads.clear();
        let mut ends = [(0usize, false); REPLIES_PER_WRITE];
        for (d, end) in dones.iter().zip(ends.iter_mut()) {
            let with_data = self.encode_head(d, heads);
            *end = (heads.len(), with_data);
        }
        let ends = &ends[..dones.len()];
        // Counted only where a splicer could take the set: the default
        // (`zero_copy = "off"`) path does no more per reply than before.
        if let Some(z) = zc.as_mut().filter(|z| {
            let (replies, bytes) = data_of(ends, dones);
            z.takes(replies, bytes)
        }) {
            return self.splice_replies(z, stream.as_raw_fd(), heads, ends, dones);
        }
        let mut iov = [IoSlice::new(&[]); 2 * REPLIES_PER_WRITE];
        let n = reply_parts(heads, ends, dones, |i, p| iov[i] = IoSlice::new(p));
        write_all_vectored(stream, &mut iov[..n])
    }

    /// [`Replier::write_replies`] by `vmsplice` + `splice`: the headers are
    /// copied into a buffer of their own, and it and every data buffer are
    /// parked in `z` until the client has read them.
    fn splice_replies(
        &self,
        z: &mut Splicer,
        fd: RawFd,
        heads: &[u8],
        ends: &[(usize, bool)],
        dones: &mut [Done],
    ) -> std::io::Result<()> {
        let hb = z.head_buf(heads);
        let mut parts: [&[u8]; 2 * REPLIES_PER_WRITE] = [&[]; 2 * REPLIES_PER_WRITE];
        let n = reply_parts(&hb, ends, dones, |i, p| parts[i] = p);
        let res = z.send(fd, &parts[..n]);
        // Parked even on failure: part of the set may be in the pipe.
        z.park_head(hb);
        for (d, &(_, with_data)) in dones.iter_mut().zip(ends) {
            if with_data {
                z.park(d.buf.take().expect("a reply with data has its buffer"));
            }
        }
        if res.is_ok() && z.should_reclaim() {
            self.bufs.put_all(z.reclaim(fd)?);
        }
        res
    }

    /// Append the header of `d`'s reply to `heads`; `true` when the reply
    /// carries `d`'s data after it.
    fn encode_head(&self, d: &Done, heads: &mut Vec<u8>) -> bool {
        let data: &[u8] = d.buf.as_deref().unwrap_or(&[]);
        match (&d.result, d.read_offset) {
            (Err(e), _) if self.structured => {
                heads.extend_from_slice(&error_chunk(d.cookie, e.errno, &e.msg));
                false
            }
            (Err(e), _) => {
                heads.extend_from_slice(&simple_reply(d.cookie, Some(e.errno)));
                false
            }
            (Ok(()), Some(off)) if self.structured && !data.is_empty() => {
                heads.extend_from_slice(&offset_data_header(d.cookie, off, data.len() as u32));
                true
            }
            // OFFSET_DATA must carry at least one byte: an empty read is one NONE chunk.
            (Ok(()), Some(_)) if self.structured => {
                let h = chunk_header(chunk::FLAG_DONE, chunk::TYPE_NONE, d.cookie, 0);
                heads.extend_from_slice(&h);
                false
            }
            (Ok(()), Some(_)) => {
                heads.extend_from_slice(&simple_reply(d.cookie, None));
                !data.is_empty()
            }
            (Ok(()), None) => {
                heads.extend_from_slice(&simple_reply(d.cookie, None));
                false
            }
        }
    }
}

/// The replies with data among `dones` (by `ends`, as [`reply_parts`]
/// reads it) and their data bytes.
fn data_of(ends: &[(usize, bool)], dones: &[Done]) -> (u64, u64) {
    dones
        .iter()
        .zip(ends)
        .filter(|(_, &(_, with_data))| with_data)
        .fold((0, 0), |(n, b), (d, _)| {
            (n + 1, b + d.buf.as_ref().map_or(0, |x| x.len() as u64))
        })
}

/// Give `put` each part of the replies in order — reply `i`'s header
/// (`heads` up to `ends[i].0`) and, when `ends[i].1`, its data — with its
/// index; the number of parts.
fn reply_parts<'a>(
    heads: &'a [u8],
    ends: &[(usize, bool)],
    dones: &'a [Done],
    mut put: impl FnMut(usize, &'a [u8]),
) -> usize {
    let (mut n, mut start) = (0, 0);
    for (d, &(end, with_data)) in dones.iter().zip(ends) {
        put(n, &heads[start..end]);
        n += 1;
        start = end;
        if with_data {
            put(n, d.buf.as_deref().unwrap_or(&[]));
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::buf::AlignedBuf;
    use crate::measure::Recorder;
    use crate::net::Stream;
    use crate::proto::Errno;
    use crate::stack::{BlockError, Op};

    fn replier(structured: bool, max_inflight: usize) -> (Replier, UnixStream, Arc<Recorder>) {
        let (a, b) = UnixStream::pair().unwrap();
        let rec = Arc::new(Recorder::new());
        let limits = (max_inflight, 1 << 30);
        let r = Replier::new(Stream::Unix(a), structured, rec.clone(), limits);
        (r, b, rec)
    }

    fn read_done(cookie: u64, fill: u8, started: Instant) -> Done {
        let mut buf = AlignedBuf::new(4096);
        buf.fill(fill);
        Done {
            cookie,
            op: Some(Op::Read),
            bytes: 4096,
            read_offset: Some(cookie * 4096),
            buf: Some(buf),
            grant: None,
            result: Ok(()),
            started,
            hold_until: None,
            tickets: Default::default(),
        }
    }

    #[test]
    fn a_batch_is_written_in_order_and_counted_once() {
        let (r, mut peer, rec) = replier(false, 1024);
        let started = Instant::now() - Duration::from_millis(5);
        // More than one vectored write's worth, with an error among them.
        let mut dones: Vec<Done> = (0..40).map(|c| read_done(c, c as u8, started)).collect();
        dones[7].result = Err(BlockError::new(Errno::Io, "bad sector"));
        for _ in &dones {
            assert!(r.try_begin(4096));
        }
        // Read concurrently: 40 replies may not fit in the socket buffer.
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            peer.read_to_end(&mut got).unwrap();
            got
        });
        r.send_all(&mut dones);
        assert!(dones.is_empty());
        drop(r);
        let got = reader.join().unwrap();
        let mut at = 0;
        for c in 0..40u64 {
            assert_eq!(
                &got[at..at + 16],
                &simple_reply(c, (c == 7).then_some(Errno::Io))
            );
            at += 16;
            if c != 7 {
                assert!(got[at..at + 4096].iter().all(|&x| x == c as u8));
                at += 4096;
            }
        }
        assert_eq!(at, got.len(), "nothing more than the 40 replies");
        let s = rec.snapshot(false);
        assert_eq!(
            (s.read.ios, s.read.errors, s.read.bytes),
            (40, 1, 39 * 4096)
        );
        assert!(
            s.read.lat_ns.min() >= 5_000_000,
            "latency runs from `started`"
        );
    }

    #[test]
    fn a_reply_past_its_hold_time_is_recorded_that_late() {
        // The truth: replies whose model time was 300 µs and 2 ms ago,
        // written now. Their lateness is at least that (never less: a
        // reply is never early) and at most that plus the time this test
        // takes to write them, bounded by the wall time measured around it.
        let (r, mut peer, rec) = replier(false, 8);
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            peer.read_to_end(&mut got).unwrap();
        });
        let t0 = Instant::now();
        let late = [Duration::from_micros(300), Duration::from_millis(2)];
        let mut dones: Vec<Done> = late
            .iter()
            .enumerate()
            .map(|(i, &l)| Done {
                hold_until: Some(t0 - l),
                ..read_done(i as u64, 0, t0 - l)
            })
            .collect();
        dones.push(read_done(9, 0, t0)); // not held: no lateness
        for _ in &dones {
            assert!(r.try_begin(4096));
        }
        r.send_all(&mut dones);
        let slack = t0.elapsed().as_nanos() as u64;
        drop(r);
        reader.join().unwrap();
        let ops = rec.snapshot(false);
        let f = crate::stats::Fidelity::of(&crate::stats::NamedOps {
            name: "x".into(),
            ops,
        });
        assert_eq!((f.export.as_str(), f.held), ("x", 2));
        // The histogram keeps 3 significant digits: ±0.1 %.
        let within = |got: u64, truth: u64| {
            got as f64 >= truth as f64 * 0.999 && got as f64 <= (truth + slack) as f64 * 1.001
        };
        assert!(
            within(f.late_ns_p50, 300_000),
            "{} (slack {slack})",
            f.late_ns_p50
        );
        assert!(within(f.late_ns_p99, 2_000_000), "{}", f.late_ns_p99);
        assert_eq!(f.late_ns_max, f.late_ns.max());
    }

    #[test]
    fn the_in_flight_count_drops_once_per_reply() {
        let (r, _peer, _) = replier(true, 2);
        assert!(r.try_begin(4096) && r.try_begin(4096));
        assert!(!r.try_begin(0), "a third request would exceed the limit");
        let now = Instant::now();
        r.send_all(&mut vec![read_done(1, 1, now), read_done(2, 2, now)]);
        assert!(r.try_begin(0), "both slots are free again");
    }

    #[test]
    fn structured_heads_carry_offsets_and_errors() {
        let (r, _peer, _) = replier(true, 1);
        let mut heads = Vec::new();
        let d = read_done(3, 0, Instant::now());
        assert!(r.encode_head(&d, &mut heads));
        assert_eq!(heads, offset_data_header(3, 3 * 4096, 4096));
        heads.clear();
        let e = Done {
            result: Err(BlockError::new(Errno::Inval, "no")),
            ..read_done(4, 0, Instant::now())
        };
        assert!(!r.encode_head(&e, &mut heads));
        assert_eq!(heads, error_chunk(4, Errno::Inval, "no"));
    }
}
