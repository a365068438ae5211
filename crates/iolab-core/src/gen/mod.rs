//! Per-worker I/O generators: which direction, file, offset and length the
//! next I/O has. [`IoGen::next`] is on the engine's hot path: it allocates
//! nothing, divides only where a block size is not a power of two, and
//! draws from a fast PRNG ([`rng`]).
//!
//! Semantics (fio's, checked against fio 3.33 with `write_iolog`):
//!
//! - **Regions and passes.** The engine gives each file's region
//!   ([`FileRegion`]: the job's `offset`, and `size` split equally among
//!   the files, or the rest of the file). Each region is rounded *down* to
//!   a multiple of the grain — the greatest common divisor of the block
//!   sizes in use, i.e. `bs` for a fixed size, the minimum for `bsrange` —
//!   as fio rounds `size=10k bs=4k` down to 8 KiB. One pass moves exactly
//!   [`IoGen::bytes_per_pass`] bytes (the sum of the rounded regions); a
//!   size-based job makes `loops` passes and then [`IoGen::next`] returns
//!   `None`; a `time_based` job starts pass after pass, never `None`.
//! - **Files** are served as `file_service_type` says: round-robin, N
//!   I/Os each (fio's default `roundrobin`, N=1), a random file with bytes
//!   left every N I/Os, or each to its end (`sequential`); a file whose
//!   share of the pass is done leaves the rotation until the next pass.
//! - **Lengths** ([`bs`]) never cross a region's end: a drawn size that
//!   does not fit in what is left is cut to what is left (for `bssplit`,
//!   the largest listed size that fits).
//! - **Offsets** ([`offset`]): sequential per direction; random with a
//!   random map (every block exactly once per pass, by a keyed permutation
//!   for a fixed size, plus a bitmap when sizes vary); `norandommap`
//!   (independent uniform offsets aligned to `blockalign`); or a
//!   `random_distribution` ([`dist`]), which like fio implies no map.
//! - **Direction**: read with probability `rwmixread` %, drawn per I/O.
//!   Trims are drawn as writes and then named trims: `rw=trim`/`randtrim`
//!   trims where a write job would write; `trimwrite`/`randtrimwrite`
//!   trims each block and then writes the same offset and length (fio's
//!   order), so a pass issues each block twice.
//! - **Zones** (`zoning`): `zonemode=strided` keeps I/O in one zone until
//!   `zonesize` bytes moved there (`strided`); `zonemode=zbd` moves writes to
//!   write pointers and reads below them (`zbd`), which may end a pass early.
//! - **Seeds** ([`rng`]): `randrepeat=1` gives every run the same stream
//!   per worker, from `randseed` and the worker's index.

mod bitmap;
pub mod blktrace;
mod bs;
mod dist;
mod offset;
mod perm;
pub mod replay;
mod rng;
mod sequence;
mod sprandom;
mod strided;
mod zbd;
mod zoning;

use rand::RngCore;

use self::bs::BsGen;
use self::dist::Dist;
use self::offset::{Align, FileState, TakeCtx, Walk};
use self::perm::BlockPerm;
use self::rng::{DirPicker, WorkerRng};
use crate::error::JobError;
use crate::job::{
    FileService, IoDir, Pattern, PreparedJob, RandomDistribution, TrimMode, ZoneMode,
};

pub use self::rng::{mix64, rng_for, worker_seed};
pub use self::zbd::{ZoneSnapshot, ZoneTable};

/// The byte range of one file this worker may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRegion {
    pub start: u64,
    pub len: u64,
}

/// One I/O to do: `len` bytes at byte `offset` of file number `file`
/// (index into the regions given to [`IoGen::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoUnit {
    pub dir: IoDir,
    pub file: u32,
    pub offset: u64,
    pub len: u64,
}

/// Stream of the offset/size/direction generator (see [`rng_for`]).
pub const STREAM_GEN: u64 = 1;
/// Stream the rate limiter of a worker should use (see [`rng_for`]).
pub const STREAM_RATE: u64 = 2;

