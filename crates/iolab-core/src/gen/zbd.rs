//! Zoned-block-device zones emulated over a regular file (`zonemode=zbd`):
//! sequential-write-required zones of `zonesize` bytes from the file's
//! start, each with a write pointer, `zonecapacity` writable bytes, and the
//! limits and resets fio applies (its documented meaning and zbd.c were the
//! model; this is iolab's own code).
//!
//! - Every zone starts empty (write pointer at its start), as fio's
//!   emulation for regular files does.
//! - A write goes to the write pointer of its zone and moves it on: the
//!   zone of a random write is the one its random offset falls in (or an
//!   already open one when `max_open_zones`/`job_max_open_zones` allow no
//!   other); sequential writes fill the zones in order. A full zone is
//!   reset (write pointer back to its start) before it is written again.
//! - Once `zone_reset_threshold` of the region holds data, every
//!   1/`zone_reset_frequency`-th write resets its zone first.
//! - A read stays below its zone's write pointer (unless `read_beyond_wp`):
//!   random reads move into the written part of a zone with data, and
//!   sequential reads go through the written part of each zone in order.
//!
//! - A trim (`rw=trim`/`randtrim`, one zone per I/O: bs = zonesize) resets
//!   its zone, as fio's zbd trims do: the write pointer goes back to the
//!   zone's start and the zone is no longer open (the engine issues no
//!   discard for it, as fio's emulation over regular files issues none).
//!
//! The write pointers of a file are shared by every worker that uses it
//! ([`ZoneTable`], one lock per file), as fio shares them between jobs. A
//! reset only moves the write pointer (the file's blocks are not freed).

use std::sync::{Arc, Mutex, MutexGuard};

use super::bs::BsGen;
use super::rng::{below, WorkerRng};
use crate::error::JobError;
use crate::job::ZoneOptions;

/// The write pointers of one file, shared by the workers that use it.
#[derive(Debug, Default)]
pub struct ZoneTable {
    inner: Mutex<Zones>,
}

#[derive(Debug, Default)]
struct Zones {
    /// Bytes written in each zone (from the file's first zone on); grows
    /// as zones are used.
    wp: Vec<u64>,
    /// Zones being written (open), for max_open_zones.
    open: Vec<u64>,
    /// Writes left before the next threshold reset (fio's write count).
    write_cnt: u32,
    /// Bytes below the write pointers, all zones together.
    valid_bytes: u64,
    resets: u64,
}

impl Zones {
    fn wp(&mut self, z: u64) -> &mut u64 {
        let i = z as usize;
        if i >= self.wp.len() {
            self.wp.resize(i + 1, 0);
        }
        &mut self.wp[i]
    }

    fn reset(&mut self, z: u64) {
        let w = std::mem::take(self.wp(z));
        self.valid_bytes -= w;
        self.resets += 1;
    }
}

/// What a [`ZoneTable`] holds, for reports and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneSnapshot {
    /// Bytes written in each zone from the file's first zone on (zones
    /// never touched may be missing at the end).
    pub wp_bytes: Vec<u64>,
    /// Zones open for writing.
    pub open: Vec<u64>,
    /// Zone resets so far (full zones written again, threshold resets).
    pub resets: u64,
}

impl ZoneTable {
    pub fn new() -> Arc<ZoneTable> {
        Arc::new(ZoneTable::default())
    }

    fn lock(&self) -> MutexGuard<'_, Zones> {
        // A worker that panicked mid-update leaves whole numbers behind.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn snapshot(&self) -> ZoneSnapshot {
        let z = self.lock();
        ZoneSnapshot {
            wp_bytes: z.wp.clone(),
            open: z.open.clone(),
            resets: z.resets,
        }
    }
}

