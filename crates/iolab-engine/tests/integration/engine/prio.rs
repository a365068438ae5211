//! I/O priorities and per-I/O records in whole runs: the number of I/Os
//! each priority got (cmdprio_percentage, cmdprio_bssplit) against the
//! share asked for, the records of `per_io_log` against the run's counts
//! and histograms, and numa_mem_policy's errors.

use iolab_core::job::prio::ioprio_value;
use iolab_engine::worker::iolog::{record_path, write_fio_log, LogValue};

use super::common::*;

fn prio_count(r: &iolab_core::stats::RunResult, dir: usize, ioprio: u16) -> u64 {
    r.jobs[0].workers[0].dirs[dir]
        .prios
        .iter()
        .find(|p| p.ioprio == ioprio)
        .map_or(0, |p| p.clat_ns.count())
}

#[test]
fn cmdprio_percentage_splits_io_uring_requests_between_two_priorities() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(vec![job(
        "p",
        dir.path(),
        &[
            "ioengine=io_uring",
            "iodepth=8",
            "rw=randread",
            "bs=4k",
            "size=4m",
            "loops=5",
            "prioclass=3",
            "cmdprio_percentage=20",
            "cmdprio_class=2",
            "cmdprio=1",
        ],
    )]);
    let r = run_ok(cfg);
    let ios = r.jobs[0].workers[0].dirs[0].ios;
    assert_eq!(ios, 5 * 1024);
    let high = prio_count(&r, 0, ioprio_value(2, 1, 0));
    let low = prio_count(&r, 0, ioprio_value(3, 0, 0));
    assert_eq!(high + low, ios, "every I/O has one of the two priorities");
    // 20% of 5120: binomial sd ≈ 29; ±6 sd.
    assert!(
        (850..=1200).contains(&high),
        "high-priority I/Os: {high} of {ios}"
    );
}

#[test]
fn cmdprio_bssplit_gives_priorities_by_block_size_with_libaio() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(vec![job(
        "b",
        dir.path(),
        &[
            "ioengine=libaio",
            "direct=1",
            "iodepth=4",
            "rw=randread",
            "bssplit=4k/50:8k/50",
            "size=4m",
            "number_ios=2000",
            "cmdprio_bssplit=4k/100/2/3:8k/0",
            "prioclass=2",
            "prio=6",
        ],
    )]);
    let r = run_ok(cfg);
    let ios = r.jobs[0].workers[0].dirs[0].ios;
    let small = prio_count(&r, 0, ioprio_value(2, 3, 0));
    let big = prio_count(&r, 0, ioprio_value(2, 6, 0));
    assert_eq!(small + big, ios);
    // Every 4k read and only they: bytes = 4k·small + 8k·big.
    assert_eq!(
        r.jobs[0].workers[0].dirs[0].bytes,
        4096 * small + 8192 * big
    );
}

#[test]
fn cmdprio_needs_an_engine_that_passes_priorities() {
    let dir = tempfile::tempdir().unwrap();
    let e = iolab_core::job::JobSpec::new("x")
        .opt("directory", Some(dir.path().to_str().unwrap()))
        .args(["ioengine=psync", "size=1m", "cmdprio_percentage=10"])
        .prepare()
        .unwrap_err();
    assert!(
        e.to_string().contains("ioengine=io_uring and libaio do"),
        "{e}"
    );
}

