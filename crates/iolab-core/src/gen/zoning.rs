//! fio's zone modes in the generator ([`strided`](super::strided) and
//! [`zbd`](super::zbd)): building a file's zoning, sharing zbd write
//! pointers between workers, and the I/Os of zoned files, which may end a
//! file's pass early (no written data left to read, or every zone done).

use std::sync::Arc;

use super::offset::{Walk, Zoning};
use super::strided::Strided;
use super::zbd::{ZbdFile, ZoneTable};
use super::{conflict, mix64, IoGen, IoUnit};
use crate::error::JobError;
use crate::job::{IoDir, PreparedJob, TrimMode, ZoneMode};

/// The zoning of one file: its zbd view (made before the walk, as it cuts
/// the region to whole zones) or strided zones over its walk.
pub(super) fn for_file(
    job: &PreparedJob,
    zbd: Option<ZbdFile>,
    walk: &Walk,
    grain: u64,
    key: u64,
) -> Result<Option<Box<Zoning>>, JobError> {
    Ok(match (zbd, job.zones.mode) {
        (Some(view), _) => Some(Box::new(Zoning::Zbd(view))),
        (None, ZoneMode::Strided) => {
            if job.rw_seq_add_bytes != 0 {
                return Err(conflict(
                    "rw=...:N (an offset modifier) and zonemode=strided do not go together; \
                     drop one"
                        .into(),
                ));
            }
            let mapped = matches!(walk, Walk::MapFixed(_));
            let s = Strided::new(&job.zones, grain, mapped, mix64(key))?;
            Some(Box::new(Zoning::Strided(s)))
        }
        _ => None,
    })
}

impl IoGen {
    /// The zone table of file `file` (zonemode=zbd), to share with the
    /// other workers of the same file ([`IoGen::share_zones`]).
    pub fn zone_table(&self, file: usize) -> Option<Arc<ZoneTable>> {
        match self.files.get(file)?.zoning.as_deref()? {
            Zoning::Zbd(z) => Some(Arc::clone(z.table())),
            Zoning::Strided(_) => None,
        }
    }

    /// Use `table` for the write pointers of file `file` (zonemode=zbd):
    /// workers of one file share them, as fio's jobs do.
    pub fn share_zones(&mut self, file: usize, table: Arc<ZoneTable>) {
        if let Some(Zoning::Zbd(z)) = self.files[file].zoning.as_deref_mut() {
            z.share(table);
        }
    }

    /// Strided zones of file `file` may move on to `file_bytes`, the end of
    /// the file (fio's strided zones go past `size`); no effect otherwise.
    pub fn set_file_end(&mut self, file: usize, file_bytes: u64) {
        let grain = self.ctx[0].grain.bytes;
        let f = &mut self.files[file];
        if let Some(Zoning::Strided(s)) = f.zoning.as_deref_mut() {
            s.set_span(file_bytes.saturating_sub(f.start), grain, f.len);
        }
    }

    /// The next I/O of a zoned file; `None`: the file is done for this pass.
    #[cold]
    fn next_zoned(&mut self, dir: IoDir, fi: usize, drawn: u64) -> Option<(IoDir, u64, u64)> {
        let d = dir as usize;
        let file = &mut self.files[fi];
        let Some(zoning) = file.zoning.as_deref_mut() else {
            unreachable!("next_zoned on a file without zones")
        };
        match zoning {
            Zoning::Strided(s) => {
                let room = file.remaining.min(file.len);
                let (off, len) = s.take(
                    d,
                    drawn,
                    &self.bs[d],
                    &self.ctx[d],
                    &mut self.rng,
                    file.len,
                    room,
                    self.sequential,
                );
                file.remaining -= len;
                Some((dir, off, len))
            }
            Zoning::Zbd(_) if self.trim != TrimMode::None => {
                // A trim job: each drawn block is one zone (bs = zonesize).
                let (off, len) = file.take(d, drawn, &self.bs[d], &self.ctx[d], &mut self.rng);
                let Some(Zoning::Zbd(z)) = file.zoning.as_deref_mut() else {
                    unreachable!("matched above")
                };
                z.trim(off);
                Some((dir, off, len))
            }
            Zoning::Zbd(z) if dir == IoDir::Read && z.reads_anywhere() => {
                let (off, len) = file.take(d, drawn, &self.bs[d], &self.ctx[d], &mut self.rng);
                Some((dir, off, len))
            }
            Zoning::Zbd(_) => {
                let random_off = (!self.sequential).then(|| {
                    file.take(d, drawn, &self.bs[d], &self.ctx[d], &mut self.rng)
                        .0
                });
                let Some(Zoning::Zbd(z)) = file.zoning.as_deref_mut() else {
                    unreachable!("matched above")
                };
                let mut got = match dir {
                    // Trims are drawn as writes (zbd jobs do not trim).
                    IoDir::Write | IoDir::Trim => z
                        .write(random_off, drawn, &self.bs[d], &mut self.rng)
                        .map(|(o, l)| (dir, o, l)),
                    IoDir::Read => z
                        .read(random_off, drawn, &self.bs[d])
                        .map(|(o, l)| (dir, o, l)),
                };
                if got.is_none() && dir == IoDir::Read && self.writes {
                    // Nothing written to read yet in a job that also
                    // writes: write instead (see docs/options.md).
                    let w = IoDir::Write as usize;
                    let drawn = self.bs[w].draw(&mut self.rng);
                    got = z
                        .write(random_off, drawn, &self.bs[w], &mut self.rng)
                        .map(|(o, l)| (IoDir::Write, o, l));
                }
                if self.sequential {
                    if let Some((_, _, len)) = got {
                        file.remaining = file.remaining.saturating_sub(len);
                    }
                }
                got
            }
        }
    }

    /// [`Iterator::next`] for a zoned file: a file done early leaves the
    /// rotation and the next file (or pass) is tried.
    #[cold]
    pub(super) fn next_zoned_unit(
        &mut self,
        dir: IoDir,
        slot: usize,
        fi: usize,
        drawn: u64,
    ) -> Option<IoUnit> {
        match self.next_zoned(dir, fi, drawn) {
            Some((dir, off, len)) => {
                self.issued_in_pass += 1;
                Some(self.emit(slot, fi, dir, off, len))
            }
            None => {
                self.files[fi].remaining = 0;
                self.advance(slot, true);
                self.next()
            }
        }
    }
}
