//! The latency histogram.
//!
//! A thin wrapper over the `hdrhistogram` crate (HdrHistogram, whose V2 log
//! encoding is also our interchange format), so every latency in iolab —
//! submission, completion, total, server-side — is the same type and merges
//! exactly.
//!
//! - Unit: nanoseconds. Values 0 ns .. 60 s are tracked from the start; the
//!   range grows automatically beyond that (a stalled device does not lose
//!   samples).
//! - Error bound: 3 significant decimal digits — any recorded value is
//!   reported within 0.1% of itself (1 µs ± 1 ns, 1 ms ± 1 µs). Percentiles
//!   are the highest value equivalent to the bucket holding the rank.
//! - Memory: ~225 KiB per histogram at the initial range (29 × 1024 u64
//!   counters), fixed per worker, no allocation on the record path.
//! - Merges are exact: merging histograms equals recording the union of
//!   their samples (counts add bucket by bucket).
//! - Exact extremes: besides its buckets a histogram keeps the smallest and
//!   largest value recorded into it (two compares per record; merges take
//!   the min of the mins and the max of the maxes), so `min`/`max` are the
//!   values themselves, not bucket edges (a 4,193,000 ns maximum would read
//!   4,194,303 from the bucket). The V2 encoding cannot carry them: a
//!   histogram decoded from it reports bucket edges unless its extremes are
//!   restored ([`LatHist::set_exact`]; the results carry them beside the
//!   histograms, see `stats::DirStats`).
//! - Recording per I/O: a worker records into a [`HotHist`] (the same
//!   buckets over every `u64`, flat, branch-free) and drains it into its
//!   `LatHist`s once per interval, exactly (`hist/hot.rs`).

use std::fmt;
use std::io::Cursor;

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Deserializer as SerdeDe, Serialize, Serializer as SerdeSer};

use crate::error::CoreError;

mod hot;
pub use hot::{HotHist, HOT_LEN};

/// Significant decimal digits kept by every latency histogram.
pub const SIGFIG: u8 = 3;
/// Initial highest trackable value (60 s in ns); grows on demand.
pub const INITIAL_HIGH_NS: u64 = 60_000_000_000;

/// A latency histogram in nanoseconds.
///
/// Equality compares the buckets (what the V2 encoding holds), not the
/// exact extremes.
#[derive(Clone)]
pub struct LatHist {
    h: Histogram<u64>,
    exact: Extremes,
}

impl PartialEq for LatHist {
    fn eq(&self, other: &LatHist) -> bool {
        self.h == other.h
    }
}

/// What a histogram knows of its smallest and largest recorded value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Extremes {
    /// Nothing recorded.
    Empty,
    /// Exactly these (min, max), ns.
    Exact(u64, u64),
    /// Samples whose exact extremes were lost (decoded from V2 alone, or
    /// merged with such a histogram): the buckets' edges stand in.
    Unknown,
}

impl Extremes {
    #[inline]
    fn record(&mut self, ns: u64) {
        *self = match *self {
            Extremes::Empty => Extremes::Exact(ns, ns),
            Extremes::Exact(lo, hi) => Extremes::Exact(lo.min(ns), hi.max(ns)),
            Extremes::Unknown => Extremes::Unknown,
        };
    }

    fn merge(&mut self, o: Extremes) {
        *self = match (*self, o) {
            (a, Extremes::Empty) => a,
            (Extremes::Empty, b) => b,
            (Extremes::Exact(a, b), Extremes::Exact(c, d)) => Extremes::Exact(a.min(c), b.max(d)),
            _ => Extremes::Unknown,
        };
    }
}

impl fmt::Debug for LatHist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "LatHist(n={}, min={}ns, max={}ns)",
            self.count(),
            self.min(),
            self.max()
        )
    }
}

impl Default for LatHist {
    fn default() -> Self {
        Self::new()
    }
}

impl LatHist {
    pub fn new() -> Self {
        let mut h = Histogram::new_with_bounds(1, INITIAL_HIGH_NS, SIGFIG)
            .expect("static histogram bounds are valid");
        h.auto(true);
        LatHist {
            h,
            exact: Extremes::Empty,
        }
    }

    /// A histogram decoded from its buckets alone: its extremes are unknown.
    fn decoded(mut h: Histogram<u64>) -> Self {
        h.auto(true);
        let exact = match h.is_empty() {
            true => Extremes::Empty,
            false => Extremes::Unknown,
        };
        LatHist { h, exact }
    }

