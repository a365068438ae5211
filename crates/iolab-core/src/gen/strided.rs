//! fio's strided zones (`zonemode=strided`, or `zonesize` alone): the I/O
//! of a file stays in one zone of `zonerange` bytes until `zonesize` bytes
//! were moved there, then the zone moves `zonerange + zoneskip` bytes on,
//! back to the region's start when it would begin past the end of the file
//! (the engine gives that end, [`Strided::set_span`]; without it, the
//! region's end), as fio moves it.
//!
//! Inside the zone, sequential I/O goes upward from the zone's start (again
//! from the start once the zone's end is reached: `zonesize > zonerange`
//! goes over the zone several times); random I/O with the random map gives
//! every block of the zone once before any again (fio resets its map every
//! `zonerange` bytes); other random I/O is uniform in the zone. The pass
//! still moves the region's length in bytes, as fio moves `size`.
//!
//! Written for iolab after fio's documented meaning and its io_u.c (not
//! copied); the offsets are checked against the rule in tests/integration.

use super::bs::BsGen;
use super::offset::{uniform, TakeCtx};
use super::perm::BlockPerm;
use super::rng::{mix64, WorkerRng};
use crate::error::JobError;
use crate::job::ZoneOptions;

#[derive(Debug, Clone)]
pub struct Strided {
    /// `zonerange`, `zonesize`, `zonerange + zoneskip`.
    range: u64,
    size: u64,
    step: u64,
    /// Start of the current zone, relative to the region.
    zone: u64,
    /// Bytes moved in the current zone since it began.
    moved: u64,
    /// Sequential position inside the zone, per direction.
    pos: [u64; 2],
    /// Random map of the zone's blocks (fixed block size only).
    perm: Option<BlockPerm>,
    mapped: bool,
    key: u64,
    /// Bytes from the region's start to the end of the file, when the
    /// engine knows them: zones move on past the region to there, as in fio.
    span: Option<u64>,
}

impl Strided {
    /// `mapped`: random I/O of one fixed size with the random map.
    pub fn new(z: &ZoneOptions, grain: u64, mapped: bool, key: u64) -> Result<Strided, JobError> {
        let step = z.range_bytes + z.skip_bytes;
        if !z.range_bytes.is_multiple_of(grain) || !step.is_multiple_of(grain) {
            return Err(JobError::Conflict(format!(
                "zonerange ({}) and zonerange + zoneskip ({step}) must be multiples of the \
                 block size ({grain} bytes) so every I/O stays aligned",
                z.range_bytes
            )));
        }
        Ok(Strided {
            range: z.range_bytes,
            size: z.size_bytes,
            step,
            zone: 0,
            moved: 0,
            pos: [0, 0],
            perm: None,
            mapped,
            key,
            span: None,
        })
    }

    /// Let zones move on to `bytes` from the region's start (the end of
    /// the file), cut to whole `grain` blocks; never less than the region.
    pub fn set_span(&mut self, bytes: u64, grain: u64, region: u64) {
        self.span = Some((bytes / grain * grain).max(region));
    }

    /// Length of the current zone in a region of `region` bytes (the last
    /// zone may be cut by the region's end).
    fn zone_len(&self, region: u64) -> u64 {
        self.range.min(region - self.zone)
    }

    /// Offset (relative to the region) and length of the next I/O.
    /// `sequential`: the job's pattern; `room`: bytes left in the pass.
    #[allow(clippy::too_many_arguments)]
    pub fn take(
        &mut self,
        dir: usize,
        drawn: u64,
        bs: &BsGen,
        ctx: &TakeCtx,
        rng: &mut WorkerRng,
        region: u64,
        room: u64,
        sequential: bool,
    ) -> (u64, u64) {
        let region = self.span.unwrap_or(region);
        if self.moved >= self.size {
            self.moved = 0;
            self.zone += self.step;
            if self.zone >= region {
                self.zone = 0;
            }
            self.pos = [0, 0];
            self.perm = None;
        }
        let zlen = self.zone_len(region);
        let (off, len) = if sequential {
            if self.pos[dir] >= zlen {
                self.pos[dir] = 0;
            }
            let len = bs.fit(drawn, room.min(zlen - self.pos[dir]));
            let off = self.pos[dir];
            self.pos[dir] += len;
            (off, len)
        } else if self.mapped {
            let grain = ctx.grain.bytes;
            let nblocks = zlen / grain;
            let block = match self.perm.as_mut().and_then(BlockPerm::next_block) {
                Some(b) => b,
                None => {
                    // A new zone, or every block of this one done: a new order.
                    self.key = mix64(self.key.wrapping_add(1));
                    let perm = self.perm.insert(BlockPerm::new(nblocks, self.key));
                    perm.next_block().expect("a zone holds at least one block")
                }
            };
            (block * grain, grain)
        } else {
            uniform(drawn, bs, ctx, rng, room.min(zlen), zlen)
        };
        self.moved += len;
        (self.zone + off, len)
    }
}
