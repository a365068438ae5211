//! Filling files with incompressible data.
//!
//! A file that was only sized (`ftruncate`) or preallocated (`fallocate`)
//! has holes or unwritten extents: the filesystem answers reads of them
//! with zeros without touching the device, so a read benchmark on it
//! measures memset. Every byte a job may read is therefore written once,
//! with pseudo-random data so compressing or deduplicating storage cannot
//! shrink it either. Each file gets its own random seed.
//!
//! Writes are 1 MiB buffered `pwrite`s (the kernel merges them; no
//! alignment rules, so it works on every filesystem), then `fdatasync` so
//! the data is on the device before the run (fio's `create_fsync=1`, the
//! default), then `POSIX_FADV_DONTNEED` so the run does not start with the
//! whole file in the page cache.

use std::fs::File;
use std::num::NonZeroU64;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

use iolab_core::job::Preallocate;
use rustix::fs::{Advice, FallocateFlags};
use rustix::io::Errno;

use super::io_err;
use crate::EngineError;

/// Bytes per write: large enough that syscall cost is noise, small enough
/// that progress moves smoothly.
pub(crate) const CHUNK_BYTES: usize = 1 << 20;

/// Fill `range` of `file` with pseudo-random bytes, reporting
/// `(path, done_bytes, total_bytes)` after every chunk. Returns the time
/// it took, including the final flush (`sync`: the job's `create_fsync`;
/// without it the dirty pages are left to writeback, as fio leaves them,
/// and the advice below cannot drop them).
pub(crate) fn fill(
    file: &File,
    path: &Path,
    range: std::ops::Range<u64>,
    prealloc: Preallocate,
    sync: bool,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<Duration, EngineError> {
    let (from, to) = (range.start, range.end);
    let started = Instant::now();
    let total = to.saturating_sub(from);
    let name = path.display().to_string();
    preallocate(file, path, from, total, prealloc)?;
    progress(&name, 0, total);
    let mut rng = fastrand::Rng::new();
    let mut buf = vec![0u8; CHUNK_BYTES];
    let mut pos = from;
    while pos < to {
        let n = (CHUNK_BYTES as u64).min(to - pos) as usize;
        rng.fill(&mut buf[..n]);
        file.write_all_at(&buf[..n], pos)
            .map_err(|e| io_err(path, "fill (write)", e))?;
        pos += n as u64;
        progress(&name, pos - from, total);
    }
    if sync {
        file.sync_data()
            .map_err(|e| io_err(path, "fill (fdatasync)", e))?;
    }
    // Advice only: a filesystem that keeps the pages anyway (or refuses
    // the advice) changes no result of the fill, so a failure is not an error.
    let _ = rustix::fs::fadvise(file, from, NonZeroU64::new(total), Advice::DontNeed);
    Ok(started.elapsed())
}

/// Reserve the blocks first, as the job's `fallocate` says: by default
/// (native) the file is laid out in as few extents as the filesystem can
/// manage, and a full disk is found before gigabytes are written;
/// filesystems without `fallocate` are filled all the same.
pub(crate) fn preallocate(
    file: &File,
    path: &Path,
    from: u64,
    len: u64,
    mode: Preallocate,
) -> Result<(), EngineError> {
    if len == 0 {
        return Ok(());
    }
    let flags = match mode {
        Preallocate::None => return Ok(()),
        Preallocate::Truncate => {
            let end = from + len;
            if file.metadata().map(|m| m.len() < end).unwrap_or(true) {
                file.set_len(end)
                    .map_err(|e| io_err(path, "fill (ftruncate)", e))?;
            }
            return Ok(());
        }
        Preallocate::Keep => FallocateFlags::KEEP_SIZE,
        Preallocate::Native | Preallocate::Posix => FallocateFlags::empty(),
    };
    match rustix::fs::fallocate(file, flags, from, len) {
        Ok(()) => Ok(()),
        Err(Errno::NOTSUP | Errno::NOSYS) if mode != Preallocate::Posix => Ok(()),
        Err(e) => Err(io_err(path, "fill (fallocate)", e.into())),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    /// What each mode leaves behind before the fill: (size, allocated bytes).
    fn after(mode: Preallocate) -> (u64, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let f = File::create(&path).unwrap();
        preallocate(&f, &path, 0, 1 << 20, mode).unwrap();
        let m = f.metadata().unwrap();
        (m.len(), m.blocks() * 512)
    }

    #[test]
    fn each_fallocate_mode_reserves_as_fio_says() {
        assert_eq!(after(Preallocate::None), (0, 0), "none: nothing reserved");
        assert_eq!(
            after(Preallocate::Truncate),
            (1 << 20, 0),
            "truncate: sparse"
        );
        let (size, blocks) = after(Preallocate::Keep);
        assert_eq!(size, 0, "keep: the size stays");
        let (nsize, nblocks) = after(Preallocate::Native);
        assert_eq!(nsize, 1 << 20, "native: sized");
        // Where the filesystem has fallocate, the blocks are reserved.
        if nblocks > 0 {
            assert!(
                nblocks >= 1 << 20 && blocks >= 1 << 20,
                "{nblocks} {blocks}"
            );
        }
    }
}
