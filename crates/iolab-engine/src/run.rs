//! The run lifecycle: `prepare → start(at) → poll → stop → result`.
//!
//! Designed for many hosts from day one: `prepare` does everything slow
//! (validation, safety checks, file layout, opening files, allocating
//! buffers) so that `start(at)` can start every worker at a given wall-clock
//! instant (the fleet passes a common instant after a barrier). `poll`
//! returns progress built from interval snapshots; `stop` asks workers to
//! finish early (Ctrl-C); `wait` returns the lossless [`RunResult`].
//!
//! Stonewall groups run one after another; `start(at)` applies to the
//! first group, the next group starts when the previous one has finished.
//! `start` spawns every worker of every group at once, so each opens its
//! backend then and a set-up error (no io_uring, a CPU that cannot be
//! pinned) is returned by `start` itself, before any I/O.
//!
//! Submodules: [`coordinator`] (the thread that runs the groups),
//! [`progress`] (poll's merged view), [`host`] (host facts), `notes` (what
//! the backends said, once per line and named by job where jobs differ),
//! `snapshot` (the result so far, for interim reports: [`Run::snapshot`]).

pub mod coordinator;
pub mod host;
mod nbd;
mod notes;
pub mod progress;
mod setup;
mod snapshot;
mod stream;
mod zones;

use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use iolab_core::job::PreparedJob;
use iolab_core::stats::RunResult;
use serde::{Deserialize, Serialize};

use crate::worker::clock::now_ns;
use crate::worker::{self, Control, WorkerMsg, WorkerSpec};
use crate::EngineError;
use coordinator::{CoordOut, CoordState, GroupPlan};
use progress::Tracker;

/// What a run needs beyond its jobs.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub jobs: Vec<PreparedJob>,
    /// Time-series interval (default 1 s).
    pub interval: Duration,
    /// Allow writing to block devices and to existing files iolab did not
    /// create (`--allow-overwrite`). Mounted devices and devices with a
    /// filesystem signature are refused even then.
    pub allow_overwrite: bool,
    /// Host name recorded in results (fleet: the rank's host); empty: this
    /// host's own name (uname).
    pub host: String,
    /// A fleet host's rank (0 for a single run): mixed into the workers'
    /// seeds unless a job gives `randseed`, so hosts draw their own offsets.
    pub host_index: u32,
}

/// Live view of a running run, from the latest interval snapshots.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Progress {
    /// Stonewall group now running (0-based) and how many there are.
    pub group: u32,
    pub groups: u32,
    /// "layout", "waiting", "ramp", "running", "done".
    pub phase: String,
    pub elapsed_ns: u64,
    /// Estimate; None when the run ends by size, not time.
    pub remaining_ns: Option<u64>,
    /// Fraction done of the current group (0..1) when known.
    pub fraction: Option<f64>,
    /// Last interval, per direction (index = IoDir).
    pub iops: [f64; 3],
    pub bw_bytes_per_s: [f64; 3],
    pub p50_ns: [u64; 3],
    pub p99_ns: [u64; 3],
    /// The last interval's total-latency histogram per direction, merged
    /// over the group's workers: a fleet merges these across hosts exactly
    /// (bucket sums) for its live total's percentiles.
    pub lat_ns: [iolab_core::hist::LatHist; 3],
    /// The same last interval per job of the running group (steady state
    /// is judged per job).
    #[serde(default)]
    pub jobs: Vec<JobProgress>,
    /// Every job's totals since the start of the run (measured intervals;
    /// ramp left out, as in the result): what `--metrics` exports.
    #[serde(default)]
    pub totals: Vec<JobTotals>,
}

/// One job's running totals: I/Os, bytes and the total-latency histogram
/// per direction (index = IoDir) over its measured intervals so far.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobTotals {
    /// Index of the job in the run.
    pub job: u32,
    pub ios: [u64; 3],
    pub bytes: [u64; 3],
    pub lat_ns: [iolab_core::hist::LatHist; 3],
}

/// One job's share of [`Progress`]: its workers' last interval, merged.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct JobProgress {
    /// Index of the job in the run.
    pub job: u32,
    pub iops: [f64; 3],
    pub bw_bytes_per_s: [f64; 3],
    pub lat_ns: [iolab_core::hist::LatHist; 3],
    /// Every worker of the job has finished.
    pub finished: bool,
}

