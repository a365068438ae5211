//! Interval logs (`.hlog`, iolab-core `stats::hlog`) for the Python front:
//! `IntervalLog(path)` iterates a log's records one at a time (memory does
//! not grow with the log), `hlog_window` merges a window of a log's
//! intervals exactly into one histogram, and `summarize_with_log` is
//! `summarize` for a run that streamed its intervals (`summarize_with_log_to`:
//! its series written to a file instead of into the summary).

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use iolab_core::hist::LatHist;
use iolab_core::job::IoDir;
use iolab_core::stats::hlog::{HlogEntry, HlogReader};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

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

/// One pass over an interval log: per job and direction, the job's merged
/// intervals lying wholly in `[start_ns, end_ns]` (ns from the job's
/// measured start) merged exactly. A dict: `rows` (`job`, `name`, `dir`,
/// `intervals`, `start_ns`/`end_ns` (the span they cover, None without
/// any), `ios`, `bytes`, `lat_ns` (V2 base64)), `jobs` (per job: `name`,
/// `workers`, `intervals` written, `end_ns` of its last, `ended`: every
/// worker finished) and `truncated` (the log ends in a record cut short).
#[pyfunction]
#[pyo3(signature = (path, start_ns = 0, end_ns = u64::MAX))]
pub fn hlog_window<'py>(
    py: Python<'py>,
    path: PathBuf,
    start_ns: u64,
    end_ns: u64,
) -> PyResult<Bound<'py, PyDict>> {
    #[derive(Default)]
    struct Acc {
        n: u64,
        ios: u64,
        bytes: u64,
        span: Option<(u64, u64)>,
        h: Option<LatHist>,
    }
    #[derive(Default)]
    struct JobAcc {
        dirs: Vec<Acc>,
        written: u64,
        last_end_ns: u64,
        ended: bool,
    }
    let mut reader = open(&path)?;
    let ndirs = IoDir::MEASURED.len();
    let (jobs, accs, truncated) = gil::released(py, || {
        let mut accs: Vec<JobAcc> = Vec::new();
        while let Some(e) = reader.next() {
            let r = match e? {
                HlogEntry::JobEnd { job, .. } => {
                    if let Some(a) = accs.get_mut(job as usize) {
                        a.ended = true;
                    }
                    continue;
                }
                HlogEntry::Interval(r) if r.source.worker.is_none() => r,
                HlogEntry::Interval(_) => continue,
            };
            let j = r.source.job as usize;
            while accs.len() <= j {
                accs.push(JobAcc {
                    dirs: (0..ndirs).map(|_| Acc::default()).collect(),
                    ..Default::default()
                });
            }
            let a = &mut accs[j];
            let s = &r.sample;
            a.written += 1;
            a.last_end_ns = a.last_end_ns.max(s.end_ns);
            // An interval is in the window by its place on the grid: a
            // fleet's merged interval spans every host's on rank 0's clock,
            // so its end can lie a few µs past the grid's (a host's clock
            // offset), which must not drop it from a window of whole
            // intervals. Its end is capped at start + interval_ns.
            let grid = reader.header().map_or(0, |h| h.interval_ns);
            let end = if grid > 0 {
                s.end_ns.min(s.start_ns.saturating_add(grid))
            } else {
                s.end_ns
            };
            if s.start_ns < start_ns || end > end_ns {
                continue;
            }
            for (acc, d) in a.dirs.iter_mut().zip(&s.dirs) {
                acc.n += 1;
                acc.ios += d.ios;
                acc.bytes += d.bytes;
                acc.h
                    .get_or_insert_with(LatHist::new)
                    .merge(&d.lat_ns.unpack());
                acc.span = Some(acc.span.map_or((s.start_ns, s.end_ns), |(x, y)| {
                    (x.min(s.start_ns), y.max(s.end_ns))
                }));
            }
        }
        Ok::<_, iolab_core::CoreError>((reader.jobs().to_vec(), accs, reader.truncated()))
    })
    .map_err(core_error)?;
    let name = |j: usize| {
        jobs.iter()
            .find(|x| x.job as usize == j)
            .map(|x| x.name.clone())
    };
    let rows = PyList::empty(py);
    let job_list = PyList::empty(py);
    let njobs = jobs.len().max(accs.len());
    for j in 0..njobs {
        let empty = JobAcc::default();
        let a = accs.get(j).unwrap_or(&empty);
        let jd = PyDict::new(py);
        jd.set_item("job", j)?;
        jd.set_item("name", name(j))?;
        jd.set_item(
            "workers",
            jobs.iter().find(|x| x.job as usize == j).map(|x| x.workers),
        )?;
        jd.set_item("intervals", a.written)?;
        jd.set_item("end_ns", a.last_end_ns)?;
        jd.set_item("ended", a.ended)?;
        job_list.append(jd)?;
        for (d, acc) in IoDir::MEASURED.iter().zip(&a.dirs) {
            let row = PyDict::new(py);
            row.set_item("job", j)?;
            row.set_item("name", name(j))?;
            row.set_item("dir", d.name())?;
            row.set_item("intervals", acc.n)?;
            row.set_item("start_ns", acc.span.map(|s| s.0))?;
            row.set_item("end_ns", acc.span.map(|s| s.1))?;
            row.set_item("ios", acc.ios)?;
            row.set_item("bytes", acc.bytes)?;
            let h = acc.h.clone().unwrap_or_default();
            row.set_item("lat_ns", h.to_v2_base64())?;
            rows.append(row)?;
        }
    }
    let out = PyDict::new(py);
    out.set_item("rows", rows)?;
    out.set_item("jobs", job_list)?;
    out.set_item("truncated", truncated)?;
    Ok(out)
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

/// `summarize_with_log` writing the summary's series to the CSV file
/// `series_csv` as they are made (`summary::streamed::SeriesCsv`) instead
/// of into the summary: returns (summary JSON with empty series, rows per
/// job, rows per stonewall group).
#[pyfunction]
pub fn summarize_with_log_to(
    py: Python<'_>,
    result_json: &str,
    path: PathBuf,
    series_csv: PathBuf,
) -> PyResult<(String, Vec<u64>, Vec<u64>)> {
    gil::released(py, || {
        iolab_core::summary::streamed::summarize_json_with_log_to(result_json, &path, &series_csv)
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
