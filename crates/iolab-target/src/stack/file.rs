//! file: a regular file or a block device.
//!
//! Parameters:
//! - `path` (required): the file or device.
//! - `size`: when the file does not exist it is created, sparse, with this
//!   size; when it exists, `size` must be left out or equal its size (a
//!   user's file is never resized).
//! - `direct` (default false): open with O_DIRECT, bypassing the page
//!   cache. The minimum block size then becomes the file's direct-I/O
//!   alignment (statx `STATX_DIOALIGN`, 4096 when the kernel cannot say),
//!   the export size is rounded down to it, and misaligned requests fail
//!   with `NBD_EINVAL` (the server checks them against the advertised
//!   minimum block size).
//! - `read_only` (default false): open read-only; writes fail with `NBD_EPERM`.
//!
//! Reads and writes are `pread`/`pwrite` at the request's offset. FUA
//! writes use `pwritev2(RWF_DSYNC)` (falling back to a write then
//! `fdatasync` where the kernel refuses it); flush is `fdatasync`. Trim
//! punches a hole (ignored where the filesystem cannot: trim is a hint);
//! zeroing uses `fallocate` ZERO_RANGE, or PUNCH_HOLE when holes are
//! allowed, and falls back to writing zeroes. Every connection shares one
//! descriptor and the kernel's page cache, so multi-conn holds.

use std::fs::{File, OpenOptions};
use std::io::{IoSlice, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{fallocate, statx, AtFlags, FallocateFlags, StatxFlags};
use rustix::io::{pwritev2, ReadWriteFlags};

use super::{fmt_bytes, BlockDev, BlockError, BlockResult, Caps, IoCtx, ZeroReq};
use crate::buf::{AlignedBuf, BUF_ALIGN};
use crate::proto::Errno;

/// How to open a file backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileParams {
    pub path: PathBuf,
    pub size_bytes: Option<u64>,
    pub direct: bool,
    pub read_only: bool,
}

/// A file- or device-backed block device.
#[derive(Debug)]
pub struct FileDev {
    file: File,
    params: FileParams,
    size_bytes: u64,
    min_block_bytes: u32,
    /// Cleared when the kernel refuses `RWF_DSYNC`.
    dsync_ok: AtomicBool,
}

impl FileDev {
    /// Open (or create) the file; errors name the path and say what to do.
    pub fn open(params: FileParams) -> Result<FileDev, String> {
        let path = &params.path;
        let exists = path.exists();
        if !exists && params.size_bytes.is_none() {
            return Err(format!(
                "{}: does not exist; give size to create it",
                path.display()
            ));
        }
        let mut opts = OpenOptions::new();
        opts.read(true)
            .write(!params.read_only)
            .create(!exists && !params.read_only);
        if params.direct {
            opts.custom_flags(libc::O_DIRECT);
        }
        let mut file = opts
            .open(path)
            .map_err(|e| open_error(path, &e, params.read_only))?;
        if !exists {
            file.set_len(params.size_bytes.unwrap_or(0))
                .map_err(|e| format!("{}: set size: {e}", path.display()))?;
        }
        // Seeking to the end works for regular files and block devices alike.
        let actual = file
            .seek(SeekFrom::End(0))
            .map_err(|e| format!("{}: size: {e}", path.display()))?;
        if let Some(want) = params.size_bytes.filter(|&w| exists && w != actual) {
            return Err(format!(
                "{}: has {actual} bytes but size = {want}; leave size out to use the file as it is",
                path.display()
            ));
        }
        let min_block_bytes = if params.direct {
            dio_alignment(&file, path)?
        } else {
            1
        };
        let size_bytes = actual - actual % u64::from(min_block_bytes);
        Ok(FileDev {
            file,
            params,
            size_bytes,
            min_block_bytes,
            dsync_ok: AtomicBool::new(true),
        })
    }

    fn sync(&self, op: &str, offset: u64) -> BlockResult {
        self.file
            .sync_data()
            .map_err(|e| BlockError::io(op, offset, &e))
    }

    fn write_dsync(&self, buf: &[u8], offset: u64) -> BlockResult {
        if self.dsync_ok.load(Ordering::Relaxed) {
            match write_all_flags(&self.file, buf, offset, ReadWriteFlags::DSYNC) {
                Ok(()) => return Ok(()),
                Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOSYS)) => {
                    self.dsync_ok.store(false, Ordering::Relaxed);
                }
                Err(e) => return Err(BlockError::io("write (FUA)", offset, &e)),
            }
        }
        self.file
            .write_all_at(buf, offset)
            .map_err(|e| BlockError::io("write", offset, &e))?;
        self.sync("write (FUA)", offset)
    }

    fn write_zeroes(&self, offset: u64, len_bytes: u64) -> BlockResult {
        const STEP: u64 = 1 << 20;
        let zeroes = AlignedBuf::new(STEP.min(len_bytes) as usize);
        let mut pos = offset;
        while pos < offset + len_bytes {
            let n = STEP.min(offset + len_bytes - pos) as usize;
            self.file
                .write_all_at(&zeroes[..n], pos)
                .map_err(|e| BlockError::io("write zeroes", pos, &e))?;
            pos += n as u64;
        }
        Ok(())
    }

    fn refuse_if_read_only(&self) -> BlockResult {
        if self.params.read_only {
            return Err(BlockError::new(
                Errno::Perm,
                "the file backend was opened read_only",
            ));
        }
        Ok(())
    }
}