/// A finished run: the result of everything that was done, and the error
/// that ended it early, if any (an I/O error keeps the work done before it).
#[derive(Debug)]
pub struct RunOutcome {
    pub result: RunResult,
    pub error: Option<EngineError>,
}

#[derive(Debug)]
enum State {
    Prepared(Vec<WorkerSpec>),
    Started {
        coordinator: JoinHandle<CoordOut>,
    },
    /// `start` failed; its error was returned.
    Failed,
}

/// A prepared (then started) run.
#[derive(Debug)]
pub struct Run {
    cfg: RunConfig,
    /// Stonewall group of each job.
    groups: Vec<u32>,
    notes: Vec<String>,
    state: State,
    ctl: Arc<Control>,
    msgs: Receiver<WorkerMsg>,
    msgs_tx: mpsc::Sender<WorkerMsg>,
    tracker: Tracker,
    coord: Arc<Mutex<CoordState>>,
    /// The same instant on both clocks, taken at `start`: (unix ns, monotonic ns).
    anchor: (u64, u64),
    /// Files to remove once the workers are done (`unlink`).
    unlink: Vec<std::path::PathBuf>,
    /// The interval log, when the run streams its intervals.
    streaming: Option<stream::Streaming>,
    /// The workers' results so far, when interim reports were asked for.
    cumulative: Option<snapshot::Cumulative>,
}

/// fio's `thread_number` for seeds: workers numbered across the run, job
/// after job, and the host's rank beside them.
fn number_workers(cfg: &mut RunConfig) {
    let mut next = 0u32;
    for job in &mut cfg.jobs {
        job.first_worker = next;
        job.seed_host = cfg.host_index;
        next = next.wrapping_add(job.numjobs);
    }
}

impl Run {
    /// Validate, check safety, lay out files, open them, allocate buffers.
    pub fn prepare(mut cfg: RunConfig) -> Result<Run, EngineError> {
        // One name for the host in every part of the result: workers, CPU
        // accounting, host facts.
        cfg.host = host::host_name(&cfg.host);
        number_workers(&mut cfg);
        let setup::Prepared {
            specs,
            groups,
            notes,
            planned_bytes,
            unlink,
        } = setup::prepare(&cfg)?;
        let (msgs_tx, msgs) = mpsc::channel();
        let ctl = Arc::new(Control::for_jobs(cfg.jobs.len()));
        Ok(Run {
            tracker: Tracker::new(&cfg.jobs, &groups, planned_bytes),
            cfg,
            groups,
            notes,
            state: State::Prepared(specs),
            ctl,
            msgs,
            msgs_tx,
            coord: Arc::new(Mutex::new(CoordState::default())),
            anchor: (0, 0),
            unlink,
            streaming: None,
            cumulative: None,
        })
    }

    /// Stream the measured intervals to an interval log at `path` (see
    /// [`stream`]) instead of keeping them in the result: each job's
    /// workers merged, and each worker alone too with `per_worker`. Before
    /// [`Run::start`].
    pub fn stream_intervals(
        &mut self,
        path: &std::path::Path,
        per_worker: bool,
    ) -> Result<(), EngineError> {
        let State::Prepared(specs) = &mut self.state else {
            return Err(EngineError::Lifecycle(
                "stream_intervals must be called before start".into(),
            ));
        };
        // latency_target restarts a worker's measured window when its
        // search settles: intervals already streamed cannot be taken back.
        if let Some(j) = self
            .cfg
            .jobs
            .iter()
            .find(|j| j.control.latency_target_ns > 0)
        {
            return Err(EngineError::Lifecycle(format!(
                "job {}: latency_target restarts the measured window when its search settles, \
                 so its intervals cannot be streamed: run it without --stream-intervals",
                j.name
            )));
        }
        specs.iter_mut().for_each(|s| s.keep_series = false);
        self.streaming = Some(stream::Streaming::new(path, per_worker));
        Ok(())
    }

    /// Have every worker send its result so far at each measured interval
    /// and at its end, for [`Run::snapshot`]. Before [`Run::start`].
    pub fn report_cumulative(&mut self) -> Result<(), EngineError> {
        let State::Prepared(specs) = &mut self.state else {
            return Err(EngineError::Lifecycle(
                "report_cumulative must be called before start".into(),
            ));
        };
        let c = snapshot::Cumulative::new(&self.cfg);
        specs
            .iter_mut()
            .for_each(|s| s.cumulative = Some(c.sender()));
        self.cumulative = Some(c);
        Ok(())
    }

