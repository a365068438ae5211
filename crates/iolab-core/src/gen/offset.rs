//! Where the next I/O of one file goes: the per-file state of a pass.
//!
//! Every file of a worker has a region (`start`, `len`) and, within a
//! pass, `remaining` bytes still to move. The [`Walk`] decides offsets:
//!
//! - [`Walk::Seq`]: from the region's start upward by each I/O's length,
//!   one position per direction (fio keeps `last_pos` per direction, so
//!   `rw=rw` reads and writes each start at the beginning). The pass ends
//!   when the two positions together have covered the region.
//!   With fio's offset modifier (`rw=read:17m`, `rw=read:-8k`) each I/O
//!   also moves the position by the modifier, wrapping around the region;
//!   the pass still ends after the region's length in bytes, as in fio.
//! - [`Walk::MapFixed`]: one size for every I/O; a keyed permutation of the
//!   blocks ([`super::perm`]) gives each block exactly once per pass.
//! - [`Walk::MapVar`]: sizes vary; a permutation of grain-sized blocks
//!   picks where an I/O starts, a bitmap skips blocks already done, and an
//!   I/O is cut short where done blocks begin (as fio's random map does).
//!   Every grain block is still moved exactly once per pass.
//! - [`Walk::Uniform`] (`norandommap`): independent uniform offsets,
//!   aligned to `blockalign`, such that the I/O fits in the region.
//! - [`Walk::Dist`]: a non-uniform [`Dist`]; the offset is moved back as
//!   needed to keep the I/O inside the region.
//! - [`Walk::Sprandom`]: fio's SPRandom preconditioning
//!   ([`super::sprandom`]); a pass writes the physical size.
//! - [`Walk::Sequence`]: `random_distribution=sequence:...`, the listed
//!   blocks in order ([`super::sequence`]); a strided one ends the pass
//!   at the region's end.

use super::bitmap::Bitmap;
use super::bs::BsGen;
use super::dist::Dist;
use super::perm::BlockPerm;
use super::rng::{below, WorkerRng};
use super::sequence::SequenceWalk;
use super::sprandom::SprWalk;
use super::strided::Strided;
use super::zbd::ZbdFile;

#[derive(Debug, Clone)]
pub enum Walk {
    /// `add`: bytes added after each I/O (`rw=read:17m`; negative: back).
    Seq {
        pos: [u64; 2],
        add: i64,
    },
    MapFixed(BlockPerm),
    MapVar {
        perm: BlockPerm,
        done: Bitmap,
    },
    Uniform,
    Dist(Dist),
    Sequence(SequenceWalk),
    Sprandom(SprWalk),
}

/// Alignment by a power of two (mask and shift) or any other value.
#[derive(Debug, Clone, Copy)]
pub struct Align {
    pub bytes: u64,
    shift: Option<u32>,
}

impl Align {
    pub fn new(bytes: u64) -> Align {
        Align {
            bytes,
            shift: bytes.is_power_of_two().then(|| bytes.trailing_zeros()),
        }
    }
    #[inline]
    pub fn div(self, x: u64) -> u64 {
        match self.shift {
            Some(s) => x >> s,
            None => x / self.bytes,
        }
    }
    #[inline]
    pub fn down(self, x: u64) -> u64 {
        self.div(x) * self.bytes
    }
}

/// What [`FileState::take`] needs besides the file.
#[derive(Debug, Clone, Copy)]
pub struct TakeCtx {
    /// Block of the random map; every length is a multiple of it.
    pub grain: Align,
    /// Offset alignment of the I/O's direction (`blockalign`).
    pub align: Align,
    /// Block of a [`Dist`]'s indices (the smallest `blockalign` in use).
    pub unit: Align,
}

