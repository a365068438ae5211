//! fio's latency distribution ("lat (usec): 250=44.0%, 500=55.9%, …" and
//! the JSON `latency_ns` / `latency_us` / `latency_ms` maps), computed from a
//! completion-latency histogram.
//!
//! fio buckets completion latency (clat — checked against fio 3.33 output:
//! its buckets agree with the clat percentiles, not the lat ones) of all
//! directions together into 32 ranges: below 2, 4, 10, 20, 50, 100, 250,
//! 500, 750, 1000 ns; the same in µs; below 2, 4, …, 1000, 2000 ms; and
//! 2000 ms or more. We keep counts (fio prints percentages of the total;
//! the fio-JSON exporter converts).
//!
//! Boundary rule: an HDR bucket is attributed by its lowest equivalent
//! value, so a sample counted at "≥ T" is certainly ≥ T; a sample counted
//! "< T" can exceed T by at most the histogram's 0.1% resolution. Bounds up
//! to 2048 ns, and every bound that is a multiple of its HDR bucket width
//! (e.g. 4 µs, 10 µs, 20 µs), are exact.

use serde::{Deserialize, Serialize};

use crate::hist::LatHist;

/// Exclusive upper bounds of fio's latency buckets, ns. One more bucket
/// follows with no upper bound (fio's `>=2000` ms).
#[rustfmt::skip]
pub const CLAT_DIST_BOUNDS_NS: [u64; 31] = [
    2, 4, 10, 20, 50, 100, 250, 500, 750, 1_000,
    2_000, 4_000, 10_000, 20_000, 50_000, 100_000, 250_000, 500_000, 750_000, 1_000_000,
    2_000_000, 4_000_000, 10_000_000, 20_000_000, 50_000_000, 100_000_000, 250_000_000,
    500_000_000, 750_000_000, 1_000_000_000, 2_000_000_000,
];

/// One bucket of the distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatBucket {
    /// Exclusive upper bound; `None` for the last bucket (≥ 2000 ms).
    pub below_ns: Option<u64>,
    /// Samples in `[previous bound, below_ns)`.
    pub count: u64,
}

/// The 32 buckets of `h`.
pub(super) fn clat_dist(h: &LatHist) -> Vec<LatBucket> {
    let mut counts = [0u64; 32];
    for v in h.inner().iter_recorded() {
        let low = h.inner().lowest_equivalent(v.value_iterated_to());
        let idx = CLAT_DIST_BOUNDS_NS.partition_point(|&b| b <= low);
        counts[idx] += v.count_at_value();
    }
    counts
        .iter()
        .enumerate()
        .map(|(i, &count)| LatBucket {
            below_ns: CLAT_DIST_BOUNDS_NS.get(i).copied(),
            count,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_fios() {
        assert_eq!(&CLAT_DIST_BOUNDS_NS[..3], &[2, 4, 10]);
        assert_eq!(CLAT_DIST_BOUNDS_NS[9], 1000);
        assert_eq!(CLAT_DIST_BOUNDS_NS[10], 2000);
        assert_eq!(CLAT_DIST_BOUNDS_NS[19], 1_000_000);
        assert_eq!(CLAT_DIST_BOUNDS_NS[29], 1_000_000_000);
        assert_eq!(CLAT_DIST_BOUNDS_NS[30], 2_000_000_000);
    }

    #[test]
    fn samples_land_in_fio_buckets() {
        let mut h = LatHist::new();
        h.record_n(1, 3); // < 2 ns
        h.record_n(249, 5); // [100, 250) ns
        h.record_n(250, 7); // [250, 500) ns
        h.record_n(1_999, 11); // [1000, 2000) ns = fio's "2" µs
        h.record_n(20_000, 13); // exactly 20 µs → [20, 50) µs
        h.record_n(3_000_000_000, 17); // ≥ 2000 ms
        let d = clat_dist(&h);
        assert_eq!(d.len(), 32);
        assert_eq!(d.iter().map(|b| b.count).sum::<u64>(), h.count());
        let at = |below: Option<u64>| d.iter().find(|b| b.below_ns == below).unwrap().count;
        assert_eq!(at(Some(2)), 3);
        assert_eq!(at(Some(250)), 5);
        assert_eq!(at(Some(500)), 7);
        assert_eq!(at(Some(2_000)), 11);
        assert_eq!(at(Some(50_000)), 13);
        assert_eq!(at(None), 17);
    }
}
