//! O_DIRECT: whether a filesystem supports it, the alignment it needs, and
//! the up-front check that a job's offsets and block sizes respect it (a
//! misaligned O_DIRECT I/O fails with EINVAL in the middle of a run, which
//! says nothing useful to the person who typed `bs=`).
//!
//! The alignment of a file comes from, in order: `statx(STATX_DIOALIGN)`
//! (Linux 6.1+, ext4/xfs/f2fs/...), a read probe (O_DIRECT reads of 1,
//! 512, 1024, 2048, 4096 bytes until one is accepted: a filesystem that
//! takes unaligned O_DIRECT, as FUSE and tmpfs do, answers 1, so `bs=1`
//! with `direct=1` runs there as under fio), the logical block size
//! of the underlying device in sysfs, and finally 4096 bytes, a multiple of
//! every common logical block size (the notes say when it was assumed).
//! Block devices use their logical block size (`BLKSSZGET`). The memory
//! side (`stx_dio_mem_align`) needs no check: every I/O buffer starts on a
//! 4096-byte boundary (worker/buffers.rs `BUF_ALIGN`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use iolab_core::job::{BsSpec, IoDir, PreparedJob};
use rustix::fs::{AtFlags, StatxFlags};

use super::mounts;
use crate::EngineError;

/// Bytes a read probe needs in the file: two reads of up to 4096 bytes.
const PROBE_FILE_BYTES: usize = 8192;

/// The O_DIRECT alignment of a file and how it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DirectAlign {
    pub bytes: u64,
    /// "statx", "read probe", "device logical block size", "assumed".
    pub how: &'static str,
}

/// True if files in `dir` can be opened with O_DIRECT (a probe file is
/// created there and removed). `iolab quick` uses it to fall back to
/// buffered I/O.
pub fn direct_supported(dir: &Path) -> bool {
    matches!(probe_dir(dir, dir), Ok(Some(_)))
}

/// Alignment for a file still to be created in `dir`.
pub(crate) fn align_new(dir: &Path, path: &Path) -> Result<DirectAlign, EngineError> {
    probe_dir(dir, path)?.ok_or_else(|| unsupported(path, dir))
}

