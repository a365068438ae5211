//! Options that change how a worker thread itself runs rather than which
//! I/O it issues: fio's `numa_mem_policy` (the thread's NUMA memory policy,
//! applied with set_mempolicy before it allocates its buffers), cpuio's
//! `cpumode`, and where a worker streams its per-I/O records when fio's
//! logs ask for one line per I/O (`log_avg_msec=0`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `numa_mem_policy=mode[:nodes]` (fio's modes; Linux's MPOL_* values).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemPolicy {
    /// Not given: the thread keeps the process's policy.
    #[default]
    Inherit,
    /// `default`: MPOL_DEFAULT (allocate on the node the thread runs on).
    Default,
    /// `prefer:N`: MPOL_PREFERRED on one node.
    Prefer(usize),
    /// `bind:nodes`: MPOL_BIND, only these nodes.
    Bind(Vec<usize>),
    /// `interleave:nodes`: MPOL_INTERLEAVE, pages spread over these nodes.
    Interleave(Vec<usize>),
    /// `local`: MPOL_LOCAL.
    Local,
}

impl MemPolicy {
    /// Parses fio's `numa_mem_policy` value; `all` in a node list means
    /// every node, resolved by the engine (kept here as an empty list).
    pub fn parse(text: &str) -> Result<MemPolicy, String> {
        let (mode, nodes) = match text.split_once(':') {
            Some((m, n)) => (m.trim(), Some(n.trim())),
            None => (text.trim(), None),
        };
        let list = |n: Option<&str>| -> Result<Vec<usize>, String> {
            match n {
                None | Some("") => Err(format!("{mode} needs nodes, e.g. {mode}:0-1")),
                Some("all") => Ok(Vec::new()),
                Some(n) => crate::units::parse_cpu_list(n),
            }
        };
        match mode {
            "default" | "local" if nodes.is_some_and(|n| !n.is_empty()) => {
                Err(format!("{mode} takes no nodes"))
            }
            "default" => Ok(MemPolicy::Default),
            "local" => Ok(MemPolicy::Local),
            "prefer" => {
                let v = list(nodes)?;
                match v.as_slice() {
                    [n] => Ok(MemPolicy::Prefer(*n)),
                    _ => Err("prefer takes exactly one node, e.g. prefer:0".into()),
                }
            }
            "bind" => list(nodes).map(MemPolicy::Bind),
            "interleave" => list(nodes).map(MemPolicy::Interleave),
            _ => Err(format!(
                "unknown mode '{mode}': expected default, prefer, bind, interleave or local"
            )),
        }
    }
}

/// cpuio's `cpumode`: how the busy part of a cycle burns CPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuMode {
    /// A tight arithmetic loop (fio's noop).
    #[default]
    Noop,
    /// Sorting fresh random data over and over (fio's qsort).
    Qsort,
}

/// The worker-thread options of a job.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkerOptions {
    pub numa_mem_policy: MemPolicy,
    pub cpumode: CpuMode,
    /// `per_io_log`: directory where each worker streams one record per
    /// completed I/O (file `JOB.WORKER.iolog`, see the engine's iolog
    /// module); None = no per-I/O records.
    pub per_io_log: Option<PathBuf>,
    /// `create_only`: lay the files out as the job would, then do no I/O.
    pub create_only: bool,
    /// `lockmem`: bytes each worker keeps locked in memory (mlock) while it
    /// runs, so the rest of the system has that much less; 0 = none.
    pub lockmem_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_mem_policies_parse() {
        assert_eq!(MemPolicy::parse("bind:0"), Ok(MemPolicy::Bind(vec![0])));
        assert_eq!(
            MemPolicy::parse("interleave:0-1"),
            Ok(MemPolicy::Interleave(vec![0, 1]))
        );
        assert_eq!(MemPolicy::parse("prefer:1"), Ok(MemPolicy::Prefer(1)));
        assert_eq!(MemPolicy::parse("local"), Ok(MemPolicy::Local));
        assert_eq!(MemPolicy::parse("default"), Ok(MemPolicy::Default));
        assert_eq!(MemPolicy::parse("bind:all"), Ok(MemPolicy::Bind(vec![])));
        assert!(MemPolicy::parse("prefer:0-1")
            .unwrap_err()
            .contains("one node"));
        assert!(MemPolicy::parse("bind")
            .unwrap_err()
            .contains("needs nodes"));
        assert!(MemPolicy::parse("spread:0")
            .unwrap_err()
            .contains("unknown mode"));
    }
}