    /// Record one latency in ns.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.exact.record(ns);
        // With auto-resize on, recording fails only for values past u64's
        // range of the bucket array, which no latency reaches; saturate then.
        if self.h.record(ns).is_err() {
            self.h.saturating_record(ns);
        }
    }

    /// Record `n` samples of the same value (used by synthetic tests and merges from bins).
    pub fn record_n(&mut self, ns: u64, n: u64) {
        if n > 0 {
            self.exact.record(ns);
        }
        if self.h.record_n(ns, n).is_err() {
            self.h.saturating_record(ns);
        }
    }

    /// Add `n` samples of bucket value `ns` to the buckets only (a
    /// [`HotHist`] drain; its exact extremes follow in `add_extremes`).
    fn add_bucket(&mut self, ns: u64, n: u64) {
        if self.h.record_n(ns, n).is_err() {
            self.h.saturating_record_n(ns, n);
        }
    }

    /// Widen the exact extremes by samples whose buckets were added.
    fn add_extremes(&mut self, lo: u64, hi: u64) {
        self.exact.merge(Extremes::Exact(lo, hi));
    }

    /// Add every sample of `other` (exact).
    pub fn merge(&mut self, other: &LatHist) {
        self.exact.merge(other.exact);
        self.h
            .add(&other.h)
            .expect("auto-resizing histograms always accept a merge");
    }

    pub fn reset(&mut self) {
        self.h.reset();
        self.exact = Extremes::Empty;
    }

    pub fn count(&self) -> u64 {
        self.h.len()
    }
    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }
    /// Smallest recorded value (0 when empty): exact, or the lowest value
    /// of its bucket where the extremes are unknown.
    pub fn min(&self) -> u64 {
        match self.exact {
            Extremes::Exact(lo, _) => lo,
            _ if self.is_empty() => 0,
            _ => self.h.min(),
        }
    }
    /// Largest recorded value (0 when empty): exact, or the highest value
    /// of its bucket where the extremes are unknown.
    pub fn max(&self) -> u64 {
        match self.exact {
            Extremes::Exact(_, hi) => hi,
            _ => self.h.max(),
        }
    }

    /// The exact (min, max) recorded, ns; `None` when empty or unknown.
    pub fn exact(&self) -> Option<(u64, u64)> {
        match self.exact {
            Extremes::Exact(lo, hi) => Some((lo, hi)),
            _ => None,
        }
    }

    /// Restore the exact extremes of a decoded histogram (kept beside its
    /// V2 encoding). Ignored unless they fall in the histogram's lowest
    /// and highest buckets: a pair that does not belong to these samples
    /// never replaces the buckets' edges.
    pub fn set_exact(&mut self, (lo, hi): (u64, u64)) {
        let h = &self.h;
        if !h.is_empty() && lo <= hi && h.equivalent(lo, h.min()) && h.equivalent(hi, h.max()) {
            self.exact = Extremes::Exact(lo, hi);
        }
    }
    pub fn mean(&self) -> f64 {
        self.h.mean()
    }
    pub fn stdev(&self) -> f64 {
        self.h.stdev()
    }

    /// ([`LatHist::mean`], [`LatHist::stdev`]) from one pass over the
    /// recorded buckets instead of three (HdrHistogram's `stdev` walks them
    /// twice, `mean` once, each walk every bucket up to the maximum): the
    /// same arithmetic in the same order, so the same figures to the bit.
    /// (0, 0) when empty.
    pub fn mean_stdev(&self) -> (f64, f64) {
        let total = self.h.len();
        if total == 0 {
            return (0.0, 0.0);
        }
        let buckets: Vec<(f64, f64)> = self
            .h
            .iter_recorded()
            .map(|v| {
                let value = self.h.median_equivalent(v.value_iterated_to()) as f64;
                (value, v.count_at_value() as f64)
            })
            .collect();
        let mean = buckets
            .iter()
            .fold(0.0_f64, |t, &(v, c)| t + v * c / total as f64);
        // iter_recorded yields every bucket with a count, so the count since
        // the last one is the bucket's own.
        let dev = buckets.iter().fold(0.0_f64, |t, &(v, c)| {
            let d = v - mean;
            t + (d * d) * c
        });
        (mean, (dev / total as f64).sqrt())
    }
    /// Value at percentile `p` (0..=100), in ns. 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.is_empty() {
            return 0;
        }
        self.h.value_at_percentile(p)
    }

    /// Iterate recorded buckets as `(value_ns, count)` (value = highest
    /// equivalent value of the bucket), ascending.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.h
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
    }

    /// Access to the underlying histogram (read only).
    pub fn inner(&self) -> &Histogram<u64> {
        &self.h
    }

    /// HdrHistogram V2 compressed encoding, base64 (the form HdrHistogram
    /// log files use, readable by every HdrHistogram implementation).
    pub fn to_v2_base64(&self) -> String {
        let mut buf = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.h, &mut buf)
            .expect("serialising to memory cannot fail");
        base64::engine::general_purpose::STANDARD.encode(buf)
    }

    /// Decode [`LatHist::to_v2_base64`] output (V2, compressed or not).
    pub fn from_v2_base64(s: &str) -> Result<LatHist, CoreError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(s.trim())
            .map_err(|e| CoreError::Histogram(format!("not base64: {e}")))?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut Cursor::new(bytes))
            .map_err(|e| CoreError::Histogram(format!("not an HdrHistogram V2 encoding: {e:?}")))?;
        Ok(LatHist::decoded(h))
    }
}

