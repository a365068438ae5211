//! `random_distribution=sequence:2,0,1`: a fixed, deterministic order of
//! block indices for a random job (fio's meaning, from its HOWTO and
//! io_u.c). The n-th I/O of a direction goes to block `seq[n % len]`; with
//! `random_sequence_stride=1` to `(n / len) * len + seq[n % len]`, so each
//! round of the sequence moves on by its length (2,0,1, 5,3,4, ...).
//!
//! Blocks are `blockalign` bytes (fio: `ba[ddir]`, the smallest block size
//! unless given). A listed index past the region is an error when the
//! generator is built. With the stride, the pass ends before the first
//! I/O that would fall past the region (fio stops the file there);
//! otherwise the sequence repeats until the pass has moved its bytes.
//! Each pass starts the count again (fio keeps counting across the passes
//! of a time_based job and so ends it at the region's end; iolab starts
//! the strided walk over, which only matters for time_based jobs).

use crate::error::JobError;

#[derive(Debug, Clone)]
pub struct SequenceWalk {
    blocks: Box<[u64]>,
    stride: bool,
    /// I/Os issued per direction in this pass.
    count: [u64; 2],
    /// Block bytes and blocks in the region, per direction.
    block_bytes: [u64; 2],
    nblocks: [u64; 2],
}

impl SequenceWalk {
    /// The walk over a region of `region_len` bytes with `block_bytes` per
    /// direction (index 0 read, 1 write); `dirs` are the directions used.
    pub fn new(
        blocks: &[u64],
        stride: bool,
        block_bytes: [u64; 2],
        dirs: &[usize],
        region_len: u64,
    ) -> Result<SequenceWalk, JobError> {
        if blocks.is_empty() {
            return Err(invalid(
                blocks,
                "the sequence is empty; give block indices, e.g. sequence:2,0,1".into(),
            ));
        }
        let nblocks = block_bytes.map(|b| region_len / b.max(1));
        for &d in dirs {
            if let Some(&b) = blocks.iter().find(|&&b| b >= nblocks[d]) {
                return Err(invalid(
                    blocks,
                    format!(
                        "block {b} is past the region ({} blocks of {} bytes); use a larger size \
                         or smaller indices",
                        nblocks[d], block_bytes[d]
                    ),
                ));
            }
        }
        Ok(SequenceWalk {
            blocks: blocks.into(),
            stride,
            count: [0, 0],
            block_bytes,
            nblocks,
        })
    }

    pub fn restart(&mut self) {
        self.count = [0, 0];
    }

    fn block(&self, n: u64) -> u64 {
        let len = self.blocks.len() as u64;
        let b = self.blocks[(n % len) as usize];
        if self.stride {
            n / len * len + b
        } else {
            b
        }
    }

    /// Offset (in the region) of the next I/O of direction `dir`, and
    /// whether it is the pass's last (the next one would be past the end).
    #[inline]
    pub fn next(&mut self, dir: usize) -> (u64, bool) {
        let n = self.count[dir];
        self.count[dir] += 1;
        let off = self.block(n) * self.block_bytes[dir];
        let last = self.stride && self.block(n + 1) >= self.nblocks[dir];
        (off, last)
    }
}

fn invalid(blocks: &[u64], reason: String) -> JobError {
    let shown: Vec<String> = blocks.iter().map(u64::to_string).collect();
    JobError::InvalidValue {
        option: "random_distribution".into(),
        value: format!("sequence:{}", shown.join(",")),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(w: &mut SequenceWalk, n: usize) -> Vec<(u64, bool)> {
        (0..n).map(|_| w.next(0)).collect()
    }

    #[test]
    fn repeats_or_strides_as_fio_documents() {
        let mut w = SequenceWalk::new(&[2, 0, 1], false, [4096; 2], &[0], 48 * 1024).unwrap();
        let got: Vec<u64> = offsets(&mut w, 6).iter().map(|o| o.0 / 4096).collect();
        assert_eq!(got, [2, 0, 1, 2, 0, 1]);
        let mut w = SequenceWalk::new(&[2, 0, 1], true, [4096; 2], &[0], 24 * 1024).unwrap();
        let got = offsets(&mut w, 6);
        let blocks: Vec<u64> = got.iter().map(|o| o.0 / 4096).collect();
        assert_eq!(blocks, [2, 0, 1, 5, 3, 4]);
        // 6 blocks: the 7th I/O (block 8) is past the end, so the 6th is the last.
        let last: Vec<bool> = got.iter().map(|o| o.1).collect();
        assert_eq!(last, [false, false, false, false, false, true]);
    }

    #[test]
    fn an_index_past_the_region_is_an_error_naming_it() {
        let e = SequenceWalk::new(&[0, 9], false, [4096; 2], &[0], 32 * 1024).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("sequence:0,9") && text.contains("block 9"),
            "{text}"
        );
    }
}
