//! A stonewall group's own figures (`GroupSummary`: IOPS, bandwidth and
//! latency per direction and in total) and the exact merge of several
//! hosts' results, against hand-made results with known contents.

use super::common::*;
use iolab_core::hist::LatHist;
use iolab_core::job::IoDir;
use iolab_core::stats::{merge_results, merge_results_json, RunResult};
use iolab_core::summary::{summarize, LatSummary};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Group 0: job "a" (two workers, 2 s and 2.5 s: 1000 reads at 10 µs and
/// 600 writes at 30 µs) and job "b" (one 2 s worker: 400 reads at 500 µs).
fn two_jobs() -> RunResult {
    let mut a0 = worker(0, 2 * SEC);
    let mut a1 = worker(1, 5 * SEC / 2);
    let mut b0 = worker(0, 2 * SEC);
    record_n_ios(&mut a0, IoDir::Read, 1000, 1000 * 4096, 10_000);
    record_n_ios(&mut a1, IoDir::Write, 600, 600 * 8192, 30_000);
    record_n_ios(&mut b0, IoDir::Read, 400, 400 * 4096, 500_000);
    let jobs = vec![
        job_result(job("a", 50, false, false), 0, vec![a0, a1]),
        job_result(job("b", 100, false, false), 0, vec![b0]),
    ];
    run_of(jobs, vec![])
}

#[test]
fn group_iops_and_bandwidth_are_the_groups_ios_over_its_longest_runtime() {
    let s = summarize(&two_jobs());
    let g = &s.groups[0];
    // Reads ran for 2 s (a0, b0), writes for 2.5 s (a1); in total 2.5 s.
    assert_eq!((g.read.ios, g.read.runtime_max_ns), (1400, 2 * SEC));
    assert!(close(g.read.iops, 700.0), "{}", g.read.iops);
    assert!(close(g.write.iops, 240.0), "{}", g.write.iops);
    assert!(close(g.total.iops, 2000.0 / 2.5), "{}", g.total.iops);
    assert_eq!(g.total.bytes, 1400 * 4096 + 600 * 8192);
    assert!(close(g.total.bw_bytes_per_s, g.total.bytes as f64 / 2.5));
    // A job's own total is its I/Os of both directions over its runtime.
    let a = &s.jobs[0].merged;
    assert!(close(a.iops, 1600.0 / 2.5), "{}", a.iops);
    assert!(close(
        a.bw_bytes_per_s,
        (1000.0 * 4096.0 + 600.0 * 8192.0) / 2.5
    ));
    // The group's is not the sum of per-job rates (each over its own window).
    let per_job: f64 = s.jobs.iter().map(|j| j.merged.iops).sum();
    assert!(!close(per_job, g.total.iops), "{per_job}");
}

#[test]
fn group_latency_is_the_exact_merge_of_every_worker() {
    let s = summarize(&two_jobs());
    let g = &s.groups[0];
    let mut reads = LatHist::new();
    reads.record_n(10_000, 1000);
    reads.record_n(500_000, 400);
    assert_eq!(g.read.clat, LatSummary::of(&reads, &PCTS));
    assert_eq!(g.read.lat, LatSummary::of(&reads, &PCTS));
    // p99 of the union is the slow job's value; the mean of the jobs' p99s is not.
    let p99 = |l: &LatSummary| l.percentiles[3].value_ns;
    assert_eq!(g.read.clat.percentiles[3].percentile, 99.0);
    let averaged = (p99(&s.jobs[0].merged.read.clat) + p99(&s.jobs[1].merged.read.clat)) / 2;
    assert_ne!(p99(&g.read.clat), averaged);
    let mut all = reads.clone();
    all.record_n(30_000, 600);
    assert_eq!(g.total.lat, LatSummary::of(&all, &PCTS));
    assert_eq!(g.total.lat.count, 2000);
}

#[test]
fn group_series_merges_every_jobs_intervals_exactly() {
    // Job "a" (two workers) reads 100 I/Os at 2 µs in each of two 1 s
    // intervals; job "b" (one worker) writes 300 at 50 µs in the first and
    // 20 in a short second (0.5 s). The group's intervals add the counts
    // over each merged interval and take percentiles from the merged
    // histograms: never per-job rates added, never p99s averaged.
    let (mut a0, mut a1, mut b0) = (
        worker(0, 2 * SEC),
        worker(1, 2 * SEC),
        worker(0, 3 * SEC / 2),
    );
    for k in 0..2 {
        push_interval(&mut a0, k, IoDir::Read, 100, 4096, 2_000);
        push_interval(&mut a1, k, IoDir::Read, 100, 4096, 2_000);
    }
    push_interval(&mut b0, 0, IoDir::Write, 300, 8192, 50_000);
    push_interval(&mut b0, 1, IoDir::Write, 20, 8192, 50_000);
    let jobs = vec![
        job_result(job("a", 100, false, false), 0, vec![a0, a1]),
        job_result(job("b", 0, false, false), 0, vec![b0]),
    ];
    let s = summarize(&run_of(jobs, vec![]));
    let series = &s.groups[0].series;
    assert_eq!(series.len(), 2);
    let first = &series[0];
    assert_eq!((first.t_start_ns, first.t_end_ns), (0, SEC));
    assert_eq!(
        (first.read.ios, first.write.ios, first.total.ios),
        (200, 300, 500)
    );
    assert!(close(first.total.iops, 500.0), "{}", first.total.iops);
    assert_eq!(first.total.bytes, 200 * 4096 + 300 * 8192);
    assert!(close(first.total.bw_bytes_per_s, first.total.bytes as f64));
    // p50 of the union: 300 of 500 I/Os took 50 µs.
    let mut union = LatHist::new();
    union.record_n(2_000, 200);
    union.record_n(50_000, 300);
    assert_eq!(first.total.lat_p50_ns, union.percentile(50.0));
    assert_eq!(first.total.lat_p99_ns, union.percentile(99.0));
    assert_eq!(first.read.lat_p99_ns, s.jobs[0].series[0].read.lat_p99_ns);
    // The second interval spans the longest of its jobs' (1 s): b's 20
    // writes count over that window, not over b's own 0.5 s.
    let second = &series[1];
    assert_eq!((second.t_start_ns, second.t_end_ns), (SEC, 2 * SEC));
    assert!(close(second.total.iops, 220.0), "{}", second.total.iops);
    let per_job: f64 = s.jobs.iter().map(|j| j.series[1].total.iops).sum();
    assert!(close(per_job, 200.0 + 40.0), "{per_job}");
    // A job's series has the same total (both directions merged).
    assert_eq!(s.jobs[1].series[0].total.ios, 300);
}

#[test]
fn merged_hosts_sum_exactly_into_the_group_total() {
    let mut a = two_jobs();
    let mut b = two_jobs();
    for (r, host) in [(&mut a, "h1"), (&mut b, "h2")] {
        r.hosts[0].hostname = host.into();
        for w in r.jobs.iter_mut().flat_map(|j| j.workers.iter_mut()) {
            w.host = host.into();
        }
    }
    let one = summarize(&a);
    let both = summarize(&merge_results(&[a.clone(), b]).unwrap());
    let (g1, g2) = (&one.groups[0], &both.groups[0]);
    assert_eq!(g2.total.ios, 2 * g1.total.ios);
    assert!(close(g2.total.iops, 2.0 * g1.total.iops));
    assert!(close(g2.read.bw_bytes_per_s, 2.0 * g1.read.bw_bytes_per_s));
    // Twice the same samples: the same percentiles, twice the count.
    assert_eq!(g2.read.clat.percentiles, g1.read.clat.percentiles);
    assert_eq!(g2.read.clat.count, 2 * g1.read.clat.count);
    assert_eq!(both.jobs[0].workers.len(), 4);
}

#[test]
fn merge_results_refuses_what_it_cannot_merge() {
    let a = two_jobs();
    let mut other = a.clone();
    other.tool_version = "0.0.0-other".into();
    let err = merge_results(&[a.clone(), other]).unwrap_err().to_string();
    assert!(err.contains("same iolab"), "{err}");
    let mut slow = a.clone();
    slow.interval_ns *= 2;
    let err = merge_results(&[a, slow]).unwrap_err().to_string();
    assert!(err.contains("interval"), "{err}");
    assert!(merge_results(&[]).is_err());
}

#[test]
fn checked_percentiles_must_be_percent() {
    let mut h = LatHist::new();
    h.record(1000);
    assert!(LatSummary::checked(&h, &[50.0, 100.0]).is_ok());
    let err = LatSummary::checked(&h, &[150.0]).unwrap_err().to_string();
    assert!(err.contains("percentile 150"), "{err}");
}

#[test]
fn merging_json_text_appends_workers_and_keeps_the_earliest_start() {
    let a = two_jobs();
    let mut b = two_jobs();
    b.start_unix_ns -= 5;
    b.hosts[0].hostname = "h2".into();
    let texts = [a.clone(), b.clone()].map(|r| serde_json::to_string(&r).unwrap());
    let merged: RunResult =
        serde_json::from_str(&merge_results_json(&[texts[0].as_str(), texts[1].as_str()]).unwrap())
            .unwrap();
    assert_eq!(merged.start_unix_ns, b.start_unix_ns);
    assert_eq!(merged.hosts.len(), 2);
    assert_eq!(merged.jobs.len(), 2);
    assert_eq!(merged.jobs[0].workers.len(), 4);
    assert_eq!(merged.jobs[0].workers[2], b.jobs[0].workers[0]);
    assert_eq!(merged, merge_results(&[a, b]).unwrap());
    for (text, want) in [
        ("[1]", "not a JSON object"),
        ("{\"schema\": \"iolab.result/1\"}", "no 'interval_ns'"),
        ("not json", "not an iolab result"),
    ] {
        let err = merge_results_json(&[text]).unwrap_err().to_string();
        assert!(err.contains(want), "{text}: {err}");
    }
}
