//! The named counters the pieces of each export's stack publish
//! ([`BlockDev::counters`]), per window, for the target's stats.
//!
//! Devices keep running totals from when they were built; the window is
//! kept here: a snapshot reports each total less its value at the window's
//! start, and a reset moves that start. Gauges are reported as they are.
//! Each piece is named by its export and its path in the stack (see
//! [`walk`]); a device under several exports (a split) is reported once,
//! under the first export that reaches it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::export::ExportSet;
use crate::stack::{walk, BlockDev, Counter};

/// One piece's counters over the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DevCounters {
    pub export: String,
    /// Where the piece sits in the stack, from the top: `delay/memory`.
    pub path: String,
    pub counters: Vec<Counter>,
}

impl DevCounters {
    /// The value of counter `name`.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.counters
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.value)
    }
}

/// The stacks to read and the window's start values.
#[derive(Debug)]
pub(crate) struct DevCounterSet {
    stacks: Vec<(String, Arc<dyn BlockDev>)>,
    base: Mutex<HashMap<(String, String), u64>>,
}

impl DevCounterSet {
    pub fn new(exports: &ExportSet) -> DevCounterSet {
        DevCounterSet {
            stacks: exports
                .iter()
                .map(|e| (e.name().to_string(), e.dev().clone()))
                .collect(),
            base: Mutex::new(HashMap::new()),
        }
    }

    /// Every piece's counters over the window; with `reset`, start a new one.
    pub fn snapshot(&self, reset: bool) -> Vec<DevCounters> {
        let mut base = self.base.lock().unwrap_or_else(PoisonError::into_inner);
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (export, top) in &self.stacks {
            walk(top, &mut seen, &mut |path, dev| {
                let mut counters = dev.counters();
                if counters.is_empty() {
                    return;
                }
                for c in counters.iter_mut().filter(|c| !c.gauge) {
                    let key = (path.to_string(), c.name.clone());
                    let start = base.get(&key).copied().unwrap_or(0);
                    if reset {
                        base.insert(key, c.value);
                    }
                    c.value = c.value.saturating_sub(start);
                }
                out.push(DevCounters {
                    export: export.clone(),
                    path: path.to_string(),
                    counters,
                });
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::Export;
    use crate::stack::memory::MemoryDev;
    use crate::stack::split::split;
    use crate::stack::{BlockResult, IoCtx, Layer};
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Counts writes, as a cache layer would count its hits.
    #[derive(Debug)]
    struct CountWrites {
        next: Arc<dyn BlockDev>,
        n: AtomicU64,
    }

    impl Layer for CountWrites {
        fn next(&self) -> &Arc<dyn BlockDev> {
            &self.next
        }
        fn label(&self) -> String {
            "count".into()
        }
        fn write_at(&self, ctx: &mut IoCtx, buf: &[u8], offset: u64, fua: bool) -> BlockResult {
            self.n.fetch_add(1, Ordering::Relaxed);
            self.next.write_at(ctx, buf, offset, fua)
        }
        fn counters(&self) -> Vec<Counter> {
            vec![Counter::total("writes", self.n.load(Ordering::Relaxed))]
        }
    }

    #[test]
    fn totals_count_per_window_gauges_stay_and_shared_devices_appear_once() {
        let mem: Arc<dyn BlockDev> = Arc::new(MemoryDev::new(1 << 20).unwrap());
        let parts = split(mem, 2).unwrap();
        let counted: Arc<dyn BlockDev> = Arc::new(CountWrites {
            next: parts[0].clone(),
            n: AtomicU64::new(0),
        });
        let set = ExportSet::new(vec![
            Export::new("a", counted.clone()).unwrap(),
            Export::new("b", parts[1].clone()).unwrap(),
        ])
        .unwrap();
        let c = DevCounterSet::new(&set);
        let mut ctx = IoCtx::new();
        for _ in 0..3 {
            counted.write_at(&mut ctx, &[1u8; 512], 0, false).unwrap();
        }
        let s = c.snapshot(true);
        let paths: Vec<(&str, &str)> = s
            .iter()
            .map(|d| (d.export.as_str(), d.path.as_str()))
            .collect();
        assert_eq!(paths, [("a", "count"), ("a", "count/split/memory")]);
        assert_eq!(s[0].get("writes"), Some(3));
        assert_eq!(s[1].get("allocated_bytes"), Some(64 * 1024));
        counted.write_at(&mut ctx, &[1u8; 512], 0, false).unwrap();
        let s = c.snapshot(false);
        assert_eq!(s[0].get("writes"), Some(1), "a total counts from the reset");
        assert_eq!(
            s[1].get("allocated_bytes"),
            Some(64 * 1024),
            "a gauge stays"
        );
        assert!(s[1].counters[0].gauge);
        let stats = crate::stats::Stats::new(&set, vec![], None).unwrap();
        counted.write_at(&mut ctx, &[1u8; 512], 0, false).unwrap();
        let text = crate::metrics::prometheus(&stats.snapshot().unwrap(), false);
        assert!(text.contains("# TYPE iolab_target_dev_counter_total counter\n"));
        assert!(text.contains(
            "iolab_target_dev_counter_total{export=\"a\",path=\"count\",counter=\"writes\"} 5\n"
        ));
    }
}