/// The I/O generator of one worker.
#[derive(Debug)]
pub struct IoGen {
    rng: WorkerRng,
    picker: DirPicker,
    bs: [BsGen; 2],
    ctx: [TakeCtx; 2],
    files: Vec<FileState>,
    /// Files with bytes left in this pass, in rotation order.
    active: Vec<u32>,
    cursor: usize,
    /// `file_service_type` and its `:N`; I/Os left on the current file.
    service: FileService,
    service_batch: u32,
    batch_left: u32,
    passes_started: u64,
    loops: u64,
    time_based: bool,
    bytes_per_pass: u64,
    seed: u64,
    /// Zoned files (zonemode=zbd) may end a pass early; a pass that issued
    /// nothing ends the job (no written data to read).
    zoned: bool,
    issued_in_pass: u64,
    sequential: bool,
    writes: bool,
    /// `read_iolog`: the log's I/Os instead of drawn ones.
    replay: Option<replay::Replay>,
    /// Whether drawn writes are trims (see the module doc).
    trim: TrimMode,
    /// `trimwrite`: the write of the block just trimmed.
    write_after_trim: Option<IoUnit>,
    /// `percentage_random` per direction; `mixed` when a direction in use
    /// has it below 100 (then [`IoGen::take_mixed`] places every I/O).
    perc_random: [u32; 2],
    mixed: bool,
}

impl IoGen {
    /// The generator of worker `worker` (0-based clone index) of `job` over
    /// `regions` (one per file). Errors name the option that cannot work.
    pub fn new(
        job: &PreparedJob,
        worker: u32,
        regions: Vec<FileRegion>,
    ) -> Result<IoGen, JobError> {
        let seed = worker_seed(job, worker);
        let (bs, grain) = block_sizes(job)?;
        let ctx = take_contexts(job, &bs, grain);
        let files = file_states(job, &regions, &bs, &ctx, grain)?;
        if !job.time_based && job.loops == 0 {
            return Err(JobError::InvalidValue {
                option: "loops".into(),
                value: "0".into(),
                reason: "a size-based job needs at least one pass; use loops=1 or more".into(),
            });
        }
        let bytes_per_pass: u64 = files.iter().map(FileState::pass_bytes).sum();
        // io_size beyond one pass repeats the region (options::amounts does
        // this already when size is given; without it the pass is known here).
        let loops = match job.amounts.io_size {
            Some(io) if bytes_per_pass > 0 => u64::from(job.loops).max(io.div_ceil(bytes_per_pass)),
            _ => u64::from(job.loops),
        };
        let replay = match &job.replay.read_iolog {
            // Read once when the job was prepared; read here for a job
            // that was not (one read back from JSON).
            Some(path) => {
                let log = match &job.replay.log.0 {
                    Some(log) => log.clone(),
                    None => std::sync::Arc::new(replay::IoLog::read(path, &job.replay).map_err(
                        |reason| JobError::InvalidValue {
                            option: "read_iolog".into(),
                            value: path.display().to_string(),
                            reason,
                        },
                    )?),
                };
                Some(replay::Replay::new(log, &job.replay))
            }
            None => None,
        };
        Ok(IoGen {
            replay,
            trim: job.rw.trim,
            write_after_trim: None,
            rng: rng_for(seed, STREAM_GEN),
            picker: DirPicker::new(job.rw.read_pct),
            bs,
            ctx,
            bytes_per_pass,
            active: Vec::with_capacity(files.len()),
            files,
            cursor: 0,
            service: job.files.service,
            service_batch: job.files.service_batch.max(1),
            batch_left: job.files.service_batch.max(1),
            passes_started: 0,
            loops,
            time_based: job.time_based,
            seed,
            zoned: job.zones.mode == ZoneMode::Zbd,
            issued_in_pass: 0,
            sequential: job.rw.pattern == Pattern::Sequential,
            writes: job.writes(),
            perc_random: job.percentage_random,
            mixed: mixed(job),
        })
    }

    fn start_pass(&mut self) -> bool {
        if !self.time_based && self.passes_started >= self.loops {
            return false;
        }
        if self.zoned && self.passes_started > 0 && self.issued_in_pass == 0 {
            return false;
        }
        self.issued_in_pass = 0;
        self.passes_started += 1;
        self.active.clear();
        for (i, f) in self.files.iter_mut().enumerate() {
            f.restart(self.rng.next_u64());
            if f.len > 0 {
                self.active.push(i as u32);
            }
        }
        self.cursor = 0;
        self.batch_left = self.service_batch;
        if self.service == FileService::Random && !self.active.is_empty() {
            self.cursor = rng::below(&mut self.rng, self.active.len() as u64) as usize;
        }
        true
    }

