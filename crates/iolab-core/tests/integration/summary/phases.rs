//! Per-direction runtime (fio's runtime per data direction: a verify job's
//! write phase and read phase apart) and exact latency extremes, through
//! the summary, exact merges and the JSON form (issue 21).

use super::common::*;
use iolab_core::job::IoDir;
use iolab_core::stats::{merge_results, merge_workers, RunResult, WorkerResult};
use iolab_core::summary::summarize;

const MS: u64 = 1_000_000;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// A write-then-verify worker: `n` writes in `write_ms`, `n` verify reads
/// in `read_ms`, the window both phases.
fn verify_worker(index: u32, n: u64, write_ms: u64, read_ms: u64) -> WorkerResult {
    let mut w = worker(index, (write_ms + read_ms) * MS);
    record_n_ios(&mut w, IoDir::Write, n, n * 4096, 20_000);
    record_n_ios(&mut w, IoDir::Read, n, n * 4096, 10_000);
    w.dirs[IoDir::Write as usize].runtime_ns = Some(write_ms * MS);
    w.dirs[IoDir::Read as usize].runtime_ns = Some(read_ms * MS);
    w
}

#[test]
fn each_direction_is_rated_over_its_own_runtime_and_merges_take_the_longest() {
    let (a, b) = (
        verify_worker(0, 1000, 100, 50),
        verify_worker(1, 1000, 120, 40),
    );
    let m = merge_workers(&[a.clone(), b.clone()]);
    assert_eq!(m.runtime_ns, 160 * MS);
    assert_eq!(m.dir_runtime_ns(IoDir::Write), 120 * MS);
    assert_eq!(m.dir_runtime_ns(IoDir::Read), 50 * MS);

    let run = run_of(
        vec![job_result(job("v", 0, true, false), 0, vec![a, b])],
        vec![],
    );
    let s = summarize(&run);
    let w0 = &s.jobs[0].workers[0].stats;
    assert!(close(w0.write.iops, 1000.0 / 0.100) && close(w0.read.iops, 1000.0 / 0.050));
    assert_eq!(
        (w0.write.runtime_ns, w0.read.runtime_ns),
        (100 * MS, 50 * MS)
    );
    // Both directions together: every I/O over the whole window.
    assert!(close(w0.iops, 2000.0 / 0.150));
    let j = &s.jobs[0].merged;
    assert!(close(j.write.iops, 2000.0 / 0.120) && close(j.read.iops, 2000.0 / 0.050));
    assert!(close(j.write.bw_bytes_per_s, 2000.0 * 4096.0 / 0.120));
    let g = &s.groups[0];
    assert!(close(g.write.iops, 2000.0 / 0.120) && close(g.read.iops, 2000.0 / 0.050));
    assert_eq!(
        (g.read.runtime_min_ns, g.read.runtime_max_ns),
        (50 * MS, 50 * MS)
    );
    assert!(close(g.total.iops, 4000.0 / 0.160));

    // Two hosts' results merged exactly: the longest per direction.
    let other = run_of(
        vec![job_result(
            job("v", 0, true, false),
            0,
            vec![verify_worker(0, 1000, 90, 70)],
        )],
        vec![],
    );
    let fleet = summarize(&merge_results(&[run.clone(), other]).unwrap());
    let g = &fleet.groups[0];
    assert_eq!(
        (g.write.runtime_max_ns, g.read.runtime_max_ns),
        (120 * MS, 70 * MS)
    );
    assert!(close(g.read.iops, 3000.0 / 0.070));
}

#[test]
fn a_mix_keeps_its_window_and_older_results_fall_back_to_it() {
    // A mix's directions ran the whole window: rates as before.
    let mut w = worker(0, 200 * MS);
    record_n_ios(&mut w, IoDir::Read, 700, 700 * 4096, 10_000);
    record_n_ios(&mut w, IoDir::Write, 300, 300 * 4096, 10_000);
    for d in &mut w.dirs[..2] {
        d.runtime_ns = Some(200 * MS);
    }
    let run = run_of(
        vec![job_result(job("mix", 70, false, false), 0, vec![w.clone()])],
        vec![],
    );
    let json = serde_json::to_value(&run).unwrap();
    assert_eq!(
        json["jobs"][0]["workers"][0]["dirs"][0]["runtime_ns"],
        200 * MS
    );
    let s = summarize(&run);
    assert!(
        close(s.jobs[0].merged.read.iops, 3500.0) && close(s.jobs[0].merged.write.iops, 1500.0)
    );

    // A result written before per-direction runtimes: no field, the window.
    let mut old = json;
    for d in old["jobs"][0]["workers"][0]["dirs"].as_array_mut().unwrap() {
        d.as_object_mut().unwrap().remove("runtime_ns");
    }
    let old: RunResult = serde_json::from_value(old).unwrap();
    assert_eq!(old.jobs[0].workers[0].dirs[0].runtime_ns, None);
    assert_eq!(
        old.jobs[0].workers[0].dir_runtime_ns(IoDir::Write),
        200 * MS
    );
    assert_eq!(summarize(&old), s);
}

