//! fio's size and time syntax, iolab's durations, and the constants both
//! languages use (schema ids, NBD framing sizes), exported from the Rust
//! crates that own them so Python holds no second copy.
//!
//! Parse errors raise `ValueError` with the core's sentence.

use iolab_core::units;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn value_error(text: &str, reason: String) -> PyErr {
    PyValueError::new_err(format!("'{text}': {reason}"))
}

/// A size in bytes by fio's rules (`4k`, `1MiB`, `0x1000`); `kb_base` is
/// 1024 (fio's default) or 1000.
#[pyfunction]
#[pyo3(signature = (text, kb_base = units::KB_BASE_DEFAULT))]
pub fn parse_size(text: &str, kb_base: u64) -> PyResult<u64> {
    if kb_base != 1000 && kb_base != 1024 {
        return Err(PyValueError::new_err(format!(
            "kb_base={kb_base}: give 1024 (fio's default) or 1000"
        )));
    }
    units::parse_size(text, kb_base).map_err(|e| value_error(text, e))
}

/// A time in ns by fio's rules (`10`, `250ms`, `2m`); a bare number is in
/// `default_unit_ns` (seconds unless given).
#[pyfunction]
#[pyo3(signature = (text, default_unit_ns = units::NS_PER_S))]
pub fn parse_time_ns(text: &str, default_unit_ns: u64) -> PyResult<u64> {
    units::parse_time_ns(text, default_unit_ns).map_err(|e| value_error(text, e))
}

/// One of iolab's own durations (`1.5s`, `500ms`, `2` = seconds) in ns.
#[pyfunction]
pub fn parse_duration_ns(text: &str) -> PyResult<u64> {
    units::parse_duration_ns(text).map_err(|e| value_error(text, e))
}

/// A boolean by the core's rule for every fio option: `1`/`0`, `true`/`false`;
/// `None` (a bare flag) is true.
#[pyfunction]
#[pyo3(signature = (text = None))]
pub fn parse_bool(text: Option<&str>) -> PyResult<bool> {
    units::parse_bool(text).map_err(|e| value_error(text.unwrap_or(""), e))
}

/// A non-negative whole number (decimal or `0x` hexadecimal), no units.
#[pyfunction]
pub fn parse_uint(text: &str) -> PyResult<u64> {
    units::parse_uint(text).map_err(|e| value_error(text, e))
}

/// The module's constants: schema ids, NBD framing sizes, and the engines
/// that open no files (from the engine table).
pub fn add_constants(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let no_files = iolab_core::job::IoEngine::names_that(|c| !c.target.opens_files());
    m.add("ENGINES_WITHOUT_FILES", no_files)?;
    m.add("RESULT_SCHEMA", iolab_core::stats::SCHEMA)?;
    m.add("SUMMARY_SCHEMA", iolab_core::summary::SUMMARY_SCHEMA)?;
    m.add("NBD_REQUEST_BYTES", iolab_nbd::REQUEST_BYTES)?;
    m.add("NBD_SIMPLE_REPLY_BYTES", iolab_nbd::SIMPLE_REPLY_BYTES)?;
    Ok(())
}
