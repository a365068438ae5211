//! What write buffers hold (fio's buffer options): random bytes (the
//! default), zeros, or `buffer_pattern`; optionally a compressible share
//! per chunk (`buffer_compress_percentage`/`_chunk`), repeated blocks
//! (`dedupe_percentage`), fresh content per write (`refill_buffers`) or a
//! cheap per-write stamp (`scramble_buffers`, fio's default).
//!
//! The buffers are filled once at start; per write, only what the options
//! ask for is done, so the default costs one 16-byte stamp per 512 bytes.

use iolab_core::job::DataOptions;

use super::buffers::fill_incompressible;
use super::dedupe::Dedupe;

/// Sector size of the scramble stamp.
const SCRAMBLE_EVERY: usize = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PerWrite {
    /// The buffer as filled at start.
    Keep,
    /// Stamp offset and a counter into every sector.
    Scramble,
    /// Fresh content from a new (or, for dedupe, a repeated) seed.
    Refill,
}

#[derive(Debug)]
pub struct Content {
    zero: bool,
    pattern: Option<Vec<u8>>,
    compress_pct: u32,
    chunk: usize,
    /// `dedupe_percentage` and its mode: which page each write carries.
    dedupe: Option<Dedupe>,
    per_write: PerWrite,
    rng: u64,
    counter: u64,
}

impl Content {
    pub fn new(d: &DataOptions, seed: u64) -> Content {
        let fresh = d.refill_buffers || d.compress_pct > 0 || d.dedupe_pct > 0;
        let random = d.buffer_pattern.is_none() && !d.zero_buffers;
        let per_write = if fresh {
            PerWrite::Refill
        } else if d.scramble_buffers && random {
            PerWrite::Scramble
        } else {
            PerWrite::Keep
        };
        Content {
            zero: d.zero_buffers,
            pattern: d.buffer_pattern.clone(),
            compress_pct: d.compress_pct,
            chunk: d.compress_chunk.max(1) as usize,
            dedupe: None,
            per_write,
            rng: seed | 1,
            counter: 0,
        }
    }

    /// Decide duplicates as `dedupe` says (set when dedupe_percentage is).
    pub fn set_dedupe(&mut self, dedupe: Option<Dedupe>) {
        self.dedupe = dedupe;
    }

    /// A pseudo-random u64 (xorshift64*; the buffers' own stream).
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// True when the start fill differs from the random bytes buffers are
    /// allocated with.
    pub fn changes_initial(&self) -> bool {
        self.zero || self.pattern.is_some() || self.compress_pct > 0
    }

    /// Fill a buffer at start.
    pub fn initial(&mut self, buf: &mut [u8]) {
        let seed = self.next_u64();
        self.fill(seed, buf);
    }

    fn fill(&self, seed: u64, buf: &mut [u8]) {
        if let Some(p) = &self.pattern {
            buf.iter_mut()
                .enumerate()
                .for_each(|(i, b)| *b = p[i % p.len()]);
        } else if self.zero {
            buf.fill(0);
        } else {
            fill_incompressible(seed, buf);
        }
        if self.compress_pct == 0 || (self.zero && self.pattern.is_none()) {
            return;
        }
        // Each chunk: random bytes, then compress_pct % of zeros (or the pattern).
        let random = self.chunk * (100 - self.compress_pct as usize) / 100;
        let mut seed = seed;
        for (i, c) in buf.chunks_mut(self.chunk).enumerate() {
            seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let r = random.min(c.len());
            fill_incompressible(seed, &mut c[..r]);
            match &self.pattern {
                Some(p) => c[r..]
                    .iter_mut()
                    .enumerate()
                    .for_each(|(j, b)| *b = p[(i * self.chunk + r + j) % p.len()]),
                None => c[r..].fill(0),
            }
        }
    }

    /// Make `buf` what the write at `offset` carries.
    #[inline]
    pub fn before_write(&mut self, buf: &mut [u8], offset: u64) {
        match self.per_write {
            PerWrite::Keep => {}
            PerWrite::Scramble => {
                self.counter += 1;
                for s in buf.chunks_mut(SCRAMBLE_EVERY) {
                    let n = s.len().min(16);
                    let mut stamp = [0u8; 16];
                    stamp[..8].copy_from_slice(&offset.to_le_bytes());
                    stamp[8..].copy_from_slice(&self.counter.to_le_bytes());
                    s[..n].copy_from_slice(&stamp[..n]);
                }
            }
            PerWrite::Refill => {
                let seed = if self.dedupe.is_some() {
                    let (r1, r2) = (self.next_u64(), self.next_u64());
                    let d = self.dedupe.as_mut().expect("checked just above");
                    d.next_seed(r1, r2)
                } else {
                    self.next_u64() | 1
                };
                self.fill(seed, buf);
            }
        }
    }
}
