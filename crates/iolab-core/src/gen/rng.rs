//! Seeds and the per-worker pseudo-random number generator.
//!
//! Every worker owns one [`WorkerRng`] (xoshiro256++: 4 words of state,
//! about 1 ns per 64-bit output, and a documented output stream, so a
//! `randrepeat=1` run repeats exactly across builds and machines).
//!
//! Seeds: with `randrepeat=1` (fio's default) a worker is seeded from
//! `randseed` and its run-wide number (fio's `thread_number`: the job's
//! first worker plus the clone index), so every run repeats the same
//! offsets, sizes and directions while two workers — of one job or of two
//! jobs — get different streams, as in fio (whose seeds are `randseed ×
//! thread_number`). A fleet host's rank is mixed in too unless `randseed`
//! was given, so hosts on one target draw different offsets. With
//! `randrepeat=0` the base seed comes from the operating system's entropy;
//! [`super::IoGen::seed`] tells it, so such a run can still be reproduced.

use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::job::{IoDir, PreparedJob};

/// The PRNG every generator of a worker draws from.
pub type WorkerRng = Xoshiro256PlusPlus;

/// splitmix64's finaliser: a bijective mixing of 64 bits. Used to derive
/// independent seeds and keys from one seed (a counter or an index xor-ed
/// into a seed gives well separated values after mixing).
pub fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The seed of worker `worker` of `job`: deterministic with `randrepeat`,
/// from the OS's entropy otherwise.
pub fn worker_seed(job: &PreparedJob, worker: u32) -> u64 {
    let base = if job.randrepeat {
        job.randseed
    } else {
        rand::random::<u64>()
    };
    let host = if job.randseed_given { 0 } else { job.seed_host };
    let thread = u64::from(job.first_worker.wrapping_add(worker)) | (u64::from(host) << 32);
    mix64(base ^ mix64(thread.wrapping_add(0x1000)))
}

/// A generator for stream `stream` of `seed` (streams keep the generators
/// of one worker, e.g. offsets and rate control, independent).
pub fn rng_for(seed: u64, stream: u64) -> WorkerRng {
    WorkerRng::seed_from_u64(mix64(seed ^ mix64(stream)))
}

/// Uniform integer in `0..n` (`n >= 1`) by Lemire's multiply-high: one
/// multiplication, no division. The bias is below `n / 2^64` (< 1e-9 for
/// any region of fewer than 2^34 blocks), far under what a test can see.
#[inline]
pub fn below(rng: &mut WorkerRng, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// Chooses the direction of each I/O: read with probability
/// `read_pct / 100`, independently per I/O (fio 3.33 gives the same
/// per-I/O picture for `rw=randrw`; checked with its `write_iolog`).
#[derive(Debug, Clone, Copy)]
pub enum DirPicker {
    Always(IoDir),
    /// Read when a 64-bit draw is below this threshold (`read_pct/100 × 2^64`).
    Mix(u64),
}

impl DirPicker {
    pub fn new(read_pct: u32) -> DirPicker {
        match read_pct {
            0 => DirPicker::Always(IoDir::Write),
            p if p >= 100 => DirPicker::Always(IoDir::Read),
            p => DirPicker::Mix(((u128::from(p) << 64) / 100) as u64),
        }
    }

    #[inline(always)]
    pub fn pick(&self, rng: &mut WorkerRng) -> IoDir {
        match *self {
            DirPicker::Always(d) => d,
            DirPicker::Mix(t) if rng.next_u64() < t => IoDir::Read,
            DirPicker::Mix(_) => IoDir::Write,
        }
    }
}
