//! delay: fixed and tail latency, like SPDK's delay bdev.
//!
//! Parameters (durations take a unit: `ns`, `us`, `ms`, `s`):
//! - `read` (default 0): added to every READ;
//! - `write` (default 0): added to every WRITE, WRITE_ZEROES and TRIM;
//! - `flush` (default 0): added to every FLUSH;
//! - `read_tail`, `write_tail` (default none): the delay a `tail_rate`
//!   share of reads (writes) gets *instead of* `read` (`write`) — SPDK's
//!   "p99 latency" with the default rate;
//! - `tail_rate` (default 1%): the share of requests given the tail delay
//!   (a fraction like 0.01 or a percentage like 1%);
//! - `seed` (default 0): which requests get the tail (see `sample`).
//!
//! The delay counts from when the layers below have finished (SPDK adds
//! its delay on completion too), and the request is not held on a thread:
//! the layer pushes the request's hold time ([`IoCtx::hold_for`]) and the
//! server sends the reply when it is due. Other requests, on this
//! connection or any other, go on meanwhile — a 1 ms device at queue depth
//! 32 completes 32 requests per millisecond, as the real one would.

use std::sync::Arc;
use std::time::Duration;

use super::sample::Sampler;
use super::{fmt_duration, BlockDev, BlockResult, Forward, IoCtx, Layer, Op, Req};

/// Delay settings.
#[derive(Debug, Clone, PartialEq)]
pub struct DelayParams {
    pub read: Duration,
    pub write: Duration,
    pub flush: Duration,
    pub read_tail: Option<Duration>,
    pub write_tail: Option<Duration>,
    /// 0..=1.
    pub tail_rate: f64,
    pub seed: u64,
}

impl Default for DelayParams {
    fn default() -> Self {
        DelayParams {
            read: Duration::ZERO,
            write: Duration::ZERO,
            flush: Duration::ZERO,
            read_tail: None,
            write_tail: None,
            tail_rate: 0.01,
            seed: 0,
        }
    }
}

/// A layer that holds replies for a while.
#[derive(Debug)]
pub struct DelayLayer {
    next: Arc<dyn BlockDev>,
    p: DelayParams,
    read_tails: Sampler,
    write_tails: Sampler,
}

impl DelayLayer {
    pub fn new(next: Arc<dyn BlockDev>, p: DelayParams) -> DelayLayer {
        let (rs, ws) = (Sampler::new(p.seed), Sampler::new(p.seed ^ 0x5757_5757));
        DelayLayer {
            next,
            p,
            read_tails: rs,
            write_tails: ws,
        }
    }

    fn pick(&self, base: Duration, tail: Option<Duration>, s: &Sampler) -> Duration {
        match tail {
            Some(t) if s.chance(self.p.tail_rate) => t,
            _ => base,
        }
    }
}

impl Layer for DelayLayer {
    fn next(&self) -> &Arc<dyn BlockDev> {
        &self.next
    }

    fn label(&self) -> String {
        let p = &self.p;
        let mut parts = Vec::new();
        for (k, v) in [("read", p.read), ("write", p.write), ("flush", p.flush)] {
            if !v.is_zero() {
                parts.push(format!("{k}={}", fmt_duration(v)));
            }
        }
        for (k, v) in [("read_tail", p.read_tail), ("write_tail", p.write_tail)] {
            if let Some(v) = v {
                parts.push(format!("{k}={}@{}%", fmt_duration(v), p.tail_rate * 100.0));
            }
        }
        format!("delay({})", parts.join(","))
    }

    fn around(&self, ctx: &mut IoCtx, req: Req, forward: Forward<'_>) -> BlockResult {
        let r = forward(ctx);
        let d = match req.op {
            Op::Read => self.pick(self.p.read, self.p.read_tail, &self.read_tails),
            Op::Flush => self.p.flush,
            Op::Write | Op::Trim | Op::Zero => {
                self.pick(self.p.write, self.p.write_tail, &self.write_tails)
            }
        };
        if !d.is_zero() {
            ctx.hold_for(d);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::null::NullDev;
    use crate::stack::ZeroReq;
    use std::time::Instant;

    fn held_for(f: impl FnOnce(&mut IoCtx)) -> Duration {
        let mut ctx = IoCtx::new();
        let t0 = Instant::now();
        f(&mut ctx);
        ctx.hold_until().map_or(Duration::ZERO, |t| t - t0)
    }

    #[test]
    fn delays_by_op_without_sleeping() {
        let p = DelayParams {
            read: Duration::from_millis(3),
            write: Duration::from_millis(5),
            ..Default::default()
        };
        let d: Arc<dyn BlockDev> = Arc::new(DelayLayer::new(Arc::new(NullDev::new(1 << 20)), p));
        let t0 = Instant::now();
        let r = held_for(|c| d.read_at(c, &mut [0u8; 512], 0).unwrap());
        let w = held_for(|c| d.write_at(c, &[0u8; 512], 0, false).unwrap());
        let z = held_for(|c| {
            d.zero(
                c,
                ZeroReq {
                    offset: 0,
                    len_bytes: 512,
                    may_trim: true,
                    fua: false,
                },
            )
            .unwrap()
        });
        let f = held_for(|c| d.flush(c).unwrap());
        assert!(
            t0.elapsed() < Duration::from_millis(3),
            "the layer must not sleep"
        );
        let ms = Duration::from_millis;
        assert!(r >= ms(3) && r < ms(4), "{r:?}");
        assert!(w >= ms(5) && w < ms(6) && z >= ms(5), "{w:?} {z:?}");
        assert_eq!(f, Duration::ZERO);
        assert_eq!(d.describe(), "delay(read=3ms,write=5ms) <- null(1 MiB)");
    }

    #[test]
    fn tail_share_matches_the_rate() {
        let p = DelayParams {
            read: Duration::from_micros(100),
            read_tail: Some(Duration::from_millis(10)),
            tail_rate: 0.05,
            ..Default::default()
        };
        let d: Arc<dyn BlockDev> = Arc::new(DelayLayer::new(Arc::new(NullDev::new(4096)), p));
        let n = 20_000;
        let tails = (0..n)
            .filter(|_| {
                held_for(|c| d.read_at(c, &mut [0u8; 1], 0).unwrap()) >= Duration::from_millis(10)
            })
            .count();
        // Binomial(20000, 0.05): sd ≈ 31; 5 sd either side.
        assert!((845..=1155).contains(&tails), "{tails}");
    }

    #[test]
    fn stacked_delays_add_up() {
        let one = DelayParams {
            read: Duration::from_millis(1),
            ..Default::default()
        };
        let inner = Arc::new(DelayLayer::new(Arc::new(NullDev::new(4096)), one.clone()));
        let outer: Arc<dyn BlockDev> = Arc::new(DelayLayer::new(inner, one));
        let h = held_for(|c| outer.read_at(c, &mut [0u8; 1], 0).unwrap());
        assert!(
            h >= Duration::from_millis(2) && h < Duration::from_millis(3),
            "{h:?}"
        );
    }
}
