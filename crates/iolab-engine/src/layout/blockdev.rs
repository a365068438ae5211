//! Phase 1 for block devices: size, logical block size, and the safety
//! checks before any write.
//!
//! Reading a device needs nothing special. Writing destroys its data, so
//! it needs `--allow-overwrite`, and even then iolab refuses a device that
//! is in use — mounted (itself or a partition), active swap, held by
//! device-mapper/RAID, or refused an exclusive open by the kernel — or that
//! carries a filesystem, partition-table or volume signature: those hold
//! someone's data, and the fix (unmount, `wipefs`) is the user's decision.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::time::Duration;

use super::direct::DirectAlign;
use super::plan::FileNeed;
use super::{check_writable, mounts, signature, Action, Checked, FileKind};
use crate::EngineError;

pub(super) fn inspect(
    need: &FileNeed,
    md: &Metadata,
    allow_overwrite: bool,
) -> Result<Checked, EngineError> {
    let path = &need.path;
    let io_err = |op, source| EngineError::Io {
        path: path.clone(),
        op,
        source,
    };
    let mut file = File::open(path).map_err(|e| io_err("open for reading", e))?;
    // The size of a block device is where its end is; lseek is the
    // portable way to ask (same answer as the BLKGETSIZE64 ioctl).
    let size = file
        .seek(SeekFrom::End(0))
        .map_err(|e| io_err("find device size (seek to end)", e))?;
    let block_bytes = rustix::fs::ioctl_blksszget(&file)
        .map_err(|e| io_err("read logical block size (BLKSSZGET)", e.into()))?;
    if let Some(required) = need.sized_bytes.filter(|r| *r > size) {
        return Err(EngineError::File {
            path: path.clone(),
            reason: format!(
                "is a block device of {size} bytes, smaller than offset+size = {required} bytes; use a smaller \
                 size or offset"
            ),
        });
    }
    need.target_bytes(size)?;
    let model =
        super::zoned::zoned_model(rustix::fs::major(md.rdev()), rustix::fs::minor(md.rdev()));
    super::zoned::check(path, model.as_deref(), need.zbd, need.writes)?;
    let note = if need.writes {
        check_write_allowed(need, &file, md.rdev(), size, allow_overwrite)?;
        format!(
            "writing to block device {} ({size} bytes, logical block {block_bytes} bytes): allowed by \
             --allow-overwrite; not mounted, not in use, no signature found",
            path.display()
        )
    } else {
        format!("reading block device {} ({size} bytes, logical block {block_bytes} bytes), never written", path.display())
    };
    Ok(Checked {
        need: need.clone(),
        kind: FileKind::BlockDevice,
        size_bytes: size,
        created_by_iolab: false,
        action: Action::Keep,
        direct_align: Some(DirectAlign {
            bytes: u64::from(block_bytes),
            how: "device logical block size",
        }),
        growth: None,
        note,
    })
}

fn check_write_allowed(
    need: &FileNeed,
    file: &File,
    rdev: u64,
    size: u64,
    allow: bool,
) -> Result<(), EngineError> {
    let path = &need.path;
    let refuse = |reason: String| {
        Err(EngineError::Refused {
            path: path.clone(),
            reason,
        })
    };
    if !allow {
        return refuse(format!(
            "it is a block device and writing destroys its data (job {}); pass --allow-overwrite if that is intended",
            need.jobs.join(", ")
        ));
    }
    if let Some(why) = mounts::in_use(path, rustix::fs::major(rdev), rustix::fs::minor(rdev)) {
        return refuse(format!("{why}; iolab never writes to a device in use"));
    }
    if exclusive_open_busy(path) {
        return refuse(
            "the kernel reports it busy (an exclusive open failed): it is mounted, swap, part of RAID/LVM, or \
             claimed by another program"
                .into(),
        );
    }
    signature_check(path, file, size)?;
    check_read_only_flag(path, rdev)?;
    check_writable(path)
}

/// Linux lets a read-only device be opened for writing and fails each
/// write instead, so the flag is read from sysfs (what `blockdev --getro`
/// shows) to say so before the run.
fn check_read_only_flag(path: &Path, rdev: u64) -> Result<(), EngineError> {
    let ro = mounts::sysfs_dir(rustix::fs::major(rdev), rustix::fs::minor(rdev)).join("ro");
    if std::fs::read_to_string(ro).is_ok_and(|v| v.trim() == "1") {
        return Err(EngineError::File {
            path: path.to_path_buf(),
            reason:
                "is a read-only device; make it writable (blockdev --setrw) or run a read-only job"
                    .into(),
        });
    }
    Ok(())
}

/// How often, and how far apart, a refused exclusive open is tried before
/// the device counts as busy: about half a second in all.
const EXCLUSIVE_TRIES: u32 = 10;
const EXCLUSIVE_RETRY: Duration = Duration::from_millis(50);

/// `O_EXCL` on a block device (without `O_CREAT`) asks the kernel for an
/// exclusive claim, which fails with EBUSY while anything else holds one:
/// a mounted filesystem, swap, md, device-mapper. It catches users the
/// tables in /proc do not show (e.g. a mount in another namespace).
///
/// A claim can also exist for a moment with no user behind it: a process
/// that forks while it holds an `O_EXCL` descriptor keeps a copy in the
/// child until the child execs, and the claim ends only with the last
/// copy. The users that matter hold theirs for as long as they use the
/// device, so the device is busy only if every try over ~0.5 s is refused.
fn exclusive_open_busy(path: &Path) -> bool {
    for attempt in 1..=EXCLUSIVE_TRIES {
        let res = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(path);
        if !matches!(res, Err(e) if e.raw_os_error() == Some(libc::EBUSY)) {
            return false;
        }
        if attempt < EXCLUSIVE_TRIES {
            std::thread::sleep(EXCLUSIVE_RETRY);
        }
    }
    true
}

fn signature_check(path: &Path, file: &File, size: u64) -> Result<(), EngineError> {
    let wipe = format!(
        "if its data may be destroyed, erase the signature first (wipefs -a {})",
        path.display()
    );
    let found = signature::probe_file(file, size).map_err(|e| EngineError::Io {
        path: path.to_path_buf(),
        op: "read (signature probe)",
        source: e,
    })?;
    if let Some(sig) = found {
        let reason = format!(
            "it carries a signature ({}, at byte {}); {wipe}",
            sig.what, sig.offset
        );
        return Err(EngineError::Refused {
            path: path.to_path_buf(),
            reason,
        });
    }
    if let Some(what) = signature::probe_blkid(path) {
        let reason = format!("it carries a signature ({what}, found by blkid -p); {wipe}");
        return Err(EngineError::Refused {
            path: path.to_path_buf(),
            reason,
        });
    }
    Ok(())
}