/// One worker's view of one file's zones.
#[derive(Debug)]
pub struct ZbdFile {
    table: Arc<ZoneTable>,
    zone_bytes: u64,
    cap: u64,
    /// Index of the region's first zone, and how many zones it has.
    first: u64,
    nzones: u64,
    grain: u64,
    read_beyond_wp: bool,
    max_open: usize,
    job_max_open: usize,
    /// Zones this worker writes to (job_max_open_zones).
    own_open: Vec<u64>,
    threshold_bytes: u64,
    /// 1/zone_reset_frequency, writes between threshold resets (0: never).
    reset_every: u32,
    /// Sequential cursors per direction: zone (relative) and, for reads,
    /// the position inside it.
    cursor: [u64; 2],
    read_pos: u64,
}

impl ZbdFile {
    /// The zones of the region `start..start + len` (bytes of the file):
    /// returns the view and the region cut to whole zones, as fio cuts it.
    pub fn new(
        z: &ZoneOptions,
        grain: u64,
        start: u64,
        len: u64,
    ) -> Result<(ZbdFile, u64, u64), JobError> {
        let zone = z.size_bytes;
        if !zone.is_multiple_of(grain) || !z.capacity_bytes.is_multiple_of(grain) {
            return Err(JobError::Conflict(format!(
                "zonesize ({zone}) and zonecapacity ({}) must be multiples of the block size \
                 ({grain} bytes) with zonemode=zbd",
                z.capacity_bytes
            )));
        }
        let first = start.div_ceil(zone);
        let end = (start + len) / zone;
        if end <= first {
            return Err(JobError::InvalidValue {
                option: "size".into(),
                value: format!("{len} bytes from offset {start}"),
                reason: format!(
                    "holds no whole zone of zonesize={zone} bytes (zonemode=zbd); use a \
                     larger size or a smaller zonesize"
                ),
            });
        }
        let nzones = end - first;
        let freq = z.reset_frequency;
        let reset_every = if freq > 0.0 {
            (1.0 / freq).min(f64::from(u32::MAX)) as u32
        } else {
            0
        };
        let table = ZoneTable::default();
        table.lock().write_cnt = reset_every;
        let view = ZbdFile {
            table: Arc::new(table),
            zone_bytes: zone,
            cap: z.capacity_bytes,
            first,
            nzones,
            grain,
            read_beyond_wp: z.read_beyond_wp,
            max_open: z.max_open_zones as usize,
            job_max_open: z.job_max_open_zones as usize,
            own_open: Vec::new(),
            threshold_bytes: (z.reset_threshold * (nzones * zone) as f64) as u64,
            reset_every,
            cursor: [0, 0],
            read_pos: 0,
        };
        Ok((view, first * zone, nzones * zone))
    }

    /// Use `table` (shared with the other workers of the file) from now on.
    pub fn share(&mut self, table: Arc<ZoneTable>) {
        self.table = table;
    }

    pub fn table(&self) -> &Arc<ZoneTable> {
        &self.table
    }

    /// True when reads are left where the offset generator put them.
    pub fn reads_anywhere(&self) -> bool {
        self.read_beyond_wp
    }

    /// A new pass: the sequential cursors go back to the first zone.
    pub fn restart(&mut self) {
        self.cursor = [0, 0];
        self.read_pos = 0;
    }

    /// The next write, at a write pointer: offset relative to the region
    /// and length. `random_off`: the offset the generator drew (random
    /// I/O), `None` for sequential I/O. `None` back: the region is done
    /// (sequential), or no zone may be opened.
    pub fn write(
        &mut self,
        random_off: Option<u64>,
        drawn: u64,
        bs: &BsGen,
        rng: &mut WorkerRng,
    ) -> Option<(u64, u64)> {
        let table = Arc::clone(&self.table);
        let mut zs = table.lock();
        let z = match random_off {
            None => {
                if self.cursor[1] >= self.nzones {
                    return None;
                }
                self.first + self.cursor[1]
            }
            Some(off) => self.open_zone(&mut zs, self.first + off / self.zone_bytes, rng)?,
        };
        if self.reset_every > 0 && zs.valid_bytes >= self.threshold_bytes {
            zs.write_cnt = zs.write_cnt.saturating_sub(1);
            if zs.write_cnt == 0 {
                zs.write_cnt = self.reset_every;
                zs.reset(z);
            }
        }
        if *zs.wp(z) + self.grain > self.cap {
            zs.reset(z);
        }
        let wp = *zs.wp(z);
        let len = bs.fit(drawn, self.cap - wp);
        *zs.wp(z) += len;
        zs.valid_bytes += len;
        if wp + len + self.grain > self.cap {
            // Full: no longer open; a sequential writer moves on.
            zs.open.retain(|&o| o != z);
            self.own_open.retain(|&o| o != z);
            if random_off.is_none() {
                self.cursor[1] += 1;
            }
        }
        Some(((z - self.first) * self.zone_bytes + wp, len))
    }

