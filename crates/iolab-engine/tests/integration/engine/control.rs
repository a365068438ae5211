//! flow, latency_target and io_submit_mode: the effect of each against a
//! known truth (I/O counts in the weights' ratio; the depth a latency
//! target allows; the rate kept while I/Os are slow).

use super::common::*;

/// Two jobs in one flow with weights 1 and 3: when the first has done its
/// I/Os (exitall stops the run), the second has done three times as many,
/// though its rate would allow five. A job in another flow id is not held back by them.
#[test]
fn flow_keeps_io_counts_in_the_weights_ratio() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    for (sleep, n) in [("flow_sleep=0", 20_000u64), ("flow_sleep=50", 20_000)] {
        let ios = format!("number_ios={n}");
        let a = job(
            "a",
            dir.path(),
            &[
                "ioengine=null",
                "size=1g",
                "bs=4k",
                "flow=1",
                "flow_id=5",
                &ios,
                // Each worker runs alone until the other joins its flow: the
                // rates bound that lead far below the counts compared.
                "rate_iops=100000",
                "exitall",
                sleep,
            ],
        );
        let b = job(
            "b",
            dir.path(),
            &[
                "ioengine=null",
                "size=1g",
                "bs=4k",
                "flow=3",
                "flow_id=5",
                "iodepth=4",
                // Unheld, b would do 5 I/Os for each of a's.
                "rate_iops=500000",
                sleep,
            ],
        );
        let other = job(
            "c",
            dir.path(),
            &[
                "ioengine=null",
                "size=64m",
                "bs=4k",
                "flow=1",
                "flow_id=6",
                "number_ios=1000",
            ],
        );
        let r = run_ok(config(vec![a, b, other]));
        let na = worker(&r, 0, 0).dirs[0].ios;
        let nb = worker(&r, 1, 0).dirs[0].ios;
        assert_eq!(na, n, "{sleep}");
        let ratio = nb as f64 / na as f64;
        // b stops at the run's stop: a few I/Os after a's last one at most.
        assert!(
            (ratio - 3.0).abs() < 0.03,
            "{sleep}: b/a = {ratio} ({nb}/{na})"
        );
        assert_eq!(worker(&r, 2, 0).dirs[0].ios, 1000, "{sleep}");
    }
}

/// io_submit_mode=offload with every engine that takes it: a synchronous
/// one (psync) keeps iodepth I/Os in flight through its submitter threads,
/// and every block of the region is read exactly once, as inline.
#[test]
fn offload_with_every_engine_reads_every_block_once() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    for engine in [
        "psync", "libaio", "io_uring", "pvsync", "pvsync2", "mmap", "null",
    ] {
        let e = format!("ioengine={engine}");
        let j = job(
            engine,
            dir.path(),
            &[
                &e,
                "io_submit_mode=offload",
                "iodepth=4",
                "rw=randread",
                "bs=4k",
                "size=4m",
            ],
        );
        assert_eq!(j.iodepth, 4, "offload keeps the depth of {engine}");
        let r = run_ok(config(vec![j]));
        let d = &worker(&r, 0, 0).dirs[0];
        assert_eq!((d.ios, d.bytes), (1024, 4 * MIB), "{engine}");
        assert_eq!(d.lat_ns.count(), 1024, "{engine}");
    }
    // And what it cannot do is refused by name.
    let e = iolab_core::job::JobSpec::new("x")
        .args(["size=1m", "io_submit_mode=offload", "fsync=4", "rw=write"])
        .prepare()
        .unwrap_err()
        .to_string();
    assert!(e.contains("offload with fsync"), "{e}");
}

/// fio's steadystate.fio writes to /dev/null and reads /dev/zero: both run
/// over the region size= gives, every I/O counted; what they cannot do
/// (read /dev/null, O_DIRECT, no size) is refused by name.
#[test]
fn dev_null_takes_writes_and_dev_zero_gives_reads() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let w = job(
        "w",
        dir.path(),
        &["filename=/dev/null", "rw=write", "bs=128k", "size=8m"],
    );
    let r = job(
        "r",
        dir.path(),
        &["filename=/dev/zero", "rw=randread", "bs=4k", "size=1m"],
    );
    let res = run_ok(config(vec![w, r]));
    assert_eq!(worker(&res, 0, 0).dirs[1].ios, 64);
    assert_eq!(worker(&res, 1, 0).dirs[0].ios, 256);
    let refused = |opts: &[&str]| {
        let mut run = iolab_engine::Run::prepare(config(vec![job("x", dir.path(), opts)]));
        run.as_mut()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let e = refused(&["filename=/dev/null", "rw=read", "size=1m"]);
    assert!(e.contains("returns nothing to reads"), "{e}");
    let e = refused(&["filename=/dev/zero", "rw=read", "size=1m", "direct=1"]);
    assert!(e.contains("O_DIRECT"), "{e}");
    let e = refused(&["filename=/dev/zero", "rw=read"]);
    assert!(e.contains("without a size"), "{e}");
}