    /// The slot of the next I/O after one on `slot`, which is `done` (its
    /// file left the rotation) or not (fio's file_service_type rules).
    #[inline(always)]
    fn advance(&mut self, slot: usize, done: bool) {
        if done {
            self.active.remove(slot);
            self.batch_left = self.service_batch;
        } else {
            if self.service == FileService::Sequential {
                return;
            }
            self.batch_left -= 1;
            if self.batch_left > 0 {
                return;
            }
            self.batch_left = self.service_batch;
        }
        if self.active.is_empty() {
            self.cursor = 0;
            return;
        }
        self.cursor = match self.service {
            FileService::Random => rng::below(&mut self.rng, self.active.len() as u64) as usize,
            // The next file in turn; after a removal it slid into `slot`.
            FileService::Roundrobin if !done => (slot + 1) % self.active.len(),
            _ => slot % self.active.len(),
        };
    }

    /// Where the I/O of file `file` ends (its region's start + length);
    /// 0 for a file the generator has no region of.
    pub fn region_end(&self, file: usize) -> u64 {
        self.files.get(file).map_or(0, |f| f.start + f.len)
    }

    /// File `file`'s region: `start..end` bytes (empty when it has none).
    pub fn region(&self, file: usize) -> std::ops::Range<u64> {
        self.files
            .get(file)
            .map_or(0..0, |f| f.start..f.start + f.len)
    }

    /// Bytes of one pass: the sum of the regions after rounding.
    pub fn bytes_per_pass(&self) -> u64 {
        self.bytes_per_pass
    }

    /// Bytes the whole job moves (`loops` passes; a trimwrite trims and
    /// writes each byte, so twice); `None` when time based.
    pub fn total_bytes(&self) -> Option<u64> {
        if let Some(r) = &self.replay {
            return Some(r.total_bytes());
        }
        let per_byte = if self.trims_then_writes() { 2 } else { 1 };
        (!self.time_based).then(|| self.bytes_per_pass * self.loops * per_byte)
    }

    /// `rw=trimwrite`/`randtrimwrite`: every trim is followed by a write
    /// of the same block, and only the writes count against `io_size` and
    /// `number_ios` (fio's rule).
    #[inline]
    pub fn trims_then_writes(&self) -> bool {
        self.trim == TrimMode::ThenWrite
    }

    /// Passes begun so far (1 during the first pass).
    pub fn passes_started(&self) -> u64 {
        self.passes_started
    }

    /// A replay (`read_iolog`) paced by its log: when the unit last
    /// returned is due, ns after the worker starts. `None` otherwise.
    #[inline]
    pub fn replay_due_ns(&self) -> Option<u64> {
        self.replay.as_ref().map(replay::Replay::due_ns)
    }

    /// A replay's sync after the unit last returned (file number,
    /// datasync), once: the log's `sync`/`datasync` line after that I/O.
    #[inline]
    pub fn take_replay_sync(&mut self) -> Option<(u32, bool)> {
        self.replay.as_mut().and_then(replay::Replay::take_sync)
    }

    /// The worker's seed: record it to repeat a `randrepeat=0` run, and
    /// give it to the worker's [`crate::rate::RateLimiter`].
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

/// `IoGen` is an iterator of I/Os: [`IoGen::next`] is the engine's call.
impl Iterator for IoGen {
    type Item = IoUnit;

    /// The next I/O; `None` once a size-based job has made its passes.
    #[inline(always)]
    fn next(&mut self) -> Option<IoUnit> {
        if self.trim == TrimMode::None {
            return self.draw();
        }
        if let Some(w) = self.write_after_trim.take() {
            return Some(w);
        }
        let u = self.draw()?;
        if self.trim == TrimMode::ThenWrite {
            self.write_after_trim = Some(u);
        }
        Some(IoUnit {
            dir: IoDir::Trim,
            ..u
        })
    }
}

impl IoGen {
    /// The next drawn (or replayed) I/O, before trims are named.
    #[inline(always)]
    fn draw(&mut self) -> Option<IoUnit> {
        if let Some(r) = self.replay.as_mut() {
            return r.next();
        }
        if self.active.is_empty() && !self.start_pass() {
            return None;
        }
        let dir = self.picker.pick(&mut self.rng);
        let d = dir as usize;
        let slot = self.cursor;
        let fi = self.active[slot] as usize;
        let bs = &self.bs[d];
        let drawn = bs.draw(&mut self.rng);
        if self.files[fi].zoning.is_some() {
            return self.next_zoned_unit(dir, slot, fi, drawn);
        }
        let (off, len) = if self.mixed {
            self.take_mixed(d, fi, drawn)
        } else {
            self.files[fi].take(d, drawn, bs, &self.ctx[d], &mut self.rng)
        };
        Some(self.emit(slot, fi, dir, off, len))
    }

