//! The random map for variable block sizes: one bit per grain-sized block,
//! set once the block was done in this pass.
//!
//! Needed only when sizes vary (`bsrange`, `bssplit`, or different sizes
//! per direction): then an I/O may cover several blocks and the next one
//! drawn may already be done, which a permutation alone cannot know. It
//! costs one bit per block (32 MiB for 1 TiB in 4 KiB blocks), as fio's
//! axmap does. Hand-written because the two operations needed — set a run,
//! find the first set bit in a range, a 64-bit word at a time — are a few
//! lines, and bit-set crates either lack the ranged search or are large.

#[derive(Debug, Clone)]
pub struct Bitmap {
    words: Vec<u64>,
}

impl Bitmap {
    pub fn new(nbits: u64) -> Bitmap {
        Bitmap {
            words: vec![0; nbits.div_ceil(64) as usize],
        }
    }

    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// First set bit in `start..end`, or `end` if none.
    pub fn first_set(&self, start: u64, end: u64) -> u64 {
        let mut i = start;
        while i < end {
            let word = self.words[(i / 64) as usize] >> (i % 64);
            if word != 0 {
                return (i + u64::from(word.trailing_zeros())).min(end);
            }
            i = (i / 64 + 1) * 64;
        }
        end
    }

    /// Set bits `start..end`.
    pub fn set_range(&mut self, start: u64, end: u64) {
        let mut i = start;
        while i < end {
            let bit = i % 64;
            let take = (64 - bit).min(end - i);
            let ones = if take == 64 {
                u64::MAX
            } else {
                ((1u64 << take) - 1) << bit
            };
            self.words[(i / 64) as usize] |= ones;
            i += take;
        }
    }
}
