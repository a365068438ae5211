//! Null engine: the worker path without a kernel. Every count is exact.

use iolab_core::job::IoDir;
use iolab_engine::{EngineError, Run};

use super::common::*;

#[test]
fn size_based_does_exactly_size_over_bs_per_worker() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "n",
        dir.path(),
        &[
            "ioengine=null",
            "rw=randread",
            "size=4m",
            "numjobs=4",
            "iodepth=8",
        ],
    );
    let r = run_ok(config(vec![j]));
    assert_eq!(r.jobs[0].workers.len(), 4);
    for w in &r.jobs[0].workers {
        let rd = &w.dirs[IoDir::Read as usize];
        assert_eq!(rd.ios, 1024, "4 MiB / 4 KiB");
        assert_eq!(rd.bytes, 4 * MIB);
        assert_eq!(rd.errors, 0);
        assert_eq!(rd.lat_ns.count(), rd.ios);
        assert_eq!(rd.clat_ns.count(), rd.ios);
        assert_eq!(rd.slat_ns.count(), rd.ios);
        assert_eq!(w.dirs[IoDir::Write as usize].ios, 0);
        assert!(rd.lat_intended_ns.is_none(), "not rate limited");
        let series_ios: u64 = w.series.iter().map(|s| s.dirs[0].ios).sum();
        assert_eq!(series_ios, rd.ios, "the series adds up to the totals");
    }
    let workers: Vec<u32> = r.jobs[0].workers.iter().map(|w| w.worker).collect();
    assert_eq!(workers, vec![0, 1, 2, 3]);
    assert_eq!(r.schema, iolab_core::stats::SCHEMA);
    assert_eq!(r.hosts[0].hostname, "test");
    assert_eq!(r.cpu.len(), 1);
}

#[test]
fn loops_repeat_the_pass() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "l",
        dir.path(),
        &[
            "ioengine=null",
            "size=1m",
            "loops=3",
            "iodepth=4",
            "iodepth_batch_submit=4",
        ],
    );
    let r = run_ok(config(vec![j]));
    assert_eq!(worker(&r, 0, 0).dirs[0].ios, 3 * 256);
}

#[test]
fn randrw_read_share_matches_rwmixread() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let size = format!("size={}", 100_000 * 4096);
    let j = job(
        "m",
        dir.path(),
        &[
            "ioengine=null",
            "rw=randrw",
            "rwmixread=70",
            "iodepth=16",
            &size,
        ],
    );
    let r = run_ok(config(vec![j]));
    let w = worker(&r, 0, 0);
    let (rd, wr) = (w.dirs[0].ios, w.dirs[1].ios);
    assert_eq!(rd + wr, 100_000);
    let share = rd as f64 / 100_000.0;
    assert!((share - 0.70).abs() < 0.01, "read share {share}");
    assert_eq!(w.dirs[1].slat_ns.count(), wr, "slat recorded per direction");
}

#[test]
fn batches_and_large_iodepth_keep_counts_exact() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let opts = [
        "ioengine=null",
        "size=10252k",
        "iodepth=64",
        "iodepth_batch_submit=16",
        "iodepth_batch_complete_min=8",
        "iodepth_batch_complete_max=32",
    ];
    let r = run_ok(config(vec![job("b", dir.path(), &opts)]));
    assert_eq!(worker(&r, 0, 0).dirs[0].ios, 2563);
}

/// The prepared job keeps iodepth_batch_complete_min=0 as written (the
/// option layer's depth rules are the only ones); the worker then waits for
/// one completion whenever the queue is full, so the run still does every
/// I/O, as with 1. (Before, the worker re-derived 1 from the job itself.)
#[test]
fn complete_min_zero_reaps_one_when_the_queue_is_full() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let opts = [
        "ioengine=null",
        "size=1m",
        "iodepth=16",
        "iodepth_batch_submit=0",
        "iodepth_batch_complete_min=0",
    ];
    let j = job("z", dir.path(), &opts);
    assert_eq!(
        (j.iodepth_batch_submit, j.iodepth_batch_complete_min),
        (16, 0)
    );
    let r = run_ok(config(vec![j]));
    assert_eq!(worker(&r, 0, 0).dirs[0].ios, 256);
}

