//! Which requests a layer picks: pseudo-random by rate, or by offset.
//!
//! Layers that act on some requests only (delay tails, error injection,
//! corruption) choose them with a [`Sampler`]: the n-th choice is
//! `splitmix64(seed + n)` compared with the rate, so it is lock-free, and
//! the same seed and the same request order give the same choices (with
//! several connections the order itself varies, as it would on a device).
//! A [`Trigger`] adds a list of byte offsets: a request whose range covers
//! one of them is always picked.

use std::sync::atomic::{AtomicU64, Ordering};

/// splitmix64: a well-mixed 64-bit hash of a counter (Steele et al., 2014).
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A stream of pseudo-random choices shared by every thread.
#[derive(Debug)]
pub struct Sampler {
    seed: u64,
    n: AtomicU64,
}

impl Sampler {
    pub fn new(seed: u64) -> Sampler {
        Sampler {
            seed,
            n: AtomicU64::new(0),
        }
    }

    /// The next pseudo-random 64-bit value.
    pub fn next_u64(&self) -> u64 {
        let n = self.n.fetch_add(1, Ordering::Relaxed);
        splitmix64(
            self.seed
                .wrapping_add(n.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        )
    }

    /// True with probability `p` (0 never, 1 always).
    pub fn chance(&self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        if p >= 1.0 {
            return true;
        }
        // p × 2^64 as a threshold on a uniform u64.
        self.next_u64() < (p * 18_446_744_073_709_551_616.0) as u64
    }
}

/// Rate and offsets that pick requests.
#[derive(Debug)]
pub struct Trigger {
    /// Probability per request, 0..=1.
    pub rate: f64,
    /// Sorted byte offsets that always trigger.
    offsets: Vec<u64>,
    sampler: Sampler,
}

impl Trigger {
    pub fn new(rate: f64, mut offsets: Vec<u64>, seed: u64) -> Trigger {
        offsets.sort_unstable();
        offsets.dedup();
        Trigger {
            rate,
            offsets,
            sampler: Sampler::new(seed),
        }
    }

    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Listed offsets inside `[offset, offset+len)`, ascending.
    pub fn offsets_in(&self, offset: u64, len_bytes: u64) -> &[u64] {
        let lo = self.offsets.partition_point(|&o| o < offset);
        let hi = self
            .offsets
            .partition_point(|&o| o < offset.saturating_add(len_bytes));
        &self.offsets[lo..hi]
    }

    /// Whether this request is picked: it covers a listed offset, or the rate says so.
    pub fn fires(&self, offset: u64, len_bytes: u64) -> bool {
        !self.offsets_in(offset, len_bytes).is_empty() || self.sampler.chance(self.rate)
    }

    /// The sampler, for layers that need more random values per request.
    pub fn sampler(&self) -> &Sampler {
        &self.sampler
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chance_matches_the_rate() {
        let s = Sampler::new(42);
        let n = 200_000;
        let hits = (0..n).filter(|_| s.chance(0.01)).count();
        // Binomial(200000, 0.01): sd ≈ 44.5; 5 sd either side.
        assert!((1778..=2222).contains(&hits), "{hits}");
        assert!(!(0..1000).any(|_| s.chance(0.0)));
        assert!((0..1000).all(|_| s.chance(1.0)));
    }

    #[test]
    fn same_seed_same_choices() {
        let (a, b) = (Sampler::new(7), Sampler::new(7));
        let va: Vec<bool> = (0..1000).map(|_| a.chance(0.3)).collect();
        let vb: Vec<bool> = (0..1000).map(|_| b.chance(0.3)).collect();
        assert_eq!(va, vb);
    }

    #[test]
    fn offsets_trigger_when_covered() {
        let t = Trigger::new(0.0, vec![8192, 0, 8192, 100], 1);
        assert_eq!(t.offsets(), &[0, 100, 8192]);
        assert!(t.fires(0, 1));
        assert!(!t.fires(1, 99));
        assert!(t.fires(1, 100));
        assert_eq!(t.offsets_in(0, 8193), &[0, 100, 8192]);
        assert!(!t.fires(8193, u64::MAX));
    }
}
