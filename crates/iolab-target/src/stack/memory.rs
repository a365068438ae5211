//! memory: a sparse RAM disk.
//!
//! Parameters:
//! - `size` (required): export size in bytes (suffixes k, M, G, T: powers
//!   of 1024), at most 16 TiB.
//!
//! Storage is allocated on first write in 64 KiB chunks and freed again by
//! a trim or a zeroing that covers a whole chunk, so a large export costs
//! only what was written. Unwritten ranges read as zeroes. Each chunk has
//! its own reader-writer lock: requests on different chunks never contend,
//! and overlapping ones (whose outcome NBD leaves undefined) stay memory
//! safe. Chunks sit in a two-level table (32 MiB of chunks per leaf, leaves
//! allocated on first use) so that a sparse 16 TiB export costs 12 MB of
//! table, not 6 GB.
//!
//! Everything is visible to every connection as soon as a call returns, so
//! flush and FUA have nothing to do and multi-conn holds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{OnceLock, PoisonError, RwLock};

use super::{fmt_bytes, BlockDev, BlockResult, Caps, Counter, IoCtx, ZeroReq};

const CHUNK_BYTES: usize = 64 * 1024;
const CHUNKS_PER_LEAF: usize = 512;
const LEAF_BYTES: u64 = (CHUNK_BYTES * CHUNKS_PER_LEAF) as u64;
/// Largest memory export.
pub const MAX_SIZE_BYTES: u64 = 16 << 40;

type Chunk = Box<[u8; CHUNK_BYTES]>;
type Slot = RwLock<Option<Chunk>>;

/// A sparse in-memory block device.
pub struct MemoryDev {
    size_bytes: u64,
    leaves: Box<[OnceLock<Box<[Slot]>>]>,
    allocated_chunks: AtomicU64,
}

impl std::fmt::Debug for MemoryDev {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "MemoryDev({} bytes, {} allocated)",
            self.size_bytes,
            self.allocated_bytes()
        )
    }
}

impl MemoryDev {
    /// A device of `size_bytes`; errors name the parameter.
    pub fn new(size_bytes: u64) -> Result<MemoryDev, String> {
        if size_bytes > MAX_SIZE_BYTES {
            return Err(format!(
                "size {size_bytes} is larger than the memory backend's limit of 16 TiB"
            ));
        }
        let leaves = size_bytes.div_ceil(LEAF_BYTES) as usize;
        Ok(MemoryDev {
            size_bytes,
            leaves: (0..leaves).map(|_| OnceLock::new()).collect(),
            allocated_chunks: AtomicU64::new(0),
        })
    }

    /// Bytes of chunk storage currently allocated.
    pub fn allocated_bytes(&self) -> u64 {
        self.allocated_chunks.load(Ordering::Relaxed) * CHUNK_BYTES as u64
    }

    fn slot(&self, chunk: u64) -> &Slot {
        let leaf = &self.leaves[(chunk / CHUNKS_PER_LEAF as u64) as usize];
        let slots = leaf.get_or_init(|| (0..CHUNKS_PER_LEAF).map(|_| RwLock::new(None)).collect());
        &slots[(chunk % CHUNKS_PER_LEAF as u64) as usize]
    }

    /// Whether the leaf holding `chunk` exists (reads of a missing leaf
    /// are zeroes without allocating it).
    fn peek_slot(&self, chunk: u64) -> Option<&Slot> {
        let slots = self.leaves[(chunk / CHUNKS_PER_LEAF as u64) as usize].get()?;
        Some(&slots[(chunk % CHUNKS_PER_LEAF as u64) as usize])
    }

    /// Clear `[offset, offset+len)`: whole chunks are freed, partial ones zeroed.
    fn clear(&self, offset: u64, len_bytes: u64) {
        for p in pieces(offset, len_bytes) {
            let Some(slot) = self.peek_slot(p.chunk) else {
                continue;
            };
            let mut g = slot.write().unwrap_or_else(PoisonError::into_inner);
            if p.len == CHUNK_BYTES {
                if g.take().is_some() {
                    self.allocated_chunks.fetch_sub(1, Ordering::Relaxed);
                }
            } else if let Some(c) = g.as_mut() {
                c[p.at..p.at + p.len].fill(0);
            }
        }
    }
}

/// One chunk's share of a byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    chunk: u64,
    /// Offset within the chunk.
    at: usize,
    len: usize,
    /// Offset within the caller's buffer.
    buf_at: usize,
}

fn pieces(offset: u64, len_bytes: u64) -> impl Iterator<Item = Piece> {
    let end = offset + len_bytes;
    let mut pos = offset;
    std::iter::from_fn(move || {
        if pos >= end {
            return None;
        }
        let at = (pos % CHUNK_BYTES as u64) as usize;
        let len = (CHUNK_BYTES - at).min((end - pos) as usize);
        let p = Piece {
            chunk: pos / CHUNK_BYTES as u64,
            at,
            len,
            buf_at: (pos - offset) as usize,
        };
        pos += len as u64;
        Some(p)
    })
}

impl BlockDev for MemoryDev {
    fn caps(&self) -> Caps {
        Caps::new(self.size_bytes)
    }

