//! iolab-py: the Python extension module `iolab._native`.
//!
//! Bindings only — conversion of types and errors, and releasing the GIL
//! around long calls; every decision is made in the Rust core or in the
//! Python package.
//!
//! - [`run`]: the `Run` class (engine lifecycle: prepare → start → poll →
//!   stop → wait).
//! - [`errors`]: engine/core errors → `iolab.errors` exceptions and
//!   `OSError` subclasses.
//! - [`target`]: the `Target` class (an NBD target served from Python).
//! - [`hist`]: histogram helpers (`hist_merge`, `hist_from_counts`,
//!   `hist_buckets`, `hist_stats`) on the core's HDR histogram; the
//!   Prometheus latency family (`prom_latency`, `prom_bounds_ns`).
//! - [`units`]: fio's size/time syntax, iolab's durations, schema ids and
//!   NBD framing sizes for Python.
//! - [`lab`]: `lab_model`, the simulated stack's figures on a virtual clock.
//! - [`gil`]: the one helper that releases the GIL and notices Ctrl-C.
//!
//! Module functions: `prepare_job`, `option_table`, `options_markdown`,
//! `summarize`, `merge_results`, `version`. `python/iolab/_native.pyi` is the typed stub
//! (checked against this module by `tests/run/test_native_stub.py`).

mod errors;
mod gil;
mod hist;
mod hlog;
mod iolog;
mod lab;
mod run;
mod target;
mod units;

use iolab_core::options::{DefaultValue, OptionDef, OPTIONS};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{core_error, job_error, json_error};
use crate::run::{job_spec, JobArg, PyRun};

/// Validate one job; return the prepared job (every option resolved, sizes
/// in bytes, times in ns) as JSON.
#[pyfunction]
fn prepare_job(name: String, options: Vec<(String, Option<String>)>) -> PyResult<String> {
    let arg: JobArg = (name, options);
    let prepared = job_spec(arg).prepare().map_err(job_error)?;
    serde_json::to_string(&prepared).map_err(|e| json_error("prepared job", e))
}

/// The files worker `worker` (0-based) of a prepared job (as `prepare_job`
/// gives it) uses, as the engine opens them (`PreparedJob::files_for_worker`).
#[pyfunction]
fn worker_files(prepared_json: &str, worker: u32) -> PyResult<Vec<String>> {
    let job: iolab_core::job::PreparedJob =
        serde_json::from_str(prepared_json).map_err(|e| json_error("prepared job", e))?;
    let files = job.files_for_worker(worker);
    Ok(files
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect())
}

/// The job option table, one dict per option: name, aliases, type,
/// default (a value in the option's syntax, or None), default_note (what
/// happens when it is not given, or None), unit, choices, help.
#[pyfunction]
fn option_table(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    OPTIONS.iter().map(|o| option_dict(py, o)).collect()
}

fn option_dict<'py>(py: Python<'py>, o: &OptionDef) -> PyResult<Bound<'py, PyDict>> {
    let (default, note) = match o.default {
        DefaultValue::Value(v) => (Some(v), None),
        DefaultValue::Note(n) => (None, Some(n)),
    };
    let d = PyDict::new(py);
    d.set_item("name", o.name)?;
    d.set_item("aliases", o.aliases.to_vec())?;
    d.set_item("type", o.kind.type_name())?;
    d.set_item("default", default)?;
    d.set_item("default_note", note)?;
    d.set_item("unit", o.unit)?;
    d.set_item("choices", o.choices().to_vec())?;
    d.set_item("help", o.help)?;
    Ok(d)
}

/// The job option table as Markdown (docs/options.md).
#[pyfunction]
fn options_markdown() -> String {
    iolab_core::options::options_markdown()
}

/// A run result (JSON, from `Run.wait`) → its summary (JSON).
#[pyfunction]
fn summarize(py: Python<'_>, result_json: &str) -> PyResult<String> {
    // Decoding histograms of a long run takes a while: without the GIL.
    gil::released(py, || iolab_core::summary::summarize_json(result_json)).map_err(core_error)
}

/// Several hosts' run results (JSON) → their exact merge (JSON): one
/// result whose summary holds the fleet's totals.
#[pyfunction]
fn merge_results(py: Python<'_>, results_json: Vec<String>) -> PyResult<String> {
    // Appending workers decodes no histogram; still without the GIL (large texts).
    gil::released(py, || {
        let texts: Vec<&str> = results_json.iter().map(String::as_str).collect();
        iolab_core::stats::merge_results_json(&texts)
    })
    .map_err(core_error)
}

/// iolab's version.
#[pyfunction]
fn version() -> &'static str {
    iolab_core::VERSION
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(prepare_job, m)?)?;
    m.add_function(wrap_pyfunction!(worker_files, m)?)?;
    m.add_function(wrap_pyfunction!(option_table, m)?)?;
    m.add_function(wrap_pyfunction!(options_markdown, m)?)?;
    m.add_function(wrap_pyfunction!(summarize, m)?)?;
    m.add_function(wrap_pyfunction!(hlog::summarize_with_log, m)?)?;
    m.add_function(wrap_pyfunction!(hlog::summarize_with_log_to, m)?)?;
    m.add_function(wrap_pyfunction!(hlog::hlog_window, m)?)?;
    m.add_function(wrap_pyfunction!(hlog::stream_result, m)?)?;
    m.add_class::<hlog::PyIntervalLog>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(self::merge_results, m)?)?;
    m.add_function(wrap_pyfunction!(units::parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(units::parse_time_ns, m)?)?;
    m.add_function(wrap_pyfunction!(units::parse_duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(units::parse_bool, m)?)?;
    m.add_function(wrap_pyfunction!(units::parse_uint, m)?)?;
    units::add_constants(m)?;
    m.add_function(wrap_pyfunction!(hist::hist_merge, m)?)?;
    m.add_function(wrap_pyfunction!(hist::hist_from_counts, m)?)?;
    m.add_function(wrap_pyfunction!(hist::hist_buckets, m)?)?;
    m.add_function(wrap_pyfunction!(hist::hist_stats, m)?)?;
    m.add_function(wrap_pyfunction!(hist::prom_latency, m)?)?;
    m.add_function(wrap_pyfunction!(hist::prom_bounds_ns, m)?)?;
    m.add_function(wrap_pyfunction!(hist::prom_protobuf, m)?)?;
    m.add(
        "PROM_PROTOBUF_CONTENT_TYPE",
        iolab_core::prom::native::CONTENT_TYPE,
    )?;
    m.add("PROM_BUCKET_WIDTH_PCT", iolab_core::prom::BUCKET_WIDTH_PCT)?;
    m.add_function(wrap_pyfunction!(iolog::iolog_to_fio, m)?)?;
    m.add_function(wrap_pyfunction!(lab::lab_model, m)?)?;
    m.add_class::<PyRun>()?;
    m.add_class::<target::PyTarget>()?;
    Ok(())
}
