//! Server-side measurement: what the target did over a window.
//!
//! [`Stats`] gathers, per export, the server's per-op counters and latency
//! — from the request's header arriving to its reply being written, less
//! the time the WRITE payload took to arrive: the time the server held the
//! request (waiting for a slot or a buffer, running it, holding it for a
//! delay layer, waiting for the socket), without the data transfer in
//! either direction, which is the wire's share. A request is counted just
//! before its reply is written, so a client that has seen a reply can rely
//! on it being in the next snapshot. Per stats layer, its counters; the
//! connection counters; and the process and system CPU over the window
//! ([`iolab_core::cpu`], measured the way the engine measures the client),
//! also in the client summary's form ([`CpuSummary`]: %CPU, cycles per
//! I/O, c/B) so client and server figures come from one formula.
//!
//! A window starts when the server starts and at every
//! [`Stats::snapshot_and_reset`], so a client run can bracket exactly its
//! measured window: reset before, snapshot after. The snapshot is plain
//! data ([`StatsSnapshot`], serde) for JSON and the HTTP endpoint.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use iolab_core::cpu::{self, CpuSample, CpuUsage};
use iolab_core::hist::LatHist;
use iolab_core::summary::CpuSummary;
use serde::{Deserialize, Serialize};

use crate::counters::{DevCounterSet, DevCounters};
use crate::error::TargetError;
use crate::export::ExportSet;
use crate::measure::{OpStatsSet, Recorder};
use crate::op::Op;
use crate::pacing::{Pacer, PacingSnapshot};

/// A stats layer's name and counters.
pub type NamedRecorder = (String, Arc<Recorder>);

/// Live counters of the server.
#[derive(Debug)]
pub struct Stats {
    exports: Vec<NamedRecorder>,
    layers: Vec<NamedRecorder>,
    devs: DevCounterSet,
    pub(crate) conns: ConnCounters,
    window_start: Mutex<CpuSample>,
    pacer: Option<Arc<Pacer>>,
}

/// Connection events (counts are per window; `active` is a gauge).
#[derive(Debug, Default)]
pub(crate) struct ConnCounters {
    pub accepted: AtomicU64,
    pub refused: AtomicU64,
    pub active: AtomicU64,
    pub protocol_errors: AtomicU64,
    pub last_error: Mutex<Option<String>>,
}

impl ConnCounters {
    pub fn bump(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Remember why a session ended abnormally.
    pub fn note_error(&self, why: String) {
        *self
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(why);
    }
}

/// One export's or stats layer's counters over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedOps {
    pub name: String,
    pub ops: OpStatsSet,
}

/// Connection counts over the window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnSnapshot {
    pub accepted: u64,
    /// Closed at once because `max_connections` were open.
    pub refused: u64,
    /// Open now.
    pub active: u64,
    /// Sessions ended for violating the protocol (bad magic, unknown
    /// client flags, over-long option or payload, truncated request).
    pub protocol_errors: u64,
    /// Why the last session that ended abnormally did (protocol or socket
    /// error), for diagnosing a client; kept across windows.
    pub last_error: Option<String>,
}

/// What the target did over one window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatsSnapshot {
    pub iolab_version: String,
    /// CLOCK_MONOTONIC at the start of the window, ns.
    pub window_start_mono_ns: u64,
    pub window_ns: u64,
    pub exports: Vec<NamedOps>,
    pub layers: Vec<NamedOps>,
    /// What each piece of each stack publishes ([`crate::stack::Counter`]),
    /// per piece and member; absent in snapshots written before it existed.
    #[serde(default)]
    pub counters: Vec<DevCounters>,
    pub connections: ConnSnapshot,
    pub cpu: CpuUsage,
    /// `cpu` as the client summary reports its own CPU, over the READ and
    /// WRITE requests answered in the window (their count and payload
    /// bytes, both exports and directions together): %CPU of the server
    /// process, cycles per I/O, c/B. Absent in snapshots written before it
    /// existed.
    #[serde(default)]
    pub cpu_summary: Option<CpuSummary>,
    /// IO pacing state, when the target paces.
    #[serde(default)]
    pub pacing: Option<PacingSnapshot>,
    /// Per export, how late its held replies went out against their model
    /// time (every op together); absent in snapshots written before it existed.
    #[serde(default)]
    pub fidelity: Vec<Fidelity>,
}

/// How faithfully an export's simulated or delayed replies kept their
/// model time over the window: how late after its hold time (the delay
/// layer's or the simulated device's completion) each held reply was
/// written. A reply is never early, so lateness is the whole error; the
/// client sees it on top of the model's time. Percentiles come from the
/// merged histogram of every op (never averaged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fidelity {
    pub export: String,
    /// Replies held in the window (those with a model time).
    pub held: u64,
    pub late_ns_p50: u64,
    pub late_ns_p99: u64,
    pub late_ns_max: u64,
    /// Every held reply's lateness, ns.
    pub late_ns: LatHist,
}

impl Fidelity {
    /// The record of `e`'s held replies (zeros when none was held).
    pub fn of(e: &NamedOps) -> Fidelity {
        let mut late = LatHist::new();
        for op in Op::ALL {
            late.merge(&e.ops.get(op).hold_late_ns);
        }
        // A percentile is its bucket's highest value, which can pass the
        // exact maximum kept beside the buckets: no percentile is above it.
        let max = late.max();
        Fidelity {
            export: e.name.clone(),
            held: late.count(),
            late_ns_p50: late.percentile(50.0).min(max),
            late_ns_p99: late.percentile(99.0).min(max),
            late_ns_max: max,
            late_ns: late,
        }
    }
}

