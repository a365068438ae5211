//! Shared by the speed examples: a job from fio's options, and a one-line
//! report with the worker thread's CPU per I/O.

use iolab_core::job::{JobSpec, PreparedJob};
use iolab_core::stats::RunResult;

/// A job from fio-style `--opt=value` strings (without the dashes).
pub fn job(name: &str, opts: &[&str]) -> Result<PreparedJob, iolab_core::JobError> {
    let mut spec = JobSpec::new(name);
    for o in opts {
        spec = match o.split_once('=') {
            Some((k, v)) => spec.opt(k, Some(v)),
            None => spec.opt(o, None),
        };
    }
    spec.prepare()
}

/// IOPS, latency and the worker thread's CPU per I/O.
pub fn report(what: &str, r: &RunResult) {
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
