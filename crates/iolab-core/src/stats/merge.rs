//! The exact merge of several hosts' results of one plan: the fleet's one
//! total, the only implementation of the rule.
//!
//! The rule: workers of jobs with the same name and stonewall group are
//! appended (each names its host), a job only one host ran is added, host
//! facts, CPU accounting and layout notes are appended, and the earliest
//! start is kept. Nothing is summed or averaged here: the summary of the
//! merged result adds counts and merges histograms bucket by bucket.
//! Results must share the schema, the iolab version and the interval.
//!
//! It works on the JSON form ([`merge_json`]): appending workers needs no
//! histogram decoded, where a typed merge decodes and re-encodes every
//! histogram of every host (seconds at 1,000 hosts). The typed
//! [`merge_results`] and [`RunResult::merge`] go through it.

use serde_json::{Map, Value};

use super::{RunResult, SCHEMA};
use crate::error::CoreError;

fn format_err(msg: impl Into<String>) -> CoreError {
    CoreError::Format(msg.into())
}

fn field<'a>(r: &'a Map<String, Value>, key: &str) -> Result<&'a Value, CoreError> {
    r.get(key)
        .ok_or_else(|| format_err(format!("not an iolab result: no '{key}'")))
}

/// The fields every result must share, checked against the first's.
fn check_same(first: &Map<String, Value>, r: &Map<String, Value>) -> Result<(), CoreError> {
    let (fi, ri) = (field(first, "interval_ns")?, field(r, "interval_ns")?);
    if fi != ri {
        return Err(format_err(format!(
            "cannot merge results with intervals of {ri} ns and {fi} ns (give every host the same interval)"
        )));
    }
    let text = |m: &Map<String, Value>, k: &str| {
        field(m, k).map(|v| v.as_str().unwrap_or("?").to_string())
    };
    let (rs, rv) = (text(r, "schema")?, text(r, "tool_version")?);
    let (fs, fv) = (text(first, "schema")?, text(first, "tool_version")?);
    if rs != SCHEMA || rs != fs || rv != fv {
        return Err(format_err(format!(
            "cannot merge a {rs} result of iolab {rv} with a {fs} result of iolab {fv} \
             (run every host with the same iolab)"
        )));
    }
    Ok(())
}

fn array_mut<'a>(
    r: &'a mut Map<String, Value>,
    key: &str,
) -> Result<&'a mut Vec<Value>, CoreError> {
    r.get_mut(key)
        .and_then(Value::as_array_mut)
        .ok_or_else(|| format_err(format!("not an iolab result: '{key}' is not a list")))
}

/// `other` merged into `total` (both checked objects).
fn merge_into(total: &mut Map<String, Value>, other: Map<String, Value>) -> Result<(), CoreError> {
    let mut other = other;
    let key = |j: &Value| (j.get("name").cloned(), j.get("group").cloned());
    for oj in std::mem::take(array_mut(&mut other, "jobs")?) {
        let jobs = array_mut(total, "jobs")?;
        match jobs.iter_mut().find(|j| key(j) == key(&oj)) {
            Some(j) => {
                let workers = oj.get("workers").and_then(Value::as_array).cloned();
                let into = j.get_mut("workers").and_then(Value::as_array_mut);
                match (into, workers) {
                    (Some(into), Some(w)) => into.extend(w),
                    _ => return Err(format_err("not an iolab result: a job without 'workers'")),
                }
            }
            None => jobs.push(oj),
        }
    }
    for list in ["hosts", "cpu", "layout_notes"] {
        let items = std::mem::take(array_mut(&mut other, list)?);
        array_mut(total, list)?.extend(items);
    }
    let start =
        |m: &Map<String, Value>| field(m, "start_unix_ns").map(|v| v.as_u64().unwrap_or(u64::MAX));
    let earliest = start(total)?.min(start(&other)?);
    total.insert("start_unix_ns".into(), earliest.into());
    Ok(())
}

/// The exact merge of results in their JSON form (see the module doc).
pub fn merge_json(results: Vec<Value>) -> Result<Value, CoreError> {
    let mut objects = results.into_iter().map(|v| match v {
        Value::Object(m) => Ok(m),
        _ => Err(format_err("not an iolab result: not a JSON object")),
    });
    let mut total = objects
        .next()
        .ok_or_else(|| format_err("no results to merge"))??;
    check_same(&total, &total)?;
    for other in objects {
        let other = other?;
        check_same(&total, &other)?;
        merge_into(&mut total, other)?;
    }
    Ok(Value::Object(total))
}

/// [`merge_json`] from and to JSON text (what `_native.merge_results` takes).
pub fn merge_results_json(results: &[&str]) -> Result<String, CoreError> {
    let values = results
        .iter()
        .map(|r| {
            serde_json::from_str(r).map_err(|e| format_err(format!("not an iolab result: {e}")))
        })
        .collect::<Result<Vec<Value>, _>>()?;
    serde_json::to_string(&merge_json(values)?)
        .map_err(|e| format_err(format!("cannot encode the merged result: {e}")))
}

/// The typed merge of several results (through [`merge_json`]).
pub fn merge_results(results: &[RunResult]) -> Result<RunResult, CoreError> {
    let values = results
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<Value>, _>>()
        .map_err(|e| format_err(format!("cannot encode a result: {e}")))?;
    serde_json::from_value(merge_json(values)?)
        .map_err(|e| format_err(format!("not an iolab result after merging: {e}")))
}

impl RunResult {
    /// Exact merge of another host's result of the same plan, in place
    /// (see the module doc). Panics where [`merge_results`] would refuse
    /// (another schema, version or interval): merge checked results.
    pub fn merge(&mut self, other: &RunResult) {
        *self = merge_results(&[self.clone(), other.clone()])
            .unwrap_or_else(|e| panic!("RunResult::merge: {e}"));
    }
}
