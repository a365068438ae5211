//! Prometheus' protobuf exposition (`io.prometheus.client.MetricFamily`,
//! length-delimited), for scrapers that ask for it: native histograms.
//!
//! A native histogram here has schema [`SCHEMA`] = 3: bucket `i` holds
//! (2^((i−1)/8), 2^(i/8)] seconds, so each is 9.05 % wide — the classic
//! layout's width, with the bounds Prometheus' schema fixes (powers of two
//! in seconds rather than in ns). Counts come from the HDR histogram as
//! the classic ones do: each HDR bucket at its highest equivalent value; a
//! 0 ns value goes to the zero bucket. The classic buckets ride along in
//! the same message, for scrapers that keep both.
//!
//! The encoder is a few lines of protobuf wire format (varints, tags,
//! length-delimited fields), enough for the messages this file writes; the
//! field numbers are those of prometheus/client_model's metrics.proto.

use std::collections::BTreeMap;

use super::{bounds_ns, cumulative_counts};
use crate::hist::LatHist;

/// The native histograms' schema: 2^3 = 8 buckets per power of two.
pub const SCHEMA: i32 = 3;
/// The zero bucket's half-width, seconds: below 1 ns (a 0 ns value).
const ZERO_THRESHOLD_S: f64 = 0.5e-9;

/// What one metric of a family holds.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Counter(f64),
    Gauge(f64),
    Histogram(&'a LatHist),
}

/// A metric family: name, help and its metrics (label pairs, value). All
/// the values of one family are of one kind.
#[derive(Debug, Clone)]
pub struct Family<'a> {
    pub name: String,
    pub help: String,
    pub metrics: Vec<(Vec<(String, String)>, Value<'a>)>,
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
    key(out, field, 0);
    varint(out, v);
}

fn sint(out: &mut Vec<u8>, field: u32, v: i64) {
    uint(out, field, ((v << 1) ^ (v >> 63)) as u64);
}