    fn describe(&self) -> String {
        format!("memory({})", fmt_bytes(self.size_bytes))
    }

    fn counters(&self) -> Vec<Counter> {
        vec![Counter::gauge("allocated_bytes", self.allocated_bytes())]
    }

    fn read_at(&self, _ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        for p in pieces(offset, buf.len() as u64) {
            let dst = &mut buf[p.buf_at..p.buf_at + p.len];
            let Some(slot) = self.peek_slot(p.chunk) else {
                dst.fill(0);
                continue;
            };
            match slot.read().unwrap_or_else(PoisonError::into_inner).as_ref() {
                Some(c) => dst.copy_from_slice(&c[p.at..p.at + p.len]),
                None => dst.fill(0),
            }
        }
        Ok(())
    }

    fn write_at(&self, _ctx: &mut IoCtx, buf: &[u8], offset: u64, _fua: bool) -> BlockResult {
        for p in pieces(offset, buf.len() as u64) {
            let mut g = self
                .slot(p.chunk)
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let c = g.get_or_insert_with(|| {
                self.allocated_chunks.fetch_add(1, Ordering::Relaxed);
                // Through a Vec so the 64 KiB never sits on the stack; calloc
                // hands back zeroed pages without touching them.
                vec![0u8; CHUNK_BYTES]
                    .into_boxed_slice()
                    .try_into()
                    .expect("length is CHUNK_BYTES")
            });
            c[p.at..p.at + p.len].copy_from_slice(&buf[p.buf_at..p.buf_at + p.len]);
        }
        Ok(())
    }

    fn flush(&self, _ctx: &mut IoCtx) -> BlockResult {
        Ok(())
    }

    fn trim(&self, _ctx: &mut IoCtx, offset: u64, len_bytes: u64, _fua: bool) -> BlockResult {
        self.clear(offset, len_bytes);
        Ok(())
    }

    fn zero(&self, _ctx: &mut IoCtx, z: ZeroReq) -> BlockResult {
        // Freed chunks read as zeroes and are re-allocated on the next
        // write, so NO_HOLE (fully provisioned) cannot fail later for lack
        // of space in any way the client could observe differently.
        self.clear(z.offset, z.len_bytes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_range_exactly() {
        let ps: Vec<_> = pieces(CHUNK_BYTES as u64 - 10, 20 + CHUNK_BYTES as u64).collect();
        assert_eq!(ps.len(), 3);
        assert_eq!(
            ps[0],
            Piece {
                chunk: 0,
                at: CHUNK_BYTES - 10,
                len: 10,
                buf_at: 0
            }
        );
        assert_eq!(
            ps[1],
            Piece {
                chunk: 1,
                at: 0,
                len: CHUNK_BYTES,
                buf_at: 10
            }
        );
        assert_eq!(
            ps[2],
            Piece {
                chunk: 2,
                at: 0,
                len: 10,
                buf_at: CHUNK_BYTES + 10
            }
        );
        assert_eq!(pieces(5, 0).count(), 0);
    }

    #[test]
    fn write_read_trim_zero_and_allocation() {
        let d = MemoryDev::new(1 << 30).unwrap();
        let mut ctx = IoCtx::new();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 + 3) as u8).collect();
        let off = 3 * CHUNK_BYTES as u64 - 1234;
        d.write_at(&mut ctx, &data, off, false).unwrap();
        assert_eq!(d.allocated_bytes(), 5 * CHUNK_BYTES as u64);
        let mut back = vec![0xffu8; data.len()];
        d.read_at(&mut ctx, &mut back, off).unwrap();
        assert_eq!(back, data);
        // Trim the whole second chunk of the write and part of the first.
        d.trim(
            &mut ctx,
            3 * CHUNK_BYTES as u64 - 100,
            CHUNK_BYTES as u64 + 100,
            false,
        )
        .unwrap();
        assert_eq!(d.allocated_bytes(), 4 * CHUNK_BYTES as u64);
        d.read_at(&mut ctx, &mut back, off).unwrap();
        assert_eq!(&back[..1134], &data[..1134]);
        assert!(back[1134..1234 + CHUNK_BYTES].iter().all(|&b| b == 0));
        assert_eq!(&back[1234 + CHUNK_BYTES..], &data[1234 + CHUNK_BYTES..]);
        d.zero(
            &mut ctx,
            ZeroReq {
                offset: 0,
                len_bytes: 1 << 30,
                may_trim: true,
                fua: false,
            },
        )
        .unwrap();
        assert_eq!(d.allocated_bytes(), 0);
    }

    #[test]
    fn unwritten_reads_are_zero_and_sizes_are_bounded() {
        let d = MemoryDev::new(MAX_SIZE_BYTES).unwrap();
        let mut b = vec![1u8; 4096];
        d.read_at(&mut IoCtx::new(), &mut b, MAX_SIZE_BYTES - 4096)
            .unwrap();
        assert!(b.iter().all(|&x| x == 0));
        assert!(
            d.leaves.iter().all(|l| l.get().is_none()),
            "reads allocate nothing"
        );
        assert!(MemoryDev::new(MAX_SIZE_BYTES + 1)
            .unwrap_err()
            .contains("16 TiB"));
    }
}
