//! Rendering a [`StatsSnapshot`] for the stats endpoint: JSON with summary
//! percentiles added, and Prometheus text exposition format.
//!
//! The JSON is the snapshot itself (histograms as HdrHistogram V2 base64,
//! as everywhere in iolab, so a client can merge and compare exactly) plus
//! `summary`: per export and op, counts and latency percentiles in ns, and
//! `cpu_pct`, the server's CPU over the window.
//!
//! The Prometheus text has units in the names (`_bytes_total`,
//! `_latency_seconds`, `_seconds_total`); counters restart at 0 on a reset
//! (Prometheus treats that as a counter reset); latencies are classic
//! histograms over the current window in the core's one bucket layout
//! (`iolab_core::prom`: 8 buckets per octave, ~9 % wide, 32 ns .. 137 s),
//! so `sum by (le)` adds exports, ops and targets correctly. The quantile
//! summaries (0.5, 0.9, 0.99, 0.999) come beside them only when asked
//! (`--metrics-summaries`), as `..._summary_seconds`.

use std::fmt::Write as _;

use iolab_core::hist::LatHist;
use iolab_core::prom::{
    label_value as label, labels_text, write_head as head, write_latency_family,
};
use serde_json::{json, Map, Value};

use crate::measure::{OpStats, OpStatsSet};
use crate::stats::StatsSnapshot;

/// Quantiles reported in summaries.
const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

/// A per-op counter: name, help, and how to read it.
type Counter = (&'static str, &'static str, fn(&OpStats) -> u64);