#[test]
fn stonewall_runs_groups_one_after_another() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let a = job(
        "a",
        dir.path(),
        &["ioengine=null", "size=1m", "time_based", "runtime=200ms"],
    );
    let b = job("b", dir.path(), &["ioengine=null", "size=1m", "stonewall"]);
    let r = run_ok(config(vec![a, b]));
    assert_eq!((r.jobs[0].group, r.jobs[1].group), (0, 1));
    assert_eq!(r.cpu.len(), 2, "one CPU window per group");
    let whose: Vec<(&str, u32)> = r.cpu.iter().map(|c| (c.host.as_str(), c.group)).collect();
    assert_eq!(
        whose,
        [("test", 0), ("test", 1)],
        "each names its host and group"
    );
    assert_eq!(r.hosts[0].hostname, "test");
    assert!(
        r.cpu[0].window_ns >= 150_000_000,
        "group 0 window {}",
        r.cpu[0].window_ns
    );
    assert_eq!(worker(&r, 1, 0).dirs[0].ios, 256);
}

#[test]
fn pinning_to_a_missing_cpu_fails_at_start_not_in_the_run() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "c",
        dir.path(),
        &["ioengine=null", "size=1m", "cpus_allowed=1000"],
    );
    let mut run = iolab_engine::Run::prepare(config(vec![j])).unwrap();
    let err = run.start(None).expect_err("CPU 1000 is not online");
    assert!(err.to_string().contains("1000"), "{err}");
    let j = job(
        "c",
        dir.path(),
        &[
            "ioengine=null",
            "size=1m",
            "numjobs=3",
            "cpus_allowed=0",
            "cpus_allowed_policy=split",
        ],
    );
    let r = run_ok(config(vec![j]));
    assert_eq!(
        r.jobs[0].workers.len(),
        3,
        "split wraps when workers outnumber CPUs"
    );
}

#[test]
fn engine_decisions_are_stated_in_the_notes() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let u = job(
        "u",
        dir.path(),
        &["ioengine=io_uring", "size=64k", "iodepth=5"],
    );
    let r = run_ok(config(vec![u]));
    let notes = r.layout_notes.join("\n");
    assert!(
        r.layout_notes
            .iter()
            .any(|n| n.starts_with("io_uring ring of 8 entries")),
        "one job: the note stands alone\n{notes}"
    );
    assert_eq!(worker(&r, 0, 0).dirs[0].ios, 16);
}

#[test]
fn each_note_is_told_once_and_named_by_job_where_jobs_differ() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let uring = |name, depth: &str| {
        let opts = ["ioengine=io_uring", "size=64k", "numjobs=2", depth];
        job(name, dir.path(), &opts)
    };
    let jobs = vec![
        uring("qd5", "iodepth=5"),
        uring("qd32", "iodepth=32"),
        uring("qd8", "iodepth=8"),
    ];
    let r = run_ok(config(jobs));
    let rings: Vec<&str> = r
        .layout_notes
        .iter()
        .filter(|n| n.contains("io_uring ring of"))
        .map(String::as_str)
        .collect();
    assert_eq!(rings.len(), 2, "{rings:?}");
    assert!(rings[0].starts_with("qd5, qd8: io_uring ring of 8 entries, "));
    assert!(rings[1].starts_with("qd32: io_uring ring of 32 entries, "));
}

/// cpuio burns its share of a CPU and does no I/O. The burn is counted in
/// thread CPU time, so the process's CPU over the window is at most the
/// load; a busy host (this one runs eight builds at times) stretches the
/// cycles, so the lower bound only says it burned at all. The exact CPU
/// time per cycle is checked in `backend::cpuio`'s unit test.
#[test]
fn cpuio_burns_its_load_and_does_no_io() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "burn",
        dir.path(),
        &[
            "ioengine=cpuio",
            "cpuload=50",
            "cpuchunks=10000",
            "runtime=1",
        ],
    );
    let r = run_ok(config(vec![j]));
    let w = worker(&r, 0, 0);
    assert_eq!(w.dirs[0].ios + w.dirs[1].ios, 0, "no I/O");
    let c = &r.cpu[0];
    let share = (c.proc_user_ns + c.proc_sys_ns) as f64 / c.window_ns as f64;
    assert!(
        (0.05..0.6).contains(&share),
        "50% asked, {share:.2} of a CPU used"
    );
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "no file made"
    );
}

/// io_size repeats the region until its bytes are issued; number_ios stops
/// a worker after exactly that many I/Os (null engine: exact counts).
#[test]
fn io_size_and_number_ios_decide_the_amount() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let null = [
        "ioengine=null",
        "rw=randread",
        "bs=4k",
        "size=4m",
        "iodepth=8",
    ];
    let ios = |extra: &[&str]| {
        let r = run_ok(config(vec![job(
            "n",
            dir.path(),
            &[&null[..], extra].concat(),
        )]));
        let w = worker(&r, 0, 0);
        (w.dirs[0].ios, w.dirs[0].bytes)
    };
    assert_eq!(ios(&["io_size=10m"]), (2560, 10 * MIB));
    assert_eq!(ios(&["io_limit=2m"]), (512, 2 * MIB));
    assert_eq!(ios(&["number_ios=1000"]), (1000, 1000 * 4096));
    assert_eq!(ios(&["number_ios=1000", "io_size=1m"]), (256, MIB));
}

