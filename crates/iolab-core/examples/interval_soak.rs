//! A synthetic soak: WORKERS workers of one job reporting an interval
//! every INTERVAL_MS for HOURS of simulated time, streamed through
//! `stats::stream::IntervalStream` into an interval log as a run streams
//! them (each job's workers merged as they arrive), with the workers'
//! whole-run histograms kept as the engine keeps them. Prints the resident
//! memory at 10 minutes, 1 hour and the end of simulated time, the log's
//! size, and writes the run result (`engine_result.json`, its workers' series
//! empty) beside `intervals.hlog` in OUT_DIR. bench/interval_soak.py runs
//! it and reports on what it wrote.
//!
//!     cargo run --release -p iolab-core --example interval_soak -- OUT_DIR [WORKERS] [HOURS] [INTERVAL_MS]

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use iolab_core::hist::{LatHist, PackedHist};
use iolab_core::job::{IoDir, JobSpec};
use iolab_core::stats::hlog::{HlogWriter, HLOG_FILE};
use iolab_core::stats::stream::{IntervalStream, StreamJob};
use iolab_core::stats::{
    DirInterval, HostInfo, IntervalLogRef, IntervalSample, JobResult, RunResult, WorkerResult,
    SCHEMA,
};

/// Distinct interval histograms the workers cycle through (each a few
/// thousand I/Os between 20 µs and 5 ms, ~1.3 KB packed as measured).
const POOL: usize = 61;
const IOS_PER_INTERVAL: u64 = 4000;
const BS: u64 = 4096;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn pool() -> Vec<(LatHist, PackedHist)> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..POOL)
        .map(|k| {
            let mut h = LatHist::new();
            for _ in 0..IOS_PER_INTERVAL {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // log-uniform 20 µs .. ~5 ms, shifted a little per histogram
                let e = (x % 10_000) as f64 / 10_000.0 * 8.0 + (k % 5) as f64 * 0.1;
                h.record((20_000.0 * e.exp2()) as u64);
            }
            let p = PackedHist::pack(&h);
            (h, p)
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out = PathBuf::from(args.get(1).expect("OUT_DIR"));
    let workers: u32 = args.get(2).map_or(64, |s| s.parse().expect("WORKERS"));
    let hours: f64 = args.get(3).map_or(24.0, |s| s.parse().expect("HOURS"));
    let interval_ms: u64 = args
        .get(4)
        .map_or(1000, |s| s.parse().expect("INTERVAL_MS"));
    let interval_ns = interval_ms * 1_000_000;
    let intervals = (hours * 3600.0 * 1e3 / interval_ms as f64) as u64;
    std::fs::create_dir_all(&out).expect("create OUT_DIR");

    let job = JobSpec {
        name: "soak".into(),
        options: vec![
            ("ioengine".into(), Some("null".into())),
            ("rw".into(), Some("randread".into())),
            ("bs".into(), Some("4k".into())),
            ("size".into(), Some("1g".into())),
            ("numjobs".into(), Some(workers.to_string())),
        ],
    }
    .prepare()
    .expect("a valid job");
    let start_unix_ns = 1_800_000_000_000_000_000;
    let file = File::create(out.join(HLOG_FILE)).expect("create the log");
    let log = HlogWriter::begin(
        BufWriter::new(file),
        start_unix_ns,
        interval_ns,
        "interval_soak",
    )
    .expect("write the header");
    let specs = [StreamJob {
        name: "soak".into(),
        workers,
    }];
    let mut stream = IntervalStream::new(log, &specs, "soakhost", false).expect("stream");
    let pool = pool();
    let mut totals: Vec<WorkerResult> = (0..workers)
        .map(|w| WorkerResult {
            worker: w,
            host: "soakhost".into(),
            ..Default::default()
        })
        .collect();
    let mut uses = vec![[0u64; POOL]; workers as usize];
    let marks = [(600.0, "10 min"), (3600.0, "1 h")];
    let rss0 = rss_kib();
    println!("rss at start: {rss0} KiB");
    let started = std::time::Instant::now();
    for i in 0..intervals {
        for (w, t) in totals.iter_mut().enumerate() {
            let (h, p) = &pool[(w + i as usize) % POOL];
            let mut s = IntervalSample {
                start_ns: i * interval_ns,
                end_ns: (i + 1) * interval_ns,
                ..Default::default()
            };
            s.dirs[IoDir::Read as usize] = DirInterval {
                ios: IOS_PER_INTERVAL,
                bytes: IOS_PER_INTERVAL * BS,
                lat_ns: p.clone(),
            };
            let d = &mut t.dirs[IoDir::Read as usize];
            d.ios += IOS_PER_INTERVAL;
            d.bytes += IOS_PER_INTERVAL * BS;
            // the whole-run histograms: added up once at the end
            uses[w][(w + i as usize) % POOL] += 1;
            let _ = h;
            stream.interval(0, w as u32, &s).expect("write");
        }
        // the engine flushes after every poll (4 a second)
        stream.flush().expect("flush");
        let t_s = (i + 1) as f64 * interval_ms as f64 / 1e3;
        for (at, name) in marks {
            if (t_s - at).abs() < interval_ms as f64 / 2e3 {
                println!(
                    "rss at {name}: {} KiB (pending {})",
                    rss_kib(),
                    stream.pending()
                );
            }
        }
    }
    for w in 0..workers {
        stream.finished(0, w).expect("end");
    }
    stream.flush().expect("flush");
    println!(
        "rss at {hours} h: {} KiB; {intervals} intervals x {workers} workers streamed in {:.1} s",
        rss_kib(),
        started.elapsed().as_secs_f64()
    );
    let runtime_ns = intervals * interval_ns;
    for (t, used) in totals.iter_mut().zip(&uses) {
        let d = &mut t.dirs[IoDir::Read as usize];
        for ((h, _), &n) in pool.iter().zip(used) {
            for (value_ns, count) in h.buckets() {
                d.lat_ns.record_n(value_ns, count * n);
                d.clat_ns.record_n(value_ns, count * n);
            }
        }
    }
    for t in &mut totals {
        t.runtime_ns = runtime_ns;
        t.dirs[IoDir::Read as usize].runtime_ns = Some(runtime_ns);
        t.dirs[IoDir::Write as usize].runtime_ns = Some(0);
    }
    let result = RunResult {
        schema: SCHEMA.into(),
        tool_version: iolab_core::VERSION.into(),
        start_unix_ns,
        interval_ns,
        hosts: vec![HostInfo {
            hostname: "soakhost".into(),
            ncpus: 2,
            ..Default::default()
        }],
        jobs: vec![JobResult {
            name: "soak".into(),
            group: 0,
            job,
            workers: totals,
        }],
        cpu: vec![],
        layout_notes: vec![],
        interval_log: Some(IntervalLogRef {
            file: HLOG_FILE.into(),
            per_worker: false,
        }),
    };
    let f = File::create(out.join("engine_result.json")).expect("create engine_result.json");
    serde_json::to_writer(BufWriter::new(f), &result).expect("write engine_result.json");
    let log_bytes = std::fs::metadata(out.join(HLOG_FILE)).map_or(0, |m| m.len());
    println!(
        "interval log: {log_bytes} bytes; expected I/Os: {}",
        intervals * workers as u64 * IOS_PER_INTERVAL
    );
}
