//! Per-operation counters and latency histograms, shared by the server's
//! per-export measurement and the stats layer.
//!
//! A [`Recorder`] counts, for each [`Op`], requests answered, requests that
//! failed, bytes moved by successful requests, and a latency histogram in
//! ns ([`LatHist`], the same type the client uses, so server and client
//! percentiles compare exactly). Recording happens on many threads at
//! once; to keep them off one lock, a recorder is striped: each thread
//! records into one of [`STRIPES`] shards, chosen once per thread, and a
//! snapshot merges the shards (histogram merges are exact). Histograms
//! are created on first use, so an op never seen costs no memory.
//!
//! A leaf but for [`Op`] (crate::op): the stack's stats layer records
//! into a [`Recorder`], so this module must not import the stack.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use iolab_core::hist::LatHist;
use serde::{Deserialize, Serialize};

use crate::op::Op;

/// Shards per recorder.
pub const STRIPES: usize = 4;

/// Counters of one operation over a window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpStats {
    /// Requests answered (successful or not).
    pub ios: u64,
    /// Requests answered with an error.
    pub errors: u64,
    /// Payload bytes of successful requests (the range length for trim and zero).
    pub bytes: u64,
    /// Latency of every answered request, ns.
    pub lat_ns: LatHist,
    /// For each reply a delay layer held: how long after its hold time it
    /// was written, ns — the hold a request got is the delay it asked for
    /// plus this. Empty when nothing was held (and in snapshots written
    /// before it existed).
    #[serde(default)]
    pub hold_late_ns: LatHist,
}

impl OpStats {
    pub fn merge(&mut self, o: &OpStats) {
        self.ios += o.ios;
        self.errors += o.errors;
        self.bytes += o.bytes;
        self.lat_ns.merge(&o.lat_ns);
        self.hold_late_ns.merge(&o.hold_late_ns);
    }
}

/// Counters of every operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpStatsSet {
    pub read: OpStats,
    pub write: OpStats,
    pub flush: OpStats,
    pub trim: OpStats,
    pub zero: OpStats,
}

impl OpStatsSet {
    pub fn get(&self, op: Op) -> &OpStats {
        match op {
            Op::Read => &self.read,
            Op::Write => &self.write,
            Op::Flush => &self.flush,
            Op::Trim => &self.trim,
            Op::Zero => &self.zero,
        }
    }

    pub fn get_mut(&mut self, op: Op) -> &mut OpStats {
        match op {
            Op::Read => &mut self.read,
            Op::Write => &mut self.write,
            Op::Flush => &mut self.flush,
            Op::Trim => &mut self.trim,
            Op::Zero => &mut self.zero,
        }
    }

    pub fn merge(&mut self, o: &OpStatsSet) {
        for op in Op::ALL {
            self.get_mut(op).merge(o.get(op));
        }
    }

    /// Requests answered, all ops together.
    pub fn total_ios(&self) -> u64 {
        Op::ALL.iter().map(|&op| self.get(op).ios).sum()
    }
}

#[derive(Debug, Default)]
struct ShardOp {
    ios: u64,
    errors: u64,
    bytes: u64,
    lat_ns: Option<LatHist>,
    hold_late_ns: Option<LatHist>,
}

type Shard = [ShardOp; 5];

/// One answered request, as [`Recorder::record_all`] takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub op: Op,
    /// Bytes moved (counted only when `ok`).
    pub bytes: u64,
    pub ok: bool,
    pub lat_ns: u64,
    /// For a held reply, how late after its hold time it was written.
    pub hold_late_ns: Option<u64>,
}

/// Striped per-op counters; see the module docs.
#[derive(Debug, Default)]
pub struct Recorder {
    shards: [Mutex<Shard>; STRIPES],
}

fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static MINE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    MINE.with(|m| *m)
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// Record one answered request.
    pub fn record(&self, op: Op, bytes: u64, ok: bool, lat_ns: u64) {
        self.record_all([Sample {
            op,
            bytes,
            ok,
            lat_ns,
            hold_late_ns: None,
        }]);
    }

    /// Record several answered requests under one lock (a connection
    /// answers the replies it writes together in one go).
    pub fn record_all(&self, samples: impl IntoIterator<Item = Sample>) {
        let mut shard = self.shards[stripe()]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for x in samples {
            let s = &mut shard[x.op.index()];
            s.ios += 1;
            if x.ok {
                s.bytes += x.bytes;
            } else {
                s.errors += 1;
            }
            s.lat_ns.get_or_insert_with(LatHist::new).record(x.lat_ns);
            if let Some(late) = x.hold_late_ns {
                s.hold_late_ns.get_or_insert_with(LatHist::new).record(late);
            }
        }
    }

    /// Everything recorded since the last reset; with `reset`, start a new
    /// window atomically per shard (nothing recorded is lost or counted twice).
    pub fn snapshot(&self, reset: bool) -> OpStatsSet {
        let mut out = OpStatsSet::default();
        for shard in &self.shards {
            let mut shard = shard.lock().unwrap_or_else(PoisonError::into_inner);
            for op in Op::ALL {
                let s = &mut shard[op.index()];
                let o = out.get_mut(op);
                o.ios += s.ios;
                o.errors += s.errors;
                o.bytes += s.bytes;
                for (from, to) in [
                    (&mut s.lat_ns, &mut o.lat_ns),
                    (&mut s.hold_late_ns, &mut o.hold_late_ns),
                ] {
                    if let Some(h) = from {
                        to.merge(h);
                        if reset {
                            h.reset();
                        }
                    }
                }
                if reset {
                    (s.ios, s.errors, s.bytes) = (0, 0, 0);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn records_from_many_threads_and_resets() {
        let r = Arc::new(Recorder::new());
        let hs: Vec<_> = (0..8)
            .map(|t| {
                let r = r.clone();
                std::thread::spawn(move || {
                    for i in 0..1000u64 {
                        r.record(Op::Read, 4096, true, 1000 + t * 10 + i % 7);
                    }
                    r.record(Op::Write, 512, false, 5);
                })
            })
            .collect();
        hs.into_iter().for_each(|h| h.join().unwrap());
        let s = r.snapshot(true);
        assert_eq!(
            (s.read.ios, s.read.bytes, s.read.errors),
            (8000, 8000 * 4096, 0)
        );
        assert_eq!((s.write.ios, s.write.bytes, s.write.errors), (8, 0, 8));
        assert_eq!(s.read.lat_ns.count(), 8000);
        assert_eq!(s.total_ios(), 8008);
        let after = r.snapshot(false);
        assert_eq!(after.total_ios(), 0);
        assert_eq!(after.read.lat_ns.count(), 0);
    }

    #[test]
    fn record_all_counts_each_sample_once() {
        let r = Recorder::new();
        let s = |op, ok, lat_ns| Sample {
            op,
            bytes: 4096,
            ok,
            lat_ns,
            hold_late_ns: (op == Op::Write).then_some(lat_ns / 100),
        };
        r.record_all([
            s(Op::Read, true, 1_000),
            s(Op::Read, false, 2_000),
            s(Op::Write, true, 3_000),
        ]);
        let got = r.snapshot(false);
        assert_eq!(
            (got.read.ios, got.read.errors, got.read.bytes),
            (2, 1, 4096)
        );
        assert_eq!((got.write.ios, got.write.bytes), (1, 4096));
        assert_eq!(got.read.lat_ns.count(), 2);
        assert_eq!(got.write.lat_ns.count(), 1);
        assert_eq!(got.read.hold_late_ns.count(), 0);
        assert_eq!(got.write.hold_late_ns.max(), 30, "only held replies count");
    }

    #[test]
    fn snapshot_round_trips_through_json() {
        let r = Recorder::new();
        r.record(Op::Flush, 0, true, 12_345);
        let s = r.snapshot(false);
        let back: OpStatsSet = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