fn double(out: &mut Vec<u8>, field: u32, v: f64) {
    key(out, field, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    key(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// The native bucket index of `x` seconds (x > 0) at [`SCHEMA`].
fn index(x: f64) -> i64 {
    (x.log2() * f64::from(1 << SCHEMA)).ceil() as i64
}

/// Zero count and the non-empty native buckets `index → count`, ascending.
fn native_buckets(h: &LatHist) -> (u64, BTreeMap<i64, u64>) {
    let mut zero = 0;
    let mut m = BTreeMap::new();
    for (v, n) in h.buckets() {
        if v == 0 {
            zero += n;
        } else {
            *m.entry(index(v as f64 / 1e9)).or_insert(0) += n;
        }
    }
    (zero, m)
}

fn histogram(h: &LatHist) -> Vec<u8> {
    let mut out = Vec::new();
    uint(&mut out, 1, h.count()); // sample_count
    let sum = if h.is_empty() {
        0.0
    } else {
        h.mean() * h.count() as f64 / 1e9
    };
    double(&mut out, 2, sum); // sample_sum
    for (b, c) in bounds_ns().iter().zip(cumulative_counts(h)) {
        let mut bucket = Vec::new();
        uint(&mut bucket, 1, c); // cumulative_count
        double(&mut bucket, 2, b / 1e9); // upper_bound
        bytes(&mut out, 3, &bucket);
    }
    sint(&mut out, 5, i64::from(SCHEMA)); // schema
    double(&mut out, 6, ZERO_THRESHOLD_S); // zero_threshold
    let (zero, buckets) = native_buckets(h);
    uint(&mut out, 7, zero); // zero_count
    let (mut prev_index, mut prev_count) = (None::<i64>, 0i64);
    let mut spans: Vec<(i64, u32)> = Vec::new();
    let mut deltas = Vec::new();
    for (&i, &n) in &buckets {
        match prev_index {
            Some(p) if i == p + 1 => spans.last_mut().expect("a span is open").1 += 1,
            Some(p) => spans.push((i - p - 1, 1)),
            None => spans.push((i, 1)),
        }
        deltas.push(n as i64 - prev_count);
        prev_count = n as i64;
        prev_index = Some(i);
    }
    for (offset, length) in spans {
        let mut span = Vec::new();
        sint(&mut span, 1, offset);
        uint(&mut span, 2, u64::from(length));
        bytes(&mut out, 12, &span); // positive_span
    }
    if !deltas.is_empty() {
        let mut packed = Vec::new();
        for d in deltas {
            varint(&mut packed, ((d << 1) ^ (d >> 63)) as u64);
        }
        bytes(&mut out, 13, &packed); // positive_delta
    }
    out
}

fn metric(labels: &[(String, String)], v: Value<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, val) in labels {
        let mut pair = Vec::new();
        bytes(&mut pair, 1, k.as_bytes());
        bytes(&mut pair, 2, val.as_bytes());
        bytes(&mut out, 1, &pair);
    }
    let mut inner = Vec::new();
    match v {
        Value::Gauge(x) => {
            double(&mut inner, 1, x);
            bytes(&mut out, 2, &inner);
        }
        Value::Counter(x) => {
            double(&mut inner, 1, x);
            bytes(&mut out, 3, &inner);
        }
        Value::Histogram(h) => bytes(&mut out, 7, &histogram(h)),
    }
    out
}

/// The families as length-delimited `MetricFamily` messages (the body of
/// `application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited`).
pub fn encode_delimited(families: &[Family<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in families {
        let kind = match f.metrics.first().map(|m| m.1) {
            Some(Value::Gauge(_)) => 1,
            Some(Value::Histogram(_)) => 4,
            _ => 0, // COUNTER
        };
        let mut fam = Vec::new();
        bytes(&mut fam, 1, f.name.as_bytes());
        bytes(&mut fam, 2, f.help.as_bytes());
        uint(&mut fam, 3, kind);
        for (labels, v) in &f.metrics {
            bytes(&mut fam, 4, &metric(labels, *v));
        }
        varint(&mut out, fam.len() as u64);
        out.extend_from_slice(&fam);
    }
    out
}

/// The content type of [`encode_delimited`]'s bytes.
pub const CONTENT_TYPE: &str =
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";

/// Whether a scraper's `Accept` header asks for the protobuf exposition.
pub fn wants_protobuf(accept: &str) -> bool {
    accept.contains("application/vnd.google.protobuf")
        && accept.contains("proto=io.prometheus.client.MetricFamily")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_buckets_are_schema_3_and_hold_each_value() {
        let mut h = LatHist::new();
        h.record_n(1_000, 3); // 1 µs = 2^-19.93 s
        h.record_n(0, 2);
        let (zero, b) = native_buckets(&h);
        assert_eq!(zero, 2);
        let (&i, &n) = b.iter().next().unwrap();
        assert_eq!(n, 3);
        let hi = 2f64.powf(i as f64 / 8.0);
        let lo = 2f64.powf((i - 1) as f64 / 8.0);
        // 1000 ns as HDR's highest equivalent value (1000 at 3 digits).
        assert!(lo < 1.0e-6 && 1.0e-6 <= hi * 1.001, "{lo} {hi}");
        assert!((hi / lo - 1.0 - super::super::BUCKET_WIDTH_PCT / 100.0).abs() < 1e-12);
    }

    #[test]
    fn spans_and_deltas_follow_the_wire_format() {
        let mut h = LatHist::new();
        h.record_n(1_000, 3);
        h.record_n(1_100, 5); // the next bucket
        h.record_n(4_000, 1); // a gap, then one
        let enc = histogram(&h);
        // sample_count = 9 first.
        assert_eq!(&enc[..2], &[0x08, 9]);
        // Two spans: (first index, 2) and (gap, 1); deltas 3, +2, −4.
        let (_, b) = native_buckets(&h);
        let idx: Vec<i64> = b.keys().copied().collect();
        assert_eq!(idx[1], idx[0] + 1);
        let tail = enc.len();
        let packed = [6u8, 4, 7]; // zigzag(3)=6, zigzag(2)=4, zigzag(-4)=7
        assert_eq!(
            &enc[tail - 5..],
            &[0x6a, 3, packed[0], packed[1], packed[2]]
        );
    }

    #[test]
    fn families_are_length_delimited() {
        let f = Family {
            name: "x_total".into(),
            help: "h".into(),
            metrics: vec![(vec![("a".into(), "b".into())], Value::Counter(2.0))],
        };
        let enc = encode_delimited(&[f]);
        assert_eq!(enc[0] as usize, enc.len() - 1);
        assert!(wants_protobuf(
            "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3"
        ));
        assert!(!wants_protobuf("text/plain;version=0.0.4"));
    }
}
