//! Engine and core errors → Python exceptions.
//!
//! The exception classes are declared once, in `iolab/errors.py`, because
//! `JobError` is both an `IolabError` and a `ValueError` (two bases, which
//! `create_exception!` cannot express); `import_exception!` refers to them.
//! Errors that wrap an OS error become the matching built-in `OSError`
//! subclass (`FileNotFoundError`, `PermissionError`, ...) through PyO3's
//! own `io::ErrorKind` table. Every message is the Rust error's one-line
//! `Display`, which names the option or file and says what to do. An error
//! that ended a run early carries the partial result
//! ([`with_partial_result`]).

use std::io;

use iolab_core::{CoreError, JobError as CoreJobError};
use iolab_engine::EngineError as CoreEngineError;
use iolab_target::TargetError;
use pyo3::prelude::*;
use pyo3::PyErr;

pyo3::import_exception!(iolab.errors, IolabError);
pyo3::import_exception!(iolab.errors, JobError);
pyo3::import_exception!(iolab.errors, RefusedError);
pyo3::import_exception!(iolab.errors, EngineError);

/// An OS error with `message` as its text and `kind` choosing the class.
fn os_error(kind: io::ErrorKind, message: String) -> PyErr {
    PyErr::from(io::Error::new(kind, message))
}

pub fn job_error(e: CoreJobError) -> PyErr {
    JobError::new_err(e.to_string())
}

pub fn engine_error(e: CoreEngineError) -> PyErr {
    let message = e.to_string();
    match e {
        CoreEngineError::Job(j) => job_error(j),
        CoreEngineError::Refused { .. } => RefusedError::new_err(message),
        CoreEngineError::Io { source, .. } | CoreEngineError::IoFailed { source, .. } => {
            os_error(source.kind(), message)
        }
        _ => EngineError::new_err(message),
    }
}

pub fn core_error(e: CoreError) -> PyErr {
    let message = e.to_string();
    match e {
        CoreError::Job(j) => job_error(j),
        CoreError::Io(source) => os_error(source.kind(), message),
        _ => IolabError::new_err(message),
    }
}

/// `err` with the result of the work done before it attached as its
/// `result_json` attribute (a run that an I/O error ended early).
pub fn with_partial_result(py: Python<'_>, err: PyErr, result_json: String) -> PyErr {
    if let Err(e) = err.value(py).setattr("result_json", result_json) {
        // Every exception class iolab raises takes attributes; if one did
        // not, the error itself still matters more than the lost result.
        e.print(py);
    }
    err
}

/// A JSON (de)serialisation failure between the bindings and the core: the
/// two sides disagree on a type, which is a bug, not a user error.
pub fn json_error(what: &str, e: serde_json::Error) -> PyErr {
    IolabError::new_err(format!("{what}: JSON: {e} (a bug in iolab)"))
}

/// A target error: a config or export problem is a `ValueError` (the CLI
/// prints it and exits 2), the rest (sockets, threads) an `OSError`.
pub fn target_error(e: TargetError) -> PyErr {
    let message = e.to_string();
    match e {
        TargetError::Config { .. }
        | TargetError::ConfigFile { .. }
        | TargetError::Export { .. } => pyo3::exceptions::PyValueError::new_err(message),
        TargetError::Io { source, .. } => os_error(source.kind(), message),
        _ => pyo3::exceptions::PyOSError::new_err(message),
    }
}
