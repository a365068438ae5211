//! split: a device cut into N equal parts, each served as its own export.
//!
//! Parameters:
//! - `parts` (required, ≥ 1): the number of parts.
//!
//! Part `i` covers `[i × s, (i+1) × s)` of the device, where `s` is the
//! device size divided by N and rounded down to the preferred block size
//! (so every part starts aligned for efficient I/O); bytes past `N × s`
//! are not served. Each part forwards to the one device beneath, so a
//! layer added to one part (a 1 ms delay on one of three parts, as seed
//! 004 does) leaves the others alone, while flush reaches the whole device
//! (it cannot be narrower than the device's own cache).

use std::sync::Arc;

use super::{fmt_bytes, BlockDev, BlockResult, Caps, IoCtx, Layer, ZeroReq};

/// One part of a split device.
#[derive(Debug)]
pub struct Part {
    next: Arc<dyn BlockDev>,
    index: u32,
    parts: u32,
    base: u64,
    size_bytes: u64,
}

/// Cut `dev` into `parts` equal parts.
pub fn split(dev: Arc<dyn BlockDev>, parts: u32) -> Result<Vec<Arc<dyn BlockDev>>, String> {
    if parts == 0 {
        return Err("parts must be at least 1".into());
    }
    let caps = dev.caps();
    let align = u64::from(caps.preferred_block_bytes.max(caps.min_block_bytes).max(1));
    let size = caps.size_bytes / u64::from(parts);
    let size = size - size % align;
    if size == 0 {
        return Err(format!(
            "a device of {} cannot be split in {parts} parts of at least {align} bytes",
            fmt_bytes(caps.size_bytes)
        ));
    }
    Ok((0..parts)
        .map(|index| {
            let p = Part {
                next: dev.clone(),
                index,
                parts,
                base: u64::from(index) * size,
                size_bytes: size,
            };
            Arc::new(p) as Arc<dyn BlockDev>
        })
        .collect())
}

impl Layer for Part {
    fn caps(&self) -> Caps {
        Caps {
            size_bytes: self.size_bytes,
            ..self.next.caps()
        }
    }

    fn next(&self) -> &Arc<dyn BlockDev> {
        &self.next
    }

    fn label(&self) -> String {
        format!(
            "split(part {} of {}, {} at {})",
            self.index,
            self.parts,
            fmt_bytes(self.size_bytes),
            self.base,
        )
    }

    fn read_at(&self, ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        self.next.read_at(ctx, buf, self.base + offset)
    }

    fn write_at(&self, ctx: &mut IoCtx, buf: &[u8], offset: u64, fua: bool) -> BlockResult {
        self.next.write_at(ctx, buf, self.base + offset, fua)
    }

    fn trim(&self, ctx: &mut IoCtx, offset: u64, len_bytes: u64, fua: bool) -> BlockResult {
        self.next.trim(ctx, self.base + offset, len_bytes, fua)
    }

    fn zero(&self, ctx: &mut IoCtx, z: ZeroReq) -> BlockResult {
        let offset = self.base + z.offset;
        self.next.zero(ctx, ZeroReq { offset, ..z })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::memory::MemoryDev;

    #[test]
    fn parts_are_disjoint_aligned_and_cover_their_share() {
        let dev: Arc<dyn BlockDev> =
            Arc::new(MemoryDev::new(3 * (1024 * 1024 + 8192) + 5000).unwrap());
        let parts = split(dev.clone(), 3).unwrap();
        assert_eq!(parts.len(), 3);
        let mut ctx = IoCtx::new();
        for (i, p) in parts.iter().enumerate() {
            assert_eq!(p.caps().size_bytes, 1024 * 1024 + 8192);
            p.write_at(&mut ctx, &[i as u8 + 1; 4096], 0, false)
                .unwrap();
        }
        let s = parts[0].caps().size_bytes;
        for i in 0..3u64 {
            let mut b = [0u8; 4096];
            dev.read_at(&mut ctx, &mut b, i * s).unwrap();
            assert_eq!(b, [i as u8 + 1; 4096]);
        }
        assert!(parts[2].describe().starts_with("split(part 2 of 3"));
    }

    #[test]
    fn bad_part_counts_are_errors() {
        let dev: Arc<dyn BlockDev> = Arc::new(MemoryDev::new(8192).unwrap());
        assert!(split(dev.clone(), 0).is_err());
        assert!(split(dev.clone(), 3)
            .unwrap_err()
            .contains("cannot be split"));
        assert_eq!(split(dev, 2).unwrap().len(), 2);
    }
}