    /// The run's result so far, in the form [`Run::finish`] gives (see
    /// `snapshot`): every worker's measured window up to the last interval
    /// it closed (or its end), no series, no per-group CPU window.
    pub fn snapshot(&mut self) -> Result<RunResult, EngineError> {
        if !matches!(self.state, State::Started { .. }) {
            return Err(EngineError::Lifecycle(
                "snapshot called before start (or after the end)".into(),
            ));
        }
        let start_unix_ns = self.start_unix_ns();
        let Some(c) = self.cumulative.as_mut() else {
            return Err(EngineError::Lifecycle(
                "snapshot needs report_cumulative before start".into(),
            ));
        };
        Ok(c.result(&self.cfg, &self.groups, self.notes.clone(), start_unix_ns))
    }

    /// Take the workers' messages waiting (the stream first, then the view).
    fn take_msgs(&mut self, first: Option<WorkerMsg>) {
        let take = |s: &mut Self, m: WorkerMsg| {
            if let Some(st) = s.streaming.as_mut() {
                st.feed(&m);
            }
            s.tracker.apply(m);
        };
        if let Some(m) = first {
            take(self, m);
        }
        while let Ok(m) = self.msgs.try_recv() {
            take(self, m);
        }
        if let Some(st) = self.streaming.as_mut() {
            st.flush();
        }
    }

    /// What layout did, one line each (shown to the user before the run).
    pub fn layout_notes(&self) -> &[String] {
        &self.notes
    }

    fn group_count(&self) -> u32 {
        self.groups.last().map_or(0, |g| g + 1)
    }

    /// Start all workers together at `at` (now if None, or if `at` has passed).
    pub fn start(&mut self, at: Option<SystemTime>) -> Result<(), EngineError> {
        let specs = match std::mem::replace(&mut self.state, State::Failed) {
            State::Prepared(specs) => specs,
            other => {
                self.state = other;
                return Err(EngineError::Lifecycle(
                    "start called twice (or after a failed start)".into(),
                ));
            }
        };
        let unix_now = unix_ns(SystemTime::now());
        let mono_now = now_ns();
        self.anchor = (unix_now, mono_now);
        if let Some(st) = self.streaming.as_mut() {
            let interval_ns = self.cfg.interval.as_nanos() as u64;
            st.begin(&self.cfg.jobs, &self.cfg.host, interval_ns, self.anchor)?;
        }
        let handles = self.spawn_all(specs)?;
        let start_mono = match at {
            Some(t) => mono_now + unix_ns(t).saturating_sub(unix_now),
            None => mono_now,
        };
        let mut plans: Vec<GroupPlan> = (0..self.group_count())
            .map(|g| GroupPlan {
                workers: Vec::new(),
                lead_ns: self.lead_ns(g),
            })
            .collect();
        for h in handles {
            plans[self.groups[h.id.job as usize] as usize]
                .workers
                .push(h);
        }
        let (ctl, coord, host) = (self.ctl.clone(), self.coord.clone(), self.cfg.host.clone());
        coord
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .group_start_ns = start_mono;
        let coordinator = std::thread::Builder::new()
            .name("iolab-coord".into())
            .spawn(move || coordinator::coordinate(plans, start_mono, &host, ctl, coord))
            .map_err(|e| {
                EngineError::Lifecycle(format!("cannot start the coordinator thread: {e}"))
            })?;
        self.state = State::Started { coordinator };
        Ok(())
    }

