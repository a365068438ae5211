//! `sprandom=1`: fio's SPRandom preconditioning (its HOWTO and sprandom.c,
//! after P. Desnoyers, "Analytic Models of SSD Write Performance", ACM
//! TOS 8(2), 2012): write the device's whole *physical* capacity once,
//! choosing offsets so that the flash holds, region by region, the share
//! of invalid blocks a steady random-write state has.
//!
//! The model (the paper's, in fio's simplified form):
//! - write amplification from over-provisioning: `WA = 0.5 / op + 0.7`;
//! - the block garbage collection picks has validity `v_gc = 1 − 1/WA`;
//! - in steady state `v · f(v)` is constant, so a validity `v` occupies a
//!   share `f(v) ∝ v_gc / v` of the drive. Validities equally spaced from
//!   1 to `v_gc`, placed at the running sum of `1/v`, give the curve;
//!   resampled at equally spaced sums, one point per region, and reversed,
//!   it is the validity of region 0 (the oldest, `v_gc`) … region n−1 (1).
//!
//! The writes (`physical = logical × (1 + op)`, rounded down to `bs`) are
//! cut into `spr_num_regions` regions of `region_writes` writes, as a
//! log-structured drive fills its flash. A write in region `r` is either a
//! fresh block (a random permutation of the logical blocks, each once — in
//! place of fio's LFSR) or a rewrite of a block saved from region `r−1`;
//! every write of region `r` is saved for a rewrite with probability
//! `1 − validity[r]`, and its rewrite in region `r+1` invalidates it.
//! Rewrites come first in the next region, or with `spr_cs` (a drive
//! cache) last, so the cache never holds a write and its rewrite together.
//! The walk ends when the fresh blocks or the regions run out.

use std::collections::VecDeque;

use rand::Rng;

use super::perm::BlockPerm;
use super::rng::{rng_for, WorkerRng};
use crate::error::JobError;

/// Validity of each of `n` regions, oldest first (fio's equations).
pub fn validity_per_region(n: usize, op: f64) -> Vec<f64> {
    let wa = 0.5 / op + 0.7;
    let v_gc = 1.0 - 1.0 / wa;
    let lin = |a: f64, b: f64, i: usize| {
        if n == 1 {
            a
        } else {
            a + (b - a) * i as f64 / (n - 1) as f64
        }
    };
    let ys: Vec<f64> = (0..n).map(|i| lin(1.0, v_gc, i)).collect();
    let mut xs = Vec::with_capacity(n);
    let mut acc = 0.0;
    for y in &ys {
        acc += 1.0 / y;
        xs.push(acc);
    }
    let interp = |x: f64| -> f64 {
        if x <= xs[0] {
            return ys[0];
        }
        let i = xs.partition_point(|&xi| xi < x).min(n - 1);
        let (x1, x2, y1, y2) = (xs[i - 1], xs[i], ys[i - 1], ys[i]);
        if (x2 - x1).abs() < 1e-12 {
            return y1;
        }
        y1 + (y2 - y1) * (x - x1) / (x2 - x1)
    };
    let mut v: Vec<f64> = (0..n).map(|i| interp(lin(xs[0], xs[n - 1], i))).collect();
    v.reverse();
    v
}

/// Physical bytes of a logical region: `logical × (1 + op)`, rounded up
/// before the multiple of `bs` is taken down (fio's rounding).
pub fn physical_bytes(logical: u64, op: f64, bs: u64) -> u64 {
    let size = logical + (logical as f64 * op).ceil() as u64;
    size - size % bs
}

#[derive(Debug, Clone)]
pub struct SprWalk {
    invalid: Box<[f64]>,
    bs: u64,
    region_writes: u64,
    /// Bytes of a pass: the physical size (fio sets io_size to it).
    physical: u64,
    cache: bool,
    perm: BlockPerm,
    /// Saved blocks of the previous region (ready) and of this one (staged).
    ready: VecDeque<u64>,
    staged: Vec<u64>,
    region: usize,
    fresh_left: u64,
    /// The next block, computed ahead so the walk knows its last write.
    next: Option<u64>,
    key: u64,
    /// Draws the saves (its own stream, reseeded per pass).
    rng: WorkerRng,
}

