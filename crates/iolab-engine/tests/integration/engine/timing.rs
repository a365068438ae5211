//! Time: runtime after ramp (fio: ramp_time comes on top of runtime),
//! interval series, rate limiting, start(at), stop(), poll().

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use iolab_core::stats::RunResult;
use iolab_engine::Run;

use super::common::*;

#[test]
fn runtime_is_measured_after_the_ramp() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "t",
        dir.path(),
        &[
            "ioengine=null",
            "size=1m",
            "time_based",
            "runtime=1s",
            "ramp_time=500ms",
            "iodepth=8",
        ],
    );
    let mut cfg = config(vec![j]);
    cfg.interval = Duration::from_millis(100);
    let t0 = Instant::now();
    let r = run_ok(cfg);
    let took = t0.elapsed();
    let w = worker(&r, 0, 0);
    let rt = w.runtime_ns as f64 / 1e9;
    // The measured runtime is at least the 1 s asked for and excludes the
    // ramp: it fits in the wall time minus the 500 ms ramp. (Its overshoot
    // past 1 s is how late the worker saw its end: on a loaded 2-core
    // machine a worker may be descheduled for 100 ms or more, so the bound
    // is the wall clock, not a fixed tolerance.)
    assert!(rt >= 1.0, "measured runtime {rt} s");
    assert!(
        rt <= took.as_secs_f64() - 0.5,
        "measured runtime {rt} s includes the ramp (ramp + runtime took {took:?})"
    );
    assert!(
        took >= Duration::from_millis(1500),
        "ramp + runtime took {took:?}"
    );
    let grid = (rt * 10.0).ceil() as usize;
    assert!(
        (10..=grid + 1).contains(&w.series.len()),
        "{} intervals of 100 ms for {rt} s",
        w.series.len()
    );
    // Every interval on the grid from the measured start (not the ramp's),
    // each ending where the next starts, the last at the runtime.
    for (i, s) in w.series.iter().enumerate() {
        assert_eq!(
            s.start_ns,
            i as u64 * 100_000_000,
            "interval {i} is on the grid"
        );
        if let Some(next) = w.series.get(i + 1) {
            assert_eq!(s.end_ns, next.start_ns, "interval {i} ends at {i}+1");
        }
    }
    let last = w.series.last().expect("intervals");
    assert_eq!(last.end_ns, w.runtime_ns, "the last interval ends the run");
    // Not every interval has I/Os: a worker descheduled on a loaded 2-core
    // machine does none meanwhile (seen: 100-300 ms gaps at load 15-24, one
    // of 3.8 s). The I/Os measured are all in the series, and some are.
    let series_ios: u64 = w.series.iter().map(|s| s.dirs[0].ios).sum();
    assert!(series_ios > 0, "no I/Os in the series");
    assert_eq!(
        series_ios, w.dirs[0].ios,
        "ramp I/Os are not in the series nor the totals"
    );
}

#[test]
fn rate_iops_is_held_and_latency_from_intended_time_is_recorded() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "r",
        dir.path(),
        &[
            "ioengine=null",
            "size=1m",
            "time_based",
            "runtime=2s",
            "rate_iops=1000",
            "iodepth=4",
        ],
    );
    let r = run_ok(config(vec![j]));
    let w = worker(&r, 0, 0);
    let iops = w.dirs[0].ios as f64 / (w.runtime_ns as f64 / 1e9);
    assert!(
        (iops - 1000.0).abs() < 20.0,
        "achieved {iops} IOPS for rate_iops=1000"
    );
    let li = w.dirs[0]
        .lat_intended_ns
        .as_ref()
        .expect("rate-limited jobs record lat_intended");
    assert_eq!(li.count(), w.dirs[0].ios);
    assert!(
        li.percentile(50.0) >= w.dirs[0].lat_ns.percentile(50.0),
        "intended ≥ actual"
    );
    // Waiting for the due time is not CPU: the thread sleeps.
    assert!(
        w.usr_cpu_ns + w.sys_cpu_ns < w.runtime_ns / 2,
        "cpu {} ns",
        w.usr_cpu_ns + w.sys_cpu_ns
    );
}

