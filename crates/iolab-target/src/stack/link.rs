//! link: a wire of limited bandwidth and added latency, shared by every
//! export whose stack names it — one link per server, as a physical link
//! is (nbdkit's rate filter limits one export; this one is the cable).
//!
//! Parameters:
//! - `name` (default `link`): links of one name are one wire, whatever
//!   export's stack they sit in; the first one built gives its settings,
//!   and a later one of that name giving other settings is refused;
//! - `bw` (required): bytes per second each way, in size syntax as fio's
//!   `rate` (`1g` = 1 GiB/s, `100m` = 100 MiB/s);
//! - `lat` (default 0): added to every request's round trip.
//!
//! The wire is full duplex: READ payloads go out one after another on one
//! direction, WRITE payloads arrive one after another on the other, each
//! taking `len / bw` once the one before it on that direction is through
//! (first come, first served, in the order the requests reach the layer).
//! A READ's payload starts when the layers below have it (their hold
//! time, [`IoCtx::hold_until`]) or when the wire frees up, whichever is
//! later; its reply is due `lat` after the last byte. A WRITE's payload
//! arrives when its direction frees up; the reply is held for that
//! transfer (with its wait) plus `lat` after the layers below finish. A
//! request with no payload (flush, trim, write-zeroes) pays `lat` alone:
//! the headers (28 and 16 bytes in NBD) are not counted against `bw`.
//!
//! Like delay, the layer never sleeps: it computes each reply's due time
//! and the server holds the reply until then. The time the server
//! measures for an export includes the link's hold; a stats layer below
//! the link measures the storage alone (the server side of seed 000's
//! client/server/wire split).
//!
//! Counters, per layer (one export's traffic over the shared wire):
//! `read_bytes`, `write_bytes` (payload carried), `queue_wait_ns` (time
//! payloads waited for the wire behind others, summed).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{clock, fmt_bytes, fmt_duration, BlockDev, BlockResult, Counter, Forward, IoCtx};
use super::{Layer, Op, Req};

/// Link settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkParams {
    pub name: String,
    /// Bytes per second, each direction.
    pub bw_bytes_per_s: u64,
    /// Added to every request's round trip.
    pub lat: Duration,
}

/// One wire: when each direction is next free.
#[derive(Debug)]
pub struct Wire {
    p: LinkParams,
    free: Mutex<[Option<Instant>; 2]>,
}

const OUT: usize = 0;
const IN: usize = 1;

impl Wire {
    pub fn new(p: LinkParams) -> Result<Arc<Wire>, String> {
        if p.bw_bytes_per_s == 0 {
            return Err("must be more than 0 bytes per second".into());
        }
        Ok(Arc::new(Wire {
            p,
            free: Mutex::new([None, None]),
        }))
    }

    pub fn params(&self) -> &LinkParams {
        &self.p
    }

    /// Time to send `len` bytes at the wire's rate.
    pub fn transmit(&self, len_bytes: u64) -> Duration {
        let ns = u128::from(len_bytes) * 1_000_000_000 / u128::from(self.p.bw_bytes_per_s);
        Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// Reserve direction `dir` for `len_bytes` from `ready` on: (when the
    /// payload is through, how long it waited behind others).
    fn reserve(&self, dir: usize, ready: Instant, len_bytes: u64) -> (Instant, Duration) {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        let start = free[dir].map_or(ready, |f| f.max(ready));
        let end = start + self.transmit(len_bytes);
        free[dir] = Some(end);
        (end, start - ready)
    }
}

/// A layer sending its export's payloads over a shared [`Wire`].
#[derive(Debug)]
pub struct LinkLayer {
    next: Arc<dyn BlockDev>,
    wire: Arc<Wire>,
    read_bytes: AtomicU64,
    write_bytes: AtomicU64,
    queue_wait_ns: AtomicU64,
}

impl LinkLayer {
    pub fn new(next: Arc<dyn BlockDev>, wire: Arc<Wire>) -> LinkLayer {
        LinkLayer {
            next,
            wire,
            read_bytes: AtomicU64::new(0),
            write_bytes: AtomicU64::new(0),
            queue_wait_ns: AtomicU64::new(0),
        }
    }

    fn count(&self, bytes: &AtomicU64, len: u64, waited: Duration) {
        bytes.fetch_add(len, Ordering::Relaxed);
        let w = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
        self.queue_wait_ns.fetch_add(w, Ordering::Relaxed);
    }
}

impl Layer for LinkLayer {
    fn next(&self) -> &Arc<dyn BlockDev> {
        &self.next
    }

    fn label(&self) -> String {
        let p = self.wire.params();
        let mut s = format!("link({},bw={}/s", p.name, fmt_bytes(p.bw_bytes_per_s));
        if !p.lat.is_zero() {
            s += &format!(",lat={}", fmt_duration(p.lat));
        }
        s + ")"
    }

    fn counters(&self) -> Vec<Counter> {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        vec![
            Counter::total("read_bytes", get(&self.read_bytes)),
            Counter::total("write_bytes", get(&self.write_bytes)),
            Counter::total("queue_wait_ns", get(&self.queue_wait_ns)),
        ]
    }

