//! Micro benchmark of `IoGen::next` (ns per call) for the common modes.
//!
//! `cargo run --release -p iolab-core --example gen_speed`
//!
//! The target for random 4 KiB with the random map is well under 20 ns:
//! the engine calls `next` once per I/O, and at a few million IOPS per
//! worker anything slower would show in the results.

use std::hint::black_box;
use std::time::Instant;

use iolab_core::cpu::thread_rusage;
use iolab_core::gen::{FileRegion, IoGen};
use iolab_core::job::{BsSpec, JobSpec, Pattern, PreparedJob, RandomDistribution, RwMix};

const K: u64 = 1024;

fn job(pattern: Pattern, read_pct: u32, bs: BsSpec) -> PreparedJob {
    use iolab_core::job::{CpusAllowedPolicy, IoEngine, RateProcess, SyncMode};
    PreparedJob {
        name: "speed".into(),
        filenames: vec![],
        shared_files: true,
        directory: None,
        size: None,
        offset: 0,
        rw: RwMix { pattern, read_pct },
        bs: [bs.clone(), bs],
        blockalign: [0, 0],
        iodepth: 1,
        iodepth_batch_submit: 1,
        iodepth_batch_complete_min: 1,
        iodepth_batch_complete_max: 1,
        numjobs: 1,
        runtime_ns: None,
        time_based: true,
        ramp_time_ns: 0,
        startdelay_ns: 0,
        loops: 1,
        direct: false,
        sync: SyncMode::None,
        fsync: 0,
        fdatasync: 0,
        end_fsync: false,
        ioengine: IoEngine::Null,
        rate_bytes_per_s: [None, None],
        rate_iops: [None, None],
        rate_process: RateProcess::Linear,
        thinktime_ns: 0,
        cpus_allowed: None,
        cpus_allowed_policy: CpusAllowedPolicy::Shared,
        randseed: 1,
        randrepeat: true,
        norandommap: false,
        random_distribution: RandomDistribution::Uniform,
        percentile_list: vec![],
        group_reporting: false,
        stonewall: false,
        spec: JobSpec::new("speed"),
        warnings: Vec::new(),
    }
}

fn measure(label: &str, j: &PreparedJob, region_bytes: u64) {
    // An argument picks the cases whose label contains it (for profiling).
    if std::env::args()
        .nth(1)
        .is_some_and(|want| !label.contains(&want))
    {
        return;
    }
    let mut g = IoGen::new(
        j,
        0,
        vec![FileRegion {
            start: 0,
            len: region_bytes,
        }],
    )
    .expect("valid job");
    let n = 20_000_000u32;
    // Use the fields as the engine does; black-boxing the whole Option
    // would measure a store-forwarding stall of the harness instead.
    let mut acc = 0u64;
    let mut step = |g: &mut IoGen| {
        let u = g.next().expect("time based");
        acc = acc.wrapping_add(u.offset ^ u.len ^ u64::from(u.file) ^ u.dir as u64);
    };
    for _ in 0..1_000_000 {
        step(&mut g);
    }
    let (u0, s0, _) = thread_rusage();
    let t = Instant::now();
    for _ in 0..n {
        step(&mut g);
    }
    black_box(acc);
    let wall_ns = t.elapsed().as_nanos() as f64 / f64::from(n);
    let (u1, s1, _) = thread_rusage();
    let cpu_ns = ((u1 + s1) - (u0 + s0)) as f64 / f64::from(n);
    // CPU time per call is the figure to trust on a shared machine.
    println!("{label:<46} {cpu_ns:6.2} ns/next on CPU ({wall_ns:6.2} wall)");
}

/// The bare PRNG, for scale: on a busy machine every figure grows alike.
fn baseline() {
    use rand::RngCore;
    let mut rng = iolab_core::gen::rng_for(1, 1);
    let n = 100_000_000u32;
    let (u0, s0, _) = thread_rusage();
    for _ in 0..n {
        black_box(rng.next_u64());
    }
    let (u1, s1, _) = thread_rusage();
    let cpu_ns = ((u1 + s1) - (u0 + s0)) as f64 / f64::from(n);
    println!(
        "{:<46} {cpu_ns:6.2} ns/call on CPU",
        "baseline: one xoshiro256++ draw"
    );
}

fn main() {
    baseline();
    let tib = 1u64 << 40;
    let r4k = job(Pattern::Random, 100, BsSpec::Fixed(4 * K));
    measure("randread 4k, random map, 1 TiB", &r4k, tib);
    measure(
        "randrw 70/30 4k, random map, 1 TiB",
        &job(Pattern::Random, 70, BsSpec::Fixed(4 * K)),
        tib,
    );
    measure(
        "randread 4k, norandommap, 1 TiB",
        &PreparedJob {
            norandommap: true,
            ..r4k.clone()
        },
        tib,
    );
    measure(
        "read 128k sequential, 1 TiB",
        &job(Pattern::Sequential, 100, BsSpec::Fixed(128 * K)),
        tib,
    );
    let split = BsSpec::Split(vec![(4 * K, 50), (16 * K, 30), (64 * K, 20)]);
    measure(
        "randread bssplit, random map (bitmap), 16 GiB",
        &job(Pattern::Random, 100, split),
        16 << 30,
    );
    let zipf = PreparedJob {
        random_distribution: RandomDistribution::Zipf(1.2),
        ..r4k.clone()
    };
    measure("randread 4k, zipf:1.2, 1 TiB", &zipf, tib);
    let pareto = PreparedJob {
        random_distribution: RandomDistribution::Pareto(0.2),
        ..r4k
    };
    measure("randread 4k, pareto:0.2, 1 TiB", &pareto, tib);
}