/// exitall: the first worker to finish ends the run; exitall_on_error: the
/// first to fail does. The long job would otherwise run for 120 s.
#[test]
fn exitall_and_exitall_on_error_end_the_run() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let long = || {
        job(
            "long",
            dir.path(),
            &["ioengine=null", "size=1m", "runtime=120", "time_based"],
        )
    };
    for (ender, opts) in [
        ("short", &["ioengine=null", "size=1m", "exitall"][..]),
        (
            "few",
            &["ioengine=null", "size=1m", "exitall", "number_ios=5"][..],
        ),
    ] {
        let t0 = std::time::Instant::now();
        let r = run_ok(config(vec![long(), job(ender, dir.path(), opts)]));
        assert!(
            t0.elapsed().as_secs() < 60,
            "{ender}: the run was not ended"
        );
        assert_eq!(
            worker(&r, 1, 0).dirs[0].ios,
            if ender == "few" { 5 } else { 256 }
        );
    }
    // A job that fails (its file shrinks under the run) ends the run with its error.
    let bad = job(
        "bad",
        dir.path(),
        &["rw=read", "size=1m", "exitall_on_error"],
    );
    let mut run = Run::prepare(config(vec![long(), bad])).unwrap();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("bad.0.0"))
        .unwrap();
    f.set_len(8192).unwrap();
    let t0 = std::time::Instant::now();
    run.start(None).unwrap();
    let o = run.finish().unwrap();
    assert!(
        t0.elapsed().as_secs() < 60,
        "exitall_on_error did not end the run"
    );
    assert!(
        matches!(o.error, Some(EngineError::IoFailed { .. })),
        "{:?}",
        o.error
    );
}

/// io_size without size (examples/cross-stripe-verify.fio): the region is
/// the file from each worker's offset to its end, repeated until io_size is
/// issued. fio 3.33 on the same job (a 256 KiB file, offset=64k,
/// offset_increment=64k, numjobs=2, io_size=1m, bs=4k) issues 256 I/Os and
/// 1 MiB per job; so does iolab.
#[test]
fn io_size_without_size_repeats_the_rest_of_the_file() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("g"), vec![7u8; 256 << 10]).unwrap();
    let opts = [
        "filename=g",
        "rw=read",
        "bs=4k",
        "offset=64k",
        "offset_increment=64k",
        "numjobs=2",
        "io_size=1m",
    ];
    let r = run_ok(config(vec![job("n", dir.path(), &opts)]));
    assert_eq!(r.jobs[0].workers.len(), 2);
    for w in &r.jobs[0].workers {
        let rd = &w.dirs[IoDir::Read as usize];
        assert_eq!((rd.ios, rd.bytes), (256, MIB), "worker {}", w.worker);
    }
}

/// At a full queue the reap's clock reading is the next I/O's start
/// (worker/handoff.rs): each I/O's lat is still its slat plus its clat,
/// and every I/O is recorded once in each histogram.
#[test]
fn lat_is_slat_plus_clat_when_the_reap_reading_starts_the_next_io() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    for depth in ["iodepth=1", "iodepth=8", "iodepth=32"] {
        let opts = ["ioengine=null", "rw=randread", "size=8m", depth];
        let r = run_ok(config(vec![job("h", dir.path(), &opts)]));
        let rd = &worker(&r, 0, 0).dirs[IoDir::Read as usize];
        assert_eq!(rd.ios, 2048, "{depth}: 8 MiB / 4 KiB");
        for h in [&rd.slat_ns, &rd.clat_ns, &rd.lat_ns] {
            assert_eq!(h.count(), rd.ios, "{depth}: one record per I/O");
        }
        // Means of 3-digit histograms: exact below 2,048 ns, within 0.1 % above.
        let (lat, parts) = (rd.lat_ns.mean(), rd.slat_ns.mean() + rd.clat_ns.mean());
        assert!(
            (lat - parts).abs() <= 0.002 * lat + 1.0,
            "{depth}: mean lat {lat} ns, slat + clat {parts} ns"
        );
        assert!(rd.lat_ns.min() >= rd.clat_ns.min(), "{depth}");
    }
}
