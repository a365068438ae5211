//! `_native.iolog_to_fio`: fio's per-I/O log files from the records workers
//! streamed during a run (see `iolab_engine::worker::iolog`).

use std::path::PathBuf;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use iolab_engine::worker::iolog::{write_fio_log, LogValue};

/// Writes one fio log (`value`: lat, clat, slat, bw or iops) from the record
/// files `inputs`, merged in time order; returns the lines written.
#[pyfunction]
#[pyo3(signature = (inputs, out, value, log_offset = false, log_prio = false))]
pub fn iolog_to_fio(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    out: PathBuf,
    value: &str,
    log_offset: bool,
    log_prio: bool,
) -> PyResult<u64> {
    let v = LogValue::parse(value).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown log value '{value}': lat, clat, slat, bw or iops"
        ))
    })?;
    py.allow_threads(|| write_fio_log(&inputs, &out, v, log_offset, log_prio))
        .map_err(|e| PyOSError::new_err(format!("writing {}: {e}", out.display())))
}