#[test]
fn min_and_max_are_exact_through_merges_and_json() {
    // 4,193,000 ns reads 4,194,303 from its bucket (issue 21's example).
    let mut a = worker(0, SEC);
    record_io(&mut a, IoDir::Read, 4096, 1_501, 4_193_000);
    record_io(&mut a, IoDir::Read, 4096, 2_000, 1_000_003);
    let mut b = worker(1, SEC);
    record_io(&mut b, IoDir::Read, 4096, 999, 20_001);
    b.syncs = 1;
    b.sync_lat_ns.record(3_333_333);
    let run = run_of(
        vec![job_result(job("x", 100, false, false), 0, vec![a, b])],
        vec![],
    );
    let back: RunResult = serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap();
    for s in [summarize(&run), summarize(&back)] {
        let r = &s.jobs[0].merged.read;
        assert_eq!((r.clat.min_ns, r.clat.max_ns), (20_001, 4_193_000));
        assert_eq!((r.slat.min_ns, r.slat.max_ns), (999, 2_000));
        assert_eq!((r.lat.min_ns, r.lat.max_ns), (21_000, 4_194_501));
        assert_eq!(s.jobs[0].workers[0].stats.read.clat.max_ns, 4_193_000);
        assert_eq!(s.groups[0].read.clat.max_ns, 4_193_000);
        assert_eq!(s.jobs[0].merged.sync.lat.max_ns, 3_333_333);
        // Percentiles stay bucket values.
        assert_eq!(r.clat.percentiles.last().unwrap().value_ns, 4_194_303);
    }
}

#[test]
fn group_reporting_merges_the_groups_jobs_into_one_entry() {
    // fio 3.33 with two jobs in one group and group_reporting prints one
    // entry (named after the first job, "jobs=2") and a group line whose
    // min and max are that one entry's.
    let mut r = worker(0, 300 * MS);
    record_n_ios(&mut r, IoDir::Read, 3000, 3000 * 4096, 5_000);
    r.dirs[0].runtime_ns = Some(300 * MS);
    let mut w = worker(0, 200 * MS);
    record_n_ios(&mut w, IoDir::Write, 1000, 1000 * 4096, 50_000);
    w.dirs[1].runtime_ns = Some(200 * MS);
    let plain = worker(0, 100 * MS);
    let jobs = vec![
        job_result(job("a", 100, true, false), 0, vec![r]),
        job_result(job("b", 0, true, false), 0, vec![w]),
        job_result(job("alone", 100, false, false), 1, vec![plain]),
    ];
    let s = summarize(&run_of(jobs, vec![]));
    let g = &s.groups[0];
    let one = g.reported.as_ref().expect("one entry for the group");
    assert_eq!((one.read.ios, one.write.ios), (3000, 1000));
    assert_eq!(
        (one.read.runtime_ns, one.write.runtime_ns),
        (300 * MS, 200 * MS)
    );
    assert!(close(one.read.iops, 10_000.0) && close(one.write.iops, 5_000.0));
    assert_eq!(
        (one.runtime_ns, one.thread_runtime_ns),
        (300 * MS, 500 * MS)
    );
    assert_eq!(
        (one.read.clat.max_ns, one.write.clat.max_ns),
        (5_000, 50_000)
    );
    // The group line is over that one entry.
    assert!(close(
        g.read.entry_bw_min_bytes_per_s,
        g.read.entry_bw_max_bytes_per_s
    ));
    assert!(close(g.write.entry_bw_min_bytes_per_s, 5_000.0 * 4096.0));
    assert!(
        s.groups[1].reported.is_none(),
        "no group_reporting, no merged entry"
    );
}
