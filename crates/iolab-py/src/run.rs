//! `iolab._native.Run`: the engine's run lifecycle for Python.
//!
//! `Run(jobs, ...)` validates the jobs and prepares the run (safety checks,
//! file layout: slow, so the GIL is released and Ctrl-C works);
//! `start`, `poll`, `stop`, `finished`, `wait` map one to one onto
//! [`iolab_engine::Run`] (`wait` onto `Run::finish`, so an error that ends
//! the run early keeps the result of the work done before it). The engine run sits behind a mutex so `stop()`
//! from another Python thread works while one thread polls or waits; each
//! lock is held for one bounded step with the GIL released.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use iolab_core::job::{JobSpec, PreparedJob};
use iolab_engine::{Run, RunConfig};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{engine_error, job_error, json_error, with_partial_result, EngineError};
use crate::gil;

/// A job as Python passes it: `(name, [(option, value or None), ...])`.
pub type JobArg = (String, Vec<(String, Option<String>)>);

pub fn job_spec((name, options): JobArg) -> JobSpec {
    JobSpec { name, options }
}

#[pyclass(name = "Run", module = "iolab._native")]
#[derive(Debug)]
pub struct PyRun {
    /// `None` once `wait` has returned the result.
    run: Mutex<Option<Run>>,
}

impl PyRun {
    fn lock(&self) -> MutexGuard<'_, Option<Run>> {
        // A panic while holding the lock leaves the run as it was; keep using it.
        self.run.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn waited() -> PyErr {
    EngineError::new_err("run lifecycle: the run has already been waited for")
}

#[pymethods]
impl PyRun {
    #[new]
    /// `interval_log`: stream the measured intervals to this interval log
    /// (`.hlog`) instead of keeping them in the result
    /// ([`Run::stream_intervals`]); `per_worker_intervals`: each worker's
    /// too, not only each job's workers merged. `snapshots`: keep every
    /// worker's result so far, for `snapshot` ([`Run::report_cumulative`]).
    #[pyo3(signature = (jobs, interval_ns = 1_000_000_000, allow_overwrite = false, host = None, host_index = 0, interval_log = None, per_worker_intervals = false, snapshots = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        jobs: Vec<JobArg>,
        interval_ns: u64,
        allow_overwrite: bool,
        host: Option<String>,
        host_index: u32,
        interval_log: Option<std::path::PathBuf>,
        per_worker_intervals: bool,
        snapshots: bool,
    ) -> PyResult<Self> {
        if per_worker_intervals && interval_log.is_none() {
            return Err(PyValueError::new_err(
                "per_worker_intervals needs interval_log (per-worker intervals are streamed to it)",
            ));
        }
        if interval_ns == 0 {
            return Err(PyValueError::new_err("interval_ns must be > 0"));
        }
        let jobs = jobs
            .into_iter()
            .map(|j| job_spec(j).prepare())
            .collect::<Result<Vec<PreparedJob>, _>>()
            .map_err(job_error)?;
        let cfg = RunConfig {
            jobs,
            interval: Duration::from_nanos(interval_ns),
            allow_overwrite,
            host: host.unwrap_or_default(),
            host_index,
        };
        let mut run = gil::on_thread(py, "iolab-prepare", move || Run::prepare(cfg))?
            .map_err(engine_error)?;
        if let Some(path) = interval_log {
            run.stream_intervals(&path, per_worker_intervals)
                .map_err(engine_error)?;
        }
        if snapshots {
            run.report_cumulative().map_err(engine_error)?;
        }
        Ok(PyRun {
            run: Mutex::new(Some(run)),
        })
    }

    /// What layout (and, after `start`, backend set-up) did, one line each.
    fn layout_notes(&self) -> PyResult<Vec<String>> {
        self.lock()
            .as_ref()
            .map(|run| run.layout_notes().to_vec())
            .ok_or_else(waited)
    }

    /// Start every worker at `at_unix_ns` (wall clock), or now.
    #[pyo3(signature = (at_unix_ns = None))]
    fn start(&self, py: Python<'_>, at_unix_ns: Option<u64>) -> PyResult<()> {
        let at = at_unix_ns.map(|ns| SystemTime::UNIX_EPOCH + Duration::from_nanos(ns));
        gil::released(py, || match self.lock().as_mut() {
            Some(run) => run.start(at).map_err(engine_error),
            None => Err(waited()),
        })
    }

    /// Latest progress as a dict; waits up to `timeout_s` for a new interval.
    fn poll<'py>(&self, py: Python<'py>, timeout_s: f64) -> PyResult<Bound<'py, PyAny>> {
        let timeout = Duration::try_from_secs_f64(timeout_s)
            .map_err(|e| PyValueError::new_err(format!("timeout_s={timeout_s}: {e}")))?;
        let progress = gil::released(py, || self.lock().as_mut().map(|run| run.poll(timeout)));
        let progress = progress.ok_or_else(waited)?;
        Ok(pythonize::pythonize(py, &progress)?)
    }

    /// The result so far as JSON (the form `wait` returns; no series):
    /// every worker's measured window up to the last interval it closed,
    /// or its end. Needs `snapshots=True`.
    fn snapshot(&self, py: Python<'_>) -> PyResult<String> {
        let result = gil::released(py, || self.lock().as_mut().map(Run::snapshot));
        let result = result.ok_or_else(waited)?.map_err(engine_error)?;
        serde_json::to_string(&result).map_err(|e| json_error("run snapshot", e))
    }

    /// Ask every worker to stop now; the result covers what was done.
    fn stop(&self, py: Python<'_>) {
        gil::released(py, || {
            if let Some(run) = self.lock().as_ref() {
                run.stop();
            }
        })
    }

    /// Ask the workers of job `job` (index in the run) to stop now; the
    /// other jobs go on (a job that reached steady state).
    fn stop_job(&self, py: Python<'_>, job: usize) {
        gil::released(py, || {
            if let Some(run) = self.lock().as_ref() {
                run.stop_job(job);
            }
        })
    }

    fn finished(&self, py: Python<'_>) -> bool {
        gil::released(py, || self.lock().as_ref().is_none_or(Run::is_finished))
    }

    /// Wait for the end; return the lossless result as JSON. Ctrl-C while
    /// waiting stops the run and raises `KeyboardInterrupt`; calling `wait`
    /// again then returns the partial result. An error that ended the run
    /// early (an I/O error) is raised with the result of the work done
    /// before it as JSON in its `result_json` attribute.
    fn wait(&self, py: Python<'_>) -> PyResult<String> {
        let waiting = gil::until(py, |step| {
            let mut guard = self.lock();
            match guard.as_mut() {
                None => Some(Err(waited())),
                Some(run) if run.is_finished() => Some(
                    guard
                        .take()
                        .ok_or_else(waited)
                        .and_then(|r| r.finish().map_err(engine_error)),
                ),
                Some(run) => {
                    run.poll(step);
                    None
                }
            }
        });
        let outcome = match waiting {
            Err(interrupt) => {
                self.stop(py);
                return Err(interrupt);
            }
            Ok(outcome) => outcome?,
        };
        let result_json =
            serde_json::to_string(&outcome.result).map_err(|e| json_error("run result", e))?;
        match outcome.error {
            None => Ok(result_json),
            Some(e) => Err(with_partial_result(py, engine_error(e), result_json)),
        }
    }
}