    /// `percentage_random` below 100: this I/O is random with that
    /// probability (drawn per I/O, as fio's should_do_random), otherwise
    /// it starts where the direction's last I/O in the file ended.
    #[cold]
    #[inline(never)]
    fn take_mixed(&mut self, d: usize, fi: usize, drawn: u64) -> (u64, u64) {
        let random = rng::below(&mut self.rng, 100) < u64::from(self.perc_random[d]);
        let (f, bs, ctx) = (&mut self.files[fi], &self.bs[d], &self.ctx[d]);
        // Sequential I/Os may do blocks again, so the pass can have fewer
        // bytes left than the random map has free: no I/O moves more.
        let drawn = bs.fit(drawn, f.remaining);
        let after = if random {
            None
        } else {
            f.take_after_last(d, drawn, bs, ctx.grain)
        };
        let (off, len) = after.unwrap_or_else(|| f.take(d, drawn, bs, ctx, &mut self.rng));
        f.last_end[d] = off + len;
        (off, len)
    }
}

/// Whether a direction the job uses has `percentage_random` below 100.
fn mixed(job: &PreparedJob) -> bool {
    uses(job).any(|d| job.percentage_random[d as usize] < 100)
}

impl IoGen {
    /// The unit of `len` bytes at `off` in file `fi`'s region; the rotation
    /// moves on from `slot`.
    #[inline]
    fn emit(&mut self, slot: usize, fi: usize, dir: IoDir, off: u64, len: u64) -> IoUnit {
        let file = &self.files[fi];
        let unit = IoUnit {
            dir,
            file: fi as u32,
            offset: file.start + off,
            len,
        };
        let done = file.remaining == 0;
        self.advance(slot, done);
        unit
    }
}

fn uses(job: &PreparedJob) -> impl Iterator<Item = IoDir> + '_ {
    IoDir::ALL.into_iter().filter(|d| job.rw.uses_slot(*d))
}

/// Block-size generators per direction and the grain (gcd of all sizes in use).
fn block_sizes(job: &PreparedJob) -> Result<([BsGen; 2], u64), JobError> {
    let mut gens: [Option<BsGen>; 2] = [None, None];
    for d in uses(job) {
        gens[d as usize] = Some(BsGen::new(&job.bs[d as usize], d)?);
    }
    let any = gens
        .iter()
        .flatten()
        .next()
        .cloned()
        .expect("rw does at least one direction");
    let grain = gens.iter().flatten().fold(0, |g, b| bs::gcd(g, b.gcd()));
    let [r, w] = gens;
    Ok(([r.unwrap_or_else(|| any.clone()), w.unwrap_or(any)], grain))
}

fn take_contexts(job: &PreparedJob, bs: &[BsGen; 2], grain: u64) -> [TakeCtx; 2] {
    // blockalign 0 means "not given": the random map's block where the map
    // places offsets, else fio's default, the direction's minimum size.
    // With the map, the direction's minimum size is that default too (what
    // prepare records when blockalign was not given, or given equal to it),
    // so `rw=randrw bs=4k,12k` shares one 4 KiB map between directions.
    let map = job.rw.pattern == Pattern::Random
        && !job.norandommap
        && job.random_distribution == RandomDistribution::Uniform;
    let align = |d: usize| match job.blockalign[d] {
        0 if map => grain,
        a if map && a == bs[d].min_max().0 => grain,
        0 => bs[d].min_max().0,
        a => a,
    };
    let unit = uses(job).map(|d| align(d as usize)).min().unwrap_or(grain);
    let ctx = |d: usize| TakeCtx {
        grain: Align::new(grain),
        align: Align::new(align(d)),
        unit: Align::new(unit),
    };
    [ctx(0), ctx(1)]
}

fn conflict(msg: String) -> JobError {
    JobError::Conflict(msg)
}

