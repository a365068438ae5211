//! The mmap backend (fio's `mmap`): each file is mapped once, shared, and
//! an I/O is a copy between the mapping and the worker's buffer (a
//! character device with no size, /dev/zero, is mapped to the end of the
//! job's region, as fio maps it); fsync and
//! fdatasync are `msync(MS_SYNC)` of the mapping. Reads of pages not in
//! memory fault them in, so latency includes the page fault, as in fio.
//!
//! Synchronous: requests complete inside `queue`. A request outside the
//! mapping completes with `-EINVAL` (never a fault), but a file truncated
//! by someone else *during* the run still raises SIGBUS on access — the
//! risk every mmap reader takes; iolab only maps files it laid out or was
//! given.

use std::os::fd::RawFd;

use super::{Backend, BackendConfig, Completion, Op, OpenFile, Queued, Request};
use crate::EngineError;

#[derive(Debug)]
struct Map {
    ptr: *mut u8,
    len: usize,
}

#[derive(Debug)]
pub struct MmapBackend {
    maps: Vec<Map>,
}

/// Maps the whole of the file behind `fd`; a file with no size of its own
/// (a character device: /dev/zero) is mapped to `region_end`, the end of
/// the job's I/O in it, as fio maps the job's region.
fn map_file(fd: RawFd, region_end: u64) -> std::io::Result<Map> {
    // Safety: plain fcntl/lseek/fstat on an open descriptor, into a zeroed stat.
    let (flags, end, st) = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        let ok = libc::fstat(fd, &mut st);
        (
            libc::fcntl(fd, libc::F_GETFL),
            libc::lseek(fd, 0, libc::SEEK_END),
            (ok == 0).then_some(st),
        )
    };
    if flags < 0 || end < 0 || st.is_none() {
        return Err(std::io::Error::last_os_error());
    }
    let is_char = st.is_some_and(|s| s.st_mode & libc::S_IFMT == libc::S_IFCHR);
    let len = if end == 0 && is_char {
        usize::try_from(region_end).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?
    } else {
        end as usize
    };
    if len == 0 {
        return Ok(Map {
            ptr: std::ptr::null_mut(),
            len: 0,
        });
    }
    let prot = match flags & libc::O_ACCMODE {
        libc::O_RDONLY => libc::PROT_READ,
        _ => libc::PROT_READ | libc::PROT_WRITE,
    };
    // Safety: a new shared mapping of the whole file; the kernel picks the address.
    let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
    if ptr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Map {
        ptr: ptr.cast(),
        len,
    })
}

impl Backend for MmapBackend {
    const NAME: &'static str = "mmap";
    const SYNC: bool = true;

    fn open(files: &[OpenFile], _cfg: &BackendConfig) -> Result<Self, EngineError> {
        let mut maps = Vec::with_capacity(files.len());
        for f in files {
            let m = map_file(f.fd, f.region_end).map_err(|e| EngineError::Backend {
                engine: Self::NAME,
                reason: format!("cannot map a file: {e}"),
            })?;
            maps.push(m);
        }
        Ok(MmapBackend { maps })
    }

    #[inline]
    unsafe fn queue(&mut self, req: &Request) -> std::io::Result<Queued> {
        let m = &self.maps[req.file as usize];
        let (off, len) = (req.offset as usize, req.len as usize);
        let result = match req.op {
            Op::Trim => unreachable!("trims are answered by backend::trim::Trims"),
            Op::Fsync | Op::Fdatasync if m.len == 0 => 0,
            Op::Fsync | Op::Fdatasync => {
                // Safety: our own mapping, whole.
                match unsafe { libc::msync(m.ptr.cast(), m.len, libc::MS_SYNC) } {
                    0 => 0,
                    _ => -i64::from(
                        std::io::Error::last_os_error()
                            .raw_os_error()
                            .unwrap_or(libc::EIO),
                    ),
                }
            }
            _ if off.checked_add(len).is_none_or(|end| end > m.len) => -i64::from(libc::EINVAL),
            Op::Read => {
                // Safety: [off, off+len) is inside the mapping (checked above);
                // the caller's buffer holds `len` bytes (queue's contract).
                unsafe { std::ptr::copy_nonoverlapping(m.ptr.add(off), req.buf, len) };
                i64::from(req.len)
            }
            Op::Write => {
                // Safety: as for reads; a write job maps with PROT_WRITE.
                unsafe { std::ptr::copy_nonoverlapping(req.buf.cast_const(), m.ptr.add(off), len) };
                i64::from(req.len)
            }
        };
        Ok(Queued::Done(Completion {
            slot: req.slot,
            result,
        }))
    }
}

impl Drop for MmapBackend {
    fn drop(&mut self) {
        for m in self.maps.iter().filter(|m| m.len > 0) {
            // Safety: unmapping what `map_file` mapped, once.
            unsafe { libc::munmap(m.ptr.cast(), m.len) };
        }
    }
}
