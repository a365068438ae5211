//! The two ends of a run that are not the running: building every
//! worker's spec from the jobs (layout, files, generator, rate limiter,
//! buffers) and assembling the [`RunResult`] from what the workers returned.

use std::path::PathBuf;
use std::sync::Arc;

use iolab_core::gen::{FileRegion, IoGen};
use iolab_core::job::PreparedJob;
use iolab_core::rate::RateLimiter;
use iolab_core::stats::{JobResult, RunResult, SCHEMA};

use super::coordinator::CoordOut;
use super::host::host_info;
use super::nbd::Exports;
use super::zones::{share_zones, strided_file_ends, ZoneTables};
use super::{RunConfig, RunOutcome};
use crate::layout::{self, Layout};
use crate::worker::buffers::AlignedBufs;
use crate::worker::thread::cpus_for_worker;
use crate::worker::{WorkerId, WorkerSpec};
use crate::EngineError;

pub struct Prepared {
    pub specs: Vec<WorkerSpec>,
    /// Stonewall group of each job.
    pub groups: Vec<u32>,
    pub notes: Vec<String>,
    /// Bytes each worker will move (flat, job by job), None when time based.
    pub planned_bytes: Vec<Option<u64>>,
    /// Files to remove at the end (`unlink`): iolab created them.
    pub unlink: Vec<PathBuf>,
}

/// fio: a job with `stonewall` waits for every job before it, and starts a
/// new group.
pub fn stonewall_groups(jobs: &[PreparedJob]) -> Vec<u32> {
    let mut g = 0;
    jobs.iter()
        .enumerate()
        .map(|(i, j)| {
            if i > 0 && j.stonewall {
                g += 1;
            }
            g
        })
        .collect()
}

/// `lockmem`: the most bytes the workers of one stonewall group lock at
/// once (groups run one after another; create_only jobs lock nothing).
fn most_locked(jobs: &[PreparedJob], groups: &[u32]) -> u64 {
    let mut per_group = std::collections::BTreeMap::<u32, u64>::new();
    for (job, g) in jobs.iter().zip(groups) {
        if !job.worker.create_only {
            let bytes = job
                .worker
                .lockmem_bytes
                .saturating_mul(u64::from(job.workers()));
            let sum = per_group.entry(*g).or_default();
            *sum = sum.saturating_add(bytes);
        }
    }
    per_group.into_values().max().unwrap_or(0)
}

pub fn prepare(cfg: &RunConfig) -> Result<Prepared, EngineError> {
    if cfg.jobs.is_empty() {
        return Err(EngineError::Lifecycle(
            "a run needs at least one job".into(),
        ));
    }
    if cfg.interval.is_zero() {
        return Err(EngineError::Lifecycle(
            "the time-series interval must be longer than 0".into(),
        ));
    }
    let groups = stonewall_groups(&cfg.jobs);
    crate::worker::lockmem::check_limit(most_locked(&cfg.jobs, &groups))?;
    let layout = layout::prepare(&cfg.jobs, cfg.allow_overwrite, &mut |_, _, _| {})?;
    let mut notes = layout.notes.clone();
    let exports = Exports::probe(&cfg.jobs, &mut notes)?;
    let mut out = Prepared {
        specs: Vec::new(),
        groups,
        notes,
        planned_bytes: Vec::new(),
        unlink: Vec::new(),
    };
    unlink_list(cfg, &layout, &mut out);
    let mut zone_tables = ZoneTables::new();
    for (ji, job) in cfg.jobs.iter().enumerate() {
        let shared = Arc::new(job.clone());
        for w in 0..job.workers() {
            let mut spec = worker_spec(cfg, &layout, &exports, &shared, ji as u32, w)?;
            share_zones(&mut zone_tables, &mut spec);
            strided_file_ends(&layout, &mut spec);
            out.planned_bytes.push(spec.gen.total_bytes());
            out.specs.push(spec);
        }
    }
    Ok(out)
}