#[test]
fn start_at_a_future_instant_then_startdelay() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job("a", dir.path(), &["ioengine=null", "size=1m"]);
    let d = job(
        "d",
        dir.path(),
        &["ioengine=null", "size=1m", "startdelay=200ms"],
    );
    for (j, delay_ns) in [(j, 0), (d, 200_000_000)] {
        let mut run = Run::prepare(config(vec![j])).unwrap();
        let at = SystemTime::now() + Duration::from_millis(300);
        run.start(Some(at)).unwrap();
        let p = run.poll(Duration::from_millis(10));
        assert_eq!(p.phase, "waiting");
        let r = run.wait().unwrap();
        let due_ns = at.duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 + delay_ns;
        assert!(
            r.start_unix_ns >= due_ns,
            "started {} ns early",
            due_ns - r.start_unix_ns
        );
        assert!(
            r.start_unix_ns < due_ns + 50_000_000,
            "started {} ns late",
            r.start_unix_ns - due_ns
        );
    }
}

#[test]
fn stop_ends_a_long_run_promptly_with_partial_results() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "s",
        dir.path(),
        &[
            "ioengine=null",
            "size=1m",
            "time_based",
            "runtime=60s",
            "numjobs=2",
            "iodepth=16",
        ],
    );
    let mut cfg = config(vec![j]);
    cfg.interval = Duration::from_millis(100);
    let mut run = Run::prepare(cfg).unwrap();
    run.start(None).unwrap();
    let mut p = run.poll(Duration::from_secs(2));
    while p.iops[0] == 0.0 {
        p = run.poll(Duration::from_secs(2));
    }
    assert_eq!(p.phase, "running");
    assert!(p.p50_ns[0] > 0 && p.p99_ns[0] >= p.p50_ns[0]);
    assert!(p.remaining_ns.unwrap() > 50_000_000_000);
    let t0 = Instant::now();
    run.stop();
    let r = run.wait().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(1),
        "stop took {:?}",
        t0.elapsed()
    );
    for w in &r.jobs[0].workers {
        assert!(w.dirs[0].ios > 0);
        assert!(w.runtime_ns < 5_000_000_000, "runtime {} ns", w.runtime_ns);
    }
}

#[test]
fn progress_of_a_size_based_run_reaches_done() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "p",
        dir.path(),
        &["ioengine=null", "size=64m", "rate_iops=20000"],
    );
    let mut cfg = config(vec![j]);
    cfg.interval = Duration::from_millis(50);
    let mut run = Run::prepare(cfg).unwrap();
    run.start(None).unwrap();
    let mut fractions = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !run.is_finished() && Instant::now() < deadline {
        let p = run.poll(Duration::from_millis(200));
        assert_eq!(p.remaining_ns, None, "size based");
        fractions.extend(p.fraction);
    }
    assert!(fractions.windows(2).all(|w| w[0] <= w[1]), "{fractions:?}");
    assert!(
        fractions.iter().any(|&f| f > 0.1 && f < 0.9),
        "{fractions:?}"
    );
    let p = run.poll(Duration::ZERO);
    assert_eq!(p.phase, "done");
    assert_eq!(run.wait().unwrap().jobs[0].workers[0].dirs[0].ios, 16384);
}

#[test]
fn lifecycle_misuse_is_an_error() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job("x", dir.path(), &["ioengine=null", "size=1m"]);
    let run = Run::prepare(config(vec![j.clone()])).unwrap();
    assert!(run.wait().is_err(), "wait before start");
    let mut run = Run::prepare(config(vec![j])).unwrap();
    run.start(None).unwrap();
    assert!(run.start(None).is_err(), "start twice");
    run.wait().unwrap();
    assert!(Run::prepare(config(vec![])).is_err());
}

#[test]
fn a_run_can_move_between_threads() {
    // The Python binding holds a Run and calls it from whichever thread
    // holds the GIL (behind a Mutex): it must be Send.
    fn send<T: Send>() {}
    send::<Run>();
    send::<iolab_engine::run::RunOutcome>();
}

