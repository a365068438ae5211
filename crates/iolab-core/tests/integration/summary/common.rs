//! Builders for hand-made results with known contents (tests/summary.rs).

use iolab_core::cpu::{CpuUsage, SysTicks};
use iolab_core::hist::{LatHist, PackedHist};
use iolab_core::job::{IoDir, JobSpec, PreparedJob};
use iolab_core::stats::{HostInfo, IntervalSample, JobResult, RunResult, WorkerResult, SCHEMA};

pub const PCTS: [f64; 6] = [1.0, 50.0, 90.0, 99.0, 99.9, 99.99];
pub const SEC: u64 = 1_000_000_000;

/// xorshift64: deterministic samples without a dependency.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A time-based 4 KiB random job of two workers at iodepth 8, prepared
/// from fio options (the summary reads the display fields, the percentile
/// list, group_reporting and rate limits).
pub fn job(name: &str, read_pct: u32, group_reporting: bool, rate_limited: bool) -> PreparedJob {
    let rw = match read_pct {
        100 => "rw=randread".to_string(),
        0 => "rw=randwrite".to_string(),
        pct => format!("rw=randrw rwmixread={pct}"),
    };
    let percentiles = PCTS.map(|p| p.to_string()).join(":");
    let mut spec = JobSpec::new(name)
        .args(rw.split(' '))
        .args(["bs=4k", "size=64m", "iodepth=8", "numjobs=2"])
        .args(["time_based", "runtime=2", "direct=1", "ioengine=null"])
        .opt("randseed", Some("1"))
        .opt("percentile_list", Some(&percentiles));
    if group_reporting {
        spec = spec.opt("group_reporting", None);
    }
    if rate_limited {
        spec = spec.opt("rate_iops", Some(",1000"));
    }
    spec.prepare().unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn worker(index: u32, runtime_ns: u64) -> WorkerResult {
    WorkerResult {
        worker: index,
        runtime_ns,
        ..Default::default()
    }
}

/// One I/O: slat and clat as given, lat = slat + clat.
pub fn record_io(w: &mut WorkerResult, d: IoDir, bytes: u64, slat_ns: u64, clat_ns: u64) {
    let s = &mut w.dirs[d as usize];
    s.ios += 1;
    s.bytes += bytes;
    s.slat_ns.record(slat_ns);
    s.clat_ns.record(clat_ns);
    s.lat_ns.record(slat_ns + clat_ns);
}

/// `n` I/Os of the same latency (clat = lat, no slat, like a sync engine).
pub fn record_n_ios(w: &mut WorkerResult, d: IoDir, n: u64, bytes: u64, lat_ns: u64) {
    let s = &mut w.dirs[d as usize];
    s.ios += n;
    s.bytes += bytes;
    s.clat_ns.record_n(lat_ns, n);
    s.lat_ns.record_n(lat_ns, n);
}

/// Interval `k` (1 s long, cut at the worker's runtime) with `ios` I/Os of
/// `bs` bytes, all of total latency `lat_ns`.
pub fn push_interval(w: &mut WorkerResult, k: u64, d: IoDir, ios: u64, bs: u64, lat_ns: u64) {
    let mut s = IntervalSample {
        start_ns: k * SEC,
        end_ns: ((k + 1) * SEC).min(w.runtime_ns),
        ..Default::default()
    };
    s.dirs[d as usize].ios = ios;
    s.dirs[d as usize].bytes = ios * bs;
    let mut h = LatHist::new();
    h.record_n(lat_ns, ios);
    s.dirs[d as usize].lat_ns = PackedHist::pack(&h);
    w.series.push(s);
}

pub fn job_result(job: PreparedJob, group: u32, workers: Vec<WorkerResult>) -> JobResult {
    JobResult {
        name: job.name.clone(),
        group,
        job,
        workers,
    }
}

pub fn run_of(jobs: Vec<JobResult>, cpu: Vec<CpuUsage>) -> RunResult {
    RunResult {
        schema: SCHEMA.into(),
        tool_version: iolab_core::VERSION.into(),
        start_unix_ns: 1_700_000_000 * SEC,
        interval_ns: SEC,
        hosts: vec![HostInfo {
            hostname: "testhost".into(),
            ncpus: 4,
            ..Default::default()
        }],
        jobs,
        cpu,
        layout_notes: vec![],
        interval_log: None,
    }
}

/// A worker of the example run: `secs` one-second intervals of random I/O.
fn example_worker(index: u32, secs: u64, read_pct: u64, rng: &mut Rng) -> WorkerResult {
    let mut w = worker(index, secs * SEC);
    for k in 0..secs {
        let mut s = IntervalSample {
            start_ns: k * SEC,
            end_ns: (k + 1) * SEC,
            ..Default::default()
        };
        let mut iv_lat = [LatHist::new(), LatHist::new()];
        for _ in 0..2_000 + rng.next() % 500 {
            let d = if rng.next() % 100 < read_pct {
                IoDir::Read
            } else {
                IoDir::Write
            };
            let (slat, clat) = (
                300 + rng.next() % 700,
                40_000 + rng.next() % 60_000 + rng.next() % 4 * 500_000,
            );
            record_io(&mut w, d, 4096, slat, clat);
            let x = &mut s.dirs[d as usize];
            x.ios += 1;
            x.bytes += 4096;
            iv_lat[d as usize].record(slat + clat);
        }
        for (x, h) in s.dirs.iter_mut().zip(&iv_lat) {
            x.lat_ns = PackedHist::pack(h);
        }
        w.series.push(s);
    }
    w.usr_cpu_ns = secs * SEC / 5;
    w.sys_cpu_ns = secs * SEC / 3;
    w.ctx_switches = 1_000 * secs;
    w
}

/// A run with one plain and one rate-limited job, in two stonewall groups;
/// the Python tests read its summary (tests/results/data).
pub fn example_run() -> RunResult {
    let mut rng = Rng(42);
    let plain = (0..2).map(|i| example_worker(i, 3, 70, &mut rng)).collect();
    let mut rated: Vec<WorkerResult> = (0..2).map(|i| example_worker(i, 2, 0, &mut rng)).collect();
    for w in &mut rated {
        let mut intended = LatHist::new();
        for _ in 0..w.dirs[1].ios {
            intended.record(100_000 + rng.next() % 2_000_000);
        }
        w.dirs[1].lat_intended_ns = Some(intended);
        w.syncs = 50;
        w.sync_lat_ns.record_n(1_200_000, 50);
    }
    let cpu = |group: u32, idle: u64| CpuUsage {
        host: "testhost".into(),
        group,
        window_ns: 3 * SEC,
        ncpus: 4,
        user_hz: 100,
        proc_user_ns: SEC,
        proc_sys_ns: 2 * SEC,
        sys: SysTicks {
            user: 300,
            system: 200,
            irq: 10,
            softirq: 90,
            idle,
            iowait: 12,
            ..Default::default()
        },
        clock_hz: 2.5e9,
        clock_source: "cpufreq base_frequency".into(),
    };
    run_of(
        vec![
            job_result(job("randrw", 70, false, false), 0, plain),
            job_result(job("rated-write", 0, true, true), 1, rated),
        ],
        vec![cpu(0, 588), cpu(1, 600)],
    )
}
