//! Latency histograms for the Python front: decode, merge, summarise and
//! build HdrHistogram V2 (base64) strings with the core's [`LatHist`], so
//! analysis and reports in Python use exactly the engine's histogram
//! arithmetic (3 significant digits, exact merges) instead of a second
//! implementation.

use iolab_core::hist::LatHist;
use iolab_core::prom;
use iolab_core::prom::native;
use iolab_core::summary::LatSummary;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::core_error;
use crate::gil;

fn decode(s: &str) -> PyResult<LatHist> {
    LatHist::from_v2_base64(s).map_err(core_error)
}

/// The exact merge of histograms (V2 base64 strings) as one V2 base64
/// string: the histogram of the union of their samples.
#[pyfunction]
pub fn hist_merge(py: Python<'_>, hists: Vec<String>) -> PyResult<String> {
    // Without the GIL: a fleet's live view merges 1,000 hosts' histograms
    // each interval while its HTTP thread may be serving.
    gil::released(py, || {
        let mut total = LatHist::new();
        for s in &hists {
            total.merge(&LatHist::from_v2_base64(s)?);
        }
        Ok(total.to_v2_base64())
    })
    .map_err(core_error)
}

/// A histogram built from `(value_ns, count)` pairs (e.g. fio's json+
/// bins), as V2 base64. Values are recorded at 3 significant digits.
#[pyfunction]
pub fn hist_from_counts(counts: Vec<(u64, u64)>) -> PyResult<String> {
    let mut h = LatHist::new();
    for (value_ns, n) in counts {
        if n > 0 {
            h.record_n(value_ns, n);
        }
    }
    Ok(h.to_v2_base64())
}

/// The recorded buckets `(value_ns, count)`, ascending; `value_ns` is the
/// highest value equivalent to the bucket (what percentiles report).
#[pyfunction]
pub fn hist_buckets(hist: &str) -> PyResult<Vec<(u64, u64)>> {
    Ok(decode(hist)?.buckets().collect())
}

/// Count, min/max/mean/stdev (ns, population) and the value at each
/// percentile of `percentiles` (percent, 0–100) as `{percentile: value_ns}`:
/// the core's [`LatSummary::checked`] (the one percentile computation),
/// in the shape Python indexes by percentile.
#[pyfunction]
pub fn hist_stats<'py>(
    py: Python<'py>,
    hist: &str,
    percentiles: Vec<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let s = LatSummary::checked(&decode(hist)?, &percentiles)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("count", s.count)?;
    d.set_item("min_ns", s.min_ns)?;
    d.set_item("max_ns", s.max_ns)?;
    d.set_item("mean_ns", s.mean_ns)?;
    d.set_item("stdev_ns", s.stdev_ns)?;
    let pct = PyDict::new(py);
    for p in &s.percentiles {
        pct.set_item(p.percentile, p.value_ns)?;
    }
    d.set_item("percentiles", pct)?;
    Ok(d)
}

/// A Prometheus latency family as text (the core's `prom`: one bucket
/// layout everywhere, so series of different processes add up): every
/// series `(labels as (name, value) pairs, histogram V2 base64)` as a
/// classic histogram in seconds, and when `summaries` the quantile summary
/// family beside it.
#[pyfunction]
#[pyo3(signature = (name, help, series, summaries = false))]
pub fn prom_latency(
    py: Python<'_>,
    name: &str,
    help: &str,
    series: Vec<(Vec<(String, String)>, String)>,
    summaries: bool,
) -> PyResult<String> {
    // Without the GIL: a fleet of 1,000 hosts' /metrics is tens of MB, made
    // on the live server's thread while rank 0's loop goes on.
    gil::released(py, || {
        let mut decoded = Vec::with_capacity(series.len());
        for (labels, h) in &series {
            let pairs: Vec<(&str, &str)> = labels
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            decoded.push((prom::labels_text(&pairs), LatHist::from_v2_base64(h)?));
        }
        let refs: Vec<(String, &LatHist)> = decoded.iter().map(|(l, h)| (l.clone(), h)).collect();
        let mut out = String::new();
        prom::write_latency_family(&mut out, name, help, &refs, summaries);
        Ok(out)
    })
    .map_err(core_error)
}

/// The finite upper bounds of the Prometheus buckets, ns, ascending.
#[pyfunction]
pub fn prom_bounds_ns() -> Vec<f64> {
    prom::bounds_ns().to_vec()
}

/// A metric's value from Python: a number (counter, gauge) or a histogram
/// (V2 base64).
#[derive(FromPyObject)]
pub enum PromValue {
    Number(f64),
    Hist(String),
}

/// Families as Prometheus' length-delimited protobuf exposition (native
/// histograms, schema 3, beside the classic buckets): each family
/// `(name, help, kind, [(labels, value)])`, kind `counter`, `gauge` or
/// `histogram` (values: numbers, or histograms as V2 base64).
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn prom_protobuf<'py>(
    py: Python<'py>,
    families: Vec<(
        String,
        String,
        String,
        Vec<(Vec<(String, String)>, PromValue)>,
    )>,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let mut hists = Vec::new();
    for (_, _, _, metrics) in &families {
        for (_, v) in metrics {
            if let PromValue::Hist(s) = v {
                hists.push(decode(s)?);
            }
        }
    }
    let mut next = hists.iter();
    let mut out = Vec::with_capacity(families.len());
    for (name, help, kind, metrics) in &families {
        let mut ms = Vec::with_capacity(metrics.len());
        for (labels, v) in metrics {
            let value = match (kind.as_str(), v) {
                ("counter", PromValue::Number(x)) => native::Value::Counter(*x),
                ("gauge", PromValue::Number(x)) => native::Value::Gauge(*x),
                ("histogram", PromValue::Hist(_)) => {
                    native::Value::Histogram(next.next().expect("decoded above"))
                }
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "{name}: a {kind} family takes {}",
                        if kind == "histogram" {
                            "histograms"
                        } else {
                            "numbers"
                        }
                    )))
                }
            };
            ms.push((labels.clone(), value));
        }
        out.push(native::Family {
            name: name.clone(),
            help: help.clone(),
            metrics: ms,
        });
    }
    Ok(pyo3::types::PyBytes::new(
        py,
        &native::encode_delimited(&out),
    ))
}