/// `unlink`: the files of jobs that ask for it which iolab created; a file
/// iolab found is kept, and a note says so.
fn unlink_list(cfg: &RunConfig, layout: &Layout, out: &mut Prepared) {
    for job in cfg
        .jobs
        .iter()
        .filter(|j| j.files.unlink && j.nbd.is_none())
    {
        for w in 0..job.workers() {
            for path in job.files_for_worker(w) {
                let Some(pf) = layout.file(&path) else {
                    continue;
                };
                if out.unlink.contains(&path) {
                    continue;
                }
                if pf.created_by_iolab {
                    out.unlink.push(path);
                } else {
                    out.notes.push(format!(
                        "unlink: keeping {} (iolab did not create it)",
                        path.display()
                    ));
                }
            }
        }
    }
}

fn worker_spec(
    cfg: &RunConfig,
    layout: &Layout,
    exports: &Exports,
    job: &Arc<PreparedJob>,
    ji: u32,
    w: u32,
) -> Result<WorkerSpec, EngineError> {
    let regions = match &job.nbd {
        Some(t) => vec![exports.region(job, w, t)?],
        None => layout::regions_for_worker(layout, job, w)?,
    };
    let mut files = Vec::new();
    if job.ioengine.caps().target.opens_files() {
        for r in &regions {
            let pf = layout.file(&r.path).ok_or_else(|| not_laid_out(&r.path))?;
            let f = layout::open(pf, job)?;
            crate::backend::atomic::check(&f, &r.path, job)?;
            files.push(f);
        }
    }
    let paths: Vec<PathBuf> = regions.iter().map(|r| r.path.clone()).collect();
    let gen = IoGen::new(
        job,
        w,
        regions
            .iter()
            .map(|r| FileRegion {
                start: r.start,
                len: r.len,
            })
            .collect(),
    )?;
    let rate = RateLimiter::new(job, gen.seed());
    let slot_bytes = job.bs[0].max().max(job.bs[1].max()) as usize;
    // Synchronous engines do one I/O at a time: one buffer is all they use.
    let offload = job.control.submit_mode == iolab_core::job::SubmitMode::Offload;
    let slots = if job.ioengine.synchronous() && !offload {
        1
    } else {
        job.iodepth.max(1) as usize
    };
    let bufs = AlignedBufs::new(slots, slot_bytes, gen.seed());
    Ok(WorkerSpec {
        id: WorkerId { job: ji, worker: w },
        job: job.clone(),
        paths,
        files,
        gen,
        rate,
        cpus: cpus_for_worker(job, w)?,
        interval_ns: cfg.interval.as_nanos() as u64,
        keep_series: true,
        cumulative: None,
        host: cfg.host.clone(),
        bufs,
        dedupe_peer: crate::worker::dedupe::peer(&cfg.jobs, ji as usize, w),
    })
}

fn not_laid_out(path: &std::path::Path) -> EngineError {
    EngineError::Lifecycle(format!(
        "{} has a region but no prepared file",
        path.display()
    ))
}

/// Build the result; the first worker error (in job order) is the run's.
pub fn assemble(
    cfg: &RunConfig,
    groups: &[u32],
    notes: Vec<String>,
    out: CoordOut,
    start_unix_ns: u64,
) -> RunOutcome {
    let CoordOut {
        mut outcomes,
        cpu,
        notes: cpu_notes,
    } = out;
    outcomes.sort_by_key(|(id, _)| (id.job, id.worker));
    let mut jobs: Vec<JobResult> = cfg
        .jobs
        .iter()
        .zip(groups)
        .map(|(j, &g)| JobResult {
            name: j.name.clone(),
            group: g,
            job: j.clone(),
            workers: Vec::new(),
        })
        .collect();
    let mut error = None;
    for (id, o) in outcomes {
        if error.is_none() {
            error = o.error;
        }
        jobs[id.job as usize].workers.push(o.result);
    }
    let mut layout_notes = notes;
    layout_notes.extend(cpu_notes);
    let result = RunResult {
        schema: SCHEMA.to_string(),
        tool_version: iolab_core::VERSION.to_string(),
        start_unix_ns,
        interval_ns: cfg.interval.as_nanos() as u64,
        hosts: vec![host_info(&cfg.host)],
        jobs,
        cpu,
        layout_notes,
        interval_log: None,
    };
    RunOutcome { result, error }
}
