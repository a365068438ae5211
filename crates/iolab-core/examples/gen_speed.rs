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
use iolab_core::job::{JobSpec, PreparedJob};

/// A time-based job with the null engine and `opts` (fio options); the
/// region each case measures is given to the generator, not `size`.
fn job(opts: &[&str]) -> PreparedJob {
    JobSpec::new("speed")
        .args(["filename=speed", "size=1g", "ioengine=null"])
        .args(["time_based", "runtime=1", "randseed=1"])
        .args(opts.iter().copied())
        .prepare()
        .unwrap_or_else(|e| panic!("{opts:?}: {e}"))
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
    let cases: [(&str, &[&str], u64); 8] = [
        ("randread 4k, random map, 1 TiB", &["rw=randread"], tib),
        (
            "randrw 70/30 4k, random map, 1 TiB",
            &["rw=randrw", "rwmixread=70"],
            tib,
        ),
        (
            "randread 4k, norandommap, 1 TiB",
            &["rw=randread", "norandommap"],
            tib,
        ),
        ("read 128k sequential, 1 TiB", &["rw=read", "bs=128k"], tib),
        (
            "randread bssplit, random map (bitmap), 16 GiB",
            &["rw=randread", "bssplit=4k/50:16k/30:64k/20"],
            16 << 30,
        ),
        (
            "randread 4k, percentage_random=50, 16 GiB",
            &["rw=randread", "percentage_random=50"],
            16 << 30,
        ),
        (
            "randread 4k, zipf:1.2, 1 TiB",
            &["rw=randread", "random_distribution=zipf:1.2"],
            tib,
        ),
        (
            "randread 4k, pareto:0.2, 1 TiB",
            &["rw=randread", "random_distribution=pareto:0.2"],
            tib,
        ),
    ];
    for (label, opts, region_bytes) in cases {
        measure(label, &job(opts), region_bytes);
    }
}
