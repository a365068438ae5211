//! Is there room for the files about to be created or extended?
//!
//! Checked before anything is written, per filesystem (files in the same
//! filesystem add up), with `statvfs`'s blocks available to unprivileged
//! users (`f_bavail`), so a run never fills a disk to its last block and
//! then fails half way through laying out. Filesystems that report no
//! blocks at all (ramfs) do not account space and are not checked.

use std::path::{Path, PathBuf};

use crate::EngineError;

/// Bytes one file will add to its filesystem.
#[derive(Debug, Clone)]
pub(crate) struct Growth {
    pub dir: PathBuf,
    /// `st_dev` of the directory: files with the same one share space.
    pub dev: u64,
    pub need_bytes: u64,
}

/// Refuse when `need_bytes` is more than `available_bytes` in `dir`.
pub fn check_space(dir: &Path, need_bytes: u64, available_bytes: u64) -> Result<(), EngineError> {
    if need_bytes <= available_bytes {
        return Ok(());
    }
    Err(EngineError::NoSpace {
        dir: dir.to_path_buf(),
        need_bytes,
        available_bytes,
    })
}

/// Sum the growth per filesystem and check each against `statvfs`.
pub(crate) fn check_all(growth: &[Growth]) -> Result<(), EngineError> {
    let mut devs: Vec<u64> = growth.iter().map(|g| g.dev).collect();
    devs.sort_unstable();
    devs.dedup();
    for dev in devs {
        let on_dev: Vec<&Growth> = growth.iter().filter(|g| g.dev == dev).collect();
        let need: u64 = on_dev.iter().map(|g| g.need_bytes).sum();
        if need == 0 {
            continue;
        }
        let dir = &on_dev[0].dir;
        let st = rustix::fs::statvfs(dir.as_path()).map_err(|e| EngineError::Io {
            path: dir.clone(),
            op: "statvfs (free space)",
            source: e.into(),
        })?;
        // ramfs and some FUSE filesystems report no blocks at all: they do
        // not account space, so there is nothing to check against.
        if st.f_blocks == 0 {
            continue;
        }
        check_space(dir, need, st.f_bavail.saturating_mul(st.f_frsize))?;
    }
    Ok(())
}