fn ops(set: &OpStatsSet) -> [(&'static str, &OpStats); 5] {
    [
        ("read", &set.read),
        ("write", &set.write),
        ("flush", &set.flush),
        ("trim", &set.trim),
        ("zero", &set.zero),
    ]
}

fn lat_summary(h: &LatHist) -> Value {
    let mut m = Map::new();
    m.insert("count".into(), json!(h.count()));
    if !h.is_empty() {
        m.insert("min_ns".into(), json!(h.min()));
        m.insert("mean_ns".into(), json!(h.mean()));
        for q in QUANTILES {
            let key = format!("p{}_ns", format!("{}", q * 100.0).replace('.', "_"));
            m.insert(key, json!(h.percentile(q * 100.0)));
        }
        m.insert("max_ns".into(), json!(h.max()));
    }
    Value::Object(m)
}

/// The snapshot as JSON, with `summary` and `cpu_pct` added.
pub fn stats_json(s: &StatsSnapshot) -> Value {
    let mut summary = Map::new();
    for e in &s.exports {
        let mut per_op = Map::new();
        for (op, st) in ops(&e.ops) {
            let v = json!({
                "ios": st.ios,
                "errors": st.errors,
                "bytes": st.bytes,
                "latency": lat_summary(&st.lat_ns),
            });
            per_op.insert(op.into(), v);
        }
        summary.insert(e.name.clone(), Value::Object(per_op));
    }
    let mut v = serde_json::to_value(s).expect("a snapshot is plain data");
    let obj = v.as_object_mut().expect("a snapshot is a JSON object");
    obj.insert("summary".into(), Value::Object(summary));
    obj.insert("cpu_pct".into(), json!(s.cpu.proc_cpu_pct()));
    if let Some(p) = &s.pacing {
        obj.insert("pacing_wait".into(), lat_summary(&p.wait_ns));
    }
    v
}

/// The snapshot as Prometheus text; `summaries` adds the quantile
/// summaries beside the histograms.
pub fn prometheus(s: &StatsSnapshot, summaries: bool) -> String {
    let mut out = String::new();
    let counters: [Counter; 3] = [
        ("iolab_target_requests_total", "Requests answered.", |o| {
            o.ios
        }),
        (
            "iolab_target_errors_total",
            "Requests answered with an error.",
            |o| o.errors,
        ),
        (
            "iolab_target_payload_bytes_total",
            "Payload bytes of successful requests.",
            |o| o.bytes,
        ),
    ];
    for (name, help, get) in counters {
        head(&mut out, name, "counter", help);
        for e in &s.exports {
            for (op, st) in ops(&e.ops) {
                let ex = label(&e.name);
                let _ = writeln!(out, "{name}{{export=\"{ex}\",op=\"{op}\"}} {}", get(st));
            }
        }
    }
    let series: Vec<(String, &LatHist)> = s
        .exports
        .iter()
        .flat_map(|e| {
            ops(&e.ops)
                .map(|(op, st)| (labels_text(&[("export", &e.name), ("op", op)]), &st.lat_ns))
        })
        .collect();
    write_latency_family(
        &mut out,
        "iolab_target_latency_seconds",
        "Server-side latency, request received to reply sent.",
        &series,
        summaries,
    );
    let cpu = "iolab_target_cpu_seconds_total";
    head(&mut out, cpu, "counter", "CPU time of the target process.");
    let _ = writeln!(
        out,
        "{cpu}{{mode=\"user\"}} {}",
        s.cpu.proc_user_ns as f64 / 1e9
    );
    let _ = writeln!(
        out,
        "{cpu}{{mode=\"system\"}} {}",
        s.cpu.proc_sys_ns as f64 / 1e9
    );
    let act = "iolab_target_connections_active";
    head(&mut out, act, "gauge", "Open client connections.");
    let _ = writeln!(out, "{act} {}", s.connections.active);
    pacing(&mut out, s, summaries);
    dev_counters(&mut out, s);
    out
}

/// The counters the pieces of each stack publish: totals and gauges.
fn dev_counters(out: &mut String, s: &StatsSnapshot) {
    let families = [
        (
            "iolab_target_dev_counter_total",
            "counter",
            "A running total a piece of an export's stack counts (see counter).",
            false,
        ),
        (
            "iolab_target_dev_gauge",
            "gauge",
            "A level a piece of an export's stack reports (see counter).",
            true,
        ),
    ];
    for (name, kind, help, gauge) in families {
        let mut rows = s.counters.iter().flat_map(|d| {
            d.counters
                .iter()
                .filter(move |c| c.gauge == gauge)
                .map(move |c| (d, c))
        });
        let Some(first) = rows.next() else { continue };
        head(out, name, kind, help);
        for (d, c) in std::iter::once(first).chain(rows) {
            let _ = writeln!(
                out,
                "{name}{{export=\"{}\",path=\"{}\",counter=\"{}\"}} {}",
                label(&d.export),
                label(&d.path),
                label(&c.name),
                c.value
            );
        }
    }
}

fn pacing(out: &mut String, s: &StatsSnapshot, summaries: bool) {
    let Some(p) = &s.pacing else { return };
    let gauges = [
        (
            "iolab_target_pacing_buffers",
            "Buffers in the pacing pool.",
            p.params.buffers,
        ),
        (
            "iolab_target_pacing_buffers_in_use",
            "Pacing buffers held by requests.",
            p.in_use,
        ),
        (
            "iolab_target_pacing_buffers_in_use_max",
            "Most pacing buffers held at once in the window.",
            p.in_use_max,
        ),
        (
            "iolab_target_pacing_pending",
            "Requests waiting for a pacing buffer.",
            p.pending,
        ),
        (
            "iolab_target_pacing_buffers_cached",
            "Pacing buffers in connections' caches.",
            p.cached,
        ),
    ];
    for (name, help, v) in gauges {
        head(out, name, "gauge", help);
        let _ = writeln!(out, "{name} {v}");
    }
    let name = "iolab_target_pacing_grants_total";
    head(out, name, "counter", "Requests granted pacing buffers.");
    let _ = writeln!(out, "{name} {}", p.grants);
    write_latency_family(
        out,
        "iolab_target_pacing_wait_seconds",
        "Time requests waited for pacing buffers.",
        &[(String::new(), &p.wait_ns)],
        summaries,
    );
}
