//! Latency histograms as Prometheus metrics that merge.
//!
//! A Prometheus summary's quantiles cannot be combined across processes,
//! hosts or time; a histogram's buckets can (`sum by (le) (rate(..))`). So
//! every `/metrics` iolab serves — the engine's (`--metrics`), the target's
//! and a fleet's live view — writes latency as a classic histogram from
//! this one module, with the same bucket bounds everywhere, so the series
//! of different processes add up.
//!
//! - Bounds: `2^(k/8)` ns for k = 40..=296, i.e. 32 ns .. ~137 s, 8 per
//!   octave: each bucket's upper bound is 2^(1/8) ≈ 1.0905 times its lower
//!   one ([`BUCKET_WIDTH_PCT`] ≈ 9.05 %), plus `+Inf`. 257 bounds; the `le`
//!   labels are seconds written by [`le_labels`] (the same text in every
//!   process, as `sum by (le)` needs).
//! - Counts: derived from the HDR histogram exactly — each recorded HDR
//!   bucket (3 significant digits) goes to the first bound at or above its
//!   highest equivalent value, the value iolab's percentiles report; counts
//!   are cumulative and so monotone, `+Inf` equals `_count`. Hence iolab's
//!   p-th percentile lies in the bucket `histogram_quantile` interpolates
//!   in: the two agree within one bucket width.
//! - `_sum` is in seconds (the HDR mean × count).
//!
//! Where a scraper asks for the protobuf exposition (Prometheus with
//! `--enable-feature=native-histograms`), [`native`] writes the same
//! families with native histograms (schema 3: the same 9.05 % width).
//!
//! Quantile summaries ([`write_summary`]) remain for users who ask for them
//! (`--metrics-summaries`), under their own family name
//! ([`summary_name`]), beside the histogram.

use std::fmt::Write as _;
use std::sync::OnceLock;

use crate::hist::LatHist;

pub mod native;

/// Buckets per doubling of latency.
pub const BUCKETS_PER_OCTAVE: u32 = 8;
/// Relative width of a bucket, percent: (2^(1/8) − 1) × 100.
pub const BUCKET_WIDTH_PCT: f64 = 9.050_773_266_525_765;
/// First and last bound as powers of two (ns): 32 ns and 2^37 ns ≈ 137 s.
const FIRST_POW2: u32 = 5;
const LAST_POW2: u32 = 37;
/// Quantiles of the optional summaries.
pub const SUMMARY_QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

struct Bounds {
    ns: Vec<f64>,
    le: Vec<String>,
}

fn bounds() -> &'static Bounds {
    static B: OnceLock<Bounds> = OnceLock::new();
    B.get_or_init(|| {
        let ks = FIRST_POW2 * BUCKETS_PER_OCTAVE..=LAST_POW2 * BUCKETS_PER_OCTAVE;
        let ns: Vec<f64> = ks
            .map(|k| 2f64.powf(f64::from(k) / f64::from(BUCKETS_PER_OCTAVE)))
            .collect();
        let le = ns.iter().map(|b| format!("{:e}", b / 1e9)).collect();
        Bounds { ns, le }
    })
}

/// The finite upper bounds, ns, ascending.
pub fn bounds_ns() -> &'static [f64] {
    &bounds().ns
}

/// The `le` label of each finite bound (seconds), as every iolab process
/// writes it.
pub fn le_labels() -> &'static [String] {
    &bounds().le
}

/// Cumulative counts at each finite bound of [`bounds_ns`]; the `+Inf`
/// bucket is `h.count()`.
pub fn cumulative_counts(h: &LatHist) -> Vec<u64> {
    let b = bounds_ns();
    let mut per = vec![0u64; b.len()];
    let mut i = 0;
    for (v, n) in h.buckets() {
        while i < b.len() && v as f64 > b[i] {
            i += 1;
        }
        if i == b.len() {
            break; // above the last bound: only in +Inf
        }
        per[i] += n;
    }
    let mut acc = 0;
    for c in &mut per {
        acc += *c;
        *c = acc;
    }
    per
}

/// A label value escaped for the text format.
pub fn label_value(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// `k="v",…` (no trailing comma) from pairs.
pub fn labels_text(labels: &[(&str, &str)]) -> String {
    let parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", label_value(v)))
        .collect();
    parts.join(",")
}

/// `# HELP` and `# TYPE` lines.
pub fn write_head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn sum_seconds(h: &LatHist) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.mean() * h.count() as f64 / 1e9
    }
}

fn with(labels: &str, extra: &str) -> String {
    if labels.is_empty() {
        extra.to_string()
    } else {
        format!("{labels},{extra}")
    }
}