impl Stats {
    pub(crate) fn new(
        exports: &ExportSet,
        layers: Vec<NamedRecorder>,
        pacer: Option<Arc<Pacer>>,
    ) -> Result<Stats, TargetError> {
        let start =
            cpu::sample().map_err(|e| TargetError::io("read CPU counters (/proc/stat)", e))?;
        Ok(Stats {
            exports: exports
                .iter()
                .map(|e| (e.name().to_string(), e.recorder().clone()))
                .collect(),
            layers,
            devs: DevCounterSet::new(exports),
            conns: ConnCounters::default(),
            window_start: Mutex::new(start),
            pacer,
        })
    }

    /// The window so far, without starting a new one.
    pub fn snapshot(&self) -> Result<StatsSnapshot, TargetError> {
        self.take(false)
    }

    /// The window so far, and start a new one at the same instant.
    pub fn snapshot_and_reset(&self) -> Result<StatsSnapshot, TargetError> {
        self.take(true)
    }

    fn take(&self, reset: bool) -> Result<StatsSnapshot, TargetError> {
        let mut start = self
            .window_start
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let now =
            cpu::sample().map_err(|e| TargetError::io("read CPU counters (/proc/stat)", e))?;
        let named = |v: &[NamedRecorder]| {
            v.iter()
                .map(|(name, r)| NamedOps {
                    name: name.clone(),
                    ops: r.snapshot(reset),
                })
                .collect()
        };
        let c = &self.conns;
        let take = |a: &AtomicU64| {
            if reset {
                a.swap(0, Ordering::Relaxed)
            } else {
                a.load(Ordering::Relaxed)
            }
        };
        let exports: Vec<NamedOps> = named(&self.exports);
        let usage = CpuUsage::between(&start, &now);
        let snap = StatsSnapshot {
            iolab_version: iolab_core::VERSION.to_string(),
            window_start_mono_ns: start.mono_ns,
            window_ns: now.mono_ns.saturating_sub(start.mono_ns),
            cpu_summary: Some(cpu_summary(&usage, &exports)),
            fidelity: exports.iter().map(Fidelity::of).collect(),
            exports,
            layers: named(&self.layers),
            counters: self.devs.snapshot(reset),
            connections: ConnSnapshot {
                accepted: take(&c.accepted),
                refused: take(&c.refused),
                active: c.active.load(Ordering::Relaxed),
                protocol_errors: take(&c.protocol_errors),
                last_error: c
                    .last_error
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone(),
            },
            cpu: usage,
            pacing: self.pacer.as_ref().map(|p| p.snapshot(reset)),
        };
        if reset {
            *start = now;
        }
        Ok(snap)
    }
}

/// The server's CPU in the client summary's form: READ and WRITE requests
/// and their payload bytes count, as the client counts its two directions
/// (flush, trim and zero are not data transfers).
fn cpu_summary(usage: &CpuUsage, exports: &[NamedOps]) -> CpuSummary {
    let (mut ios, mut bytes) = (0, 0);
    for e in exports {
        for o in [&e.ops.read, &e.ops.write] {
            ios += o.ios;
            bytes += o.bytes;
        }
    }
    CpuSummary::of(usage, &usage.host, ios, bytes)
}

impl StatsSnapshot {
    /// The counters of export `name`.
    pub fn export(&self, name: &str) -> Option<&OpStatsSet> {
        self.exports.iter().find(|e| e.name == name).map(|e| &e.ops)
    }

    /// The counters of stats layer `name`.
    pub fn layer(&self, name: &str) -> Option<&OpStatsSet> {
        self.layers.iter().find(|e| e.name == name).map(|e| &e.ops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Export;
    use crate::stack::null::NullDev;
    use crate::stack::Op;

    #[test]
    fn snapshot_and_reset_brackets_a_window() {
        let set =
            ExportSet::new(vec![Export::new("n", Arc::new(NullDev::new(4096))).unwrap()]).unwrap();
        let layer = Arc::new(Recorder::new());
        let stats = Stats::new(&set, vec![("dev".into(), layer.clone())], None).unwrap();
        set.get(0)
            .unwrap()
            .recorder()
            .record(Op::Read, 4096, true, 10_000);
        layer.record(Op::Read, 4096, true, 9_000);
        ConnCounters::bump(&stats.conns.accepted);
        let a = stats.snapshot_and_reset().unwrap();
        assert_eq!(a.export("n").unwrap().read.ios, 1);
        let max = a.layer("dev").unwrap().read.lat_ns.max();
        assert!((9_000..9_010).contains(&max), "{max}");
        assert_eq!(a.connections.accepted, 1);
        assert!(a.window_ns > 0);
        let c = a.cpu_summary.as_ref().unwrap();
        assert_eq!((c.ios, c.bytes), (1, 4096));
        assert_eq!(c.cycles_per_byte, a.cpu.cycles_per_byte(4096));
        assert_eq!(c.proc_cpu_pct, a.cpu.proc_cpu_pct());
        let b = stats.snapshot().unwrap();
        assert_eq!(b.export("n").unwrap().read.ios, 0);
        assert_eq!(b.connections.accepted, 0);
        assert!(b.window_start_mono_ns >= a.window_start_mono_ns + a.window_ns);
        let json = serde_json::to_string(&a).unwrap();
        let back: StatsSnapshot = serde_json::from_str(&json).unwrap();
        assert_eq!(back, a);
    }
}
