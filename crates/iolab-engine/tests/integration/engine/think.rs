//! thinktime and its thinktime_* options on the null engine: how many
//! I/Os go between stalls, what a stall costs in time, and how much of it
//! is spent on the CPU. Every stall is at least `thinktime` long, which
//! gives upper bounds a loaded machine cannot break; the lower bounds are
//! loose (a 10 ms sleep may take several times that on a loaded 2-core
//! machine).

use super::common::*;

fn runtime_ms(opts: &[&str]) -> (u64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let r = run_ok(config(vec![job("k", dir.path(), opts)]));
    let w = worker(&r, 0, 0);
    (w.dirs[0].ios, w.runtime_ns as f64 / 1e6)
}

#[test]
fn thinktime_stalls_after_each_io_issued_or_after_a_full_queue_completes() {
    let _serial = serial();
    let base = ["ioengine=null", "size=800k", "thinktime=1ms", "iodepth=8"];
    // issue: one I/O in flight per stall, so 200 stalls of >= 1 ms.
    let (ios, ms) = runtime_ms(&[&base[..], &["thinktime_blocks_type=issue"]].concat());
    assert_eq!(ios, 200);
    assert!(
        ms >= 199.0,
        "200 I/Os, a stall after each issued, took {ms} ms"
    );
    // complete (fio's default): the null engine completes on reap, which
    // comes with a full queue, so 8 I/Os go before each stall (fio's
    // libaio the same): 25 stalls; the upper bound is the 200 stalls that
    // issue makes (a 1 ms sleep would have to take 8 ms to reach it).
    let (ios, ms) = runtime_ms(&base);
    assert_eq!(ios, 200);
    assert!(
        (24.0..199.0).contains(&ms),
        "200 I/Os at iodepth 8, a stall after each full queue, took {ms} ms"
    );
}

#[test]
fn thinktime_blocks_stalls_after_every_n_ios() {
    let _serial = serial();
    // 1 s time_based, a stall of >= 10 ms after every 4 I/Os: at most
    // 4 x (100 + 1) I/Os (a run ending in a stall's first 4 I/Os is the
    // +1), whatever the load; about that many on an idle machine.
    let opts = [
        "ioengine=null",
        "size=1m",
        "time_based",
        "runtime=1s",
        "thinktime=10ms",
        "thinktime_blocks=4",
    ];
    let (ios, ms) = runtime_ms(&opts);
    let stalls_max = (ms / 10.0).floor() as u64 + 1;
    assert!(
        (40..=4 * stalls_max).contains(&ios),
        "{ios} I/Os in {ms} ms with a 10 ms stall per 4"
    );
    // 200 I/Os: 50 stalls of >= 10 ms; with a stall after every I/O (the
    // option ignored) 200 stalls, >= 2 s.
    let sized = [
        "ioengine=null",
        "size=800k",
        "thinktime=10ms",
        "thinktime_blocks=4",
    ];
    let (ios, ms) = runtime_ms(&sized);
    assert_eq!(ios, 200);
    assert!(
        (490.0..1990.0).contains(&ms),
        "200 I/Os, a 10 ms stall per 4, took {ms} ms"
    );
}

#[test]
fn thinktime_spin_is_spent_on_the_cpu() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // 40 stalls of 20 ms each, all spun (800 ms busy) or all asleep. A
    // spinning thread on a loaded 2-core machine is on its CPU for part
    // of the wall time only: the bound is a tenth.
    let opts = |spin: &'static str| ["ioengine=null", "size=160k", "thinktime=20ms", spin];
    let cpu_ms = |opts: &[&str]| {
        let r = run_ok(config(vec![job("s", dir.path(), opts)]));
        let w = worker(&r, 0, 0);
        assert_eq!(w.dirs[0].ios, 40);
        (w.usr_cpu_ns + w.sys_cpu_ns) as f64 / 1e6
    };
    let spun = cpu_ms(&opts("thinktime_spin=20ms"));
    assert!(
        spun >= 80.0,
        "40 stalls spun for 20 ms each: {spun} ms of CPU"
    );
    let slept = cpu_ms(&opts("thinktime_spin=0"));
    assert!(slept < 80.0, "40 stalls asleep: {slept} ms of CPU");
}

#[test]
fn thinktime_iotime_alone_stalls_by_time_not_per_io() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // I/O for 100 ms, then a 300 ms stall: 1 s holds at least one stall
    // (the worker does no I/O through at least five 50 ms intervals of it)
    // and many I/Os (a stall after every I/O would leave about four).
    let j = job(
        "t",
        dir.path(),
        &[
            "ioengine=null",
            "size=1m",
            "time_based",
            "runtime=1s",
            "thinktime=300ms",
            "thinktime_iotime=100ms",
        ],
    );
    let mut cfg = config(vec![j]);
    cfg.interval = std::time::Duration::from_millis(50);
    let r = run_ok(cfg);
    let w = worker(&r, 0, 0);
    assert!(w.dirs[0].ios > 1000, "{} I/Os", w.dirs[0].ios);
    let mut run = 0;
    let mut longest = 0;
    for s in &w.series {
        run = if s.dirs[0].ios == 0 { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    assert!(
        longest >= 5,
        "longest run of idle 50 ms intervals: {longest}"
    );
}
