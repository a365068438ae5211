//! Non-uniform offset distributions (`random_distribution=`), per file.
//!
//! Each one draws a block index in `0..nb`, where the region is cut into
//! `nb` blocks of the job's smallest `blockalign` (the generator then
//! aligns the offset for the I/O's own direction and keeps the I/O inside
//! the region). Like fio, a non-uniform distribution has no random map:
//! blocks repeat within a pass, that is the point; a pass still ends after
//! its bytes.
//!
//! - `zipf:θ`: rank `r` (1-based) is drawn with probability ∝ `1/r^θ`
//!   (`rand_distr::Zipf`, rejection-inversion, O(1)).
//! - `pareto:h`: fio's power law (Gray et al.'s "self-similar"
//!   distribution): rank = `nb × u^(ln h / ln(1−h))`, u uniform, so the
//!   first `h` of the ranks get `1−h` of the I/Os (h = 0.2: 80 % of I/O on
//!   20 % of the blocks). `rand_distr::Pareto` is the continuous Pareto
//!   law, a different thing, hence the one-line inverse transform here.
//! - For both, ranks are *scattered* over the region by a fixed keyed
//!   permutation, so the hot blocks lie all over it rather than at its
//!   start (fio hashes ranks for the same reason; a permutation also keeps
//!   distinct ranks on distinct blocks). The key comes from `randseed`
//!   alone, not from the worker, so workers sharing a file share its hot
//!   blocks, as the users of one database would.
//! - `normal:dev`: a Gaussian around the middle of the region with a
//!   standard deviation of `dev` % of the region, redrawn when it falls
//!   outside (`rand_distr::Normal`). Not scattered: the hot band is
//!   contiguous, which is what a normal distribution over offsets means.
//!   (fio 3.33 approximates the Gaussian from uniform sums and hashes it,
//!   so only its hit frequencies, not their places, compare with ours.)
//! - `zoned:a/s:…`: zone `i` is the next `s_i` % of the region, in order,
//!   and gets `a_i` % of the I/Os, uniform inside the zone.

use rand::Rng;
use rand_distr::{Distribution, Normal, Zipf};

use super::perm::KeyedMix;
use super::rng::{below, WorkerRng};
use crate::error::JobError;
use crate::job::{RandomDistribution, Zone};

#[derive(Debug, Clone)]
pub enum Dist {
    Zipf {
        zipf: Zipf<f64>,
        scatter: KeyedMix,
        nb: u64,
    },
    Pareto {
        pow: f64,
        scatter: KeyedMix,
        nb: u64,
    },
    Normal {
        normal: Normal<f64>,
        nb: u64,
    },
    Zoned(Box<[ZoneBlocks]>),
}

/// One zone of `zoned:` over a file's blocks.
#[derive(Debug, Clone, Copy)]
pub struct ZoneBlocks {
    /// Share of I/Os of this zone and those before it, in [0, 1].
    cum_share: f64,
    first: u64,
    len: u64,
}

/// `rd` as written in a job file (`zipf:1.2`, `zoned:60/10:40/90`).
pub fn fio_name(rd: &RandomDistribution) -> String {
    match rd {
        RandomDistribution::Uniform => "random".into(),
        RandomDistribution::Zipf(t) => format!("zipf:{t}"),
        RandomDistribution::Pareto(h) => format!("pareto:{h}"),
        RandomDistribution::Normal(d) => format!("normal:{d}"),
        RandomDistribution::Zoned(zones) => {
            let parts: Vec<String> = zones
                .iter()
                .map(|z| format!("{}/{}", z.access_pct, z.size_pct))
                .collect();
            format!("zoned:{}", parts.join(":"))
        }
        RandomDistribution::Sequence { blocks, .. } => {
            let parts: Vec<String> = blocks.iter().map(u64::to_string).collect();
            format!("sequence:{}", parts.join(","))
        }
    }
}

fn invalid(value: String, reason: impl Into<String>) -> JobError {
    JobError::InvalidValue {
        option: "random_distribution".into(),
        value,
        reason: reason.into(),
    }
}

