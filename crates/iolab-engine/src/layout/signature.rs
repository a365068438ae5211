//! Does a block device carry a filesystem, partition table or volume
//! signature? Writing to such a device destroys what is on it, so iolab
//! refuses even with `--allow-overwrite` (the user wipes it first).
//!
//! Two probes, both run: `blkid -p` when it is installed (it knows hundreds
//! of formats), and a small built-in table of the common magic numbers so
//! the check still works without util-linux. The built-in probe is written
//! by hand because no maintained Rust crate does it (libblkid bindings
//! need the C library at build time). It reads the first 256 KiB and the
//! last 128 KiB of the device; [`probe_bytes`] is pure, so it is tested on
//! images.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;

/// Bytes read from the start of a device: covers ZFS's uberblock ring
/// (128–256 KiB), the deepest of the built-in signatures.
pub const HEAD_BYTES: u64 = 256 * 1024;
/// Bytes read from the end: covers md RAID 0.90/1.0 superblocks and the
/// backup GPT header.
pub const TAIL_BYTES: u64 = 128 * 1024;

/// A signature found: what it is and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub what: String,
    /// Byte offset on the device (for the message).
    pub offset: u64,
}

/// `(what, offset, magic)`: a signature is there when the bytes at
/// `offset` equal `magic`. Offsets from each format's on-disk spec.
const MAGICS: &[(&str, u64, &[u8])] = &[
    ("xfs filesystem", 0, b"XFSB"),
    ("btrfs filesystem", 65_600, b"_BHRfS_M"),
    ("LUKS encrypted volume", 0, b"LUKS\xba\xbe"),
    (
        "LUKS2 encrypted volume (secondary header)",
        16_384,
        b"SKUL\xba\xbe",
    ),
    ("GPT partition table", 512, b"EFI PART"),
    ("GPT partition table (4 KiB sectors)", 4096, b"EFI PART"),
    ("LVM physical volume", 512, b"LABELONE"),
    ("LVM physical volume", 0, b"LABELONE"),
    ("LVM physical volume", 1024, b"LABELONE"),
    ("LVM physical volume", 1536, b"LABELONE"),
    ("swap area", 4086, b"SWAPSPACE2"),
    ("swap area", 4086, b"SWAP-SPACE"),
    ("swap area (16 KiB pages)", 16_374, b"SWAPSPACE2"),
    ("swap area (64 KiB pages)", 65_526, b"SWAPSPACE2"),
    (
        "md RAID member (1.1 superblock)",
        0,
        &[0xfc, 0x4e, 0x2b, 0xa9],
    ),
    (
        "md RAID member (1.2 superblock)",
        4096,
        &[0xfc, 0x4e, 0x2b, 0xa9],
    ),
    ("f2fs filesystem", 1024, &[0x10, 0x20, 0xf5, 0xf2]),
    ("NTFS filesystem", 3, b"NTFS    "),
    ("FAT filesystem", 54, b"FAT12   "),
    ("FAT filesystem", 54, b"FAT16   "),
    ("FAT32 filesystem", 82, b"FAT32   "),
    ("exFAT filesystem", 3, b"EXFAT   "),
    ("ISO 9660 filesystem", 32_769, b"CD001"),
    (
        "bcache device",
        4096 + 24,
        &[
            0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba,
            0x6d, 0x81,
        ],
    ),
    ("Ceph BlueStore device", 0, b"bluestore block device"),
];

/// Look for a signature in the first bytes of a device (`head`, from
/// offset 0) and its last bytes (`tail`, ending at `device_bytes`).
pub fn probe_bytes(head: &[u8], tail: &[u8], device_bytes: u64) -> Option<Signature> {
    let at =
        |off: u64, magic: &[u8]| head.get(off as usize..off as usize + magic.len()) == Some(magic);
    if let Some(&(what, offset, _)) = MAGICS.iter().find(|(_, off, magic)| at(*off, magic)) {
        return Some(Signature {
            what: what.to_string(),
            offset,
        });
    }
    ext_superblock(head)
        .or_else(|| mbr(head))
        .or_else(|| zfs_label(head))
        .or_else(|| tail_signature(tail, device_bytes))
}

fn le16(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(off..off + 2)?.try_into().ok()?))
}

