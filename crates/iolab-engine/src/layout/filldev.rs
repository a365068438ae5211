//! `fill_device` / `fill_fs` on regular files: the job's own writes fill
//! the file system, so layout neither fills nor sizes the file for it, and
//! a job without `size=` gets a region as large as the file plus the free
//! space of its file system (`statvfs`), as fio sizes it. The writes then
//! stop at ENOSPC or EDQUOT (the worker ends without an error there).
//! Block devices need nothing here: their end is the region's end.

use std::path::Path;

use iolab_core::job::PreparedJob;

use super::parent_dir;
use super::plan::FileNeed;
use crate::EngineError;

/// The need layout works from: a path only fill_device jobs size is
/// created empty (nothing filled, no space reserved).
pub(super) fn layout_need(need: &FileNeed) -> FileNeed {
    let mut n = need.clone();
    if n.fill_device && n.sized_bytes.is_none() && n.unsized_offset.is_none() {
        n.sized_bytes = Some(0);
    }
    n
}

/// Region of a fill_device job without size= in a regular file of
/// `file_bytes` bytes, one of `nfiles` the worker fills.
pub(super) fn region(
    job: &PreparedJob,
    path: &Path,
    file_bytes: u64,
    nfiles: usize,
) -> Result<(u64, u64), EngineError> {
    let dir = parent_dir(path);
    let st = rustix::fs::statvfs(dir.as_path()).map_err(|e| EngineError::Io {
        path: dir.clone(),
        op: "statvfs (free space for fill_device)",
        source: e.into(),
    })?;
    if st.f_blocks == 0 {
        return Err(EngineError::File {
            path: path.to_path_buf(),
            reason: "is on a file system that reports no space (ramfs?), so fill_device \
                     cannot tell how far to write; set size="
                .into(),
        });
    }
    let free = st.f_bavail.saturating_mul(st.f_frsize) / nfiles.max(1) as u64;
    let len = file_bytes.saturating_sub(job.offset).saturating_add(free);
    if len == 0 {
        return Err(EngineError::File {
            path: path.to_path_buf(),
            reason: "has no room to fill: its file system has no free space past offset".into(),
        });
    }
    Ok((job.offset, len))
}