impl Dist {
    /// The distribution `rd` over `nb` blocks (`nb >= 1`); `None` for uniform.
    pub fn new(
        rd: &RandomDistribution,
        nb: u64,
        scatter_key: u64,
    ) -> Result<Option<Dist>, JobError> {
        let dist = match rd {
            RandomDistribution::Uniform => return Ok(None),
            RandomDistribution::Zipf(theta) => {
                let zipf = Zipf::new(nb as f64, *theta)
                    .ok()
                    .filter(|_| *theta > 0.0)
                    .ok_or_else(|| invalid(format!("zipf:{theta}"), "zipf needs θ > 0"))?;
                Dist::Zipf {
                    zipf,
                    scatter: KeyedMix::new(nb, scatter_key),
                    nb,
                }
            }
            RandomDistribution::Pareto(h) if *h > 0.0 && *h < 1.0 => Dist::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
                scatter: KeyedMix::new(nb, scatter_key),
                nb,
            },
            RandomDistribution::Pareto(h) => {
                return Err(invalid(format!("pareto:{h}"), "pareto needs 0 < h < 1"))
            }
            RandomDistribution::Normal(dev) => {
                let sd = dev / 100.0 * nb as f64;
                let normal = Normal::new(nb as f64 / 2.0, sd)
                    .ok()
                    .filter(|_| *dev >= 0.0)
                    .ok_or_else(|| {
                        invalid(format!("normal:{dev}"), "normal needs a deviation >= 0 %")
                    })?;
                Dist::Normal { normal, nb }
            }
            RandomDistribution::Zoned(zones) => Dist::Zoned(zoned(zones, nb)?),
            // A walk of its own (`super::sequence`), not a distribution.
            RandomDistribution::Sequence { .. } => return Ok(None),
        };
        Ok(Some(dist))
    }

    /// A block index in `0..nb`.
    #[inline]
    pub fn sample(&self, rng: &mut WorkerRng) -> u64 {
        match self {
            Dist::Zipf { zipf, scatter, nb } => {
                let rank = (zipf.sample(rng) as u64).clamp(1, *nb) - 1;
                scatter.scatter(rank, *nb)
            }
            Dist::Pareto { pow, scatter, nb } => {
                let u: f64 = rng.random();
                let rank = ((*nb as f64 * u.powf(*pow)) as u64).min(nb - 1);
                scatter.scatter(rank, *nb)
            }
            Dist::Normal { normal, nb } => loop {
                let x = normal.sample(rng);
                if x >= 0.0 && x < *nb as f64 {
                    return (x as u64).min(nb - 1);
                }
            },
            Dist::Zoned(zones) => {
                let u: f64 = rng.random();
                let z = zones
                    .iter()
                    .find(|z| u < z.cum_share)
                    .unwrap_or(&zones[zones.len() - 1]);
                z.first + below(rng, z.len)
            }
        }
    }
}

fn zoned(zones: &[Zone], nb: u64) -> Result<Box<[ZoneBlocks]>, JobError> {
    let shown = || fio_name(&RandomDistribution::Zoned(zones.to_vec()));
    let access: f64 = zones.iter().map(|z| z.access_pct).sum();
    let size: f64 = zones.iter().map(|z| z.size_pct).sum();
    let bad_pct = zones.iter().any(|z| z.access_pct < 0.0 || z.size_pct < 0.0);
    if zones.is_empty() || bad_pct || (access - 100.0).abs() > 1e-6 || (size - 100.0).abs() > 1e-6 {
        return Err(invalid(
            shown(),
            "zoned needs access/size pairs, each summing to 100 %",
        ));
    }
    let (mut acc_access, mut acc_size) = (0.0, 0.0);
    let mut out = Vec::with_capacity(zones.len());
    for (i, z) in zones.iter().enumerate() {
        let first = (nb as f64 * acc_size / 100.0) as u64;
        acc_size += z.size_pct;
        acc_access += z.access_pct;
        let end = if i + 1 == zones.len() {
            nb
        } else {
            (nb as f64 * acc_size / 100.0) as u64
        };
        if z.access_pct > 0.0 && end <= first {
            return Err(invalid(
                shown(),
                format!("zone {} ({} % of {nb} blocks) holds no block; use a larger size or wider zones", i + 1, z.size_pct),
            ));
        }
        if z.access_pct > 0.0 {
            out.push(ZoneBlocks {
                cum_share: acc_access / 100.0,
                first,
                len: end - first,
            });
        }
    }
    // Rounding must not leave a gap above the last cumulative share.
    if let Some(last) = out.last_mut() {
        last.cum_share = f64::INFINITY;
    }
    Ok(out.into())
}
