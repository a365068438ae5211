//! Interval logs (`.hlog`, iolab-core `stats::hlog`) for the Python front:
//! `IntervalLog(path)` iterates a log's records one at a time (memory does
//! not grow with the log), `hlog_window` merges a window of a log's
//! intervals exactly into one histogram, and `summarize_with_log` is
//! `summarize` for a run that streamed its intervals.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use iolab_core::hist::LatHist;
use iolab_core::job::IoDir;
use iolab_core::stats::hlog::{HlogEntry, HlogReader};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::core_error;
use crate::gil;

fn open(path: &PathBuf) -> PyResult<HlogReader<BufReader<File>>> {
    let f = File::open(path).map_err(|e| core_error(e.into()))?;
    Ok(HlogReader::new(BufReader::new(f)))
}

/// The records of an interval log, one at a time: dicts with `job`,
/// `worker` (None: the job's workers merged), `index`, `offset_ns`,
/// `start_ns`, `end_ns`, `ios`, `bytes` and `lat_ns` (V2 base64) per
/// direction; or `{"job_end": J, "intervals": N}`. `truncated` is true
/// once the end was reached in a record cut short.
#[pyclass(name = "IntervalLog", module = "iolab._native")]
pub struct PyIntervalLog {
    reader: HlogReader<BufReader<File>>,
}

impl std::fmt::Debug for PyIntervalLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IntervalLog")
    }
}

#[pymethods]
impl PyIntervalLog {
    #[new]
    fn new(path: PathBuf) -> PyResult<Self> {
        Ok(PyIntervalLog {
            reader: open(&path)?,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(e) = self.reader.next() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        match e.map_err(core_error)? {
            HlogEntry::JobEnd { job, intervals } => {
                d.set_item("job_end", job)?;
                d.set_item("intervals", intervals)?;
            }
            HlogEntry::Interval(r) => {
                let s = &r.sample;
                d.set_item("job", r.source.job)?;
                d.set_item("worker", r.source.worker)?;
                d.set_item("index", r.index)?;
                d.set_item("offset_ns", r.offset_ns)?;
                d.set_item("start_ns", s.start_ns)?;
                d.set_item("end_ns", s.end_ns)?;
                d.set_item("ios", s.dirs.iter().map(|x| x.ios).collect::<Vec<_>>())?;
                d.set_item("bytes", s.dirs.iter().map(|x| x.bytes).collect::<Vec<_>>())?;
                let lat: Vec<String> = s
                    .dirs
                    .iter()
                    .map(|x| x.lat_ns.unpack().to_v2_base64())
                    .collect();
                d.set_item("lat_ns", lat)?;
            }
        }
        Ok(Some(d))
    }

    #[getter]
    fn truncated(&self) -> bool {
        self.reader.truncated()
    }

    /// Base time (Unix ns) and interval (ns) from the header, once read.
    #[getter]
    fn header(&self) -> Option<(u64, u64)> {
        self.reader
            .header()
            .map(|h| (h.base_unix_ns, h.interval_ns))
    }
}

/// The intervals of job `job` (its workers merged; every job when None)
/// that lie wholly in `[start_ns, end_ns]` (ns from the job's measured
/// start), merged exactly: a dict with `lat_ns` (V2 base64) of direction
/// `dir` ("read", "write"; every direction when None), `ios`, `bytes`,
/// `intervals` (how many), `start_ns`/`end_ns` (what they span) and
/// `truncated`.
#[pyfunction]
#[pyo3(signature = (path, start_ns, end_ns, job = None, dir = None))]
pub fn hlog_window<'py>(
    py: Python<'py>,
    path: PathBuf,
    start_ns: u64,
    end_ns: u64,
    job: Option<u32>,
    dir: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let dirs: Vec<usize> = match dir.as_deref() {
        None => IoDir::ALL.iter().map(|&d| d as usize).collect(),
        Some(name) => match IoDir::ALL.iter().find(|d| d.name() == name) {
            Some(&d) => vec![d as usize],
            None => {
                return Err(PyValueError::new_err(format!(
                    "dir={name:?}: not a direction"
                )))
            }
        },
    };
    let mut reader = open(&path)?;
    let (h, ios, bytes, n, span, truncated) = gil::released(py, || {
        let mut h = LatHist::new();
        let (mut ios, mut bytes, mut n) = (0u64, 0u64, 0u64);
        let mut span: Option<(u64, u64)> = None;
        for e in reader.by_ref() {
            let HlogEntry::Interval(r) = e? else { continue };
            let s = &r.sample;
            let wanted = r.source.worker.is_none() && job.is_none_or(|j| j == r.source.job);
            if !wanted || s.start_ns < start_ns || s.end_ns > end_ns {
                continue;
            }
            for &d in &dirs {
                ios += s.dirs[d].ios;
                bytes += s.dirs[d].bytes;
                h.merge(&s.dirs[d].lat_ns.unpack());
            }
            n += 1;
            span = Some(span.map_or((s.start_ns, s.end_ns), |(a, b)| {
                (a.min(s.start_ns), b.max(s.end_ns))
            }));
        }
        Ok::<_, iolab_core::CoreError>((h, ios, bytes, n, span, reader.truncated()))
    })
    .map_err(core_error)?;
    let d = PyDict::new(py);
    d.set_item("lat_ns", h.to_v2_base64())?;
    d.set_item("ios", ios)?;
    d.set_item("bytes", bytes)?;
    d.set_item("intervals", n)?;
    d.set_item("start_ns", span.map(|s| s.0))?;
    d.set_item("end_ns", span.map(|s| s.1))?;
    d.set_item("truncated", truncated)?;
    Ok(d)
}

/// `summarize` of a run whose intervals were streamed to the interval log
/// at `path`.
#[pyfunction]
pub fn summarize_with_log(py: Python<'_>, result_json: &str, path: PathBuf) -> PyResult<String> {
    gil::released(py, || {
        iolab_core::summary::streamed::summarize_json_with_log(result_json, &path)
    })
    .map_err(core_error)
}

/// A result with embedded intervals → the same result with its intervals
/// streamed to the interval log at `path` (`stats::stream::stream_result`).
#[pyfunction]
#[pyo3(signature = (result_json, path, per_worker = false))]
pub fn stream_result(
    py: Python<'_>,
    result_json: &str,
    path: PathBuf,
    per_worker: bool,
) -> PyResult<String> {
    use iolab_core::stats::{hlog::HlogWriter, stream, RunResult};
    gil::released(py, || {
        let run: RunResult = serde_json::from_str(result_json)
            .map_err(|e| iolab_core::CoreError::Format(format!("not an iolab result: {e}")))?;
        let file = File::create(&path)?;
        let what = format!("iolab {}: streamed from a result", iolab_core::VERSION);
        let log = HlogWriter::begin(
            std::io::BufWriter::new(file),
            run.start_unix_ns,
            run.interval_ns,
            &what,
        )?;
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let out = stream::stream_result(&run, log, &name, per_worker)?;
        serde_json::to_string(&out)
            .map_err(|e| iolab_core::CoreError::Format(format!("cannot encode the result: {e}")))
    })
    .map_err(core_error)
}
