//! The `Target` class: an iolab NBD target (iolab-target) served from
//! Python. Bindings only: the config is parsed, the command line's
//! settings applied and all checked in Rust (`config::overrides`); the
//! CLI (`iolab target`, python/iolab/cli/target.py) prints and handles
//! signals.
//!
//! Lifecycle: `Target(...)` parses the config, binds the NBD socket and
//! the stats endpoint (so `addresses()` is known before serving);
//! `start()` serves on a Rust thread; `shutdown()` (cheap, callable from a
//! signal handler) asks for a clean stop — in-flight requests answered,
//! exports flushed; `wait()` waits without the GIL, running Python signal
//! handlers every 100 ms, and raises if serving failed.

use std::sync::{Mutex, PoisonError};

use iolab_target::config::overrides::{self, Overrides};
use iolab_target::http::StatsHttp;
use iolab_target::metrics::stats_json;
use iolab_target::{ListenAddr, RunningServer, Server, ServerHandle};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::target_error;
use crate::gil;

#[derive(Debug)]
enum State {
    Bound(Server),
    Running(RunningServer),
    Done,
}

#[derive(Debug)]
#[pyclass(name = "Target", module = "iolab._native")]
pub struct PyTarget {
    state: Mutex<State>,
    handle: ServerHandle,
    listen: ListenAddr,
    stats_http: Mutex<Option<StatsHttp>>,
    exports: Vec<(String, u64, String, bool)>,
}

#[pymethods]
impl PyTarget {
    #[new]
    #[pyo3(signature = (config_toml=None, exports=Vec::new(), listen=None, stats_http=None,
        read_only=false, max_connections=None, allow_remote=false, pacing=None, max_request=None, realtime=false,
        metrics_summaries=false, conn_io=None, zero_copy=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        config_toml: Option<&str>,
        exports: Vec<String>,
        listen: Option<String>,
        stats_http: Option<&str>,
        read_only: bool,
        max_connections: Option<usize>,
        allow_remote: bool,
        pacing: Option<String>,
        max_request: Option<String>,
        realtime: bool,
        metrics_summaries: bool,
        conn_io: Option<String>,
        zero_copy: Option<String>,
    ) -> PyResult<PyTarget> {
        let o = Overrides {
            listen,
            read_only,
            max_connections,
            max_request,
            allow_remote,
            pacing,
            realtime,
            conn_io,
            zero_copy,
        };
        let spec = overrides::build(config_toml, &exports, &o).map_err(target_error)?;
        let allow_remote = spec.server.allow_remote;
        let described = spec
            .exports
            .iter()
            .map(|e| {
                let size = e.caps().size_bytes;
                (
                    e.name().to_string(),
                    size,
                    e.dev().describe(),
                    e.is_read_only(),
                )
            })
            .collect();
        let server = spec.bind().map_err(target_error)?;
        let handle = server.handle();
        let http = match stats_http {
            None => None,
            Some(a) => {
                let addr = a
                    .parse()
                    .map_err(|e| PyValueError::new_err(format!("stats_http: '{a}': {e}")))?;
                let (stats, members) = (handle.stats().clone(), handle.members().clone());
                Some(
                    StatsHttp::start_with(addr, allow_remote, stats, members, metrics_summaries)
                        .map_err(target_error)?,
                )
            }
        };
        Ok(PyTarget {
            listen: server.local_addr().clone(),
            state: Mutex::new(State::Bound(server)),
            handle,
            stats_http: Mutex::new(http),
            exports: described,
        })
    }

    /// Serve on a background thread.
    fn start(&self) -> PyResult<()> {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match std::mem::replace(&mut *st, State::Done) {
            State::Bound(s) => {
                *st = State::Running(s.spawn().map_err(target_error)?);
                Ok(())
            }
            other => {
                *st = other;
                Err(PyRuntimeError::new_err("the target was already started"))
            }
        }
    }

    /// Where it listens: {"nbd": "unix:PATH" or "HOST:PORT", "stats_http": "HOST:PORT" or None}.
    fn addresses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("nbd", self.listen.to_string())?;
        let http = self
            .stats_http
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        d.set_item(
            "stats_http",
            http.as_ref().map(|h| h.local_addr().to_string()),
        )?;
        Ok(d)
    }

    /// The exports: (name, size in bytes, stack, read-only) each.
    fn exports(&self) -> Vec<(String, u64, String, bool)> {
        self.exports.clone()
    }

    /// The stats window as JSON; with `reset`, a new window starts at once.
    #[pyo3(signature = (reset=false))]
    fn stats_json(&self, reset: bool) -> PyResult<String> {
        let s = self.handle.stats();
        let snap = if reset {
            s.snapshot_and_reset()
        } else {
            s.snapshot()
        };
        Ok(stats_json(&snap.map_err(target_error)?).to_string())
    }

    /// Ask for a clean stop (returns at once; `wait()` waits for it).
    fn shutdown(&self) {
        self.handle.shutdown();
    }

    /// Wait until serving ends, running signal handlers meanwhile; raises
    /// if it ended with an error.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        gil::until(py, |step| {
            let st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            let finished = match &*st {
                State::Running(r) => r.is_finished(),
                _ => true,
            };
            drop(st);
            if finished {
                return Some(());
            }
            std::thread::sleep(step.min(std::time::Duration::from_millis(50)));
            None
        })?;
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let result = match std::mem::replace(&mut *st, State::Done) {
            State::Running(r) => r.join(),
            _ => Ok(()),
        };
        if let Some(h) = self
            .stats_http
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            h.stop();
        }
        result.map_err(target_error)
    }
}