/// One histogram series (`labels` as [`labels_text`] writes them): its
/// buckets, `_sum` (s) and `_count`. The family head is the caller's.
pub fn write_histogram(out: &mut String, name: &str, labels: &str, h: &LatHist) {
    for (le, c) in le_labels().iter().zip(cumulative_counts(h)) {
        let _ = writeln!(
            out,
            "{name}_bucket{{{}}} {c}",
            with(labels, &format!("le=\"{le}\""))
        );
    }
    let n = h.count();
    let _ = writeln!(out, "{name}_bucket{{{}}} {n}", with(labels, "le=\"+Inf\""));
    let _ = writeln!(out, "{name}_sum{{{labels}}} {}", sum_seconds(h));
    let _ = writeln!(out, "{name}_count{{{labels}}} {n}");
}

/// The summary family's name beside histogram `name`:
/// `x_seconds` → `x_summary_seconds`.
pub fn summary_name(name: &str) -> String {
    match name.strip_suffix("_seconds") {
        Some(base) => format!("{base}_summary_seconds"),
        None => format!("{name}_summary"),
    }
}

/// One summary series: quantiles of [`SUMMARY_QUANTILES`] (s; NaN when
/// empty), `_sum` (s) and `_count`. Not mergeable: only when asked for.
pub fn write_summary(out: &mut String, name: &str, labels: &str, h: &LatHist) {
    for q in SUMMARY_QUANTILES {
        let v = if h.is_empty() {
            f64::NAN
        } else {
            h.percentile(q * 100.0) as f64 / 1e9
        };
        let _ = writeln!(
            out,
            "{name}{{{}}} {v}",
            with(labels, &format!("quantile=\"{q}\""))
        );
    }
    let _ = writeln!(out, "{name}_sum{{{labels}}} {}", sum_seconds(h));
    let _ = writeln!(out, "{name}_count{{{labels}}} {}", h.count());
}

/// A latency family: the histogram of every series, and when `summaries`
/// the quantile summary family beside it.
pub fn write_latency_family(
    out: &mut String,
    name: &str,
    help: &str,
    series: &[(String, &LatHist)],
    summaries: bool,
) {
    write_head(out, name, "histogram", help);
    for (labels, h) in series {
        write_histogram(out, name, labels, h);
    }
    if summaries {
        let sname = summary_name(name);
        let shelp = format!("{help} Quantiles of the same histogram (not mergeable).");
        write_head(out, &sname, "summary", &shelp);
        for (labels, h) in series {
            write_summary(out, &sname, labels, h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_log_spaced_by_the_stated_width() {
        let b = bounds_ns();
        assert_eq!(b.len(), 257);
        assert!((b[0] - 32.0).abs() < 1e-9);
        for w in b.windows(2) {
            let pct = (w[1] / w[0] - 1.0) * 100.0;
            assert!((pct - BUCKET_WIDTH_PCT).abs() < 1e-9, "{pct}");
        }
        assert_eq!(le_labels()[8], "6.4e-8");
    }

    #[test]
    fn counts_are_cumulative_and_put_each_value_under_its_bound() {
        let mut h = LatHist::new();
        h.record_n(1_000, 10); // 1 µs: bound 2^(80/8)=1024 ns
        h.record_n(1_100, 5); // 1.1 µs: above 1024, under 2^(81/8)≈1116.7
        h.record(10); // below the first bound
        h.record(300_000_000_000); // above the last: +Inf only
        let c = cumulative_counts(&h);
        let i1024 = bounds_ns().iter().position(|&b| b == 1024.0).unwrap();
        assert_eq!(c[0], 1);
        assert_eq!(c[i1024 - 1], 1);
        assert_eq!(c[i1024], 11);
        assert_eq!(c[i1024 + 1], 16);
        assert_eq!(*c.last().unwrap(), 16);
        assert!(c.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(h.count(), 17);
    }

    #[test]
    fn the_text_has_buckets_sum_count_and_summaries_only_when_asked() {
        let mut h = LatHist::new();
        h.record_n(2_000, 4);
        let series = [(labels_text(&[("job", "a\"b")]), &h)];
        let mut out = String::new();
        write_latency_family(&mut out, "x_seconds", "Latency.", &series, false);
        assert!(out.contains("# TYPE x_seconds histogram"));
        assert!(out.contains("x_seconds_bucket{job=\"a\\\"b\",le=\"+Inf\"} 4\n"));
        assert!(out.contains("x_seconds_count{job=\"a\\\"b\"} 4\n"));
        assert!(!out.contains("quantile"));
        let mut out = String::new();
        write_latency_family(&mut out, "x_seconds", "Latency.", &series, true);
        assert!(out.contains("# TYPE x_summary_seconds summary"));
        assert!(out.contains("x_summary_seconds{job=\"a\\\"b\",quantile=\"0.99\"} 0.000002"));
    }
}
