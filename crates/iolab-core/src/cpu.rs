//! CPU accounting over a measured window.
//!
//! Two views, both needed by seed 000's method:
//! - the process (getrusage RUSAGE_SELF: user and system time), which is
//!   what the tool itself costs;
//! - the whole system (/proc/stat: user, nice, system, idle, iowait, irq,
//!   softirq, steal), which includes the kernel's storage stack and
//!   interrupts done on behalf of the I/O.
//!
//! From them ([`CpuUsage`]'s methods, `W` = window in seconds, `N` =
//! online CPUs, `f` = clock in Hz, shares of /proc/stat ticks over the
//! window, where all eight fields together are 100 %):
//!
//! - `proc_cpu_pct = (proc_user + proc_sys) / W × 100` — percent of ONE
//!   CPU, like top (a process busy on 3 cores shows 300 %);
//! - `sys_pct()` — user, nice, system, irq, softirq, steal, iowait and idle
//!   as percent of ALL CPUs (100 % = every core busy);
//! - `privileged_pct = system + irq + softirq` — seed 000's "% Privileged
//!   Time": the kernel's cost of the I/O, not the load generator's;
//! - `cycles_per_byte(bytes) = privileged_pct/100 × f × N × W / bytes`,
//!   which is seed 000's `%privileged × clock × cores / (bytes per second)`
//!   with both sides multiplied by `W`;
//! - `cycles_per_io(ios) = busy/100 × f × N × W / ios`, where busy is
//!   user, nice, system, irq and softirq together (not idle, not iowait —
//!   an idle CPU waiting for I/O does no work — and not steal, which
//!   another guest used);
//! - `proc_cycles_per_io(ios) = (proc_user + proc_sys) × f / ios`.
//!
//! Cycle figures assume a fixed clock: [`CpuUsage::clock_source`] says
//! where `clock_hz` came from and whether it may vary (seed 000 fixed the
//! frequency — no turbo, no SpeedStep — to make c/B meaningful). A figure
//! that cannot be computed (no I/O, empty window, unknown clock) is 0.
//!
//! Readings: [`sample`] (process rusage, CLOCK_MONOTONIC, /proc/stat),
//! [`thread_rusage`] (one worker thread), [`clock`], [`online_cpus`],
//! [`user_hz`]; [`parse_proc_stat`] is the pure parser behind [`sample`].

use serde::{Deserialize, Serialize};

/// A point-in-time reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSample {
    /// CLOCK_MONOTONIC, ns.
    pub mono_ns: u64,
    pub proc_user_ns: u64,
    pub proc_sys_ns: u64,
    /// System-wide jiffies (USER_HZ ticks) from the `cpu` line of /proc/stat.
    pub sys: SysTicks,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SysTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

/// CPU used over a window, with the facts needed to turn it into cycles.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    /// The host it was measured on (`HostInfo::hostname` of that host).
    /// Empty in results written before `CpuUsage` named its host and group.
    #[serde(default)]
    pub host: String,
    /// The stonewall group whose measured window it covers (0-based).
    #[serde(default)]
    pub group: u32,
    pub window_ns: u64,
    /// Online CPUs.
    pub ncpus: u32,
    /// Ticks per second of /proc/stat (sysconf(_SC_CLK_TCK)).
    pub user_hz: u64,
    pub proc_user_ns: u64,
    pub proc_sys_ns: u64,
    /// System-wide tick deltas over the window.
    pub sys: SysTicks,
    /// Clock frequency used for cycle figures, Hz.
    pub clock_hz: f64,
    /// Where `clock_hz` came from and whether it may vary, e.g.
    /// "cpufreq base_frequency of cpu0 (nominal; turbo may run faster)"; see [`clock`].
    pub clock_source: String,
}

