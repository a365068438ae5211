//! Tests of rate control (`iolab_core::rate`): mean rate, linear spacing,
//! Poisson inter-arrival statistics, per-direction limits.

use iolab_core::job::{
    BsSpec, CpusAllowedPolicy, IoDir, IoEngine, JobSpec, Pattern, PreparedJob, RandomDistribution,
    RateProcess, RwMix, SyncMode,
};
use iolab_core::rate::RateLimiter;

const K: u64 = 1024;

/// A job with fio's defaults and no rate limit.
fn job() -> PreparedJob {
    PreparedJob {
        name: "t".into(),
        filenames: vec!["/tmp/x".into()],
        shared_files: true,
        directory: None,
        size: Some(1 << 20),
        offset: 0,
        rw: RwMix {
            pattern: Pattern::Random,
            read_pct: 50,
        },
        bs: [BsSpec::Fixed(4 * K), BsSpec::Fixed(4 * K)],
        blockalign: [0, 0],
        iodepth: 1,
        iodepth_batch_submit: 1,
        iodepth_batch_complete_min: 1,
        iodepth_batch_complete_max: 1,
        numjobs: 1,
        runtime_ns: None,
        time_based: false,
        ramp_time_ns: 0,
        startdelay_ns: 0,
        loops: 1,
        direct: false,
        sync: SyncMode::None,
        fsync: 0,
        fdatasync: 0,
        end_fsync: false,
        ioengine: IoEngine::Null,
        rate_bytes_per_s: [None, None],
        rate_iops: [None, None],
        rate_process: RateProcess::Linear,
        thinktime_ns: 0,
        cpus_allowed: None,
        cpus_allowed_policy: CpusAllowedPolicy::Shared,
        randseed: 7,
        randrepeat: true,
        norandommap: false,
        random_distribution: RandomDistribution::Uniform,
        percentile_list: Vec::new(),
        group_reporting: false,
        stonewall: false,
        spec: JobSpec::new("t"),
        warnings: Vec::new(),
    }
}

fn limited(iops: [Option<u64>; 2], bytes: [Option<u64>; 2], process: RateProcess) -> RateLimiter {
    let j = PreparedJob {
        rate_iops: iops,
        rate_bytes_per_s: bytes,
        rate_process: process,
        ..job()
    };
    RateLimiter::new(&j, 42).expect("rate limited")
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
    assert!(RateLimiter::new(&job(), 1).is_none());
    let zero = PreparedJob {
        rate_iops: [Some(0), None],
        ..job()
    };
    assert!(
        RateLimiter::new(&zero, 1).is_none(),
        "0 means no limit, as in fio"
    );
}

#[test]
fn linear_iops_is_evenly_spaced_from_zero() {
    let mut r = limited([Some(3), None], [None, None], RateProcess::Linear);
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
    let mut r = limited(
        [None, None],
        [Some(100 * 1024 * 1024), None],
        RateProcess::Linear,
    );
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
    // 512-byte I/Os to 1000/s by the I/O count.
    let mut r = limited(
        [Some(1000), None],
        [Some(1024 * 1024), None],
        RateProcess::Linear,
    );
    let big = ios_per_s(&dues(&mut r, IoDir::Read, 4 * K, 1000));
    assert!((big - 256.0).abs() < 0.01, "{big}");
    let mut r = limited(
        [Some(1000), None],
        [Some(1024 * 1024), None],
        RateProcess::Linear,
    );
    let small = ios_per_s(&dues(&mut r, IoDir::Read, 512, 1000));
    assert!((small - 1000.0).abs() < 0.01, "{small}");
}

#[test]
fn directions_have_their_own_schedules() {
    let mut r = limited([Some(700), Some(300)], [None, None], RateProcess::Linear);
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
    let mut r = limited([Some(100), None], [None, None], RateProcess::Linear);
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
    let mut r = limited([Some(5000), None], [None, None], RateProcess::Poisson);
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
    let j = PreparedJob {
        rate_iops: [Some(100), None],
        rate_process: RateProcess::Poisson,
        ..job()
    };
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
        let mut r = limited([None, Some(iops)], [None, None], RateProcess::Linear);
        let rate = ios_per_s(&dues(&mut r, IoDir::Write, 4 * K, 100_000));
        assert!((rate / iops as f64 - 1.0).abs() < 0.01, "{iops}: {rate}");
    }
}