impl SprWalk {
    /// The walk over `logical` bytes with writes of `bs` bytes.
    pub fn new(
        logical: u64,
        bs: u64,
        op: f64,
        regions: u32,
        cache_bytes: u64,
        key: u64,
    ) -> Result<SprWalk, JobError> {
        let physical = physical_bytes(logical, op, bs);
        let region_bytes = physical / u64::from(regions);
        let region_writes = region_bytes / bs;
        if region_writes == 0 {
            return Err(JobError::InvalidValue {
                option: "spr_num_regions".into(),
                value: regions.to_string(),
                reason: format!(
                    "{physical} physical bytes in {regions} regions leave less than one {bs}-byte \
                     write per region; use fewer regions or a larger size"
                ),
            });
        }
        if cache_bytes > region_bytes {
            return Err(JobError::InvalidValue {
                option: "spr_cs".into(),
                value: cache_bytes.to_string(),
                reason: format!(
                    "the cache must be smaller than a region ({region_bytes} bytes); use at most \
                     {} regions",
                    physical / cache_bytes
                ),
            });
        }
        let validity = validity_per_region(regions as usize, op);
        Ok(SprWalk {
            invalid: validity.iter().map(|v| 1.0 - v).collect(),
            bs,
            region_writes,
            physical,
            cache: cache_bytes > 0,
            perm: BlockPerm::new((logical / bs).max(1), key),
            ready: VecDeque::new(),
            staged: Vec::new(),
            region: 0,
            fresh_left: region_writes,
            next: None,
            key,
            rng: rng_for(key, 7),
        })
    }

    /// Writes per region (the unit the invalid shares refer to).
    #[cfg(test)]
    pub fn region_writes(&self) -> u64 {
        self.region_writes
    }

    /// Bytes one pass writes at most (the walk may end earlier).
    pub fn pass_bytes(&self) -> u64 {
        self.physical
    }

    /// Begin a pass: a new permutation, nothing saved, region 0.
    pub fn restart(&mut self, key: u64) {
        self.perm.restart(key ^ self.key);
        self.rng = rng_for(key ^ self.key, 7);
        self.ready.clear();
        self.staged.clear();
        self.region = 0;
        self.fresh_left = self.region_writes;
        self.next = self.step();
    }

    /// Save `b` for a rewrite in the next region with this region's share.
    fn save(&mut self, b: u64) {
        let p = self.invalid.get(self.region).copied().unwrap_or(0.0);
        if self.rng.random::<f64>() < p {
            self.staged.push(b);
        }
    }

    fn rewrite(&mut self) -> Option<u64> {
        let b = self.ready.pop_front()?;
        self.save(b);
        Some(b)
    }

    fn step(&mut self) -> Option<u64> {
        if !self.cache {
            if let Some(b) = self.rewrite() {
                return Some(b);
            }
        }
        if self.fresh_left == 0 {
            if self.cache {
                if let Some(b) = self.rewrite() {
                    return Some(b);
                }
            }
            if self.region >= self.invalid.len() {
                return None;
            }
            self.region += 1;
            let saved = self.staged.len() as u64;
            self.fresh_left = self.region_writes.saturating_sub(saved);
            self.ready.extend(self.staged.drain(..));
        }
        let Some(b) = self.perm.next_block() else {
            return if self.cache { self.rewrite() } else { None };
        };
        self.fresh_left = self.fresh_left.saturating_sub(1);
        self.save(b);
        Some(b)
    }

    /// Offset of the next write and whether it is the walk's last; `None`
    /// once the walk is over.
    pub fn next(&mut self) -> Option<(u64, bool)> {
        let b = self.next?;
        self.next = self.step();
        Some((b * self.bs, self.next.is_none()))
    }
}

#[cfg(test)]
#[path = "sprandom_tests.rs"]
mod tests;