fn open_error(path: &Path, e: &std::io::Error, read_only: bool) -> String {
    let hint = match e.raw_os_error() {
        Some(libc::EACCES | libc::EROFS) if !read_only => {
            "; use read_only = true to serve it read-only"
        }
        Some(libc::EINVAL) => "; the filesystem may not support O_DIRECT (direct = false)",
        _ => "",
    };
    format!("{}: open: {e}{hint}", path.display())
}

/// The file's O_DIRECT offset alignment, 4096 when the kernel cannot say.
fn dio_alignment(file: &File, path: &Path) -> Result<u32, String> {
    let align = match statx(file, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN) {
        Ok(st) if st.stx_mask & StatxFlags::DIOALIGN.bits() != 0 && st.stx_dio_offset_align > 0 => {
            if st.stx_dio_mem_align as usize > BUF_ALIGN {
                return Err(format!(
                    "{}: O_DIRECT needs {}-byte aligned memory, more than iolab's {BUF_ALIGN}",
                    path.display(),
                    st.stx_dio_mem_align
                ));
            }
            st.stx_dio_offset_align.max(512)
        }
        _ => 4096,
    };
    if !align.is_power_of_two() || align > 65536 {
        return Err(format!(
            "{}: O_DIRECT alignment {align} is not usable as an NBD block size",
            path.display()
        ));
    }
    Ok(align)
}

/// `pwritev2` until every byte is written.
fn write_all_flags(
    file: &File,
    mut buf: &[u8],
    mut offset: u64,
    flags: ReadWriteFlags,
) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = pwritev2(file, &[IoSlice::new(buf)], offset, flags)?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        buf = &buf[n..];
        offset += n as u64;
    }
    Ok(())
}

impl BlockDev for FileDev {
    fn caps(&self) -> Caps {
        let w = !self.params.read_only;
        Caps {
            min_block_bytes: self.min_block_bytes,
            preferred_block_bytes: self.min_block_bytes.max(4096),
            can_write: w,
            can_fua: w,
            can_trim: w,
            can_zero: w,
            may_block: true,
            ..Caps::new(self.size_bytes)
        }
    }

    fn describe(&self) -> String {
        let mode = if self.params.direct { ", direct" } else { "" };
        format!(
            "file({}, {}{mode})",
            self.params.path.display(),
            fmt_bytes(self.size_bytes)
        )
    }

    fn read_at(&self, _ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| BlockError::io("read", offset, &e))
    }

    fn write_at(&self, _ctx: &mut IoCtx, buf: &[u8], offset: u64, fua: bool) -> BlockResult {
        self.refuse_if_read_only()?;
        if fua {
            return self.write_dsync(buf, offset);
        }
        self.file
            .write_all_at(buf, offset)
            .map_err(|e| BlockError::io("write", offset, &e))
    }

    fn flush(&self, _ctx: &mut IoCtx) -> BlockResult {
        self.sync("flush", 0)
    }

    fn trim(&self, _ctx: &mut IoCtx, offset: u64, len_bytes: u64, fua: bool) -> BlockResult {
        self.refuse_if_read_only()?;
        let mode = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
        match fallocate(&self.file, mode, offset, len_bytes) {
            // Trim is a hint: a filesystem without holes simply keeps the data.
            Ok(()) | Err(rustix::io::Errno::OPNOTSUPP) => {}
            Err(e) => return Err(BlockError::io("trim", offset, &e.into())),
        }
        if fua {
            self.sync("trim (FUA)", offset)?;
        }
        Ok(())
    }

    fn zero(&self, _ctx: &mut IoCtx, z: ZeroReq) -> BlockResult {
        let ZeroReq {
            offset,
            len_bytes,
            may_trim,
            fua,
        } = z;
        self.refuse_if_read_only()?;
        let modes = if may_trim {
            [FallocateFlags::PUNCH_HOLE, FallocateFlags::ZERO_RANGE]
        } else {
            [FallocateFlags::ZERO_RANGE, FallocateFlags::ZERO_RANGE]
        };
        let mut done = false;
        for m in modes {
            match fallocate(&self.file, m | FallocateFlags::KEEP_SIZE, offset, len_bytes) {
                Ok(()) => {
                    done = true;
                    break;
                }
                Err(
                    rustix::io::Errno::OPNOTSUPP
                    | rustix::io::Errno::INVAL
                    | rustix::io::Errno::NODEV,
                ) => {}
                Err(e) => return Err(BlockError::io("zero", offset, &e.into())),
            }
        }
        if !done {
            self.write_zeroes(offset, len_bytes)?;
        }
        if fua {
            self.sync("zero (FUA)", offset)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
