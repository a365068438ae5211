//! Shared helpers: jobs written as fio options (validated by iolab's option
//! table, as a user's job would be), one-call runs, and a lock that keeps
//! timing tests from running side by side.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use iolab_core::job::{JobSpec, PreparedJob};
use iolab_core::stats::{RunResult, WorkerResult};
use iolab_engine::run::RunOutcome;
use iolab_engine::{Run, RunConfig};

pub const MIB: u64 = 1024 * 1024;

/// A job from fio options ("bs=4k", or a bare flag like "time_based"),
/// validated by iolab's option table, with `directory=dir`.
pub fn job(name: &str, dir: &Path, opts: &[&str]) -> PreparedJob {
    JobSpec::new(name)
        .opt("directory", Some(dir.to_str().unwrap()))
        .args(opts.iter().copied())
        .prepare()
        .unwrap_or_else(|e| panic!("{opts:?}: {e}"))
}

pub fn config(jobs: Vec<PreparedJob>) -> RunConfig {
    RunConfig {
        jobs,
        interval: Duration::from_secs(1),
        allow_overwrite: false,
        host: "test".into(),
        host_index: 0,
    }
}

/// Prepare, start now, wait; the outcome keeps both result and error.
pub fn run_outcome(cfg: RunConfig) -> RunOutcome {
    let mut run = Run::prepare(cfg).expect("prepare");
    run.start(None).expect("start");
    run.finish().expect("finish")
}

pub fn run_ok(cfg: RunConfig) -> RunResult {
    let o = run_outcome(cfg);
    if let Some(e) = o.error {
        panic!("run failed: {e}");
    }
    o.result
}

pub fn worker(r: &RunResult, job: usize, w: usize) -> &WorkerResult {
    &r.jobs[job].workers[w]
}

static SERIAL: Mutex<()> = Mutex::new(());

/// Tests measure time and CPU, so they run one at a time: a null job
/// spinning on one of two cores would otherwise delay another test's
/// wake-ups and make its timing say something about the test harness.
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}
