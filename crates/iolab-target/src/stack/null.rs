//! null: a device with no storage, for measuring the server itself.
//!
//! Parameters:
//! - `size` (required): export size in bytes (suffixes k, M, G, T, P).
//!
//! Reads return zeroes (the buffer is filled, so a client never sees stale
//! data from an earlier request); writes, trims and zeroing are accepted
//! and discarded; flush and FUA succeed at once. Like nbdkit's null plugin
//! and SPDK's null bdev, it is what seed 004 serves when it wants the
//! network and the target's own costs without a device behind them.

use super::{fmt_bytes, BlockDev, BlockResult, Caps, IoCtx, ZeroReq};

/// A device that stores nothing.
#[derive(Debug, Clone)]
pub struct NullDev {
    size_bytes: u64,
}

impl NullDev {
    pub fn new(size_bytes: u64) -> NullDev {
        NullDev { size_bytes }
    }
}

impl BlockDev for NullDev {
    fn caps(&self) -> Caps {
        Caps::new(self.size_bytes)
    }

    fn describe(&self) -> String {
        format!("null({})", fmt_bytes(self.size_bytes))
    }

    fn read_at(&self, _ctx: &mut IoCtx, buf: &mut [u8], _offset: u64) -> BlockResult {
        buf.fill(0);
        Ok(())
    }

    fn write_at(&self, _ctx: &mut IoCtx, _buf: &[u8], _offset: u64, _fua: bool) -> BlockResult {
        Ok(())
    }

    fn flush(&self, _ctx: &mut IoCtx) -> BlockResult {
        Ok(())
    }

    fn trim(&self, _ctx: &mut IoCtx, _offset: u64, _len_bytes: u64, _fua: bool) -> BlockResult {
        Ok(())
    }

    fn zero(&self, _ctx: &mut IoCtx, _z: ZeroReq) -> BlockResult {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_zeroes_whatever_was_written() {
        let d = NullDev::new(1 << 20);
        let mut ctx = IoCtx::new();
        d.write_at(&mut ctx, &[7u8; 512], 0, true).unwrap();
        let mut b = [9u8; 512];
        d.read_at(&mut ctx, &mut b, 0).unwrap();
        assert!(b.iter().all(|&x| x == 0));
        assert_eq!(d.caps().size_bytes, 1 << 20);
        assert_eq!(d.describe(), "null(1 MiB)");
    }
}
