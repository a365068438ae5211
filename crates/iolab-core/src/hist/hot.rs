//! [`HotHist`]: the per-I/O side of a latency histogram.
//!
//! A worker records two or three latencies per I/O; through HdrHistogram's
//! `record` each is a bounds check, an auto-resize check, a saturating add,
//! a min/max update and a total-count update, with `Result`s in between
//! (~5–8 ns, several branches). `HotHist` keeps the same buckets as a
//! [`LatHist`] (3 significant digits, unit 1 ns) over the *whole* `u64`
//! range in one flat counter array, so a record is branch-free: a
//! leading-zero count, a shift, one counter increment and two
//! conditional moves for the exact extremes. Its counters are folded into
//! a [`LatHist`] off the hot path ([`HotHist::drain_into`], once per
//! interval), exactly: the fold records each bucket's count at a value of
//! that bucket, so the result equals recording every sample directly
//! (tested).
//!
//! - Memory: 56,320 `u64` counters (440 KiB) of virtual memory, allocated
//!   zeroed, so only the pages of buckets actually hit become resident
//!   (latencies within two decades touch a few pages).
//! - A drain walks only the counters between the smallest and largest
//!   value recorded since the last drain.

use super::LatHist;

/// Sub-buckets per bucket for 3 significant digits (HdrHistogram's
/// `sub_bucket_count` = 2^ceil(log2(2 × 10^3))).
const SUB_BUCKET_HALF_MAG: u32 = 10;
const SUB_BUCKET_HALF: u64 = 1 << SUB_BUCKET_HALF_MAG;
const SUB_BUCKET_MASK: u64 = (2 << SUB_BUCKET_HALF_MAG) - 1;
/// HdrHistogram's `leading_zero_count_base` for unit magnitude 0.
const LZ_BASE: u32 = 64 - SUB_BUCKET_HALF_MAG - 1;
/// Counters for every `u64`: buckets 0..=53, each half a sub-bucket range
/// above the first.
pub const HOT_LEN: usize =
    ((LZ_BASE as usize + 1) << SUB_BUCKET_HALF_MAG) + SUB_BUCKET_HALF as usize;

/// Index of `ns`'s bucket (HdrHistogram's `index_for`, unit magnitude 0).
#[inline(always)]
fn index_for(ns: u64) -> usize {
    let bucket = LZ_BASE - (ns | SUB_BUCKET_MASK).leading_zeros();
    let sub = ns >> bucket;
    (((bucket as u64 + 1) << SUB_BUCKET_HALF_MAG) + sub - SUB_BUCKET_HALF) as usize
}

/// The lowest value of bucket `index` (inverse of [`index_for`]).
fn value_for(index: usize) -> u64 {
    let i = index as u64;
    let mut bucket = (i >> SUB_BUCKET_HALF_MAG) as i64 - 1;
    let mut sub = (i & (SUB_BUCKET_HALF - 1)) + SUB_BUCKET_HALF;
    if bucket < 0 {
        sub -= SUB_BUCKET_HALF;
        bucket = 0;
    }
    sub << bucket
}

/// Latency counters a worker records into per I/O; see the module doc.
pub struct HotHist {
    counts: Box<[u64]>,
    /// Smallest and largest value since the last drain (`u64::MAX`, 0
    /// when none).
    min: u64,
    max: u64,
}

impl std::fmt::Debug for HotHist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HotHist(min={}ns, max={}ns)", self.min, self.max)
    }
}

impl Default for HotHist {
    fn default() -> Self {
        Self::new()
    }
}

impl HotHist {
    pub fn new() -> HotHist {
        HotHist {
            // Zeroed allocation: pages never hit stay unmapped.
            counts: vec![0u64; HOT_LEN].into_boxed_slice(),
            min: u64::MAX,
            max: 0,
        }
    }

    /// Record one latency in ns. No branch, no bounds check: every `u64`
    /// has a counter.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        let i = index_for(ns);
        debug_assert!(i < HOT_LEN);
        // Safety: index_for(u64::MAX) = HOT_LEN - 1 and index_for is
        // monotone, so every index is inside `counts` (HOT_LEN long).
        unsafe { *self.counts.get_unchecked_mut(i) += 1 };
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    /// Record `n` (≥ 1) samples of the same value.
    #[inline(always)]
    pub fn record_n(&mut self, ns: u64, n: u64) {
        let i = index_for(ns);
        // Safety: as in `record`.
        unsafe { *self.counts.get_unchecked_mut(i) += n };
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    pub fn is_empty(&self) -> bool {
        self.max < self.min
    }

    /// Add every sample recorded since the last drain to each of `into`
    /// and forget them here.
    pub fn drain_into(&mut self, into: &mut [&mut LatHist]) {
        if self.is_empty() {
            return;
        }
        let (lo, hi) = (index_for(self.min), index_for(self.max));
        for (i, c) in self.counts[lo..=hi].iter_mut().enumerate() {
            if *c > 0 {
                let v = value_for(lo + i);
                for h in into.iter_mut() {
                    h.add_bucket(v, *c);
                }
                *c = 0;
            }
        }
        for h in into.iter_mut() {
            h.add_extremes(self.min, self.max);
        }
        (self.min, self.max) = (u64::MAX, 0);
    }

    /// Forget everything recorded.
    pub fn reset(&mut self) {
        if !self.is_empty() {
            let (lo, hi) = (index_for(self.min), index_for(self.max));
            self.counts[lo..=hi].fill(0);
        }
        (self.min, self.max) = (u64::MAX, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread() -> Vec<u64> {
        let mut v = vec![0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 4_193_000];
        v.extend([
            59_999_999_999,
            60_000_000_000,
            3_600_000_000_000,
            u64::MAX / 3,
        ]);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.push(x >> (x % 50));
        }
        v
    }

    #[test]
    fn index_matches_hdrhistogram_buckets() {
        let h = LatHist::new();
        for &v in spread().iter().filter(|&&v| v < 1 << 40) {
            let lo = value_for(index_for(v));
            assert!(lo <= v && h.inner().equivalent(lo, v), "{v} -> {lo}");
            assert_eq!(index_for(lo), index_for(v));
        }
        assert_eq!(index_for(u64::MAX), HOT_LEN - 1);
    }

    #[test]
    fn drained_equals_recorded_directly() {
        let (mut hot, mut direct) = (HotHist::new(), LatHist::new());
        let (mut a, mut b) = (LatHist::new(), LatHist::new());
        for (i, v) in spread().into_iter().enumerate() {
            hot.record(v);
            direct.record(v);
            if i % 40_000 == 0 {
                hot.drain_into(&mut [&mut a, &mut b]);
            }
        }
        hot.record_n(5_001, 3);
        direct.record_n(5_001, 3);
        hot.drain_into(&mut [&mut a, &mut b]);
        assert!(hot.is_empty());
        for h in [&a, &b] {
            assert_eq!(*h, direct);
            assert_eq!(h.count(), direct.count());
            assert_eq!(h.exact(), direct.exact());
            for p in [1.0, 50.0, 99.0, 99.99, 100.0] {
                assert_eq!(h.percentile(p), direct.percentile(p), "p{p}");
            }
        }
        hot.record(7);
        hot.reset();
        hot.drain_into(&mut [&mut a]);
        assert_eq!(a.count(), direct.count(), "a reset drops what was recorded");
    }
}