impl CpuUsage {
    /// Usage between two samples of this host (`host` and `group` left
    /// for the caller, which knows whose window it is).
    pub fn between(a: &CpuSample, b: &CpuSample) -> CpuUsage {
        let d = |x: u64, y: u64| y.saturating_sub(x);
        let (clock_hz, clock_source) = clock();
        CpuUsage {
            host: String::new(),
            group: 0,
            window_ns: d(a.mono_ns, b.mono_ns),
            ncpus: online_cpus(),
            user_hz: user_hz(),
            proc_user_ns: d(a.proc_user_ns, b.proc_user_ns),
            proc_sys_ns: d(a.proc_sys_ns, b.proc_sys_ns),
            sys: SysTicks {
                user: d(a.sys.user, b.sys.user),
                nice: d(a.sys.nice, b.sys.nice),
                system: d(a.sys.system, b.sys.system),
                idle: d(a.sys.idle, b.sys.idle),
                iowait: d(a.sys.iowait, b.sys.iowait),
                irq: d(a.sys.irq, b.sys.irq),
                softirq: d(a.sys.softirq, b.sys.softirq),
                steal: d(a.sys.steal, b.sys.steal),
            },
            clock_hz,
            clock_source,
        }
    }

    fn window_s(&self) -> f64 {
        self.window_ns as f64 / 1e9
    }

    /// `part / whole × 100`, 0 when `whole` is 0.
    fn pct(part: f64, whole: f64) -> f64 {
        if whole > 0.0 {
            part / whole * 100.0
        } else {
            0.0
        }
    }

    /// `x / per`, 0 when `per` is 0 or the clock is unknown.
    fn per(&self, x: f64, per: u64) -> f64 {
        if per == 0 || self.clock_hz <= 0.0 {
            0.0
        } else {
            x / per as f64
        }
    }

    /// Process user + system time, percent of one CPU.
    pub fn proc_cpu_pct(&self) -> f64 {
        Self::pct(
            (self.proc_user_ns + self.proc_sys_ns) as f64,
            self.window_ns as f64,
        )
    }

    /// Process user time, percent of one CPU.
    pub fn proc_user_pct(&self) -> f64 {
        Self::pct(self.proc_user_ns as f64, self.window_ns as f64)
    }

    /// Process system time, percent of one CPU.
    pub fn proc_sys_pct(&self) -> f64 {
        Self::pct(self.proc_sys_ns as f64, self.window_ns as f64)
    }

    /// System-wide shares of all CPUs' time, percent (they sum to 100).
    pub fn sys_pct(&self) -> SysCpuPct {
        let t = &self.sys;
        let total =
            (t.user + t.nice + t.system + t.idle + t.iowait + t.irq + t.softirq + t.steal) as f64;
        let p = |x: u64| Self::pct(x as f64, total);
        SysCpuPct {
            user: p(t.user),
            nice: p(t.nice),
            system: p(t.system),
            irq: p(t.irq),
            softirq: p(t.softirq),
            steal: p(t.steal),
            iowait: p(t.iowait),
            idle: p(t.idle),
        }
    }

    /// system + irq + softirq, percent of all CPUs (seed 000's %privileged).
    pub fn privileged_pct(&self) -> f64 {
        let s = self.sys_pct();
        s.system + s.irq + s.softirq
    }

    /// Cycles all CPUs could run over the window: `f × N × W`.
    fn window_cycles(&self) -> f64 {
        self.clock_hz * f64::from(self.ncpus) * self.window_s()
    }

    /// System-wide busy cycles (user, nice, system, irq, softirq) per I/O.
    pub fn cycles_per_io(&self, ios: u64) -> f64 {
        let s = self.sys_pct();
        let busy = s.user + s.nice + s.system + s.irq + s.softirq;
        self.per(busy / 100.0 * self.window_cycles(), ios)
    }

    /// Seed 000's c/B: privileged cycles per byte moved.
    pub fn cycles_per_byte(&self, bytes: u64) -> f64 {
        self.per(self.privileged_pct() / 100.0 * self.window_cycles(), bytes)
    }

    /// The process's own cycles (user + system) per I/O.
    pub fn proc_cycles_per_io(&self, ios: u64) -> f64 {
        let proc_s = (self.proc_user_ns + self.proc_sys_ns) as f64 / 1e9;
        self.per(proc_s * self.clock_hz, ios)
    }
}

/// System-wide CPU time by kind, percent of all CPUs over the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SysCpuPct {
    pub user: f64,
    pub nice: f64,
    pub system: f64,
    pub irq: f64,
    pub softirq: f64,
    pub steal: f64,
    pub iowait: f64,
    pub idle: f64,
}

mod clock;
mod read;
pub use clock::{clock, clock_from, parse_cpuinfo_mhz};
pub use read::{online_cpus, parse_proc_stat, sample, thread_rusage, user_hz};