#[derive(Debug)]
pub struct FileState {
    pub start: u64,
    /// Region length, a multiple of the grain.
    pub len: u64,
    pub remaining: u64,
    pub walk: Walk,
    /// Strided or zbd zones over the region (`zonemode`), if any.
    pub zoning: Option<Box<Zoning>>,
    /// `percentage_random` below 100: where the last I/O of each direction
    /// in this file ended (relative to the region); kept only then.
    pub last_end: [u64; 2],
}

/// fio's zone modes over one file's region (see [`super::strided`] and
/// [`super::zbd`]).
#[derive(Debug)]
pub enum Zoning {
    Strided(Strided),
    Zbd(ZbdFile),
}

impl FileState {
    /// Bytes one pass moves: the region, or sprandom's physical size.
    pub fn pass_bytes(&self) -> u64 {
        match &self.walk {
            Walk::Sprandom(s) => s.pass_bytes(),
            _ => self.len,
        }
    }

    /// Begin a pass; `key` orders the blocks of a random-map pass.
    pub fn restart(&mut self, key: u64) {
        self.remaining = self.len;
        self.last_end = [0, 0];
        match &mut self.walk {
            Walk::Seq { pos, .. } => *pos = [0, 0],
            Walk::MapFixed(perm) => perm.restart(key),
            Walk::MapVar { perm, done } => {
                perm.restart(key);
                done.clear();
            }
            Walk::Sequence(s) => s.restart(),
            Walk::Sprandom(s) => {
                s.restart(key);
                self.remaining = s.pass_bytes();
            }
            Walk::Uniform | Walk::Dist(_) => {}
        }
        if let Some(Zoning::Zbd(z)) = self.zoning.as_deref_mut() {
            z.restart();
        }
    }

    /// Offset (relative to the region) and length of the next I/O of
    /// direction `dir` (index) that drew size `drawn` from `bs` (which cuts
    /// a size to the room left). Only called while `remaining > 0`.
    #[inline(always)]
    pub fn take(
        &mut self,
        dir: usize,
        drawn: u64,
        bs: &BsGen,
        ctx: &TakeCtx,
        rng: &mut WorkerRng,
    ) -> (u64, u64) {
        // The two commonest walks stay inline; the others are calls, which
        // keeps this function (and the caller's frame) small.
        let (off, len) = match &mut self.walk {
            Walk::Seq { pos, add } => {
                let len = bs.fit(drawn, self.remaining);
                if *add == 0 {
                    let off = pos[dir];
                    pos[dir] += len;
                    (off, len)
                } else {
                    seq_with_add(&mut pos[dir], *add, len, self.len)
                }
            }
            Walk::MapFixed(perm) => {
                let block = perm
                    .next_block()
                    .expect("remaining bytes imply blocks left in the pass");
                (block * ctx.grain.bytes, ctx.grain.bytes)
            }
            Walk::Sprandom(_) | Walk::Sequence(_) => self.take_listed(dir, drawn, bs),
            _ => self.take_other(drawn, bs, ctx, rng),
        };
        self.remaining -= len;
        (off, len)
    }

    /// `percentage_random`'s sequential I/O: the one of direction `dir`
    /// that starts where that direction's last I/O in this file ended, of
    /// the drawn size cut to the room left; `None` (take a random one, as
    /// fio does) where not one block of the smallest size fits before the
    /// region's end. With the random map its blocks are marked done, so no
    /// random I/O picks them later in the pass; a block done already may
    /// be done again (fio's sequential step ignores the map).
    pub fn take_after_last(
        &mut self,
        dir: usize,
        drawn: u64,
        bs: &BsGen,
        grain: Align,
    ) -> Option<(u64, u64)> {
        let off = self.last_end[dir];
        let room = grain.down((self.len - off).min(self.remaining));
        if room == 0 || room < bs.min_max().0 {
            return None;
        }
        let len = bs.fit(drawn, room);
        if let Walk::MapVar { done, .. } = &mut self.walk {
            done.set_range(grain.div(off), grain.div(off + len));
        }
        self.remaining -= len;
        Some((off, len))
    }

