//! Tests of rate control (`iolab_core::rate`): mean rate, linear spacing,
//! Poisson inter-arrival statistics, per-direction limits.

use iolab_core::job::{IoDir, JobSpec, PreparedJob};
use iolab_core::rate::RateLimiter;

const K: u64 = 1024;

/// A job of fio's defaults with `opts` on top (no rate limit unless given).
fn job(opts: &[&str]) -> PreparedJob {
    JobSpec::new("t")
        .args(["filename=/tmp/x", "size=1m", "rw=randrw", "ioengine=null"])
        .args(opts.iter().copied())
        .prepare()
        .unwrap_or_else(|e| panic!("{opts:?}: {e}"))
}

/// The limiter of a job with the rate options `opts`.
fn limited(opts: &[&str]) -> RateLimiter {
    RateLimiter::new(&job(opts), 42).expect("rate limited")
}

/// Due times of `n` I/Os of `bytes` each in `dir`.
fn dues(r: &mut RateLimiter, dir: IoDir, bytes: u64, n: usize) -> Vec<u64> {
    (0..n).map(|_| r.next_due_ns(dir, bytes)).collect()
}

/// Mean rate per second implied by a schedule of `n` equal I/Os.
fn ios_per_s(d: &[u64]) -> f64 {
    (d.len() - 1) as f64 / (d[d.len() - 1] - d[0]) as f64 * 1e9
}

#[test]
fn no_limit_means_no_limiter() {
    assert!(RateLimiter::new(&job(&[]), 1).is_none());
    assert!(
        RateLimiter::new(&job(&["rate_iops=0,0"]), 1).is_none(),
        "0 means no limit, as in fio"
    );
    // Built directly, a zero limit still means none.
    let zero = PreparedJob {
        rate_iops: [Some(0), None],
        ..job(&[])
    };
    assert!(RateLimiter::new(&zero, 1).is_none());
}

#[test]
fn linear_iops_is_evenly_spaced_from_zero() {
    let mut r = limited(&["rate_iops=3,"]);
    let d = dues(&mut r, IoDir::Read, 4 * K, 10_000);
    assert_eq!(d[0], 0, "the first I/O is due at the start");
    for (i, w) in d.windows(2).enumerate() {
        let gap = w[1] - w[0];
        assert!(gap.abs_diff(333_333_333) <= 1, "gap {i}: {gap} ns");
    }
    // No drift from rounding: I/O k is due at k/3 s.
    let exact = (9_999.0 * 1e9 / 3.0_f64).round() as u64;
    assert!(d[9_999].abs_diff(exact) <= 1, "{} vs {exact}", d[9_999]);
}

#[test]
fn linear_bytes_rate_follows_the_io_size() {
    let mut r = limited(&["rate=100m,"]);
    let mut bytes = 0u64;
    let mut last = 0;
    for i in 0..100_000u64 {
        let len = 4 * K * (1 + i % 16); // 4k..64k
        last = r.next_due_ns(IoDir::Read, len);
        assert_eq!(
            last,
            (bytes as f64 * 1e9 / (100.0 * 1024.0 * 1024.0)).round() as u64
        );
        bytes += len;
    }
    assert!(last > 0);
}

#[test]
fn stricter_of_rate_and_rate_iops_applies() {
    // 1000 IOPS and 1 MiB/s: 4 KiB I/Os are held to 256/s by bytes,
    // 512-byte I/Os to 1000/s by the I/O count. Set directly: the options
    // refuse rate with rate_iops (as fio does), but the limiter takes both.
    let both = PreparedJob {
        rate_iops: [Some(1000), None],
        rate_bytes_per_s: [Some(1024 * 1024), None],
        ..job(&[])
    };
    let mut r = RateLimiter::new(&both, 42).unwrap();
    let big = ios_per_s(&dues(&mut r, IoDir::Read, 4 * K, 1000));
    assert!((big - 256.0).abs() < 0.01, "{big}");
    let mut r = RateLimiter::new(&both, 42).unwrap();
    let small = ios_per_s(&dues(&mut r, IoDir::Read, 512, 1000));
    assert!((small - 1000.0).abs() < 0.01, "{small}");
}

#[test]
fn directions_have_their_own_schedules() {
    let mut r = limited(&["rate_iops=700,300"]);
    assert!(r.is_limited(IoDir::Read) && r.is_limited(IoDir::Write));
    let reads = ios_per_s(&dues(&mut r, IoDir::Read, 4 * K, 7000));
    let writes = ios_per_s(&dues(&mut r, IoDir::Write, 4 * K, 3000));
    assert!(
        (reads - 700.0).abs() < 0.01 && (writes - 300.0).abs() < 0.01,
        "{reads} {writes}"
    );
}

#[test]
fn unlimited_direction_is_due_at_once() {
    let mut r = limited(&["rate_iops=100,"]);
    assert!(!r.is_limited(IoDir::Write));
    r.next_due_ns(IoDir::Read, 4 * K);
    assert_eq!(dues(&mut r, IoDir::Write, 4 * K, 100), vec![0; 100]);
    assert_eq!(
        r.next_due_ns(IoDir::Read, 4 * K),
        10_000_000,
        "writes do not move the read schedule"
    );
}

#[test]
fn poisson_mean_rate_within_one_percent_and_cv_near_one() {
    let mut r = limited(&["rate_iops=5000,", "rate_process=poisson"]);
    let d = dues(&mut r, IoDir::Read, 4 * K, 1_000_000);
    let rate = ios_per_s(&d);
    assert!((rate / 5000.0 - 1.0).abs() < 0.01, "mean rate {rate}");
    let gaps: Vec<f64> = d.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
    let cv = var.sqrt() / mean;
    assert!((cv - 1.0).abs() < 0.02, "coefficient of variation {cv}");
    // Exponential: P(gap > mean) = 1/e.
    let above = gaps.iter().filter(|&&g| g > mean).count() as f64 / gaps.len() as f64;
    assert!(
        (above - (-1f64).exp()).abs() < 0.01,
        "share above the mean {above}"
    );
}

#[test]
fn poisson_repeats_with_the_seed_and_differs_between_seeds() {
    let j = job(&["rate_iops=100,", "rate_process=poisson"]);
    let run = |seed| {
        dues(
            &mut RateLimiter::new(&j, seed).unwrap(),
            IoDir::Read,
            4 * K,
            100,
        )
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}

#[test]
fn linear_mean_rate_within_one_percent_for_many_rates() {
    for iops in [1, 7, 1000, 123_456, 3_000_000] {
        let mut r = limited(&[&format!("rate_iops=,{iops}")]);
        let rate = ios_per_s(&dues(&mut r, IoDir::Write, 4 * K, 100_000));
        assert!((rate / iops as f64 - 1.0).abs() < 0.01, "{iops}: {rate}");
    }
}
