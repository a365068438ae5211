//! I/O priorities as fio defines them: a job's default priority (`prio`,
//! `prioclass`, `priohint`) and the per-command priorities of io_uring and
//! libaio (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`, `cmdprio_hint`,
//! `cmdprio_bssplit`).
//!
//! A priority is Linux's 16-bit ioprio value: class in bits 13-15 (1 RT,
//! 2 BE, 3 IDLE), hint in bits 3-12, level in bits 0-2 (0 highest). The
//! worker draws each I/O's priority with [`PrioOptions::choose`] from its
//! own generator (no lock, no allocation).

use serde::{Deserialize, Serialize};

/// Linux's IOPRIO_CLASS_SHIFT and IOPRIO_HINT_SHIFT.
const CLASS_SHIFT: u16 = 13;
const HINT_SHIFT: u16 = 3;
/// The best-effort class, which Linux (and fio) assume when none is given.
pub const IOPRIO_CLASS_BE: u8 = 2;
/// The real-time class: cmdprio_class's default (fio: "the highest class").
pub const IOPRIO_CLASS_RT: u8 = 1;

/// The ioprio value of `class` (0 = BE, as fio), `level` and `hint`.
pub fn ioprio_value(class: u8, level: u8, hint: u16) -> u16 {
    let class = if class == 0 { IOPRIO_CLASS_BE } else { class };
    (u16::from(class) << CLASS_SHIFT) | (hint << HINT_SHIFT) | u16::from(level)
}

/// (class, level, hint) of an ioprio value.
pub fn ioprio_parts(v: u16) -> (u8, u8, u16) {
    (
        (v >> CLASS_SHIFT) as u8,
        (v & 7) as u8,
        (v >> HINT_SHIFT) & 0x3ff,
    )
}

/// One `cmdprio_bssplit` entry: `perc` % of the I/Os of this block size get
/// `prio` (class, level, hint), or the cmdprio_class/cmdprio/cmdprio_hint
/// values when the entry gives none (fio's first format).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BsPrio {
    pub bs: u64,
    pub perc: u32,
    pub prio: Option<(u8, u8, u16)>,
}

/// The priority options of a job; per-direction arrays are [read, write].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PrioOptions {
    pub prio: Option<u8>,
    pub prioclass: Option<u8>,
    pub priohint: Option<u16>,
    pub cmdprio_percentage: [u32; 2],
    pub cmdprio_class: [u8; 2],
    pub cmdprio: [u8; 2],
    pub cmdprio_hint: [u16; 2],
    /// Entries per direction (empty: not given).
    pub cmdprio_bssplit: [Vec<BsPrio>; 2],
    /// `realtime` (iolab's own): worker threads under `SCHED_FIFO` with
    /// 1 ns of timer slack.
    pub realtime: bool,
    /// `nice`: added to each worker thread's nice value (nice(2)), -20..19.
    #[serde(default, skip_serializing_if = "crate::stats::is_zero_i32")]
    pub nice: i32,
}

impl Default for PrioOptions {
    fn default() -> Self {
        PrioOptions {
            prio: None,
            prioclass: None,
            priohint: None,
            cmdprio_percentage: [0, 0],
            cmdprio_class: [IOPRIO_CLASS_RT, IOPRIO_CLASS_RT],
            cmdprio: [0, 0],
            cmdprio_hint: [0, 0],
            cmdprio_bssplit: [Vec::new(), Vec::new()],
            realtime: false,
            nice: 0,
        }
    }
}

impl PrioOptions {
    /// The job's own priority (prio/prioclass/priohint), set on the worker
    /// thread with ioprio_set; None when none of them is given.
    pub fn job_ioprio(&self) -> Option<u16> {
        if self.prio.is_none() && self.prioclass.is_none() && self.priohint.is_none() {
            return None;
        }
        Some(ioprio_value(
            self.prioclass.unwrap_or(0),
            self.prio.unwrap_or(0),
            self.priohint.unwrap_or(0),
        ))
    }

    /// True when some I/Os get a per-command priority.
    pub fn per_command(&self) -> bool {
        self.cmdprio_percentage.iter().any(|&p| p > 0)
            || self
                .cmdprio_bssplit
                .iter()
                .any(|v| v.iter().any(|e| e.perc > 0))
    }

    fn cmdprio_value(&self, dir: usize) -> u16 {
        ioprio_value(
            self.cmdprio_class[dir],
            self.cmdprio[dir],
            self.cmdprio_hint[dir],
        )
    }

    /// The priority of one I/O of direction `dir` (0 read, 1 write) and
    /// `len` bytes; `roll` is a uniform draw in 0..100 (fio draws one per
    /// I/O and walks the entries' cumulative shares with it).
    #[inline]
    pub fn choose(&self, dir: usize, len: u64, roll: u32) -> u16 {
        let default = self.job_ioprio().unwrap_or(0);
        let split = &self.cmdprio_bssplit[dir];
        if split.is_empty() {
            if roll < self.cmdprio_percentage[dir] {
                return self.cmdprio_value(dir);
            }
            return default;
        }
        let mut acc = 0;
        for e in split.iter().filter(|e| e.bs == len) {
            acc += e.perc;
            if roll < acc {
                return match e.prio {
                    Some((c, l, h)) => ioprio_value(c, l, h),
                    None => self.cmdprio_value(dir),
                };
            }
        }
        default
    }
}