impl Serialize for LatHist {
    fn serialize<S: SerdeSer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_v2_base64())
    }
}

impl<'de> Deserialize<'de> for LatHist {
    fn deserialize<D: SerdeDe<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        LatHist::from_v2_base64(&s).map_err(serde::de::Error::custom)
    }
}

/// A latency histogram kept compactly: its HdrHistogram V2 deflate
/// encoding (the same bytes [`LatHist`] serialises to).
///
/// A live [`LatHist`] holds a dense counter array (~225 KiB); a time series
/// of one per interval would cost ~1.6 GB per worker-hour at 1 s. Packed,
/// an interval costs what its distinct values need (typically well under
/// 1 KiB). Packing and unpacking happen once per interval, never per I/O.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct PackedHist {
    /// Empty = an empty histogram.
    bytes: Vec<u8>,
}

impl fmt::Debug for PackedHist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PackedHist({} bytes)", self.bytes.len())
    }
}

impl PackedHist {
    pub fn pack(h: &LatHist) -> PackedHist {
        if h.is_empty() {
            return PackedHist::default();
        }
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h.h, &mut bytes)
            .expect("serialising to memory cannot fail");
        PackedHist { bytes }
    }

    pub fn unpack(&self) -> LatHist {
        if self.bytes.is_empty() {
            return LatHist::new();
        }
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut Cursor::new(&self.bytes))
            .expect("a PackedHist always holds a valid encoding");
        LatHist::decoded(h)
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Exact merge (unpacks both, merges, repacks).
    pub fn merge(&mut self, other: &PackedHist) {
        if other.is_empty() {
            return;
        }
        let mut h = self.unpack();
        h.merge(&other.unpack());
        *self = PackedHist::pack(&h);
    }

    /// From a V2 (deflate) base64 encoding, as HdrHistogram's interval
    /// logs hold them: decoded once to check it, kept as its bytes.
    pub fn from_v2_base64(s: &str) -> Result<PackedHist, CoreError> {
        let h = LatHist::from_v2_base64(s)?;
        if h.is_empty() {
            return Ok(PackedHist::default());
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(s.trim())
            .map_err(|e| CoreError::Histogram(format!("not base64: {e}")))?;
        Ok(PackedHist { bytes })
    }

    /// Encoded size in bytes.
    pub fn packed_bytes(&self) -> usize {
        self.bytes.len()
    }
}

impl Serialize for PackedHist {
    fn serialize<S: SerdeSer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Same text as LatHist: an empty histogram is encoded for real so
        // readers never see a special case.
        if self.bytes.is_empty() {
            return LatHist::new().serialize(s);
        }
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(&self.bytes))
    }
}