    /// Spawn every worker and wait until each has opened its backend; on
    /// any set-up error, end them all and return it.
    fn spawn_all(
        &mut self,
        specs: Vec<WorkerSpec>,
    ) -> Result<Vec<worker::WorkerHandle>, EngineError> {
        let mut handles = Vec::with_capacity(specs.len());
        let mut first_err = None;
        for spec in specs {
            match worker::spawn(spec, self.ctl.clone(), self.msgs_tx.clone()) {
                Ok(h) => handles.push(h),
                Err(e) => {
                    first_err = Some(e);
                    break;
                }
            }
        }
        let mut said = Vec::new();
        for h in &handles {
            match h.ready() {
                Ok(notes) => said.extend(notes.into_iter().map(|n| (h.id.job, n))),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_err {
            handles.into_iter().for_each(|h| drop(h.join()));
            return Err(e);
        }
        let names: Vec<&str> = self.cfg.jobs.iter().map(|j| j.name.as_str()).collect();
        self.notes.extend(notes::attribute(&names, &said));
        Ok(handles)
    }

    /// Longest startdelay + ramp_time among the jobs of group `g`.
    fn lead_ns(&self, g: u32) -> u64 {
        self.cfg
            .jobs
            .iter()
            .zip(&self.groups)
            .filter(|(_, &jg)| jg == g)
            .map(|(j, _)| j.startdelay_ns + j.ramp_time_ns)
            .max()
            .unwrap_or(0)
    }

    /// Latest progress; waits up to `timeout` for a new interval.
    pub fn poll(&mut self, timeout: Duration) -> Progress {
        let started = matches!(self.state, State::Started { .. });
        let mut first = None;
        if started && !self.is_finished() {
            match self.msgs.recv_timeout(timeout) {
                Ok(m) => first = Some(m),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
        }
        self.take_msgs(first);
        if let Some(c) = self.cumulative.as_mut() {
            c.take();
        }
        let st = *self.coord.lock().unwrap_or_else(|p| p.into_inner());
        self.tracker
            .progress(&self.cfg.jobs, self.group_count(), st, started)
    }

    /// Ask every worker to stop now (the result covers what was done).
    pub fn stop(&self) {
        self.ctl
            .stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Ask the workers of job `job` (its index in the run) to stop now, as
    /// fio ends a job that reached steady state; the others go on.
    pub fn stop_job(&self, job: usize) {
        if let Some(f) = self.ctl.job_stop.get(job) {
            f.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// True once every group has ended (or the run never started).
    pub fn is_finished(&self) -> bool {
        match &self.state {
            State::Started { coordinator } => coordinator.is_finished(),
            _ => true,
        }
    }

    /// Wait for the end and return the result; an error that ended the run
    /// early is returned instead (use [`Run::finish`] to keep both).
    pub fn wait(self) -> Result<RunResult, EngineError> {
        let o = self.finish()?;
        match o.error {
            Some(e) => Err(e),
            None => Ok(o.result),
        }
    }

    /// Wait for the end: the result of what was done, and the error that
    /// stopped it early, if any.
    pub fn finish(mut self) -> Result<RunOutcome, EngineError> {
        let coordinator = match std::mem::replace(&mut self.state, State::Failed) {
            State::Started { coordinator } => coordinator,
            State::Prepared(_) => {
                return Err(EngineError::Lifecycle("wait called before start".into()))
            }
            State::Failed => {
                return Err(EngineError::Lifecycle(
                    "wait called after a failed start".into(),
                ))
            }
        };
        let out = coordinator
            .join()
            .map_err(|_| EngineError::Lifecycle("the coordinator thread panicked".into()))?;
        self.take_msgs(None);
        let log = self.streaming.take().map(stream::Streaming::close);
        if let Some((_, Some(note))) = &log {
            self.notes.push(note.clone());
        }
        let start_unix_ns = self.start_unix_ns();
        for path in std::mem::take(&mut self.unlink) {
            self.notes.push(match std::fs::remove_file(&path) {
                Ok(()) => format!("unlink: removed {}", path.display()),
                Err(e) => format!("unlink: could not remove {}: {e}", path.display()),
            });
        }
        let notes = std::mem::take(&mut self.notes);
        let mut outcome = setup::assemble(&self.cfg, &self.groups, notes, out, start_unix_ns);
        outcome.result.interval_log = log.map(|(r, _)| r);
        Ok(outcome)
    }

    /// Wall-clock start of the first group's measured window.
    fn start_unix_ns(&self) -> u64 {
        let (unix, mono) = self.anchor;
        let first = self.tracker.measured_start_ns(0).unwrap_or_else(|| {
            self.coord
                .lock()
                .map(|s| s.group_start_ns)
                .unwrap_or(mono)
                .max(mono)
        });
        unix + first.saturating_sub(mono)
    }
}

impl Drop for Run {
    /// A run dropped while running (the caller went away) stops its
    /// workers instead of leaving them to run out their time unobserved.
    fn drop(&mut self) {
        self.stop();
    }
}

fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
