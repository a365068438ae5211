//! latency_target and io_submit_mode=offload against an in-process iolab
//! target whose delay layer holds every read for a known time: the truth
//! the depth found and the rate kept are checked against.

use std::time::Duration;

use iolab_core::job::IoDir;
use iolab_engine::EngineError;

use super::nbd::{delayed, job, outcome, run_ok, serial, Target};

const MIB: u64 = 1 << 20;

/// Reads held 20 ms whatever the depth: every window meets a 1 s target,
/// so the search doubles 1, 2, 4, 8 up to iodepth, settles there, runs one
/// final window and ends the job long before its runtime. The result is
/// that final window: its I/Os ran at depth 8, ~20 ms each.
#[test]
fn latency_target_settles_at_iodepth_when_every_depth_meets_it() {
    let _g = serial();
    let t = Target::start(vec![delayed("d", 4 * MIB, Duration::from_millis(20))]);
    let j = job(
        &t.uri("d"),
        &[
            "rw=randread",
            "bs=4k",
            "iodepth=8",
            // Far above 20 ms: a loaded machine's stalls must not fail a window.
            "latency_target=1s",
            "latency_window=200ms",
            "time_based",
            "runtime=60",
        ],
    );
    let r = run_ok(vec![j]);
    let w = &r.jobs[0].workers[0];
    assert_eq!(w.latency_depth, Some(8));
    // 6 windows of 200 ms; a loaded machine may stretch them, not to 60 s.
    assert!(w.runtime_ns < 10_000_000_000, "{}", w.runtime_ns);
    let d = &w.dirs[IoDir::Read as usize];
    // The final window alone: 200 ms at 8 in flight of 20 ms is ~80 I/Os.
    let window_ios = 8 * w.runtime_ns / 20_000_000;
    assert!(
        d.ios >= 8 && d.ios <= window_ios + 8,
        "{} ios in {} ns",
        d.ios,
        w.runtime_ns
    );
    let p50 = d.lat_ns.percentile(50.0);
    assert!((20_000_000..100_000_000).contains(&p50), "p50 {p50}");
}

/// A 5 ms target under a 20 ms device: the first I/O at depth 1 misses it,
/// and with latency_percentile=100 (the default) the job ends with an
/// error saying so, the depth reported as 1.
#[test]
fn latency_target_below_the_device_latency_is_an_error_at_depth_1() {
    let _g = serial();
    let t = Target::start(vec![delayed("d", 4 * MIB, Duration::from_millis(20))]);
    let j = job(
        &t.uri("d"),
        &[
            "rw=randread",
            "bs=4k",
            "iodepth=8",
            "latency_target=5ms",
            "latency_window=100ms",
            "time_based",
            "runtime=60",
        ],
    );
    let o = outcome(vec![j]).expect("run");
    match o.error {
        Some(EngineError::LatencyTarget(m)) => assert!(m.contains("queue depth 1"), "{m}"),
        other => panic!("expected a latency_target error, got {other:?}"),
    }
    assert_eq!(o.result.jobs[0].workers[0].latency_depth, Some(1));
}

/// io_submit_mode=offload against reads held 50 ms: at rate_iops=100 the
/// schedule needs 5 I/Os in flight. With 8 submitter threads the rate
/// holds (issued I/Os = rate × runtime, the server counting the same) and
/// each I/O's latency from its intended time stays the device's 50 ms, not
/// growing as it would if the schedule slipped. With 4 threads the pool,
/// not the rate, is the bound: 4 per 50 ms, 80 per second.
#[test]
fn offload_keeps_the_rate_while_ios_are_slow_up_to_iodepth() {
    let _g = serial();
    let t = Target::start(vec![delayed("d", 4 * MIB, Duration::from_millis(50))]);
    let run = |depth: &str| {
        let j = job(
            &t.uri("d"),
            &[
                "rw=randread",
                "bs=4k",
                depth,
                "io_submit_mode=offload",
                "rate_iops=100",
                "time_based",
                "runtime=2",
            ],
        );
        run_ok(vec![j])
    };
    let r = run("iodepth=8");
    let w = &r.jobs[0].workers[0];
    let d = &w.dirs[IoDir::Read as usize];
    let want = 100.0 * w.runtime_ns as f64 / 1e9;
    // Due I/Os still in flight at the end are not counted: up to 5 short.
    assert!(
        (d.ios as f64) <= want + 1.0 && (d.ios as f64) >= want - 8.0,
        "{} ios, want {want}",
        d.ios
    );
    let p50 = d
        .lat_intended_ns
        .as_ref()
        .expect("rate-limited")
        .percentile(50.0);
    assert!(
        (50_000_000..75_000_000).contains(&p50),
        "intended p50 {p50}"
    );
    assert_eq!(t.counts("d")[0], d.ios, "the server saw the same reads");
    let r = run("iodepth=4");
    let w = &r.jobs[0].workers[0];
    let d = &w.dirs[IoDir::Read as usize];
    let bound = 80.0 * w.runtime_ns as f64 / 1e9;
    assert!(
        (d.ios as f64) <= bound + 4.0 && (d.ios as f64) >= bound * 0.85,
        "{} ios, bound {bound}",
        d.ios
    );
}
