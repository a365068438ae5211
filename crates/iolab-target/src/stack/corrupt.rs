//! corrupt: flip bits in data as it is read, as silent corruption would.
//!
//! Parameters:
//! - `rate` (default 0): the share of reads that come back corrupted (a
//!   fraction like 0.001 or a percentage like 0.1%);
//! - `bits` (default 1): bits flipped in a read picked by `rate`, at
//!   pseudo-random positions;
//! - `offsets` (default none): byte offsets whose lowest bit always reads
//!   flipped (in every read that covers them);
//! - `seed` (default 0): which reads and bits are picked (see `sample`).
//!
//! A rate of 0 with no offsets is refused: the layer would never act.
//! Only the data returned is changed, never the stored data, and the
//! request succeeds — the point is to check that a client's verification
//! (fio's `verify`, iolab's) notices. Writes and the rest pass through.

use std::sync::Arc;

use super::sample::Trigger;
use super::{BlockDev, BlockResult, IoCtx, Layer};

/// Corruption settings.
#[derive(Debug, Clone, PartialEq)]
pub struct CorruptParams {
    pub rate: f64,
    pub bits: u32,
    pub offsets: Vec<u64>,
    pub seed: u64,
}

/// A layer that corrupts some reads.
#[derive(Debug)]
pub struct CorruptLayer {
    next: Arc<dyn BlockDev>,
    trigger: Trigger,
    bits: u32,
}

impl CorruptLayer {
    pub fn new(next: Arc<dyn BlockDev>, p: CorruptParams) -> Result<CorruptLayer, String> {
        if !(0.0..=1.0).contains(&p.rate) {
            return Err(format!(
                "rate {} is not between 0 and 1 (or 0% and 100%)",
                p.rate
            ));
        }
        if p.rate == 0.0 && p.offsets.is_empty() {
            return Err("rate is 0 and no offsets are given: the layer would never act".into());
        }
        if p.rate > 0.0 && p.bits == 0 {
            return Err("bits is 0: reads picked by rate would not change".into());
        }
        Ok(CorruptLayer {
            next,
            trigger: Trigger::new(p.rate, p.offsets, p.seed),
            bits: p.bits,
        })
    }
}

impl Layer for CorruptLayer {
    fn next(&self) -> &Arc<dyn BlockDev> {
        &self.next
    }

    fn label(&self) -> String {
        format!(
            "corrupt(rate={}, bits={}, {} offsets)",
            self.trigger.rate,
            self.bits,
            self.trigger.offsets().len(),
        )
    }

    fn read_at(&self, ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        self.next.read_at(ctx, buf, offset)?;
        for &o in self.trigger.offsets_in(offset, buf.len() as u64) {
            buf[(o - offset) as usize] ^= 1;
        }
        let s = self.trigger.sampler();
        if !buf.is_empty() && s.chance(self.trigger.rate) {
            let nbits = buf.len() as u64 * 8;
            for _ in 0..self.bits {
                let bit = s.next_u64() % nbits;
                buf[(bit / 8) as usize] ^= 1 << (bit % 8);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::memory::MemoryDev;

    fn layer(p: CorruptParams) -> (Arc<MemoryDev>, Arc<dyn BlockDev>) {
        let dev = Arc::new(MemoryDev::new(1 << 20).unwrap());
        let l = CorruptLayer::new(dev.clone(), p).unwrap();
        (dev, Arc::new(l))
    }

    fn flipped_bits(a: &[u8], b: &[u8]) -> u32 {
        a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
    }

    #[test]
    fn offsets_flip_the_low_bit_and_storage_stays_intact() {
        let (dev, l) = layer(CorruptParams {
            rate: 0.0,
            bits: 1,
            offsets: vec![100, 5000],
            seed: 0,
        });
        let mut ctx = IoCtx::new();
        l.write_at(&mut ctx, &[0x10u8; 8192], 0, false).unwrap();
        let mut b = [0u8; 8192];
        l.read_at(&mut ctx, &mut b, 0).unwrap();
        assert_eq!((b[100], b[5000], b[101]), (0x11, 0x11, 0x10));
        let mut part = [0u8; 100];
        l.read_at(&mut ctx, &mut part, 4950).unwrap();
        assert_eq!(part[50], 0x11);
        dev.read_at(&mut ctx, &mut b, 0).unwrap();
        assert!(
            b.iter().all(|&x| x == 0x10),
            "the stored data is never changed"
        );
    }

    #[test]
    fn rate_flips_the_given_number_of_bits() {
        let (_dev, l) = layer(CorruptParams {
            rate: 1.0,
            bits: 3,
            offsets: vec![],
            seed: 9,
        });
        let mut ctx = IoCtx::new();
        for _ in 0..100 {
            let mut b = [0u8; 4096];
            l.read_at(&mut ctx, &mut b, 0).unwrap();
            let n = flipped_bits(&b, &[0u8; 4096]);
            // Two picks may hit the same bit and cancel out.
            assert!(n == 3 || n == 1, "{n}");
        }
    }

    #[test]
    fn a_layer_that_never_acts_is_refused() {
        let dev = Arc::new(MemoryDev::new(4096).unwrap());
        let p = CorruptParams {
            rate: 0.0,
            bits: 1,
            offsets: vec![],
            seed: 0,
        };
        assert!(CorruptLayer::new(dev.clone(), p.clone())
            .unwrap_err()
            .contains("never act"));
        assert!(CorruptLayer::new(
            dev,
            CorruptParams {
                rate: 0.5,
                bits: 0,
                ..p
            }
        )
        .is_err());
    }
}
