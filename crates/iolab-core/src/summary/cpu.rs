//! CPU accounting of each stonewall group ([`CpuSummary`]): %CPU of the
//! process and of the system, cycles per I/O and seed 000's cycles per byte.
//!
//! The CPU figures themselves are [`CpuUsage`]'s derived methods; this
//! module only pairs each group's usage with the I/Os and bytes done in it.
//!
//! `RunResult::cpu` holds one [`CpuUsage`] per host and group that ran,
//! each naming its `host` and `group`; entries are matched to groups and to
//! the workers of their host by those fields, whatever their order (a
//! merged result appends each host's list; a stopped run has no entry for
//! the groups it never started). Results written before the fields existed
//! (every `host` empty) held one entry per group in group order, host after
//! host: `located` places those by position.

use serde::{Deserialize, Serialize};

use std::collections::HashMap;

use super::JobSummary;
use crate::cpu::CpuUsage;
use crate::stats::RunResult;

/// CPU used by one host over one group's measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuSummary {
    pub host: String,
    pub window_ns: u64,
    pub ncpus: u32,
    /// I/Os and bytes (both directions) this host's workers did in the group.
    pub ios: u64,
    pub bytes: u64,
    /// The iolab process: user + system time / window, percent of one CPU.
    pub proc_cpu_pct: f64,
    pub proc_user_pct: f64,
    pub proc_sys_pct: f64,
    /// The whole system, percent of all CPUs (/proc/stat).
    pub sys_user_pct: f64,
    pub sys_nice_pct: f64,
    pub sys_system_pct: f64,
    pub sys_irq_pct: f64,
    pub sys_softirq_pct: f64,
    pub sys_steal_pct: f64,
    pub sys_iowait_pct: f64,
    pub sys_idle_pct: f64,
    /// system + irq + softirq, percent of all CPUs (seed 000's %privileged).
    pub privileged_pct: f64,
    /// Busy cycles of the whole system (user + nice + system + irq +
    /// softirq time × clock) per I/O.
    pub cycles_per_io: f64,
    /// Cycles the iolab process spent per I/O.
    pub proc_cycles_per_io: f64,
    /// Seed 000's c/B: %privileged × clock_hz × cores / bytes per second.
    pub cycles_per_byte: f64,
    pub clock_hz: f64,
    pub clock_source: String,
}

impl CpuSummary {
    pub fn of(u: &CpuUsage, host: &str, ios: u64, bytes: u64) -> CpuSummary {
        let sys = u.sys_pct();
        CpuSummary {
            host: host.to_string(),
            window_ns: u.window_ns,
            ncpus: u.ncpus,
            ios,
            bytes,
            proc_cpu_pct: u.proc_cpu_pct(),
            proc_user_pct: u.proc_user_pct(),
            proc_sys_pct: u.proc_sys_pct(),
            sys_user_pct: sys.user,
            sys_nice_pct: sys.nice,
            sys_system_pct: sys.system,
            sys_irq_pct: sys.irq,
            sys_softirq_pct: sys.softirq,
            sys_steal_pct: sys.steal,
            sys_iowait_pct: sys.iowait,
            sys_idle_pct: sys.idle,
            privileged_pct: u.privileged_pct(),
            cycles_per_io: u.cycles_per_io(ios),
            proc_cycles_per_io: u.proc_cycles_per_io(ios),
            cycles_per_byte: u.cycles_per_byte(bytes),
            clock_hz: u.clock_hz,
            clock_source: u.clock_source.clone(),
        }
    }
}

/// One CPU entry and where it belongs.
pub(super) struct Located<'a> {
    host: &'a str,
    group: u32,
    usage: &'a CpuUsage,
}

/// Every CPU entry with its host and group: its own fields, or for a
/// result written before they existed, its position (see the module doc).
pub(super) fn located(run: &RunResult, ngroups: u32) -> Vec<Located<'_>> {
    let positional = run.cpu.iter().all(|u| u.host.is_empty());
    let per_host = ngroups.max(1) as usize;
    run.cpu
        .iter()
        .enumerate()
        .map(|(i, usage)| {
            if !positional {
                return Located {
                    host: &usage.host,
                    group: usage.group,
                    usage,
                };
            }
            let host = run.hosts.get(i / per_host);
            Located {
                host: host.map_or("", |h| h.hostname.as_str()),
                group: (i % per_host) as u32,
                usage,
            }
        })
        .collect()
}

/// Group `g`'s CPU usage on each host, with the I/Os that host did (from
/// the workers' summaries: `jobs` of the whole run). Each host's I/Os are
/// added once, in one pass over the workers, and looked up per CPU entry
/// (a scan of every worker per entry was quadratic in hosts).
pub(super) fn group_cpu(
    run: &RunResult,
    jobs: &[JobSummary],
    g: u32,
    cpu: &[Located<'_>],
) -> Vec<CpuSummary> {
    // On a single host every worker counts, whatever name it recorded.
    let single_host = run.hosts.len() <= 1;
    let mut per_host: HashMap<&str, (u64, u64)> = HashMap::new();
    for w in jobs
        .iter()
        .filter(|j| j.group == g)
        .flat_map(|j| &j.workers)
    {
        let key = if single_host { "" } else { w.host.as_str() };
        let e = per_host.entry(key).or_default();
        let s = &w.stats;
        e.0 += s.read.ios + s.write.ios;
        e.1 += s.read.bytes + s.write.bytes;
    }
    cpu.iter()
        .filter(|c| c.group == g)
        .map(|c| {
            let key = if single_host { "" } else { c.host };
            let (ios, bytes) = per_host.get(key).copied().unwrap_or((0, 0));
            CpuSummary::of(c.usage, c.host, ios, bytes)
        })
        .collect()
}