/// rate_iops_min: a worker held below its minimum (by its own rate cap)
/// ends with an error after one ratecycle; one well above it runs on.
#[test]
fn rate_min_ends_a_worker_that_falls_short() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let null = [
        "ioengine=null",
        "size=1g",
        "runtime=20",
        "time_based",
        "ratecycle=500",
    ];
    let slow = job(
        "slow",
        dir.path(),
        &[&null[..], &["rate_iops=100", "rate_iops_min=1000"]].concat(),
    );
    let t0 = std::time::Instant::now();
    let o = run_outcome(config(vec![slow]));
    match o.error {
        Some(iolab_engine::EngineError::TooSlow(m)) => {
            assert!(m.contains("below the minimum 1000 IOPS"), "{m}")
        }
        other => panic!("expected rate_min to end the job, got {other:?}"),
    }
    assert!(t0.elapsed().as_secs() < 15, "ended long before runtime");
    let ok = [
        "ioengine=null",
        "size=1g",
        "runtime=2",
        "time_based",
        "rate_iops=2000",
    ];
    let fine = job(
        "fine",
        dir.path(),
        &[&ok[..], &["rate_iops_min=200", "ratecycle=500"]].concat(),
    );
    run_ok(config(vec![fine]));
}

/// `Run::snapshot` (interim reports): the result so far, cumulative, every
/// histogram holding each I/O counted; once the workers ended, exactly
/// the final result's figures.
#[test]
fn snapshots_are_cumulative_and_end_at_the_final_result() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let opts = ["ioengine=null", "size=1m", "time_based", "runtime=60s"];
    let j = job("c", dir.path(), &[&opts[..], &["numjobs=2"]].concat());
    let mut cfg = config(vec![j]);
    cfg.interval = Duration::from_millis(100);
    let mut run = Run::prepare(cfg).unwrap();
    run.report_cumulative().unwrap();
    run.start(None).unwrap();
    let ios =
        |r: &RunResult| -> Vec<u64> { r.jobs[0].workers.iter().map(|w| w.dirs[0].ios).collect() };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = vec![run.snapshot().unwrap()];
    while ios(seen.last().unwrap()).contains(&0) || seen.len() < 3 {
        assert!(
            Instant::now() < deadline,
            "no snapshot with both workers measured"
        );
        run.poll(Duration::from_millis(100));
        seen.push(run.snapshot().unwrap());
    }
    for pair in seen.windows(2) {
        let (a, b) = (ios(&pair[0]), ios(&pair[1]));
        assert!(a.iter().zip(&b).all(|(x, y)| x <= y), "{a:?} then {b:?}");
    }
    let last = seen.last().unwrap();
    for w in &last.jobs[0].workers {
        let d = &w.dirs[0];
        assert_eq!(d.clat_ns.count(), d.ios);
        assert_eq!(d.lat_ns.count(), d.ios);
        assert_eq!(d.bytes, d.ios * 4096);
        assert!(w.runtime_ns >= 100_000_000 && w.series.is_empty());
    }
    run.stop();
    while !run.is_finished() {
        run.poll(Duration::from_millis(50));
    }
    let at_end = run.snapshot().unwrap();
    let fin = run.wait().unwrap();
    assert_eq!(ios(&at_end), ios(&fin));
    for (s, f) in at_end.jobs[0].workers.iter().zip(&fin.jobs[0].workers) {
        assert_eq!(
            (s.runtime_ns, s.dirs[0].bytes),
            (f.runtime_ns, f.dirs[0].bytes)
        );
    }
}

#[test]
fn a_snapshot_needs_report_cumulative_before_the_start() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job("n", dir.path(), &["ioengine=null", "size=64k"]);
    let mut run = Run::prepare(config(vec![j])).unwrap();
    run.start(None).unwrap();
    let e = run.snapshot().unwrap_err().to_string();
    assert!(e.contains("report_cumulative"), "{e}");
    assert!(run.report_cumulative().is_err());
    run.wait().unwrap();
}