/// Per-file state, one walk per file, after checking the offset options.
fn file_states(
    job: &PreparedJob,
    regions: &[FileRegion],
    bs: &[BsGen; 2],
    ctx: &[TakeCtx; 2],
    grain: u64,
) -> Result<Vec<FileState>, JobError> {
    if regions.is_empty() {
        return Err(conflict(format!(
            "job '{}': no file region to do I/O in",
            job.name
        )));
    }
    check_offset_options(job, ctx, grain)?;
    let scatter_key = mix64(job.randseed ^ 0x5ca7_7e12);
    let mut files = Vec::with_capacity(regions.len());
    for (i, r) in regions.iter().enumerate() {
        let key = scatter_key ^ mix64(i as u64);
        let (mut start, mut len) = (r.start, r.len / grain * grain);
        let zbd = if job.zones.mode == ZoneMode::Zbd {
            let (view, s, l) = zbd::ZbdFile::new(&job.zones, grain, r.start, r.len)?;
            (start, len) = (s, l);
            Some(view)
        } else {
            None
        };
        let walk = walk_for(job, bs, ctx, grain, len, key)?;
        let zoning = zoning::for_file(job, zbd, &walk, grain, key)?;
        files.push(FileState {
            start,
            len,
            remaining: 0,
            walk,
            zoning,
            last_end: [0, 0],
        });
    }
    if files.iter().all(|f| f.len == 0) {
        let largest = regions.iter().map(|r| r.len).max().unwrap_or(0);
        return Err(JobError::InvalidValue {
            option: "size".into(),
            value: format!("{largest} bytes per file"),
            reason: format!(
                "no file region holds one block of {grain} bytes; use a larger size or smaller bs"
            ),
        });
    }
    Ok(files)
}

fn check_offset_options(job: &PreparedJob, ctx: &[TakeCtx; 2], grain: u64) -> Result<(), JobError> {
    let random = job.rw.pattern == Pattern::Random;
    if !random && job.random_distribution != RandomDistribution::Uniform {
        return Err(conflict(format!(
            "random_distribution={} applies to random I/O only; use rw=randread, randwrite or randrw, \
             or drop random_distribution",
            dist::fio_name(&job.random_distribution)
        )));
    }
    if mixed(job) {
        let other = if job.data.sprandom {
            Some("sprandom")
        } else if matches!(job.random_distribution, RandomDistribution::Sequence { .. }) {
            Some("random_distribution=sequence")
        } else if job.zones.mode != ZoneMode::None {
            Some("zonemode")
        } else {
            None
        };
        if let Some(other) = other {
            return Err(conflict(format!(
                "percentage_random below 100 with {other} is not supported yet: {other} places \
                 every offset itself; drop percentage_random or {other}"
            )));
        }
    }
    if random && !job.norandommap && job.random_distribution == RandomDistribution::Uniform {
        for d in uses(job) {
            let align = ctx[d as usize].align.bytes;
            if !grain.is_multiple_of(align) {
                return Err(conflict(format!(
                    "blockalign={align} ({dir}) with the random map: every {grain}-byte block is done \
                     once per pass, so offsets are multiples of {grain}, which blockalign must divide; \
                     set norandommap=1 to align to blockalign instead",
                    dir = d.name(),
                )));
            }
        }
    }
    Ok(())
}

fn walk_for(
    job: &PreparedJob,
    bs: &[BsGen; 2],
    ctx: &[TakeCtx; 2],
    grain: u64,
    len: u64,
    key: u64,
) -> Result<Walk, JobError> {
    if job.rw.pattern == Pattern::Sequential {
        return Ok(Walk::Seq {
            pos: [0, 0],
            add: job.rw_seq_add_bytes,
        });
    }
    if job.data.sprandom {
        let d = &job.data;
        let op = f64::from(d.spr_op_ppm) / 1e6;
        let walk = sprandom::SprWalk::new(len, grain, op, d.spr_num_regions, d.spr_cs_bytes, key)?;
        return Ok(Walk::Sprandom(walk));
    }
    if let RandomDistribution::Sequence { blocks, stride } = &job.random_distribution {
        let dirs: Vec<usize> = uses(job).map(|d| d as usize).collect();
        let block_bytes = [ctx[0].align.bytes, ctx[1].align.bytes];
        let walk = sequence::SequenceWalk::new(blocks, *stride, block_bytes, &dirs, len)?;
        return Ok(Walk::Sequence(walk));
    }
    let unit = ctx[0].unit.bytes;
    if let Some(dist) = Dist::new(&job.random_distribution, (len / unit).max(1), key)? {
        return Ok(Walk::Dist(dist));
    }
    if job.norandommap {
        return Ok(Walk::Uniform);
    }
    let nblocks = len / grain;
    // percentage_random's sequential I/Os mark the blocks they do, which
    // a permutation alone cannot skip: they need the bitmap.
    let fixed =
        !mixed(job) && uses(job).all(|d| matches!(bs[d as usize], BsGen::Fixed(b) if b == grain));
    let perm = BlockPerm::new(nblocks.max(1), key);
    Ok(if fixed {
        Walk::MapFixed(perm)
    } else {
        Walk::MapVar {
            perm,
            done: bitmap::Bitmap::new(nblocks),
        }
    })
}
