//! Phase 1 for regular files: decide, without changing anything, whether a
//! path may be used as the jobs ask and what laying it out will take.
//!
//! - Missing: its directory must exist (iolab creates files, not
//!   directories: a mistyped mount point must not turn into a directory on
//!   the root filesystem), must not be under /dev but for /dev/shm and
//!   /dev/hugepages (a mistyped device name must not turn into a file in
//!   memory, as it does in fio) and a size
//!   must be given; it will be created and filled. A read-only job does
//!   the same, as fio lays out files it reads.
//! - Created by iolab earlier (see [`super::marker`]): reused; extended
//!   and filled if too small or if an earlier fill was interrupted.
//! - Anything else: read as it is and never modified; writing to it, or
//!   extending it when too small, needs `--allow-overwrite`.

use std::fs::{self, File, Metadata};
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rustix::fs::Access;

use super::plan::FileNeed;
use super::space::Growth;
use super::{check_writable, direct, marker, parent_dir, Action, Checked, FileKind};
use crate::EngineError;

/// A path that does not exist yet.
pub(super) fn inspect_missing(need: &FileNeed) -> Result<Checked, EngineError> {
    let path = &need.path;
    let dir = parent_dir(path);
    let dir_md = check_dir(path, &dir)?;
    if fs::canonicalize(&dir).is_ok_and(|d| holds_device_nodes(&d)) {
        return Err(EngineError::File {
            path: path.clone(),
            reason: "no such device; iolab creates no files under /dev (a mistyped device name would become \
                     a file in memory): name an existing device (lsblk lists them)"
                .into(),
        });
    }
    if need.sized_bytes.is_none() {
        return Err(EngineError::File {
            path: path.clone(),
            reason: "does not exist and no size was given; set size= so iolab can create it, or name an existing \
                     file or device"
                .into(),
        });
    }
    let to = need.target_bytes(0)?;
    rustix::fs::access(dir.as_path(), Access::WRITE_OK).map_err(|e| EngineError::Io {
        path: path.clone(),
        op: "create (its directory is not writable)",
        source: e.into(),
    })?;
    let direct_align = need
        .direct
        .then(|| direct::align_new(&dir, path))
        .transpose()?;
    Ok(Checked {
        need: need.clone(),
        kind: FileKind::Regular,
        size_bytes: 0,
        created_by_iolab: true,
        action: Action::Create { to },
        direct_align,
        growth: Some(Growth {
            dir,
            dev: dir_md.dev(),
            need_bytes: to,
        }),
        note: String::new(),
    })
}

/// A directory of device nodes: /dev and those under it, but for the file
/// systems mounted there for files (/dev/shm, /dev/hugepages).
fn holds_device_nodes(dir: &Path) -> bool {
    dir.starts_with("/dev") && !dir.starts_with("/dev/shm") && !dir.starts_with("/dev/hugepages")
}

fn check_dir(path: &Path, dir: &Path) -> Result<Metadata, EngineError> {
    let reason = match fs::metadata(dir) {
        Ok(md) if md.is_dir() => return Ok(md),
        Ok(_) => format!("{} is not a directory", dir.display()),
        Err(e) if e.kind() == ErrorKind::NotFound => format!(
            "directory {} does not exist; create it first (iolab creates files, not directories)",
            dir.display()
        ),
        Err(e) => {
            return Err(EngineError::Io {
                path: dir.to_path_buf(),
                op: "stat directory",
                source: e,
            })
        }
    };
    Err(EngineError::File {
        path: path.to_path_buf(),
        reason,
    })
}

/// An existing regular file.
pub(super) fn inspect_existing(
    need: &FileNeed,
    md: &Metadata,
    allow_overwrite: bool,
) -> Result<Checked, EngineError> {
    let path = &need.path;
    let file = File::open(path).map_err(|e| EngineError::Io {
        path: path.clone(),
        op: "open for reading",
        source: e,
    })?;
    let filled = marker::read(&file, path)?;
    let size = md.len();
    let target = need.target_bytes(size)?;
    let (action, note) = match filled {
        Some(filled) => ours(need, size, filled, target),
        None => foreign(need, size, target, allow_overwrite)?,
    };
    if need.writes || action != Action::Keep {
        check_writable(path)?;
    }
    let direct_align = need
        .direct
        .then(|| direct::align_existing(path))
        .transpose()?;
    let growth = match action {
        Action::Fill { to, .. } => {
            let allocated_bytes = md.blocks() * 512;
            Some(Growth {
                dir: parent_dir(path),
                dev: md.dev(),
                need_bytes: to.saturating_sub(allocated_bytes),
            })
        }
        _ => None,
    };
    let created_by_iolab = filled.is_some();
    Ok(Checked {
        need: need.clone(),
        kind: FileKind::Regular,
        size_bytes: size,
        created_by_iolab,
        action,
        direct_align,
        growth,
        note,
    })
}

/// A file iolab created: fill whatever part of `[0, target)` is not filled
/// yet (the file is too small, or an earlier fill was cut short).
fn ours(need: &FileNeed, size: u64, filled: u64, target: u64) -> (Action, String) {
    let from = filled.min(size);
    if from >= target {
        let note = format!(
            "reused {}: {size} bytes, created and filled by iolab earlier",
            need.path.display()
        );
        return (Action::Keep, note);
    }
    (
        Action::Fill {
            from,
            to: target,
            mark: true,
        },
        String::new(),
    )
}

/// A file iolab did not create: never modified without `--allow-overwrite`.
fn foreign(
    need: &FileNeed,
    size: u64,
    target: u64,
    allow: bool,
) -> Result<(Action, String), EngineError> {
    let path = &need.path;
    if need.writes && !allow {
        return Err(EngineError::Refused {
            path: path.clone(),
            reason: format!(
                "it exists and was not created by iolab (job {}); pass --allow-overwrite to let iolab overwrite \
                 its contents, or use a new file name",
                need.jobs.join(", ")
            ),
        });
    }
    if target > size && !allow {
        return Err(EngineError::File {
            path: path.clone(),
            reason: format!(
                "is {size} bytes, smaller than offset+size = {target} bytes; use a smaller size, let iolab create \
                 its own file (a new file name), or pass --allow-overwrite to let iolab extend it"
            ),
        });
    }
    if target > size {
        return Ok((
            Action::Fill {
                from: size,
                to: target,
                mark: false,
            },
            String::new(),
        ));
    }
    let note = if need.writes {
        format!(
            "writing to {} ({size} bytes, not created by iolab): allowed by --allow-overwrite",
            path.display()
        )
    } else {
        format!(
            "using {} as it is: {size} bytes, not created by iolab, only read, never modified",
            path.display()
        )
    };
    Ok((Action::Keep, note))
}
