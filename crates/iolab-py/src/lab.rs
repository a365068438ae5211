//! `lab_model`: the simulated stack's own figures on a virtual clock
//! (`iolab_target::lab`), for `iolab lab raid`.

use std::time::Duration;

use iolab_target::lab::{model, VJob};
use pyo3::prelude::*;

use crate::errors::target_error;
use crate::gil;

/// Run a job on the export of a compact spec on a virtual clock; returns
/// ``(ios, bytes, elapsed_ns)``. ``rw`` is read, write, randread or randwrite.
#[pyfunction]
#[pyo3(signature = (spec, rw, bs, iodepth, region, runtime_ns, rtt_ns, seed = 1))]
#[allow(clippy::too_many_arguments)]
pub fn lab_model(
    py: Python<'_>,
    spec: &str,
    rw: &str,
    bs: u64,
    iodepth: usize,
    region: u64,
    runtime_ns: u64,
    rtt_ns: u64,
    seed: u64,
) -> PyResult<(u64, u64, u64)> {
    let (write, random) = match rw {
        "read" => (false, false),
        "write" => (true, false),
        "randread" => (false, true),
        "randwrite" => (true, true),
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "rw '{other}': expected read, write, randread or randwrite"
            )))
        }
    };
    let job = VJob {
        write,
        random,
        bs,
        iodepth,
        region,
        runtime: Duration::from_nanos(runtime_ns),
        rtt: Duration::from_nanos(rtt_ns),
    };
    // Seconds of CPU for a long virtual run: without the GIL.
    let r = gil::released(py, || model(spec, job, seed)).map_err(target_error)?;
    Ok((r.ios, r.bytes, r.elapsed.as_nanos() as u64))
}