impl<'de> Deserialize<'de> for PackedHist {
    fn deserialize<D: SerdeDe<'de>>(d: D) -> Result<Self, D::Error> {
        let h = LatHist::deserialize(d)?;
        Ok(PackedHist::pack(&h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_percentiles_equal_union_percentiles() {
        // Two workers with different distributions; merging must equal
        // recording every sample into one histogram.
        let (mut a, mut b, mut all) = (LatHist::new(), LatHist::new(), LatHist::new());
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = if i % 2 == 0 {
                1_000 + x % 50_000
            } else {
                200_000 + x % 5_000_000
            };
            if i % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(m.count(), all.count());
        for p in [1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
            assert_eq!(m.percentile(p), all.percentile(p), "p{p}");
        }
        assert_eq!(m.min(), all.min());
        assert_eq!(m.max(), all.max());
    }

    #[test]
    fn precision_is_three_significant_digits() {
        for v in [
            1u64,
            999,
            1_234,
            56_789,
            1_234_567,
            987_654_321,
            59_000_000_000,
        ] {
            let mut h = LatHist::new();
            h.record(v);
            let got = h.percentile(50.0);
            let err = (got as f64 - v as f64).abs() / v as f64;
            assert!(err <= 0.001, "{v} reported as {got}");
        }
    }

    #[test]
    fn values_past_initial_range_are_kept() {
        let mut h = LatHist::new();
        h.record(3_600_000_000_000); // one hour
        assert_eq!(h.count(), 1);
        assert!(h.max() >= 3_600_000_000_000);
    }

    #[test]
    fn v2_round_trip_is_lossless() {
        let mut h = LatHist::new();
        for v in (1..10_000u64).map(|i| i * 37) {
            h.record(v);
        }
        let back = LatHist::from_v2_base64(&h.to_v2_base64()).unwrap();
        assert_eq!(back, h);
        let json = serde_json::to_string(&h).unwrap();
        let back2: LatHist = serde_json::from_str(&json).unwrap();
        assert_eq!(back2.percentile(99.0), h.percentile(99.0));
    }

    #[test]
    fn bad_encoding_is_an_error() {
        assert!(LatHist::from_v2_base64("not base64!").is_err());
        assert!(LatHist::from_v2_base64("AAAA").is_err());
    }

    #[test]
    fn packed_is_small_lossless_and_merges_exactly() {
        let (mut a, mut b) = (LatHist::new(), LatHist::new());
        for i in 0..10_000u64 {
            a.record(50_000 + (i * 7919) % 900_000);
            b.record(2_000_000 + (i * 104_729) % 9_000_000);
        }
        let pa = PackedHist::pack(&a);
        assert!(pa.packed_bytes() < 16 * 1024, "{} bytes", pa.packed_bytes());
        assert_eq!(pa.unpack(), a);
        let mut m = pa.clone();
        m.merge(&PackedHist::pack(&b));
        let mut all = a.clone();
        all.merge(&b);
        assert_eq!(m.unpack(), all);
        let json = serde_json::to_string(&m).unwrap();
        let back: LatHist = serde_json::from_str(&json).unwrap();
        assert_eq!(back, all);
        let empty = PackedHist::default();
        assert!(empty.unpack().is_empty());
        let back: PackedHist =
            serde_json::from_str(&serde_json::to_string(&empty).unwrap()).unwrap();
        assert!(back.unpack().is_empty());
    }

    #[test]
    fn one_pass_mean_and_stdev_are_hdrhistograms_to_the_bit() {
        let mut h = LatHist::new();
        assert_eq!(h.mean_stdev(), (0.0, 0.0));
        let mut x: u64 = 12_345;
        for _ in 0..50_000 {
            // a spread over five decades: many buckets, several sub-bucket sizes
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            h.record(1_000 + (x >> 40) % 10_000_000);
        }
        h.record_n(60_000_000_000, 3);
        let (mean, stdev) = h.mean_stdev();
        assert_eq!(mean.to_bits(), h.mean().to_bits());
        assert_eq!(stdev.to_bits(), h.stdev().to_bits());
    }

    #[test]
    fn min_and_max_are_the_values_recorded_not_bucket_edges() {
        // 4,193,000 ns sits in the bucket 4,192,256..=4,194,303: the
        // buckets alone would say max 4,194,303 (issue 21).
        let (mut a, mut b) = (LatHist::new(), LatHist::new());
        a.record(1_234_567);
        a.record(4_193_000);
        b.record_n(5_001, 3);
        b.record(2_000_001);
        assert_eq!((a.min(), a.max()), (1_234_567, 4_193_000));
        assert_eq!(a.inner().max(), 4_194_303, "the bucket edge differs");
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!((m.min(), m.max()), (5_001, 4_193_000));
        assert_eq!(m.exact(), Some((5_001, 4_193_000)));
        m.merge(&LatHist::new());
        assert_eq!(
            m.exact(),
            Some((5_001, 4_193_000)),
            "an empty merge changes nothing"
        );
        m.reset();
        assert_eq!((m.min(), m.max(), m.exact()), (0, 0, None));
    }

    #[test]
    fn decoded_extremes_are_bucket_edges_until_restored() {
        let mut h = LatHist::new();
        h.record(1_234_567);
        h.record(4_193_000);
        let mut back = LatHist::from_v2_base64(&h.to_v2_base64()).unwrap();
        assert_eq!(back, h, "the buckets round-trip");
        assert_eq!((back.exact(), back.max()), (None, 4_194_303));
        // Merging an unknown one makes the total unknown (edges), never
        // a wrong exact figure.
        let mut m = h.clone();
        m.merge(&back);
        assert_eq!(m.exact(), None);
        back.set_exact((1_200_000, 4_193_000));
        assert_eq!(
            back.exact(),
            None,
            "a min outside the lowest bucket is refused"
        );
        back.set_exact((1_234_567, 4_193_000));
        assert_eq!((back.min(), back.max()), (1_234_567, 4_193_000));
        let mut empty = LatHist::new();
        empty.set_exact((1, 2));
        assert_eq!(empty.exact(), None, "an empty histogram has no extremes");
    }
}
