//! inject: fail chosen requests with `NBD_EIO`, as a failing device would.
//!
//! Parameters:
//! - `rate` (default 0): the share of requests that fail (a fraction like
//!   0.001 or a percentage like 0.1%);
//! - `offsets` (default none): byte offsets; a request whose range covers
//!   one of them always fails (flush has no range and only obeys `rate`);
//! - `ops` (default read and write): which operations may fail, any of
//!   read, write, flush, trim, zero;
//! - `seed` (default 0): which requests the rate picks (see `sample`).
//!
//! A rate of 0 with no offsets is refused: the layer would never act.
//! A failed request never reaches the layers below (the data is not read
//! or written), and its reply carries a message naming this layer, so a
//! client can tell an injected error from a real one.

use std::sync::Arc;

use super::sample::Trigger;
use super::{BlockDev, BlockError, BlockResult, Forward, IoCtx, Layer, Op, Req};
use crate::proto::Errno;

/// Error injection settings.
#[derive(Debug, Clone, PartialEq)]
pub struct InjectParams {
    pub rate: f64,
    pub offsets: Vec<u64>,
    pub ops: Vec<Op>,
    pub seed: u64,
}

impl InjectParams {
    /// Check that the layer can act at all.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.rate) {
            return Err(format!(
                "rate {} is not between 0 and 1 (or 0% and 100%)",
                self.rate
            ));
        }
        if self.rate == 0.0 && self.offsets.is_empty() {
            return Err("rate is 0 and no offsets are given: the layer would never act".into());
        }
        if self.ops.is_empty() {
            return Err("ops is empty: the layer would never act".into());
        }
        Ok(())
    }
}

/// A layer that fails chosen requests.
#[derive(Debug)]
pub struct InjectLayer {
    next: Arc<dyn BlockDev>,
    trigger: Trigger,
    ops: [bool; 5],
    p: InjectParams,
}

impl InjectLayer {
    pub fn new(next: Arc<dyn BlockDev>, p: InjectParams) -> Result<InjectLayer, String> {
        p.validate()?;
        let mut ops = [false; 5];
        for o in &p.ops {
            ops[o.index()] = true;
        }
        let trigger = Trigger::new(p.rate, p.offsets.clone(), p.seed);
        Ok(InjectLayer {
            next,
            trigger,
            ops,
            p,
        })
    }

    /// `Err` when this request is picked to fail.
    fn check(&self, op: Op, offset: u64, len_bytes: u64) -> BlockResult {
        if !self.ops[op.index()] {
            return Ok(());
        }
        let fires = if op == Op::Flush {
            self.trigger.sampler().chance(self.trigger.rate)
        } else {
            self.trigger.fires(offset, len_bytes)
        };
        if fires {
            let at = if op == Op::Flush {
                String::new()
            } else {
                format!(" at offset {offset}")
            };
            return Err(BlockError::new(
                Errno::Io,
                format!("injected error (inject layer): {}{at}", op.name()),
            ));
        }
        Ok(())
    }
}

impl Layer for InjectLayer {
    fn next(&self) -> &Arc<dyn BlockDev> {
        &self.next
    }

    fn label(&self) -> String {
        let ops: Vec<&str> = self.p.ops.iter().map(|o| o.name()).collect();
        format!(
            "inject(rate={}, {} offsets, ops={})",
            self.p.rate,
            self.p.offsets.len(),
            ops.join(":"),
        )
    }

    fn around(&self, ctx: &mut IoCtx, req: Req, forward: Forward<'_>) -> BlockResult {
        self.check(req.op, req.offset, req.len_bytes)?;
        forward(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::memory::MemoryDev;

    fn layer(rate: f64, offsets: Vec<u64>, ops: Vec<Op>) -> Result<Arc<dyn BlockDev>, String> {
        let dev = Arc::new(MemoryDev::new(1 << 20).unwrap());
        InjectLayer::new(
            dev,
            InjectParams {
                rate,
                offsets,
                ops,
                seed: 3,
            },
        )
        .map(|l| Arc::new(l) as Arc<dyn BlockDev>)
    }

    #[test]
    fn offsets_fail_covering_requests_only_for_chosen_ops() {
        let l = layer(0.0, vec![4096], vec![Op::Read]).unwrap();
        let mut ctx = IoCtx::new();
        let mut b = [0u8; 512];
        let e = l.read_at(&mut ctx, &mut b, 4096).unwrap_err();
        assert_eq!(e.errno, Errno::Io);
        assert!(
            e.msg.contains("injected") && e.msg.contains("4096"),
            "{}",
            e.msg
        );
        l.read_at(&mut ctx, &mut b, 4096 + 512).unwrap();
        l.read_at(&mut ctx, &mut b, 4096 - 512).unwrap();
        l.write_at(&mut ctx, &b, 4096, false).unwrap();
    }

    #[test]
    fn rate_fails_about_that_share() {
        let l = layer(0.1, vec![], vec![Op::Write]).unwrap();
        let mut ctx = IoCtx::new();
        let fails = (0..10_000)
            .filter(|_| l.write_at(&mut ctx, &[1u8; 16], 0, false).is_err())
            .count();
        // Binomial(10000, 0.1): sd = 30; 5 sd either side.
        assert!((850..=1150).contains(&fails), "{fails}");
        assert!(l.flush(&mut ctx).is_ok());
    }

    #[test]
    fn a_layer_that_never_acts_is_refused() {
        assert!(layer(0.0, vec![], vec![Op::Read])
            .unwrap_err()
            .contains("never act"));
        assert!(layer(0.5, vec![], vec![]).unwrap_err().contains("ops"));
        assert!(layer(1.5, vec![], vec![Op::Read]).is_err());
    }
}