    /// The next of a walk that lists its offsets (sprandom, sequence): the
    /// drawn size cut to the region's end; after the last one the pass ends.
    #[inline(never)]
    fn take_listed(&mut self, dir: usize, drawn: u64, bs: &BsGen) -> (u64, u64) {
        let (off, last) = match &mut self.walk {
            Walk::Sprandom(s) => s.next().expect("remaining bytes imply writes left"),
            Walk::Sequence(s) => s.next(dir),
            _ => unreachable!("only listed walks come here"),
        };
        let len = bs.fit(drawn, (self.len - off).min(self.remaining));
        if last {
            // The next I/O would be past the pass: it ends with this one.
            self.remaining = len;
        }
        (off, len)
    }

    #[inline(never)]
    fn take_other(
        &mut self,
        drawn: u64,
        bs: &BsGen,
        ctx: &TakeCtx,
        rng: &mut WorkerRng,
    ) -> (u64, u64) {
        let room = self.remaining.min(self.len);
        match &mut self.walk {
            Walk::MapVar { perm, done } => take_var(perm, done, drawn, bs, ctx.grain, self.len),
            Walk::Uniform => uniform(drawn, bs, ctx, rng, room, self.len),
            Walk::Dist(dist) => {
                let len = bs.fit(drawn, room);
                let want = dist.sample(rng) * ctx.unit.bytes;
                (ctx.align.down(want.min(self.len - len)), len)
            }
            Walk::Seq { .. } | Walk::MapFixed(_) | Walk::Sequence(_) | Walk::Sprandom(_) => {
                unreachable!("handled by take and take_listed")
            }
        }
    }
}

/// A uniform offset, aligned to `ctx.align`, of an I/O of the drawn size
/// cut to `room`, such that it fits in `span` bytes.
#[inline]
pub(super) fn uniform(
    drawn: u64,
    bs: &BsGen,
    ctx: &TakeCtx,
    rng: &mut WorkerRng,
    room: u64,
    span: u64,
) -> (u64, u64) {
    let len = bs.fit(drawn, room);
    let slots = ctx.align.div(span - len) + 1;
    (below(rng, slots) * ctx.align.bytes, len)
}

/// Next I/O of a variable-size random-map pass: the next block of the
/// permutation not yet done, extended over free blocks up to the drawn size.
fn take_var(
    perm: &mut BlockPerm,
    done: &mut Bitmap,
    drawn: u64,
    bs: &BsGen,
    grain: Align,
    region_len: u64,
) -> (u64, u64) {
    let nblocks = grain.div(region_len);
    loop {
        let b = perm
            .next_block()
            .expect("remaining bytes imply free blocks left in the pass");
        if done.first_set(b, b + 1) == b {
            continue;
        }
        let want_end = (b + grain.div(drawn).max(1)).min(nblocks);
        let free_end = done.first_set(b, want_end);
        let len = bs.fit(drawn, (free_end - b) * grain.bytes);
        done.set_range(b, b + grain.div(len));
        return (b * grain.bytes, len);
    }
}

/// The next sequential I/O with an offset modifier: this I/O at `*pos` (at
/// the region's start if it would run past the end), then the position
/// moved by its length plus `add`. Wrapping follows fio 3.33 (measured with
/// its write_iolog): past the end → the start; before the start → the end
/// plus `add` (so `rw=read:-8k`, bs=4k, 32k reads 0, 24, 20, ... 4, 0).
#[inline(never)]
fn seq_with_add(pos: &mut u64, add: i64, len: u64, region: u64) -> (u64, u64) {
    let off = if *pos + len > region { 0 } else { *pos };
    let next = off as i128 + len as i128 + add as i128;
    *pos = if next < 0 {
        (region as i128 + add as i128).max(0) as u64
    } else if next >= region as i128 {
        0
    } else {
        next as u64
    };
    (off, len)
}
