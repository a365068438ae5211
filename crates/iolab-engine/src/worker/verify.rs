//! Verified chunks: how a write's chunk is built (header + data + digest)
//! and how a chunk read back is checked. Pure functions over byte slices.
//!
//! A chunk is `verify_interval` bytes. Its 64-byte header (at the start,
//! or swapped with the data at `verify_offset`, as fio does) holds, little
//! endian: magic "IOLV" (4), the verify kind (1), 3 spare, the chunk length
//! (4), the header's own CRC-32C (4), the chunk's offset in the file (8),
//! the seed of its data (8), and the digest of the data (up to 32 bytes).
//! The data after the header is the seed's xorshift stream, or
//! `verify_pattern` repeated. `verify=pattern` chunks have no header: every
//! byte is the pattern. The layout is iolab's own (fio's headers differ).

use iolab_core::job::{VerifyKind, VERIFY_HEADER_BYTES};
use md5::Digest;

use super::buffers::fill_incompressible;

const HDR: usize = VERIFY_HEADER_BYTES as usize;
const MAGIC: u32 = u32::from_le_bytes(*b"IOLV");
/// fio's `verify=crc64` (crc/crc64.c, `fio_crc64`): polynomial
/// 0x95AC9329AC4BC9B5 reflected, init 0, no final xor: CRC-64/REDIS.
const CRC64: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_REDIS);
/// fio's `verify=crc32` (crc/crc32.c, `fio_crc32`): the table-driven MSB-first
/// CRC over polynomial 0x04C11DB7 from 0, with no final xor (POSIX cksum
/// without its length and complement). No catalogue entry has these
/// parameters, so they are spelled out; the check value is computed.
const CRC32_FIO_ALG: crc::Algorithm<u32> = crc::Algorithm {
    width: 32,
    poly: 0x04c1_1db7,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
    check: 0x89a1_897f,
    residue: 0,
};
const CRC32_FIO: crc::Crc<u32> = crc::Crc::<u32>::new(&CRC32_FIO_ALG);
/// fio's `verify=crc16` (crc/crc16.c): CRC-16/ARC.
const CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_ARC);
/// fio's `verify=crc7` (crc/crc7.c): CRC-7/MMC.
const CRC7: crc::Crc<u8> = crc::Crc::<u8>::new(&crc::CRC_7_MMC);

/// How chunks are built and checked.
#[derive(Debug, Clone)]
pub struct Layout {
    pub kind: VerifyKind,
    pub interval: usize,
    pub header_at: usize,
    /// `verify_pattern`, if given: the data (pattern kind: the whole chunk).
    pub pattern: Option<Vec<u8>>,
}

/// A chunk that is not what was written.
#[derive(Debug, Clone)]
pub struct Mismatch {
    /// Offset of the chunk in the file.
    pub offset: u64,
    pub len: usize,
    pub what: &'static str,
    pub expected: String,
    pub found: String,
    /// The chunk as it should be, when it can be rebuilt (verify_dump).
    pub expected_chunk: Option<Vec<u8>>,
}

