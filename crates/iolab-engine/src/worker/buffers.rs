//! The worker's I/O buffers: one allocation, aligned to 4096 bytes (what
//! O_DIRECT needs on every device we know of), cut into one buffer per
//! in-flight slot, filled once with incompressible bytes so that writes do
//! not flatter compressing or deduplicating storage (fio's default too:
//! buffers are filled at start, not refilled per I/O).

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Alignment of every buffer, bytes.
pub const BUF_ALIGN: usize = 4096;

/// `slots` buffers of `slot_bytes` each (rounded up to [`BUF_ALIGN`]).
#[derive(Debug)]
pub struct AlignedBufs {
    ptr: *mut u8,
    layout: Layout,
    slot_bytes: usize,
    slots: usize,
}

// Safety: the allocation is owned exclusively by this value (no aliasing
// handles are kept elsewhere), so moving it to another thread is sound.
unsafe impl Send for AlignedBufs {}

impl AlignedBufs {
    /// Allocate and fill with the pseudo-random stream seeded by `seed`.
    pub fn new(slots: usize, slot_bytes: usize, seed: u64) -> AlignedBufs {
        let slot_bytes = slot_bytes.max(1).next_multiple_of(BUF_ALIGN);
        let total = slot_bytes * slots.max(1);
        let layout = Layout::from_size_align(total, BUF_ALIGN).expect("buffer size fits in isize");
        // Safety: `layout` has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let mut b = AlignedBufs {
            ptr,
            layout,
            slot_bytes,
            slots: slots.max(1),
        };
        fill_incompressible(seed, b.as_mut_slice());
        b
    }

    /// Start of slot `i`'s buffer.
    #[inline]
    pub fn slot_ptr(&self, i: u32) -> *mut u8 {
        debug_assert!((i as usize) < self.slots);
        // Safety: i < slots, so the offset stays inside the allocation.
        unsafe { self.ptr.add(i as usize * self.slot_bytes) }
    }

    /// Slot `i`'s first `len` bytes.
    ///
    /// # Safety
    /// Slot `i` has no I/O in flight (nothing else reads or writes it), and
    /// `len` is at most [`Self::slot_bytes`].
    #[inline]
    pub unsafe fn slot_mut(&mut self, i: u32, len: usize) -> &mut [u8] {
        debug_assert!(len <= self.slot_bytes);
        // Safety: inside the allocation (caller: len ≤ slot_bytes); no I/O
        // aliases it (caller), and `&mut self` excludes other borrows.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(i), len) }
    }

    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// Every slot as `(pointer, length)`, for buffer registration.
    pub fn regions(&self) -> Vec<(*mut u8, usize)> {
        (0..self.slots as u32)
            .map(|i| (self.slot_ptr(i), self.slot_bytes))
            .collect()
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // Safety: the allocation is `layout.size()` initialised bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBufs {
    fn drop(&mut self) {
        // Safety: allocated in `new` with this very layout.
        unsafe { dealloc(self.ptr, self.layout) };
    }
}

/// Fill `buf` with the xorshift64* stream seeded by `seed`: statistically
/// incompressible, and reproducible, so tests can predict what was written.
/// Hand-written: eight lines, and a crate would only add a dependency.
pub fn fill_incompressible(seed: u64, buf: &mut [u8]) {
    let mut x = seed | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let v = x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_distinct_and_incompressible() {
        let b = AlignedBufs::new(3, 5000, 42);
        assert_eq!(b.slot_bytes(), 8192);
        for (p, len) in b.regions() {
            assert_eq!(p as usize % BUF_ALIGN, 0);
            assert_eq!(len, 8192);
        }
        let mut again = vec![0u8; 3 * 8192];
        fill_incompressible(42, &mut again);
        let mut b = b;
        assert_eq!(b.as_mut_slice(), &again[..], "reproducible from the seed");
        let mut seen = [0u32; 256];
        again.iter().for_each(|&x| seen[x as usize] += 1);
        assert!(
            seen.iter().all(|&n| n > 40),
            "every byte value appears: not compressible"
        );
    }
}