fn le32(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

/// ext2/3/4: magic 0xEF53 at 1024 + 56. Two bytes match random data once in
/// 65 536 devices, so the revision level (≤ 1) and block size (≤ 64 KiB)
/// fields must be plausible too, as blkid checks.
fn ext_superblock(head: &[u8]) -> Option<Signature> {
    let sb = 1024;
    let plausible =
        le16(head, sb + 56)? == 0xEF53 && le32(head, sb + 76)? <= 1 && le32(head, sb + 24)? <= 6;
    plausible.then(|| Signature {
        what: "ext2/3/4 filesystem".into(),
        offset: (sb + 56) as u64,
    })
}

/// DOS/MBR partition table: 0x55AA at 510, every entry's boot flag 0x00 or
/// 0x80 and at least one entry with a partition type (blkid's rules, so a
/// random sector is not taken for a table).
fn mbr(head: &[u8]) -> Option<Signature> {
    if head.get(510..512)? != [0x55, 0xAA] {
        return None;
    }
    let entries: Vec<&[u8]> = (0..4)
        .filter_map(|i| head.get(446 + 16 * i..462 + 16 * i))
        .collect();
    let flags_ok = entries.iter().all(|e| e[0] == 0 || e[0] == 0x80);
    let typed = entries.iter().any(|e| e[4] != 0);
    (flags_ok && typed).then(|| Signature {
        what: "DOS/MBR partition table".into(),
        offset: 510,
    })
}

/// ZFS: the uberblock magic 0x00bab10c (either byte order) in the
/// uberblock ring of label 0, 128 KiB in, one slot per KiB.
fn zfs_label(head: &[u8]) -> Option<Signature> {
    const MAGIC: u64 = 0x00ba_b10c;
    (0..128usize)
        .map(|slot| 128 * 1024 + slot * 1024)
        .find_map(|off| {
            let word: [u8; 8] = head.get(off..off + 8)?.try_into().ok()?;
            let hit = u64::from_le_bytes(word) == MAGIC || u64::from_be_bytes(word) == MAGIC;
            hit.then(|| Signature {
                what: "ZFS pool member".into(),
                offset: off as u64,
            })
        })
}

/// Signatures kept at the end of a device: the backup GPT header in the
/// last sector, md RAID 0.90 (64 KiB-aligned, 64 KiB from the end) and
/// 1.0 (8 KiB from the end, 4 KiB-aligned) superblocks.
fn tail_signature(tail: &[u8], device_bytes: u64) -> Option<Signature> {
    let tail_start = device_bytes.checked_sub(tail.len() as u64)?;
    let at = |abs: u64, magic: &[u8]| {
        let rel = abs.checked_sub(tail_start)? as usize;
        (tail.get(rel..rel + magic.len())? == magic).then_some(abs)
    };
    let md = [0xfc, 0x4e, 0x2b, 0xa9];
    let candidates: [(&str, Option<u64>, &[u8]); 4] = [
        (
            "GPT partition table (backup header)",
            device_bytes.checked_sub(512),
            b"EFI PART",
        ),
        (
            "GPT partition table (backup header, 4 KiB sectors)",
            device_bytes.checked_sub(4096),
            b"EFI PART",
        ),
        (
            "md RAID member (0.90 superblock)",
            (device_bytes & !0xffff).checked_sub(0x10000),
            &md,
        ),
        (
            "md RAID member (1.0 superblock)",
            device_bytes.checked_sub(8192).map(|o| o & !4095),
            &md,
        ),
    ];
    candidates.iter().find_map(|(what, off, magic)| {
        let offset = at((*off)?, magic)?;
        Some(Signature {
            what: what.to_string(),
            offset,
        })
    })
}

/// Read the head and tail of an open device (or image) and probe them.
pub fn probe_file(file: &File, device_bytes: u64) -> std::io::Result<Option<Signature>> {
    let head = read_at(file, 0, HEAD_BYTES.min(device_bytes))?;
    let tail_len = TAIL_BYTES.min(device_bytes);
    let tail = read_at(file, device_bytes - tail_len, tail_len)?;
    Ok(probe_bytes(&head, &tail, device_bytes))
}

fn read_at(file: &File, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len as usize];
    file.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

/// Ask `blkid -p` (low-level probe, no cache): `Some("ext4")`,
/// `Some("gpt partition table")`, or `None` when it finds nothing or is
/// not installed (exit status 2 means "nothing found").
pub fn probe_blkid(path: &Path) -> Option<String> {
    let out = Command::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    parse_blkid_export(&String::from_utf8_lossy(&out.stdout))
}

/// The signature named by `blkid -o export` output: `TYPE=ext4` gives
/// "ext4", `PTTYPE=gpt` gives "gpt partition table".
pub fn parse_blkid_export(text: &str) -> Option<String> {
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::to_string)
    };
    value("TYPE=").or_else(|| value("PTTYPE=").map(|t| format!("{t} partition table")))
}