/// Parses one direction of `cmdprio_bssplit`: `bs/perc[/class/level[/hint]]`
/// entries joined by ':'; the shares of one block size sum to at most 100.
pub fn parse_cmdprio_bssplit(text: &str, kb_base: u64) -> Result<Vec<BsPrio>, String> {
    let mut out: Vec<BsPrio> = Vec::new();
    for entry in text.split(':').map(str::trim).filter(|e| !e.is_empty()) {
        let f: Vec<&str> = entry.split('/').collect();
        if !matches!(f.len(), 2 | 4 | 5) {
            return Err(format!(
                "entry '{entry}': expected bs/percentage, bs/percentage/class/level or \
                 bs/percentage/class/level/hint"
            ));
        }
        let bs = crate::units::parse_size(f[0], kb_base)?;
        let perc: u32 = f[1]
            .parse()
            .map_err(|_| format!("entry '{entry}': percentage '{}' is not a number", f[1]))?;
        let prio = if f.len() >= 4 {
            let class = parse_class(f[2])?;
            let level = parse_level(f[3])?;
            let hint = if f.len() == 5 { parse_hint(f[4])? } else { 0 };
            Some((class, level, hint))
        } else {
            None
        };
        out.push(BsPrio { bs, perc, prio });
    }
    for e in &out {
        let total: u32 = out.iter().filter(|x| x.bs == e.bs).map(|x| x.perc).sum();
        if total > 100 {
            return Err(format!(
                "the shares of block size {} add up to {total}%, more than 100%",
                e.bs
            ));
        }
    }
    Ok(out)
}

/// A priority class: 0 (none: BE), 1 (RT), 2 (BE) or 3 (IDLE).
pub fn parse_class(t: &str) -> Result<u8, String> {
    match t.trim().parse::<u8>() {
        Ok(c) if c <= 3 => Ok(c),
        _ => Err(format!(
            "class '{t}' must be 0-3 (1 realtime, 2 best effort, 3 idle)"
        )),
    }
}

/// A priority level: 0 (highest) to 7.
/// Parses `nice=`: fio's range, -20 (most favoured) to 19.
pub fn parse_nice(text: &str) -> Result<i32, String> {
    match text.trim().parse::<i32>() {
        Ok(n) if (-20..=19).contains(&n) => Ok(n),
        _ => Err("expected a whole number from -20 to 19".into()),
    }
}

pub fn parse_level(t: &str) -> Result<u8, String> {
    match t.trim().parse::<u8>() {
        Ok(l) if l <= 7 => Ok(l),
        _ => Err(format!("level '{t}' must be 0-7 (0 is the highest)")),
    }
}

/// A priority hint: 0 (none) to 1023.
pub fn parse_hint(t: &str) -> Result<u16, String> {
    match t.trim().parse::<u16>() {
        Ok(h) if h <= 1023 => Ok(h),
        _ => Err(format!("hint '{t}' must be 0-1023")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_linux_layout() {
        assert_eq!(ioprio_value(1, 0, 0), 0x2000);
        assert_eq!(ioprio_value(3, 2, 0), 0x6002);
        assert_eq!(ioprio_value(0, 7, 1), 0x400f); // no class: BE
        assert_eq!(ioprio_parts(ioprio_value(2, 5, 9)), (2, 5, 9));
    }

    #[test]
    fn percentage_picks_cmdprio_for_rolls_below_it() {
        let p = PrioOptions {
            cmdprio_percentage: [20, 0],
            prioclass: Some(3),
            ..Default::default()
        };
        let hits = (0..100).filter(|&r| p.choose(0, 4096, r) == 0x2000).count();
        assert_eq!(hits, 20);
        assert_eq!(p.choose(0, 4096, 50), ioprio_value(3, 0, 0));
        assert_eq!(p.choose(1, 4096, 0), ioprio_value(3, 0, 0));
    }

    #[test]
    fn bssplit_walks_cumulative_shares_per_block_size() {
        let split = parse_cmdprio_bssplit("64k/25/1/1:64k/75/3/2:1024k/0", 1024).unwrap();
        let p = PrioOptions {
            cmdprio_bssplit: [split, Vec::new()],
            prio: Some(7),
            prioclass: Some(2),
            ..Default::default()
        };
        assert_eq!(p.choose(0, 65536, 24), ioprio_value(1, 1, 0));
        assert_eq!(p.choose(0, 65536, 25), ioprio_value(3, 2, 0));
        assert_eq!(p.choose(0, 1 << 20, 0), ioprio_value(2, 7, 0));
        assert!(parse_cmdprio_bssplit("4k/60:4k/50", 1024)
            .unwrap_err()
            .contains("110%"));
        assert!(parse_cmdprio_bssplit("4k/50/9/0", 1024)
            .unwrap_err()
            .contains("class"));
    }
}
