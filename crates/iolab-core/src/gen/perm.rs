//! Keyed permutations of block indices, in O(1) per step and O(1) memory.
//!
//! The random map of fio is a bitmap of the blocks already done. For a
//! fixed block size we need no bitmap at all: a pass walks a random
//! *permutation* of `0..n`, so every block comes exactly once. The
//! permutation is a keyed bijection `mix` of the `k`-bit integers, with
//! `2^(k-1) < n <= 2^k`, applied to a counter `0, 1, 2, …`; outputs `>= n`
//! are skipped. Since `n > 2^k / 2`, that costs under two `mix` calls per
//! block on average, with no division and no memory per block.
//!
//! `mix` is three rounds of (xor a key, multiply by an odd constant,
//! xor-shift right by about k/2), all modulo `2^k`. Each step is a
//! bijection of `k`-bit integers, so the whole is one. It is not a
//! cipher, and need not be: it must only spread consecutive counters over
//! the region so that the access pattern is random to a device. A new key
//! gives a new permutation, one per pass.
//!
//! Written here rather than taken from a crate: the crates that do keyed
//! index permutations (Feistel networks over SipHash and the like) cost
//! several times more per step, and this is about 20 lines.

use super::rng::mix64;

/// Odd multipliers from splitmix64/murmur3: good avalanche in few rounds.
const MULS: [u64; 3] = [
    0xbf58_476d_1ce4_e5b9,
    0x94d0_49bb_1331_11eb,
    0xff51_afd7_ed55_8ccd,
];

/// A keyed bijection of `0..2^k`.
#[derive(Debug, Clone)]
pub struct KeyedMix {
    mask: u64,
    shift: u32,
    keys: [u64; 3],
}

impl KeyedMix {
    /// A bijection over the smallest power-of-two domain holding `0..n` (`n >= 1`).
    pub fn new(n: u64, key: u64) -> KeyedMix {
        // Block counts are bytes / block size, far below 2^62.
        debug_assert!(n <= 1 << 62);
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(1);
        let mask = (1u64 << bits) - 1;
        let mut m = KeyedMix {
            mask,
            shift: (bits / 2).max(1),
            keys: [0; 3],
        };
        m.rekey(key);
        m
    }

    pub fn rekey(&mut self, key: u64) {
        for (i, k) in self.keys.iter_mut().enumerate() {
            *k = mix64(key ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)) & self.mask;
        }
    }

    #[inline]
    pub fn apply(&self, mut x: u64) -> u64 {
        for (k, m) in self.keys.iter().zip(MULS) {
            x = ((x ^ k).wrapping_mul(m)) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }

    /// The bijection restricted to `0..n` by cycle walking (`x < n`).
    #[inline]
    pub fn scatter(&self, x: u64, n: u64) -> u64 {
        let mut y = self.apply(x);
        while y >= n {
            y = self.apply(y);
        }
        y
    }

    /// Size of the power-of-two domain.
    pub fn domain(&self) -> u64 {
        self.mask + 1
    }
}

/// One pass over `0..n` in a random order.
#[derive(Debug, Clone)]
pub struct BlockPerm {
    mix: KeyedMix,
    n: u64,
    counter: u64,
}

impl BlockPerm {
    pub fn new(n: u64, key: u64) -> BlockPerm {
        BlockPerm {
            mix: KeyedMix::new(n, key),
            n,
            counter: 0,
        }
    }

    /// Start a new pass with a new order.
    pub fn restart(&mut self, key: u64) {
        self.mix.rekey(key);
        self.counter = 0;
    }

    /// The next block of this pass; `None` once all `n` were given.
    #[inline]
    pub fn next_block(&mut self) -> Option<u64> {
        let domain = self.mix.domain();
        while self.counter < domain {
            let y = self.mix.apply(self.counter);
            self.counter += 1;
            if y < self.n {
                return Some(y);
            }
        }
        None
    }
}
