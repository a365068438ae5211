//! The summary (`iolab_core::summary`) against known answers.
//!
//! Index:
//! - merged percentiles equal the percentiles of the union of samples;
//! - IOPS and bandwidth are I/Os and bytes over the runtime;
//! - interval statistics and the per-interval series;
//! - CPU figures of a hand-made `CpuUsage`, and which I/Os they are per:
//!   entries matched to groups and hosts by their fields (by position in
//!   results written before those fields);
//! - group aggregates over reported entries (jobs or workers); a group's
//!   own IOPS, bandwidth and merged latency, and merged hosts (groups.rs);
//! - rate-limited jobs carry both latencies, labelled;
//! - JSON: `summarize_json` equals `summarize`; the example fixture that the
//!   Python tests read (tests/results/data) is the current output.

mod common;
mod groups;
// Per-direction runtime (verify phases) and exact latency extremes.
#[path = "summary/phases.rs"]
mod phases;

use common::*;
use iolab_core::cpu::{CpuUsage, SysTicks};
use iolab_core::hist::LatHist;
use iolab_core::job::IoDir;
use iolab_core::stats::RunResult;
use iolab_core::summary::{summarize, summarize_json, LatSummary, RunSummary};

/// How a percentile reports a single recorded value (its bucket's highest
/// equivalent value, within 0.1%; min and max are the value itself).
fn reported(v: u64) -> u64 {
    let mut h = LatHist::new();
    h.record(v);
    h.percentile(100.0)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn merged_percentiles_equal_union_percentiles() {
    let mut union = LatHist::new();
    let mut rng = Rng(7);
    let mut workers = Vec::new();
    for (i, (lo, span, n)) in [
        (20_000u64, 80_000u64, 50_000u32),
        (400_000, 3_000_000, 30_000),
    ]
    .into_iter()
    .enumerate()
    {
        let mut w = worker(i as u32, 2_000_000_000);
        for _ in 0..n {
            let v = lo + rng.next() % span;
            record_io(&mut w, IoDir::Read, 4096, 500, v);
            union.record(v);
        }
        workers.push(w);
    }
    let run = run_of(
        vec![job_result(job("mix", 100, false, false), 0, workers)],
        vec![],
    );
    let s = summarize(&run);
    let merged = &s.jobs[0].merged.read.clat;
    assert_eq!(*merged, LatSummary::of(&union, &PCTS));
    // The test can tell: averaging the workers' p99 would give another answer.
    let w99 = |k: usize| s.jobs[0].workers[k].stats.read.clat.percentiles[3].value_ns;
    assert_eq!(s.jobs[0].merged.read.clat.percentiles[3].percentile, 99.0);
    assert_ne!(merged.percentiles[3].value_ns, (w99(0) + w99(1)) / 2);
    assert_eq!(merged.count, 80_000);
}

#[test]
fn iops_and_bandwidth_are_ios_over_runtime() {
    let mut a = worker(0, 2_500_000_000);
    let mut b = worker(1, 2_000_000_000);
    for _ in 0..1000 {
        record_io(&mut a, IoDir::Write, 4096, 100, 10_000);
    }
    for _ in 0..600 {
        record_io(&mut b, IoDir::Write, 8192, 100, 10_000);
    }
    let run = run_of(
        vec![job_result(job("w", 0, false, false), 0, vec![a, b])],
        vec![],
    );
    let s = summarize(&run);
    let wa = &s.jobs[0].workers[0].stats.write;
    assert!(close(wa.iops, 400.0) && close(wa.bw_bytes_per_s, 1_638_400.0));
    let wb = &s.jobs[0].workers[1].stats.write;
    assert!(close(wb.iops, 300.0) && close(wb.bw_bytes_per_s, 2_457_600.0));
    // Merged: the job's window is the longest worker's.
    let m = &s.jobs[0].merged;
    assert_eq!(
        (m.runtime_ns, m.thread_runtime_ns),
        (2_500_000_000, 4_500_000_000)
    );
    assert!(close(m.write.iops, 1600.0 / 2.5));
    assert!(close(
        m.write.bw_bytes_per_s,
        (4_096_000.0 + 4_915_200.0) / 2.5
    ));
    assert_eq!((m.read.ios, m.read.iops), (0, 0.0));
}

#[test]
fn interval_stats_and_series() {
    let mut a = worker(0, 3_200_000_000);
    let mut b = worker(1, 3_200_000_000);
    // A short last interval (0.2 s) is kept in the series, not in the stats.
    for (k, ios) in [100u64, 200, 300, 10].into_iter().enumerate() {
        push_interval(
            &mut a,
            k as u64,
            IoDir::Read,
            ios,
            4096,
            1_000 * (k as u64 + 1),
        );
    }
    for (k, ios) in [50u64, 50, 50].into_iter().enumerate() {
        push_interval(&mut b, k as u64, IoDir::Read, ios, 4096, 5_000);
    }
    let run = run_of(
        vec![job_result(job("s", 100, false, false), 0, vec![a, b])],
        vec![],
    );
    let s = summarize(&run);
    let ia = &s.jobs[0].workers[0].stats.read.intervals;
    assert_eq!(ia.samples, 3);
    assert!(close(ia.iops_min, 100.0) && close(ia.iops_max, 300.0));
    assert!(close(ia.iops_mean, 200.0) && close(ia.iops_stdev, 100.0));
    assert!(close(ia.bw_mean_bytes_per_s, 200.0 * 4096.0));
    assert!(close(ia.bw_stdev_bytes_per_s, 100.0 * 4096.0));
    let im = &s.jobs[0].merged.read.intervals;
    assert!(close(im.iops_mean, 250.0) && close(im.iops_min, 150.0) && close(im.iops_stdev, 100.0));
    let series = &s.jobs[0].series;
    assert_eq!(series.len(), 4);
    assert_eq!(
        (series[1].t_start_ns, series[1].t_end_ns),
        (1_000_000_000, 2_000_000_000)
    );
    assert!(close(series[1].read.iops, 250.0));
    assert_eq!(series[1].read.ios, 250);
    // Interval 1: 200 samples at 2 µs and 50 at 5 µs → p50 2 µs, p99 and max
    // 5 µs (as the histogram reports them: within 0.1%, highest equivalent).
    let (p50, p99) = (series[1].read.lat_p50_ns, series[1].read.lat_p99_ns);
    assert_eq!((p50, p99), (reported(2_000), reported(5_000)));
    assert_eq!(series[1].read.lat_max_ns, reported(5_000));
    assert!(close(series[3].read.iops, 10.0 / 0.2));
    assert_eq!(series[3].write.ios, 0);
}

/// Group `group`'s CPU on `host`, with known figures.
fn known_cpu(host: &str, group: u32) -> CpuUsage {
    // 4 CPUs × 2 s × 100 ticks/s = 800 ticks: user 10 %, system 20 %,
    // irq 2.5 %, softirq 7.5 %, idle 60 %. The process used 1.5 s + 0.5 s.
    CpuUsage {
        host: host.into(),
        group,
        window_ns: 2_000_000_000,
        ncpus: 4,
        user_hz: 100,
        proc_user_ns: 1_500_000_000,
        proc_sys_ns: 500_000_000,
        sys: SysTicks {
            user: 80,
            system: 160,
            irq: 20,
            softirq: 60,
            idle: 480,
            ..Default::default()
        },
        clock_hz: 2e9,
        clock_source: "test: fixed 2 GHz".into(),
    }
}

#[test]
fn cpu_figures_known_answer() {
    let mut w = worker(0, 2_000_000_000);
    // 400 000 I/Os and 1.6 GB in the group: 0.8 GB/s.
    for _ in 0..4 {
        record_n_ios(&mut w, IoDir::Read, 100_000, 400_000_000, 50_000);
    }
    let run = run_of(
        vec![job_result(job("c", 100, false, false), 0, vec![w])],
        vec![known_cpu("testhost", 0)],
    );
    let c = &summarize(&run).groups[0].cpu[0];
    assert_eq!(
        (c.ios, c.bytes, c.ncpus, c.window_ns),
        (400_000, 1_600_000_000, 4, 2_000_000_000)
    );
    assert!(
        close(c.proc_cpu_pct, 100.0) && close(c.proc_user_pct, 75.0) && close(c.proc_sys_pct, 25.0)
    );
    assert!(close(c.sys_user_pct, 10.0) && close(c.sys_system_pct, 20.0));
    assert!(
        close(c.sys_irq_pct, 2.5) && close(c.sys_softirq_pct, 7.5) && close(c.sys_idle_pct, 60.0)
    );
    assert!(close(c.sys_steal_pct, 0.0) && close(c.sys_iowait_pct, 0.0));
    assert!(close(c.privileged_pct, 30.0));
    // Seed 000: c/B = 30 % × 2 GHz × 4 cores / 0.8 GB/s = 3.0.
    assert!(close(c.cycles_per_byte, 3.0), "{}", c.cycles_per_byte);
    // Busy 40 % of 16 G cycles over 400 000 I/Os; the process: 2 s × 2 GHz / 400 000.
    assert!(close(c.cycles_per_io, 16_000.0) && close(c.proc_cycles_per_io, 10_000.0));
    assert!(close(c.clock_hz, 2e9) && c.clock_source == "test: fixed 2 GHz");
}

#[test]
fn merged_hosts_get_their_own_cpu_and_ios() {
    let mut a = worker(0, 1_000_000_000);
    let mut b = worker(0, 1_000_000_000);
    record_n_ios(&mut a, IoDir::Read, 1_000, 4_096_000, 9_000);
    record_n_ios(&mut b, IoDir::Read, 3_000, 12_288_000, 9_000);
    b.host = "h2".into();
    let mut r1 = run_of(
        vec![job_result(job("j", 100, true, false), 0, vec![a])],
        vec![known_cpu("h1", 0)],
    );
    r1.jobs[0].workers[0].host = "h1".into();
    r1.hosts[0].hostname = "h1".into();
    let mut r2 = run_of(
        vec![job_result(job("j", 100, true, false), 0, vec![b])],
        vec![known_cpu("h2", 0)],
    );
    r2.hosts[0].hostname = "h2".into();
    r1.merge(&r2);
    let g = &summarize(&r1).groups[0];
    let hosts: Vec<(&str, u64)> = g.cpu.iter().map(|c| (c.host.as_str(), c.ios)).collect();
    assert_eq!(hosts, [("h1", 1_000), ("h2", 3_000)]);
    assert_eq!(g.read.ios, 4_000);
}

/// Two hosts, two groups; `h1` lists its groups in reverse order and `h2`
/// never started group 1 (a stop), so positions say nothing.
fn two_hosts_two_groups() -> RunResult {
    let one_job = |host: &str, ios: u64, group: u32| {
        let mut w = worker(0, 1_000_000_000);
        w.host = host.into();
        record_n_ios(&mut w, IoDir::Read, ios, ios * 4096, 9_000);
        job_result(job(&format!("g{group}"), 100, true, false), group, vec![w])
    };
    let window = |mut u: CpuUsage, secs: u64| {
        u.window_ns = secs * 1_000_000_000;
        u
    };
    let mut run = run_of(
        vec![one_job("h1", 100, 0), one_job("h1", 200, 1)],
        vec![
            window(known_cpu("h1", 1), 11),
            window(known_cpu("h1", 0), 10),
        ],
    );
    run.hosts[0].hostname = "h1".into();
    let mut other = run_of(
        vec![one_job("h2", 300, 0)],
        vec![window(known_cpu("h2", 0), 20)],
    );
    other.hosts[0].hostname = "h2".into();
    run.merge(&other);
    run
}

#[test]
fn cpu_entries_are_matched_by_host_and_group() {
    let s = summarize(&two_hosts_two_groups());
    let cpu = |g: usize| -> Vec<(String, u64, u64)> {
        s.groups[g]
            .cpu
            .iter()
            .map(|c| (c.host.clone(), c.window_ns / 1_000_000_000, c.ios))
            .collect()
    };
    assert_eq!(
        cpu(0),
        [("h1".to_string(), 10, 100), ("h2".to_string(), 20, 300)]
    );
    assert_eq!(cpu(1), [("h1".to_string(), 11, 200)]);
}

#[test]
fn results_without_cpu_host_and_group_are_read_by_position() {
    // A result written before CpuUsage named its host and group: one entry
    // per group, in group order, host after host.
    let mut run = two_hosts_two_groups();
    run.cpu = vec![
        known_cpu("h1", 0),
        known_cpu("h1", 1),
        known_cpu("h2", 0),
        known_cpu("h2", 1),
    ];
    let mut json = serde_json::to_value(&run).unwrap();
    for (i, c) in json["cpu"].as_array_mut().unwrap().iter_mut().enumerate() {
        let c = c.as_object_mut().unwrap();
        assert!(c.remove("host").is_some() && c.remove("group").is_some());
        c.insert("window_ns".into(), (i as u64 + 1).into());
    }
    let old: RunResult = serde_json::from_value(json).unwrap();
    assert!(old.cpu.iter().all(|c| c.host.is_empty() && c.group == 0));
    let s = summarize(&old);
    let cpu = |g: usize| -> Vec<(&str, u64, u64)> {
        s.groups[g]
            .cpu
            .iter()
            .map(|c| (c.host.as_str(), c.window_ns, c.ios))
            .collect()
    };
    assert_eq!(cpu(0), [("h1", 1, 100), ("h2", 3, 300)]);
    assert_eq!(cpu(1), [("h1", 2, 200), ("h2", 4, 0)]);
}

#[test]
fn group_aggregates_over_reported_entries() {
    let mut w0 = worker(0, 1_000_000_000);
    let mut w1 = worker(1, 2_000_000_000);
    let mut g0 = worker(0, 1_000_000_000);
    record_n_ios(&mut w0, IoDir::Read, 100, 1_000_000, 1_000);
    record_n_ios(&mut w1, IoDir::Read, 100, 3_000_000, 1_000);
    record_n_ios(&mut g0, IoDir::Read, 100, 5_000_000, 1_000);
    let jobs = vec![
        job_result(job("per-worker", 100, false, false), 0, vec![w0, w1]),
        job_result(job("grouped", 100, true, false), 1, vec![g0.clone(), g0]),
    ];
    let cpu = vec![known_cpu("testhost", 0), known_cpu("testhost", 1)];
    let s = summarize(&run_of(jobs, cpu));
    let r = &s.groups[0].read;
    assert_eq!(
        (r.ios, r.bytes, r.runtime_min_ns, r.runtime_max_ns),
        (200, 4_000_000, 1e9 as u64, 2e9 as u64)
    );
    assert!(close(r.bw_bytes_per_s, 2_000_000.0));
    assert!(
        close(r.entry_bw_min_bytes_per_s, 1_000_000.0)
            && close(r.entry_bw_max_bytes_per_s, 1_500_000.0)
    );
    let r1 = &s.groups[1].read;
    assert!(
        close(r1.entry_bw_min_bytes_per_s, 10_000_000.0) && close(r1.entry_bw_max_bytes_per_s, 1e7)
    );
    assert_eq!(s.groups[1].jobs, ["grouped"]);
    assert_eq!((s.groups[0].cpu.len(), s.groups[1].cpu[0].ios), (1, 200));
    assert_eq!(s.groups[0].write.ios, 0);
}

#[test]
fn rate_limited_jobs_report_both_latencies() {
    let mut w = worker(0, 1_000_000_000);
    record_io(&mut w, IoDir::Read, 4096, 100, 50_000);
    let mut h = LatHist::new();
    h.record(900_000);
    w.dirs[0].lat_intended_ns = Some(h);
    let plain = job_result(job("plain", 100, false, false), 0, vec![worker(0, 1)]);
    let rated = job_result(job("rated", 100, false, true), 0, vec![w]);
    let s = summarize(&run_of(vec![plain, rated], vec![]));
    assert!(s.jobs[0].latency_definitions.lat_intended.is_none());
    assert!(s.jobs[0].merged.read.lat_intended.is_none());
    let r = &s.jobs[1];
    assert!(r.config.rate_limited);
    assert!(r
        .latency_definitions
        .lat_intended
        .as_deref()
        .unwrap()
        .contains("intended"));
    let li = r.merged.read.lat_intended.as_ref().unwrap();
    assert_eq!(
        (li.count, r.merged.read.lat.max_ns),
        (1, 50_000 + 100),
        "max is the value recorded, not its bucket's edge"
    );
    assert_eq!(li.max_ns, 900_000);
}

#[test]
fn summarize_json_equals_summarize() {
    let run = example_run();
    let json = serde_json::to_string(&run).unwrap();
    let back: RunResult = serde_json::from_str(&json).unwrap();
    assert_eq!(back, run, "the result round-trips losslessly");
    let via_json = summarize_json(&json).unwrap();
    assert_eq!(via_json, serde_json::to_string(&summarize(&run)).unwrap());
    let parsed: RunSummary = serde_json::from_str(&via_json).unwrap();
    assert_eq!(parsed.jobs.len(), 2);
    assert!(summarize_json("{\"schema\": 1}").is_err());
}

#[test]
fn clat_distribution_counts_every_completion() {
    let s = summarize(&example_run());
    for j in &s.jobs {
        let n: u64 = j.merged.clat_dist.iter().map(|b| b.count).sum();
        assert_eq!(
            n,
            j.merged.read.clat.count + j.merged.write.clat.count,
            "{}",
            j.name
        );
    }
}

/// The Python tests (tests/results, tests/report) read this example so they
/// test against the real layout without the native module. Regenerate with
/// `IOLAB_UPDATE_FIXTURES=1 cargo test -p iolab-core --test integration summary::`.
#[test]
fn python_fixture_is_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/results/data");
    let (rpath, spath) = (
        dir.join("example_result.json"),
        dir.join("example_summary.json"),
    );
    let run = example_run();
    let summary = serde_json::to_value(summarize(&run)).unwrap();
    if std::env::var_os("IOLAB_UPDATE_FIXTURES").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&rpath, serde_json::to_string_pretty(&run).unwrap() + "\n").unwrap();
        std::fs::write(
            &spath,
            serde_json::to_string_pretty(&summary).unwrap() + "\n",
        )
        .unwrap();
    }
    let stale = "stale fixture: IOLAB_UPDATE_FIXTURES=1 cargo test -p iolab-core --test integration summary::";
    let on_disk: RunResult =
        serde_json::from_str(&std::fs::read_to_string(&rpath).expect(stale)).unwrap();
    assert_eq!(on_disk, run, "{stale}");
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&spath).unwrap()).unwrap();
    if let Some(path) = first_difference(&on_disk, &summary, String::new()) {
        panic!("summary differs at {path}; {stale}");
    }
}

/// Where two JSON values first differ (a path like `.jobs[0].merged`), if they do.
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, path: String) -> Option<String> {
    use serde_json::Value::{Array, Object};
    match (a, b) {
        (Object(x), Object(y)) => {
            let keys: std::collections::BTreeSet<_> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(u), Some(v)) => first_difference(u, v, format!("{path}.{k}")),
                _ => Some(format!("{path}.{k}")),
            })
        }
        (Array(x), Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| first_difference(u, v, format!("{path}[{i}]"))),
        _ => (a != b).then(|| format!("{path}: {a} != {b}")),
    }
}

#[test]
fn the_json_summary_decoding_one_worker_at_a_time_equals_the_typed_one() {
    // summarize_json folds each worker as it decodes it (one worker's
    // histograms alive at a time); it must give exactly summarize's answer,
    // CPU per host included.
    let run = two_hosts_two_groups();
    let text = serde_json::to_string(&run).unwrap();
    let streamed: serde_json::Value =
        serde_json::from_str(&iolab_core::summary::summarize_json(&text).unwrap()).unwrap();
    assert_eq!(streamed, serde_json::to_value(summarize(&run)).unwrap());
}