/// Alignment for an existing regular file.
pub(crate) fn align_existing(path: &Path) -> Result<DirectAlign, EngineError> {
    match open_direct(path) {
        Ok(f) => Ok(align_of(&f)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Err(unsupported(path, path)),
        Err(e) => Err(EngineError::Io {
            path: path.to_path_buf(),
            op: "open with O_DIRECT",
            source: e,
        }),
    }
}

/// Create a small probe file in `dir`, open it with O_DIRECT and find its
/// alignment; `None` if the filesystem refuses O_DIRECT.
fn probe_dir(dir: &Path, path: &Path) -> Result<Option<DirectAlign>, EngineError> {
    let io_err = |op, source| EngineError::Io {
        path: path.to_path_buf(),
        op,
        source,
    };
    let mut probe = tempfile::Builder::new()
        .prefix(".iolab-direct-probe-")
        .tempfile_in(dir)
        .map_err(|e| io_err("create O_DIRECT probe file in its directory", e))?;
    probe
        .write_all(&[0x5a; PROBE_FILE_BYTES])
        .map_err(|e| io_err("write O_DIRECT probe file", e))?;
    match open_direct(probe.path()) {
        Ok(f) => Ok(Some(align_of(&f))),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(None),
        Err(e) => Err(io_err("open O_DIRECT probe file", e)),
    }
}

fn open_direct(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
}

fn align_of(f: &File) -> DirectAlign {
    let found = |bytes: u64, how| DirectAlign { bytes, how };
    if let Ok(st) = rustix::fs::statx(f, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN) {
        if st.stx_mask & StatxFlags::DIOALIGN.bits() != 0 && st.stx_dio_offset_align > 0 {
            return found(u64::from(st.stx_dio_offset_align), "statx");
        }
    }
    if let Some(bytes) = read_probe(f) {
        return found(bytes, "read probe");
    }
    let dev = f.metadata().map(|m| m.dev()).unwrap_or(0);
    match sysfs_logical_block(rustix::fs::major(dev), rustix::fs::minor(dev)) {
        Some(bytes) => found(bytes, "device logical block size"),
        None => found(4096, "assumed"),
    }
}

/// The smallest of 1, 512..4096 that an O_DIRECT read accepts as offset and
/// length. Needs a file of at least 8 KiB: reads at or past the end return
/// 0 before any alignment check.
fn read_probe(f: &File) -> Option<u64> {
    if f.metadata().ok()?.len() < PROBE_FILE_BYTES as u64 {
        return None;
    }
    // A 4096-aligned window inside a plain Vec: no unsafe allocation needed.
    let mut raw = vec![0u8; PROBE_FILE_BYTES + 4096];
    let start = raw.as_ptr().align_offset(4096);
    let buf = &mut raw[start..start + PROBE_FILE_BYTES];
    for size in [1usize, 512, 1024, 2048, 4096] {
        match f.read_at(&mut buf[..size], size as u64) {
            Ok(n) if n == size => return Some(size as u64),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => continue,
            _ => return None,
        }
    }
    None
}

/// `queue/logical_block_size` of a disk, or of the disk holding a partition.
pub(crate) fn sysfs_logical_block(major: u32, minor: u32) -> Option<u64> {
    let dir = mounts::sysfs_dir(major, minor);
    [
        dir.join("queue/logical_block_size"),
        dir.join("../queue/logical_block_size"),
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok()?.trim().parse().ok())
}

/// "tmpfs", "ext4"... for the filesystem holding `path`.
pub(crate) fn fs_name(path: &Path) -> String {
    let Ok(md) = std::fs::metadata(path) else {
        return "unknown".into();
    };
    let (major, minor) = (rustix::fs::major(md.dev()), rustix::fs::minor(md.dev()));
    mounts::fstype_of(major, minor).unwrap_or_else(|| match rustix::fs::statfs(path) {
        Ok(st) => format!("type 0x{:x}", st.f_type),
        Err(_) => "unknown".into(),
    })
}

fn unsupported(path: &Path, on: &Path) -> EngineError {
    EngineError::File {
        path: path.to_path_buf(),
        reason: format!(
            "its filesystem ({}) does not support O_DIRECT (direct=1); use direct=0",
            fs_name(on)
        ),
    }
}

/// Check that `job`'s offset, block sizes and block alignment are
/// multiples of `align` (the O_DIRECT alignment of `path`).
pub(crate) fn check_job(
    job: &PreparedJob,
    path: &Path,
    align: DirectAlign,
) -> Result<(), EngineError> {
    let bad = aligned_values(job)
        .into_iter()
        .find(|(_, v)| v % align.bytes != 0);
    let Some((option, value)) = bad else {
        return Ok(());
    };
    let how = if align.how == "assumed" {
        "assumed: the filesystem does not report it".to_string()
    } else {
        format!("from {}", align.how)
    };
    Err(EngineError::File {
        path: path.to_path_buf(),
        reason: format!(
            "job '{}': direct=1 needs {option} to be a multiple of {} bytes, the O_DIRECT alignment here ({how}), \
             but it is {value}; use a multiple of {}, or direct=0",
            job.name, align.bytes, align.bytes
        ),
    })
}

/// `(option as the user knows it, value)` for every number O_DIRECT needs aligned.
fn aligned_values(job: &PreparedJob) -> Vec<(String, u64)> {
    let mut out = vec![("offset".to_string(), job.offset)];
    out.push(("offset_increment".to_string(), job.offset_increment));
    let both = job.rw.does(IoDir::Read) && job.rw.does(IoDir::Write);
    for dir in IoDir::ALL.into_iter().filter(|d| job.rw.uses_slot(*d)) {
        let suffix = if both {
            format!(" ({})", dir.name())
        } else {
            String::new()
        };
        let (name, sizes) = match &job.bs[dir as usize] {
            BsSpec::Fixed(b) => ("bs", vec![*b]),
            BsSpec::Range { min, max } => ("bsrange", vec![*min, *max]),
            BsSpec::Split(v) => ("bssplit", v.iter().map(|(b, _)| *b).collect()),
        };
        out.extend(sizes.into_iter().map(|b| (format!("{name}{suffix}"), b)));
        if job.blockalign[dir as usize] > 0 {
            out.push((format!("blockalign{suffix}"), job.blockalign[dir as usize]));
        }
    }
    out
}
