//! Block sizes of one direction: drawing a size and fitting it into what
//! is left.
//!
//! - `bs=` ([`BsSpec::Fixed`]): always that size.
//! - `bsrange=min-max` ([`BsSpec::Range`]): uniform over the multiples of
//!   `min` in `[min, max]` (fio's rule: sizes are aligned to the minimum).
//! - `bssplit=` ([`BsSpec::Split`]): each listed size with its share.
//!
//! Fitting: an I/O never crosses its region's end, never overlaps blocks a
//! random map already holds as done, and a size-based pass moves exactly
//! its bytes. So a drawn size larger than the room left is cut to the room
//! (a multiple of the generator's grain, see [`BsGen::gcd`]); for
//! `bssplit` the largest listed size that fits is taken instead, so sizes
//! stay among those listed while any fits. fio does the same in effect
//! (its retry for a size that fits, and its trim at the random map).

use super::rng::{below, WorkerRng};
use crate::error::JobError;
use crate::job::{BsSpec, IoDir};

#[derive(Debug, Clone)]
pub enum BsGen {
    Fixed(u64),
    /// Sizes `min × (1 + k)`, `k` uniform in `0..steps`.
    Range {
        min: u64,
        steps: u64,
    },
    /// Sizes ascending, with cumulative shares (`cum[i]` = sum of shares of
    /// sizes `0..=i`) and their total.
    Split {
        sizes: Box<[u64]>,
        cum: Box<[u64]>,
        total: u64,
    },
}

fn bad(dir: IoDir, value: String, reason: &str) -> JobError {
    let option = match dir {
        IoDir::Read => "bs (read)",
        IoDir::Write => "bs (write)",
        IoDir::Trim => "bs (trim)",
    };
    JobError::InvalidValue {
        option: option.into(),
        value,
        reason: reason.into(),
    }
}

impl BsGen {
    /// Check `spec` and build its generator.
    pub fn new(spec: &BsSpec, dir: IoDir) -> Result<BsGen, JobError> {
        match spec {
            BsSpec::Fixed(0) => Err(bad(dir, "0".into(), "a block size must be at least 1 byte")),
            BsSpec::Fixed(b) => Ok(BsGen::Fixed(*b)),
            BsSpec::Range { min, max } if *min == 0 || max < min => Err(bad(
                dir,
                format!("{min}-{max}"),
                "bsrange needs 0 < min <= max",
            )),
            BsSpec::Range { min, max } => Ok(BsGen::Range {
                min: *min,
                steps: max / min,
            }),
            BsSpec::Split(parts) => Self::split(parts, dir),
        }
    }

    fn split(parts: &[(u64, u32)], dir: IoDir) -> Result<BsGen, JobError> {
        let shown = || format!("{parts:?}");
        if parts.iter().any(|&(b, _)| b == 0) {
            return Err(bad(dir, shown(), "bssplit sizes must be at least 1 byte"));
        }
        let mut v: Vec<(u64, u32)> = parts.iter().copied().filter(|&(_, s)| s > 0).collect();
        if v.is_empty() {
            return Err(bad(
                dir,
                shown(),
                "bssplit needs at least one size with a share above 0",
            ));
        }
        v.sort_unstable();
        let mut acc = 0u64;
        let cum: Vec<u64> = v
            .iter()
            .map(|&(_, s)| {
                acc += u64::from(s);
                acc
            })
            .collect();
        let sizes: Vec<u64> = v.iter().map(|&(b, _)| b).collect();
        Ok(BsGen::Split {
            sizes: sizes.into(),
            cum: cum.into(),
            total: acc,
        })
    }

    /// Draw the size of the next I/O.
    #[inline(always)]
    pub fn draw(&self, rng: &mut WorkerRng) -> u64 {
        match self {
            BsGen::Fixed(b) => *b,
            _ => self.draw_varied(rng),
        }
    }

    #[inline(never)]
    fn draw_varied(&self, rng: &mut WorkerRng) -> u64 {
        match self {
            BsGen::Fixed(b) => *b,
            BsGen::Range { min, steps } => min * (1 + below(rng, *steps)),
            BsGen::Split { sizes, cum, total } => {
                let r = below(rng, *total);
                let i = cum.iter().position(|&c| r < c).unwrap_or(sizes.len() - 1);
                sizes[i]
            }
        }
    }

    /// The size to use when `drawn` was drawn and `room` bytes are left
    /// (`room` is a non-zero multiple of the grain). See the module doc.
    #[inline]
    pub fn fit(&self, drawn: u64, room: u64) -> u64 {
        if drawn <= room {
            return drawn;
        }
        match self {
            BsGen::Split { sizes, .. } => sizes
                .iter()
                .rev()
                .copied()
                .find(|&b| b <= room)
                .unwrap_or(room),
            _ => room,
        }
    }

    /// Greatest common divisor of every size this generator can draw.
    pub fn gcd(&self) -> u64 {
        match self {
            BsGen::Fixed(b) => *b,
            BsGen::Range { min, .. } => *min,
            BsGen::Split { sizes, .. } => sizes.iter().fold(0, |g, &b| gcd(g, b)),
        }
    }

    /// The smallest and largest size this generator can draw.
    pub fn min_max(&self) -> (u64, u64) {
        match self {
            BsGen::Fixed(b) => (*b, *b),
            BsGen::Range { min, steps } => (*min, min * steps),
            BsGen::Split { sizes, .. } => (sizes[0], sizes[sizes.len() - 1]),
        }
    }
}

pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
