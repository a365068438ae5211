//! Data buffers aligned for O_DIRECT.
//!
//! Every request's data lives in an [`AlignedBuf`]: a heap buffer whose
//! start is aligned to [`BUF_ALIGN`] (4096 bytes, what O_DIRECT needs on
//! every device we know of), so a file backend opened with O_DIRECT can
//! use it as is. Alignment comes from over-allocating a `Vec` by one
//! alignment unit and starting at the first aligned byte, which needs no
//! unsafe code; the waste (< 4 KiB per buffer) is paid once, because
//! connections keep their buffers for reuse ([`BufCache`]).

use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, PoisonError};

/// Alignment of every data buffer, bytes.
pub const BUF_ALIGN: usize = 4096;

/// A zero-initialised buffer whose first byte is aligned to [`BUF_ALIGN`].
pub struct AlignedBuf {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "AlignedBuf(len={}, capacity={})",
            self.len,
            self.capacity()
        )
    }
}

impl AlignedBuf {
    /// A buffer of `len` bytes (capacity rounded up to the alignment).
    pub fn new(len: usize) -> AlignedBuf {
        let cap = len.max(1).next_multiple_of(BUF_ALIGN);
        let raw = vec![0u8; cap + BUF_ALIGN];
        let start = raw.as_ptr().align_offset(BUF_ALIGN);
        assert!(start < BUF_ALIGN, "u8 pointers can always be aligned");
        AlignedBuf { raw, start, len }
    }

    /// Bytes this buffer can hold without reallocating.
    pub fn capacity(&self) -> usize {
        self.raw.len() - BUF_ALIGN
    }

    /// Change the visible length (contents past the old length are whatever
    /// an earlier use left there; callers overwrite them).
    pub fn set_len(&mut self, len: usize) {
        assert!(
            len <= self.capacity(),
            "buffer of {} bytes cannot hold {len}",
            self.capacity()
        );
        self.len = len;
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }
}

/// Buffers a connection keeps for reuse, so steady-state requests do not
/// allocate. Bounded in count; the memory it holds is bounded by the
/// connection's in-flight data (each buffer served one request).
///
/// This is where a request gets its buffer before its payload is read from
/// the socket; IO pacing (a shared pool with a FIFO queue of waiters) plugs
/// in at the same point.
#[derive(Debug, Default)]
pub struct BufCache {
    free: Mutex<Vec<AlignedBuf>>,
}

/// Most buffers a connection keeps.
const MAX_CACHED: usize = 256;

impl BufCache {
    /// A buffer of `len` bytes, reused when one large enough is free.
    pub fn get(&self, len: usize) -> AlignedBuf {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = free.iter().rposition(|b| b.capacity() >= len) {
            let mut b = free.swap_remove(i);
            b.set_len(len);
            return b;
        }
        drop(free);
        AlignedBuf::new(len)
    }

    /// Give a buffer back.
    pub fn put(&self, buf: AlignedBuf) {
        self.put_all([buf]);
    }

    /// Give buffers back under one lock (the cache keeps at most
    /// `MAX_CACHED`; the rest are freed).
    pub fn put_all(&self, bufs: impl IntoIterator<Item = AlignedBuf>) {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        for buf in bufs {
            if free.len() < MAX_CACHED {
                free.push(buf);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_sized() {
        for len in [0, 1, 512, 4096, 4097, 1 << 20] {
            let b = AlignedBuf::new(len);
            assert_eq!(b.as_ptr() as usize % BUF_ALIGN, 0);
            assert_eq!(b.len(), len);
            assert!(b.capacity() >= len);
        }
    }

    #[test]
    fn cache_reuses_large_enough_buffers() {
        let c = BufCache::default();
        let b = c.get(8192);
        let p = b.as_ptr();
        c.put(b);
        let small = c.get(4096);
        assert_eq!(
            small.as_ptr(),
            p,
            "a freed 8 KiB buffer serves a 4 KiB request"
        );
        assert_eq!(small.len(), 4096);
        let big = c.get(1 << 20);
        assert_ne!(big.as_ptr(), p);
    }

    #[test]
    fn put_all_keeps_at_most_the_cache_bound() {
        let c = BufCache::default();
        c.put_all((0..MAX_CACHED + 3).map(|_| AlignedBuf::new(512)));
        let held = c.free.lock().unwrap().len();
        assert_eq!(held, MAX_CACHED);
    }
}