    fn around(&self, ctx: &mut IoCtx, req: Req, forward: Forward<'_>) -> BlockResult {
        let lat = self.wire.params().lat;
        match req.op {
            Op::Read => {
                let r = forward(ctx);
                if r.is_ok() {
                    let now = clock::now();
                    let ready = ctx.hold_until().map_or(now, |h| h.max(now));
                    let (end, waited) = self.wire.reserve(OUT, ready, req.len_bytes);
                    self.count(&self.read_bytes, req.len_bytes, waited);
                    ctx.hold_until_at(end + lat);
                } else if !lat.is_zero() {
                    ctx.hold_for(lat);
                }
                r
            }
            Op::Write => {
                let now = clock::now();
                let (end, waited) = self.wire.reserve(IN, now, req.len_bytes);
                self.count(&self.write_bytes, req.len_bytes, waited);
                let r = forward(ctx);
                ctx.hold_for((end - now) + lat);
                r
            }
            Op::Flush | Op::Trim | Op::Zero => {
                let r = forward(ctx);
                if !lat.is_zero() {
                    ctx.hold_for(lat);
                }
                r
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! On the stack's virtual clock ([`clock::VirtualNow`]), so every hold
    //! is exact: what a loaded machine does between two calls cannot enter.
    use super::*;
    use crate::stack::clock::VirtualNow;
    use crate::stack::null::NullDev;

    fn wire(bw: u64, lat_us: u64) -> Arc<Wire> {
        Wire::new(LinkParams {
            name: "link".into(),
            bw_bytes_per_s: bw,
            lat: Duration::from_micros(lat_us),
        })
        .unwrap()
    }

    fn layer(w: &Arc<Wire>) -> Arc<dyn BlockDev> {
        Arc::new(LinkLayer::new(Arc::new(NullDev::new(1 << 30)), w.clone()))
    }

    /// Hold of one request from `t0`.
    fn held(t0: Instant, f: impl FnOnce(&mut IoCtx)) -> Duration {
        let mut ctx = IoCtx::new();
        f(&mut ctx);
        ctx.hold_until().expect("the link holds every reply") - t0
    }

    const fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn one_read_pays_its_transmit_time_plus_the_latency() {
        // 1 MiB at 1 GiB/s = 976.5625 us (976562 ns), + 200 us.
        let t0 = Instant::now();
        let _v = VirtualNow::start(t0);
        let d = layer(&wire(1 << 30, 200));
        let h = held(t0, |c| d.read_at(c, &mut vec![0u8; 1 << 20], 0).unwrap());
        assert_eq!(h, Duration::from_nanos(976_562) + us(200));
        assert_eq!(
            d.describe(),
            "link(link,bw=1 GiB/s,lat=200us) <- null(1 GiB)"
        );
    }

    #[test]
    fn n_bytes_at_b_take_n_over_b_whatever_export_sends_them() {
        // Two exports on one wire: 8 reads of 256 KiB at 100 MiB/s arriving
        // at once go out one after another; the k-th is through after
        // k x 2.5 ms, as one export's 8 would be.
        let t0 = Instant::now();
        let _v = VirtualNow::start(t0);
        let w = wire(100 << 20, 0);
        let (a, b) = (layer(&w), layer(&w));
        for k in 1..=8u64 {
            let d = if k % 2 == 0 { &a } else { &b };
            let h = held(t0, |c| d.read_at(c, &mut vec![0u8; 256 << 10], 0).unwrap());
            assert_eq!(h, us(2_500 * k), "read {k}");
        }
        let bytes = |d: &Arc<dyn BlockDev>| d.counters()[0].value;
        assert_eq!((bytes(&a), bytes(&b)), (1 << 20, 1 << 20));
        // Waits: 0 + 2.5 + ... + 17.5 ms = 70 ms, split by export.
        let waited = |d: &Arc<dyn BlockDev>| d.counters()[2].value;
        assert_eq!(waited(&a) + waited(&b), 70_000_000);
    }

    #[test]
    fn directions_are_independent_and_writes_wait_for_their_payload() {
        let t0 = Instant::now();
        let v = VirtualNow::start(t0);
        let d = layer(&wire(100 << 20, 50));
        // 1 MiB at 100 MiB/s = 10 ms each way, + 50 us.
        let r = held(t0, |c| d.read_at(c, &mut vec![0u8; 1 << 20], 0).unwrap());
        let wr = held(t0, |c| {
            d.write_at(c, &vec![0u8; 1 << 20], 0, false).unwrap()
        });
        assert_eq!(r, us(10_050));
        assert_eq!(wr, us(10_050), "a write does not queue behind a read");
        let wr2 = held(t0, |c| {
            d.write_at(c, &vec![0u8; 1 << 20], 0, false).unwrap()
        });
        assert_eq!(wr2, us(20_050), "but behind the write before it");
        v.set(t0 + us(30_000));
        let f = held(t0, |c| d.flush(c).unwrap());
        assert_eq!(f, us(30_050), "no payload: the latency alone");
    }

    #[test]
    fn a_read_starts_on_the_wire_when_the_device_has_the_data() {
        use crate::stack::delay::{DelayLayer, DelayParams};
        let t0 = Instant::now();
        let _v = VirtualNow::start(t0);
        let slow = DelayParams {
            read: Duration::from_millis(5),
            ..Default::default()
        };
        let below = Arc::new(DelayLayer::new(Arc::new(NullDev::new(1 << 20)), slow));
        let d: Arc<dyn BlockDev> = Arc::new(LinkLayer::new(below, wire(100 << 20, 100)));
        // 5 ms below + 100 KiB at 100 MiB/s (976.5625 us) + 100 us.
        let h = held(t0, |c| d.read_at(c, &mut vec![0u8; 100 << 10], 0).unwrap());
        assert_eq!(h, us(5_000) + Duration::from_nanos(976_562) + us(100));
    }
}
