//! The CPU clock frequency behind cycle figures, and where it came from.
//!
//! Cycles = time × frequency holds only for a fixed frequency; seed 000
//! disabled turbo and frequency scaling to make it so. We cannot fix it,
//! so we take the best stated value and say which it is:
//!
//! 1. cpufreq `base_frequency` of cpu0 (intel_pstate, amd-pstate): the
//!    nominal clock — what seed 000 used ("2.7 GHz");
//! 2. cpufreq `cpuinfo_max_freq` of cpu0: the highest clock the driver
//!    allows (turbo included where it is enabled);
//! 3. /proc/cpuinfo `cpu MHz`, the mean over the CPUs listed: the clock
//!    now. On a VM without cpufreq this is usually the host's nominal
//!    clock; on bare metal it moves with load.

use std::fs;

const CPUFREQ: &str = "/sys/devices/system/cpu/cpu0/cpufreq";

/// `(clock_hz, source)`; `(0.0, "unknown: …")` when nothing states a
/// clock, in which case every cycle figure is 0.
pub fn clock() -> (f64, String) {
    let read = |p: &str| fs::read_to_string(p).ok();
    clock_from(
        read(&format!("{CPUFREQ}/base_frequency")).as_deref(),
        read(&format!("{CPUFREQ}/cpuinfo_max_freq")).as_deref(),
        read("/proc/cpuinfo").as_deref(),
    )
}

/// [`clock`] from the texts of its three sources (pure, for tests).
pub fn clock_from(
    base_khz: Option<&str>,
    max_khz: Option<&str>,
    cpuinfo: Option<&str>,
) -> (f64, String) {
    let khz = |t: Option<&str>| {
        t.and_then(|t| t.trim().parse::<f64>().ok())
            .filter(|&k| k > 0.0)
    };
    if let Some(k) = khz(base_khz) {
        return (
            k * 1e3,
            "cpufreq base_frequency of cpu0 (nominal; turbo may run faster)".into(),
        );
    }
    if let Some(k) = khz(max_khz) {
        return (
            k * 1e3,
            "cpufreq cpuinfo_max_freq of cpu0 (maximum; cores may run slower)".into(),
        );
    }
    if let Some((mhz, n)) = cpuinfo.and_then(parse_cpuinfo_mhz) {
        return (
            mhz * 1e6,
            format!("/proc/cpuinfo 'cpu MHz', mean of {n} CPUs when read (no cpufreq; may vary)"),
        );
    }
    (
        0.0,
        "unknown: no cpufreq and no 'cpu MHz' in /proc/cpuinfo; cycle figures are 0".into(),
    )
}

/// Mean of the `cpu MHz` lines of /proc/cpuinfo and how many there were.
pub fn parse_cpuinfo_mhz(text: &str) -> Option<(f64, usize)> {
    let values: Vec<f64> = text
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| k.trim() == "cpu MHz")
        .filter_map(|(_, v)| v.trim().parse::<f64>().ok())
        .filter(|&v| v > 0.0)
        .collect();
    (!values.is_empty()).then(|| {
        (
            values.iter().sum::<f64>() / values.len() as f64,
            values.len(),
        )
    })
}