#[test]
fn per_io_records_match_the_counts_and_histograms() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log_opt = format!("per_io_log={}", logs.path().display());
    let cfg = config(vec![job(
        "l",
        dir.path(),
        &[
            "ioengine=io_uring",
            "iodepth=4",
            "rw=randrw",
            "bs=4k",
            "size=2m",
            "numjobs=2",
            "loops=2",
            &log_opt,
        ],
    )]);
    let r = run_ok(cfg);
    let inputs: Vec<_> = (0..2).map(|w| record_path(logs.path(), 0, w)).collect();
    let out = logs.path().join("l_lat.log");
    let lines = write_fio_log(&inputs, &out, LogValue::Lat, true, false).unwrap();
    let ws = &r.jobs[0].workers;
    let ios: u64 = ws.iter().flat_map(|w| w.dirs.iter()).map(|d| d.ios).sum();
    assert_eq!(lines, ios);
    assert_eq!(ios, 2 * 2 * 512);
    let text = std::fs::read_to_string(&out).unwrap();
    for d in 0..2u64 {
        let vals: Vec<u64> = text
            .lines()
            .map(|l| {
                l.split(", ")
                    .map(|f| f.parse::<u64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .filter(|f| f[2] == d)
            .map(|f| f[1])
            .collect();
        let mut h = iolab_core::hist::LatHist::new();
        ws.iter().for_each(|w| h.merge(&w.dirs[d as usize].lat_ns));
        assert_eq!(vals.len() as u64, h.count());
        // The histogram keeps 3 significant digits: max and mean agree to 0.1%.
        let max = *vals.iter().max().unwrap() as f64;
        assert!(
            (max - h.max() as f64).abs() <= max * 1e-3,
            "max {max} vs {}",
            h.max()
        );
        let mean = vals.iter().sum::<u64>() as f64 / vals.len() as f64;
        assert!(
            (mean - h.mean()).abs() <= mean * 1e-3,
            "mean {mean} vs {}",
            h.mean()
        );
    }
    // Times are non-decreasing (merged in time order), offsets inside the file.
    let times: Vec<u64> = text
        .lines()
        .map(|l| l.split(", ").next().unwrap().parse().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn a_numa_node_the_host_lacks_stops_the_run_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(vec![job(
        "n",
        dir.path(),
        &["ioengine=null", "size=1m", "numa_mem_policy=bind:63"],
    )]);
    // The worker refuses at set-up, before any I/O: prepare or start fails.
    let e = match iolab_engine::Run::prepare(cfg) {
        Err(e) => e.to_string(),
        Ok(mut run) => match run.start(None) {
            Err(e) => e.to_string(),
            Ok(()) => run
                .finish()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default(),
        },
    };
    assert!(e.contains("NUMA node 63 is not online"), "{e}");
    let cfg = config(vec![job(
        "n",
        dir.path(),
        &["ioengine=null", "size=1m", "numa_mem_policy=bind:0"],
    )]);
    assert_eq!(run_ok(cfg).jobs[0].workers[0].dirs[0].ios, 256);
}

/// The tid of this process's thread named `name`, waited for (deadline).
/// The threads of this process called `name` now.
fn threads_named(name: &str) -> Vec<i64> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            comm.trim() == name
        })
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
        .collect()
}

/// A thread called `name` that is not one of `before`. Threads that the C
/// library starts for posixaio's requests take their worker's name and
/// linger idle for a second after its run, so a name alone may be an
/// earlier test's (the posixaio tests run in this process too).
fn thread_named(name: &str, before: &[i64]) -> Option<i64> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        if let Some(t) = threads_named(name)
            .into_iter()
            .find(|t| !before.contains(t))
        {
            return Some(t);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    None
}

#[test]
fn prio_and_prioclass_set_a_sync_engines_worker_thread_priority() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(vec![job(
        "s",
        dir.path(),
        &[
            "ioengine=psync",
            "rw=read",
            "bs=4k",
            "size=1m",
            "time_based",
            "runtime=30s",
            "prioclass=3",
            "prio=5",
        ],
    )]);
    let before = threads_named("iolab-w0.0");
    let mut run = iolab_engine::Run::prepare(cfg).unwrap();
    run.start(None).unwrap();
    let tid = thread_named("iolab-w0.0", &before).expect("the worker thread appears");
    // Safety: a plain syscall with integer arguments (IOPRIO_WHO_PROCESS = 1).
    let got = unsafe { libc::syscall(libc::SYS_ioprio_get, 1, tid) };
    run.stop();
    let r = run.finish().unwrap();
    assert!(r.error.is_none());
    assert_eq!(
        got,
        i64::from(ioprio_value(3, 5, 0)),
        "the worker thread's ioprio"
    );
}
