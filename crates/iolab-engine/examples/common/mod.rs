//! Shared by the speed examples: run one job given as fio options, and a
//! one-line report with the worker thread's CPU per I/O.

use std::time::Duration;

use iolab_core::job::JobSpec;
use iolab_core::stats::RunResult;
use iolab_engine::{Run, RunConfig};

/// Runs the job `name` of fio-style `opts` ("bs=4k", or a bare flag like
/// "time_based"; no dashes) for the seconds given by the first of `args`
/// (default 5), with the rest of `args` appended as further options; shows
/// the engine's notes on stderr and prints the report line.
pub fn run(
    name: &str,
    opts: &[&str],
    mut args: impl Iterator<Item = String>,
) -> Result<(), Box<dyn std::error::Error>> {
    let secs: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5);
    let runtime = format!("runtime={secs}");
    let extra: Vec<String> = args.collect();
    let mut opts = opts.to_vec();
    opts.push(&runtime);
    opts.extend(extra.iter().map(String::as_str));
    let job = JobSpec::new(name).args(opts.iter().copied()).prepare()?;
    let cfg = RunConfig {
        jobs: vec![job],
        interval: Duration::from_secs(1),
        allow_overwrite: false,
        host: String::new(),
        host_index: 0,
    };
    let mut run = Run::prepare(cfg)?;
    run.start(None)?;
    for n in run.layout_notes() {
        eprintln!("{n}");
    }
    let r = run.wait()?;
    report(&format!("iolab {}", opts.join(" ")), &r);
    Ok(())
}

/// IOPS, latency and the worker thread's CPU per I/O.
fn report(what: &str, r: &RunResult) {
    let w = r.jobs[0].merged();
    let d = &w.dirs[0];
    let secs = w.runtime_ns as f64 / 1e9;
    let cpu_ns = (w.usr_cpu_ns + w.sys_cpu_ns) as f64;
    println!(
        "{what}: {:.0} IOPS over {secs:.2} s; lat p50 {} ns p99 {} ns; slat p50 {} ns; \
         CPU {:.1} ns/I/O (usr {:.1} + sys {:.1}), {:.0}% of one core",
        d.ios as f64 / secs,
        d.lat_ns.percentile(50.0),
        d.lat_ns.percentile(99.0),
        d.slat_ns.percentile(50.0),
        cpu_ns / d.ios as f64,
        w.usr_cpu_ns as f64 / d.ios as f64,
        w.sys_cpu_ns as f64 / d.ios as f64,
        cpu_ns / w.runtime_ns as f64 * 100.0,
    );
}