fn digest(kind: VerifyKind, data: &[u8]) -> Vec<u8> {
    match kind {
        VerifyKind::Crc32c => crc32c::crc32c(data).to_le_bytes().to_vec(),
        VerifyKind::Crc64 => CRC64.checksum(data).to_le_bytes().to_vec(),
        VerifyKind::Crc32 => CRC32_FIO.checksum(data).to_le_bytes().to_vec(),
        VerifyKind::Crc16 => CRC16.checksum(data).to_le_bytes().to_vec(),
        VerifyKind::Crc7 => vec![CRC7.checksum(data)],
        VerifyKind::Md5 => md5::Md5::digest(data).to_vec(),
        VerifyKind::Sha1 => sha1::Sha1::digest(data).to_vec(),
        VerifyKind::Sha256 => sha2::Sha256::digest(data).to_vec(),
        VerifyKind::Xxhash => xxhash_rust::xxh32::xxh32(data, 0).to_le_bytes().to_vec(),
        _ => Vec::new(),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn fill_pattern(pattern: &[u8], buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = pattern[i % pattern.len()];
    }
}

/// Moves the header between the chunk's start and `header_at` (its own
/// inverse: a swap of two 64-byte ranges).
fn swap_header(chunk: &mut [u8], at: usize) {
    if at == 0 {
        return;
    }
    let (a, b) = chunk.split_at_mut(at.max(HDR));
    if at >= HDR {
        a[..HDR].swap_with_slice(&mut b[..HDR]);
    } else {
        // Overlapping ranges: rotate instead.
        chunk[..at + HDR].rotate_left(HDR);
    }
}

fn unswap_header(chunk: &mut [u8], at: usize) {
    if at == 0 {
        return;
    }
    if at >= HDR {
        swap_header(chunk, at);
    } else {
        chunk[..at + HDR].rotate_right(HDR);
    }
}

impl Layout {
    /// Builds one chunk at file offset `offset` from `seed`.
    pub fn build(&self, chunk: &mut [u8], offset: u64, seed: u64) {
        if self.kind == VerifyKind::Pattern {
            fill_pattern(self.pattern.as_deref().unwrap_or(&[0]), chunk);
            return;
        }
        let data = &mut chunk[HDR..];
        match &self.pattern {
            Some(p) => fill_pattern(p, data),
            None => fill_incompressible(seed, data),
        }
        let d = digest(self.kind, data);
        let len = chunk.len() as u32;
        let h = &mut chunk[..HDR];
        h.fill(0);
        h[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        h[4] = self.kind as u8;
        h[8..12].copy_from_slice(&len.to_le_bytes());
        h[16..24].copy_from_slice(&offset.to_le_bytes());
        h[24..32].copy_from_slice(&seed.to_le_bytes());
        h[32..32 + d.len()].copy_from_slice(&d);
        let crc = crc32c::crc32c(h);
        h[12..16].copy_from_slice(&crc.to_le_bytes());
        swap_header(chunk, self.header_at);
    }

    /// Checks one chunk read at `offset`; `seed` is what was written there
    /// when this run knows it (0: take the header's word for it).
    pub fn check(&self, chunk: &mut [u8], offset: u64, seed: u64) -> Result<(), Mismatch> {
        let len = chunk.len();
        let miss = |what, expected: String, found: String, exp: Option<Vec<u8>>| Mismatch {
            offset,
            len,
            what,
            expected,
            found,
            expected_chunk: exp,
        };
        let rebuilt = |s: u64| {
            let mut v = vec![0u8; len];
            self.build(&mut v, offset, s);
            v
        };
        match self.kind {
            VerifyKind::Null | VerifyKind::Off => return Ok(()),
            VerifyKind::Pattern => {
                let want = rebuilt(0);
                if let Some(i) = (0..len).find(|&i| chunk[i] != want[i]) {
                    return Err(miss(
                        "pattern byte",
                        format!("0x{:02x} at chunk byte {i}", want[i]),
                        format!("0x{:02x}", chunk[i]),
                        Some(want),
                    ));
                }
                return Ok(());
            }
            _ => {}
        }
        unswap_header(chunk, self.header_at);
        let h = &chunk[..HDR];
        let field = |r: std::ops::Range<usize>| {
            let mut b = [0u8; 8];
            b[..r.len()].copy_from_slice(&h[r]);
            u64::from_le_bytes(b)
        };
        let exp = |s| (seed != 0).then(|| rebuilt(s));
        if field(0..4) as u32 != MAGIC {
            let e = exp(seed);
            return Err(miss(
                "header magic",
                format!("0x{MAGIC:08x}"),
                format!("0x{:08x}", field(0..4)),
                e,
            ));
        }
        let mut h0 = [0u8; HDR];
        h0.copy_from_slice(h);
        h0[12..16].fill(0);
        let crc = crc32c::crc32c(&h0);
        if u64::from(crc) != field(12..16) {
            return Err(miss(
                "header crc32c",
                format!("0x{:08x}", field(12..16)),
                format!("0x{crc:08x}"),
                exp(seed),
            ));
        }
        let checks = [
            ("header offset", offset, field(16..24)),
            ("header length", len as u64, field(8..12)),
            ("header verify kind", self.kind as u64, u64::from(h[4])),
            (
                "header seed (stale data?)",
                if seed != 0 { seed } else { field(24..32) },
                field(24..32),
            ),
        ];
        for (what, want, got) in checks {
            if want != got {
                return Err(miss(what, want.to_string(), got.to_string(), exp(seed)));
            }
        }
        if self.kind == VerifyKind::Meta {
            return Ok(());
        }
        let d = digest(self.kind, &chunk[HDR..]);
        if h[32..32 + d.len()] != d[..] {
            return Err(miss(
                self.kind.name(),
                hex(&h[32..32 + d.len()]),
                hex(&d),
                Some(rebuilt(field(24..32))),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "verify_fio_tests.rs"]
mod fio_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(kind: VerifyKind, header_at: usize) -> Layout {
        Layout {
            kind,
            interval: 4096,
            header_at,
            pattern: None,
        }
    }

    #[test]
    fn every_kind_accepts_its_chunk_and_names_a_flipped_byte() {
        for kind in [
            VerifyKind::Crc32c,
            VerifyKind::Crc64,
            VerifyKind::Crc32,
            VerifyKind::Crc16,
            VerifyKind::Crc7,
            VerifyKind::Md5,
            VerifyKind::Sha1,
            VerifyKind::Sha256,
            VerifyKind::Xxhash,
        ] {
            for at in [0, 30, 1000] {
                let l = layout(kind, at);
                let mut c = vec![0u8; 4096];
                l.build(&mut c, 8192, 77);
                let good = c.clone();
                l.check(&mut c, 8192, 77).unwrap();
                let mut bad = good.clone();
                bad[2000] ^= 1;
                let m = l.check(&mut bad, 8192, 77).unwrap_err();
                assert_eq!((m.what, m.offset), (kind.name(), 8192), "{kind:?} at {at}");
                assert_eq!(m.expected_chunk.unwrap(), good);
                // The right data at the wrong place is caught by the header.
                let mut moved = good.clone();
                let m = l.check(&mut moved, 4096, 0).unwrap_err();
                assert_eq!(m.what, "header offset");
                assert_eq!((m.expected.as_str(), m.found.as_str()), ("4096", "8192"));
            }
        }
    }

    #[test]
    fn meta_checks_header_only_and_pattern_every_byte() {
        let l = layout(VerifyKind::Meta, 0);
        let mut c = vec![0u8; 4096];
        l.build(&mut c, 0, 5);
        c[3000] ^= 0xff;
        l.check(&mut c, 0, 5).unwrap();
        c[20] ^= 1; // the header's offset field
        assert_eq!(l.check(&mut c, 0, 5).unwrap_err().what, "header crc32c");
        let p = Layout {
            kind: VerifyKind::Pattern,
            interval: 512,
            header_at: 0,
            pattern: Some(vec![0xde, 0xad]),
        };
        let mut c = vec![0u8; 512];
        p.build(&mut c, 0, 0);
        assert_eq!(&c[..4], &[0xde, 0xad, 0xde, 0xad]);
        c[7] = 0;
        let m = p.check(&mut c, 0, 0).unwrap_err();
        assert_eq!(m.expected, "0xad at chunk byte 7");
        assert_eq!(m.found, "0x00");
    }

    #[test]
    fn a_stale_chunk_is_caught_by_its_seed() {
        let l = layout(VerifyKind::Crc32c, 0);
        let mut c = vec![0u8; 4096];
        l.build(&mut c, 0, 1); // what an earlier pass wrote
        let m = l.check(&mut c, 0, 2).unwrap_err();
        assert_eq!(m.what, "header seed (stale data?)");
    }
}