    /// The zone a random write to zone `z` goes to under the open limits.
    fn open_zone(&mut self, zs: &mut Zones, z: u64, rng: &mut WorkerRng) -> Option<u64> {
        if self.max_open == 0 && self.job_max_open == 0 {
            return Some(z);
        }
        let own_room = self.job_max_open == 0 || self.own_open.len() < self.job_max_open;
        let mine = self.own_open.contains(&z);
        if zs.open.contains(&z) && (mine || own_room) {
            if !mine {
                self.own_open.push(z);
            }
            return Some(z);
        }
        if (self.max_open == 0 || zs.open.len() < self.max_open) && own_room {
            zs.open.push(z);
            self.own_open.push(z);
            return Some(z);
        }
        // No other zone may open: an open one of this worker (or, with no
        // per-worker limit, of the file) inside the region, at random.
        let range = self.first..self.first + self.nzones;
        let pool: Vec<u64> = if self.job_max_open > 0 {
            self.own_open.clone()
        } else {
            zs.open
                .iter()
                .copied()
                .filter(|o| range.contains(o))
                .collect()
        };
        (!pool.is_empty()).then(|| pool[below(rng, pool.len() as u64) as usize])
    }

    /// A trim of the zone at `off` (relative to the region): reset it
    /// (see the module doc).
    pub fn trim(&mut self, off: u64) {
        let z = self.first + off / self.zone_bytes;
        let mut zs = self.table.lock();
        zs.reset(z);
        zs.open.retain(|&o| o != z);
        self.own_open.retain(|&o| o != z);
    }

    /// The next read below a write pointer (see [`ZbdFile::write`] for the
    /// arguments); `None`: no written data left to read in the region.
    pub fn read(&mut self, random_off: Option<u64>, drawn: u64, bs: &BsGen) -> Option<(u64, u64)> {
        let table = Arc::clone(&self.table);
        let mut zs = table.lock();
        let Some(off) = random_off else {
            return self.read_seq(&mut zs, drawn, bs);
        };
        let orig = off / self.zone_bytes;
        let z = (orig..self.nzones)
            .chain(0..orig)
            .map(|r| self.first + r)
            .find(|&z| *zs.wp(z) >= self.grain)?;
        let written = *zs.wp(z);
        let len = bs.fit(drawn, written);
        let zone_start = (z - self.first) * self.zone_bytes;
        if written <= len {
            return Some((zone_start, len));
        }
        let inside = (off % self.zone_bytes) % (written - len) / self.grain * self.grain;
        Some((zone_start + inside, len))
    }

    fn read_seq(&mut self, zs: &mut Zones, drawn: u64, bs: &BsGen) -> Option<(u64, u64)> {
        loop {
            if self.cursor[0] >= self.nzones {
                return None;
            }
            let written = *zs.wp(self.first + self.cursor[0]);
            if self.read_pos + self.grain <= written {
                let len = bs.fit(drawn, written - self.read_pos);
                let off = self.cursor[0] * self.zone_bytes + self.read_pos;
                self.read_pos += len;
                return Some((off, len));
            }
            self.cursor[0] += 1;
            self.read_pos = 0;
        }
    }
}
