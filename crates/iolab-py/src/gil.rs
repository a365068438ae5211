//! Releasing the GIL around long calls, and Ctrl-C.
//!
//! Every call into the engine that can take longer than a moment goes
//! through here (the shape of polars' `enter_polars`): the GIL is released
//! so other Python threads run, and the call is cut into short steps so a
//! Ctrl-C (Python's SIGINT handler only sets a flag) is noticed within
//! [`SIGNAL_CHECK`] and raised as `KeyboardInterrupt`.
//!
//! - [`released`]: one call, bounded in time by its caller (a `poll` with a
//!   timeout, `start`).
//! - [`until`]: repeat a bounded step until it yields, checking for signals
//!   between steps (`Run.wait`).
//! - [`on_thread`]: a call that cannot be cut into steps (`Run::prepare`
//!   laying out a 10 GiB file); it runs on its own thread so Ctrl-C returns
//!   at once, and the thread finishes and drops its result on its own.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::panic::PanicException;
use pyo3::prelude::*;

/// How long a step may run before pending signals are checked.
pub const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Run `f` without the GIL. `f` must return in bounded time: Ctrl-C is
/// noticed only after it returns.
pub fn released<T, F>(py: Python<'_>, f: F) -> T
where
    T: Send,
    F: FnOnce() -> T + Send,
{
    py.allow_threads(f)
}

/// Call `step(SIGNAL_CHECK)` without the GIL until it returns `Some`,
/// raising `KeyboardInterrupt` (or whatever a signal handler raises)
/// between steps. Each step should return within about its argument.
pub fn until<T, F>(py: Python<'_>, mut step: F) -> PyResult<T>
where
    T: Send,
    F: FnMut(Duration) -> Option<T> + Send,
{
    loop {
        if let Some(v) = py.allow_threads(|| step(SIGNAL_CHECK)) {
            return Ok(v);
        }
        py.check_signals()?;
    }
}

/// Run `f` on a new thread and wait for it without the GIL, interruptibly.
/// On Ctrl-C the error is returned at once; the thread runs to its end and
/// its result is dropped (for `prepare`: the files it laid out stay, the
/// prepared run is released).
pub fn on_thread<T, F>(py: Python<'_>, name: &str, f: F) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            // The receiver is gone only after Ctrl-C; nobody wants the result then.
            let _ = tx.send(f());
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start thread {name}: {e}")))?;
    until(py, move |t| match rx.recv_timeout(t) {
        Ok(v) => Some(Ok(v)),
        Err(RecvTimeoutError::Timeout) => None,
        Err(RecvTimeoutError::Disconnected) => Some(Err(PanicException::new_err(format!(
            "thread {name} panicked (a bug in iolab)"
        )))),
    })?
}
