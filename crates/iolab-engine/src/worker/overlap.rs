//! `serialize_overlap`: no two in-flight I/Os of a worker overlap.
//!
//! Two in-flight I/Os over the same bytes race: the device may complete
//! or apply them in any order, so a write racing a write leaves either
//! one's data, and a read racing a write sees either (or a mix). fio
//! documents this as the cause of verify failures at high queue depths on
//! small regions, and `serialize_overlap` as the cure: an I/O that would
//! overlap one in flight waits until that one completes. Here the worker
//! keeps each busy slot's byte range; the I/O loop asks [`Overlap::blocks`]
//! before staging a unit and, when it must wait, reaps and asks again.
//! A linear scan over the slots, as fio does: the queue is at most
//! `iodepth` long and the option is off by default.

use iolab_core::gen::IoUnit;

use super::Worker;
use crate::backend::Backend;

/// Byte ranges of the busy slots.
#[derive(Debug)]
pub struct Overlap {
    /// Per slot: (file, start, end); end 0 = the slot is free.
    ranges: Vec<(u32, u64, u64)>,
    /// The loop must reap before it issues again (a unit waits).
    pub wait: bool,
}

fn overlaps(a: (u32, u64, u64), u: &IoUnit) -> bool {
    a.0 == u.file && a.1 < u.offset + u.len && u.offset < a.2
}

impl Overlap {
    /// The tracker when the job asks for it and I/Os can be in flight together.
    pub fn new(serialize: bool, slots: usize, synchronous: bool) -> Option<Overlap> {
        (serialize && slots > 1 && !synchronous).then(|| Overlap {
            ranges: vec![(0, 0, 0); slots],
            wait: false,
        })
    }

    pub fn issued(&mut self, slot: u32, u: &IoUnit) {
        self.ranges[slot as usize] = (u.file, u.offset, u.offset + u.len);
    }

    pub fn freed(&mut self, slot: u32) {
        self.ranges[slot as usize].2 = 0;
    }

    /// True if `u` overlaps an in-flight I/O or one already in `batch`.
    pub fn blocks(&self, u: &IoUnit, batch: &[(IoUnit, u64)]) -> bool {
        self.ranges.iter().any(|r| r.2 != 0 && overlaps(*r, u))
            || batch
                .iter()
                .any(|(b, _)| overlaps((b.file, b.offset, b.offset + b.len), u))
    }
}

/// The I/O loop's side of serialize_overlap (no-ops when it is off).
impl<B: Backend> Worker<B> {
    /// True when `u` must wait for an in-flight I/O it overlaps; it is
    /// then kept pending and the loop reaps before issuing again.
    #[inline]
    pub(super) fn overlap_holds(&mut self, u: IoUnit, due: u64) -> bool {
        let Some(o) = self.overlap.as_mut() else {
            return false;
        };
        if !o.blocks(&u, &self.q.batch) {
            return false;
        }
        o.wait = true;
        self.src.pending = Some((u, due));
        true
    }

    /// True (once per wait) when a unit waits and something is in flight.
    #[inline]
    pub(super) fn overlap_wait(&mut self) -> bool {
        match self.overlap.as_mut() {
            Some(o) if o.wait => {
                o.wait = false;
                self.q.inflight > 0
            }
            _ => false,
        }
    }

    #[inline]
    pub(super) fn overlap_issued(&mut self, slot: u32, u: &IoUnit) {
        if let Some(o) = self.overlap.as_mut() {
            o.issued(slot, u);
        }
    }

    #[inline]
    pub(super) fn overlap_freed(&mut self, slot: u32) {
        if let Some(o) = self.overlap.as_mut() {
            o.freed(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::IoDir;

    fn unit(file: u32, offset: u64, len: u64) -> IoUnit {
        IoUnit {
            dir: IoDir::Write,
            file,
            offset,
            len,
        }
    }

    #[test]
    fn only_a_shared_byte_of_the_same_file_blocks() {
        let mut o = Overlap::new(true, 4, false).unwrap();
        o.issued(2, &unit(0, 8192, 4096));
        assert!(o.blocks(&unit(0, 8192, 4096), &[]));
        assert!(o.blocks(&unit(0, 4096, 8192), &[]), "ends inside");
        assert!(o.blocks(&unit(0, 12287, 1), &[]), "last byte");
        assert!(!o.blocks(&unit(0, 12288, 4096), &[]), "adjacent after");
        assert!(!o.blocks(&unit(0, 4096, 4096), &[]), "adjacent before");
        assert!(!o.blocks(&unit(1, 8192, 4096), &[]), "another file");
        assert!(
            o.blocks(&unit(1, 0, 4096), &[(unit(1, 0, 512), 0)]),
            "in the batch"
        );
        o.freed(2);
        assert!(!o.blocks(&unit(0, 8192, 4096), &[]));
        assert!(Overlap::new(true, 1, false).is_none());
        assert!(Overlap::new(true, 8, true).is_none());
        assert!(Overlap::new(false, 8, false).is_none());
    }
}
