//! Block devices: the signature probe on images, the mount tables as fixed
//! text, and the whole check on real loop devices (root and /dev/loop*;
//! under `CI=true` a test that cannot get them fails, see `system::skip`).

use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use iolab_engine::layout::mounts::{busy_in_tables, parse_mountinfo, DevNode};
use iolab_engine::layout::signature::{
    parse_blkid_export, probe_bytes, probe_file, HEAD_BYTES, TAIL_BYTES,
};
use iolab_engine::layout::{self, FileKind};
use iolab_engine::EngineError;

use super::common::{job, prepare, read, MIB};
use super::system::{sh, skip, LoopDev, Mount, ReadOnly, Swap};

/// Probe an 8 MiB zeroed image with `magic` written at `offset`.
fn probe_with(offset: u64, magic: &[u8]) -> Option<String> {
    let img = tempfile::tempfile().unwrap();
    img.set_len(8 * MIB).unwrap();
    img.write_all_at(magic, offset).unwrap();
    probe_file(&img, 8 * MIB)
        .unwrap()
        .map(|s| format!("{} @{}", s.what, s.offset))
}

#[test]
fn magic_numbers_of_common_formats_are_found() {
    let end = 8 * MIB;
    let md = [0xfc, 0x4e, 0x2b, 0xa9];
    let cases: &[(u64, &[u8], &str)] = &[
        (0, b"XFSB", "xfs filesystem @0"),
        (65_600, b"_BHRfS_M", "btrfs filesystem @65600"),
        (0, b"LUKS\xba\xbe", "LUKS encrypted volume @0"),
        (512, b"EFI PART", "GPT partition table @512"),
        (512, b"LABELONE", "LVM physical volume @512"),
        (4096, &md, "md RAID member (1.2 superblock) @4096"),
        (1024, &[0x10, 0x20, 0xf5, 0xf2], "f2fs filesystem @1024"),
        (3, b"NTFS    ", "NTFS filesystem @3"),
        (82, b"FAT32   ", "FAT32 filesystem @82"),
        (32_769, b"CD001", "ISO 9660 filesystem @32769"),
        (4086, b"SWAPSPACE2", "swap area @4086"),
        (
            128 * 1024 + 5 * 1024,
            &0x00ba_b10c_u64.to_le_bytes(),
            "ZFS pool member @136192",
        ),
        (
            end - 512,
            b"EFI PART",
            "GPT partition table (backup header) @8388096",
        ),
        (
            (end & !0xffff) - 0x10000,
            &md,
            "md RAID member (0.90 superblock) @8323072",
        ),
    ];
    for (offset, magic, want) in cases {
        assert_eq!(probe_with(*offset, magic).as_deref(), Some(*want));
    }
}

#[test]
fn ext_and_mbr_need_plausible_fields_not_just_two_bytes() {
    let mut head = vec![0u8; HEAD_BYTES as usize];
    head[1080..1082].copy_from_slice(&[0x53, 0xEF]);
    head[1024 + 76] = 9; // s_rev_level 9: not an ext superblock
    assert_eq!(probe_bytes(&head, &[], 0), None);
    head[1024 + 76] = 1;
    assert_eq!(
        probe_bytes(&head, &[], 0).unwrap().what,
        "ext2/3/4 filesystem"
    );
    let mut head = vec![0u8; HEAD_BYTES as usize];
    head[510..512].copy_from_slice(&[0x55, 0xAA]);
    head[446] = 0x17; // not a boot flag
    head[450] = 0x83;
    assert_eq!(probe_bytes(&head, &[], 0), None);
    head[446] = 0x80;
    assert_eq!(
        probe_bytes(&head, &[], 0).unwrap().what,
        "DOS/MBR partition table"
    );
}

#[test]
fn random_and_zeroed_devices_carry_no_signature() {
    let mut rng = fastrand::Rng::with_seed(7);
    let dev_bytes = 64 * MIB;
    for _ in 0..200 {
        let mut head = vec![0u8; HEAD_BYTES as usize];
        let mut tail = vec![0u8; TAIL_BYTES as usize];
        rng.fill(&mut head);
        rng.fill(&mut tail);
        assert_eq!(probe_bytes(&head, &tail, dev_bytes), None);
    }
    assert_eq!(
        probe_bytes(
            &vec![0; HEAD_BYTES as usize],
            &vec![0; TAIL_BYTES as usize],
            dev_bytes
        ),
        None
    );
}

#[test]
fn real_mkfs_and_mkswap_images_are_recognised() {
    for (tool, args, want) in [
        ("mkfs.ext4", &["-q", "-F"][..], "ext2/3/4 filesystem"),
        ("mkswap", &[][..], "swap area"),
    ] {
        let img = tempfile::NamedTempFile::new().unwrap();
        img.as_file().set_len(16 * MIB).unwrap();
        let mut all: Vec<&str> = args.to_vec();
        all.push(img.path().to_str().unwrap());
        if let Err(e) = sh(tool, &all) {
            skip(&e);
            continue;
        }
        assert_eq!(
            probe_file(img.as_file(), 16 * MIB).unwrap().unwrap().what,
            want
        );
    }
}

#[test]
fn blkid_export_output_names_the_signature() {
    assert_eq!(
        parse_blkid_export("DEVNAME=/dev/sdb\nUUID=x\nTYPE=ext4\nUSAGE=filesystem\n").as_deref(),
        Some("ext4")
    );
    assert_eq!(
        parse_blkid_export("DEVNAME=/dev/sdb\nPTUUID=x\nPTTYPE=gpt\n").as_deref(),
        Some("gpt partition table")
    );
    assert_eq!(parse_blkid_export(""), None);
}

const MOUNTINFO: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
100 27 8:17 / /mnt/my\\040data rw,relatime shared:5 master:2 - xfs /dev/sdb1 rw
101 27 0:50 / /dev/shm rw - tmpfs tmpfs rw,size=1024k
";

fn sdb() -> Vec<DevNode> {
    let node = |label: &str, minor, path: &str| DevNode {
        label: label.into(),
        major: 8,
        minor,
        path: PathBuf::from(path),
    };
    vec![
        node("the device", 16, "/dev/sdb"),
        node("its partition sdb1", 17, "/dev/sdb1"),
        node("its partition sdb2", 18, "/dev/sdb2"),
    ]
}

#[test]
fn mountinfo_is_parsed_with_optional_fields_and_escapes() {
    let m = parse_mountinfo(MOUNTINFO);
    assert_eq!(m.len(), 3);
    assert_eq!(
        (m[1].major, m[1].minor, m[1].mount_point.as_str()),
        (8, 17, "/mnt/my data")
    );
    assert_eq!(
        (m[1].fstype.as_str(), m[1].source.as_str()),
        ("xfs", "/dev/sdb1")
    );
    assert_eq!(m[2].fstype, "tmpfs");
}

#[test]
fn a_device_is_busy_when_it_or_a_partition_is_mounted_or_swap() {
    let same = |p: &Path| p.to_path_buf();
    let why = busy_in_tables(&sdb(), MOUNTINFO, "", "", &same);
    assert_eq!(
        why.as_deref(),
        Some("its partition sdb1 is mounted at /mnt/my data (xfs)")
    );
    let whole = "30 27 8:16 / /data rw - ext4 /dev/sdb rw\n";
    assert_eq!(
        busy_in_tables(&sdb(), whole, "", "", &same).as_deref(),
        Some("the device is mounted at /data (ext4)")
    );
    // Only /proc/mounts knows it, under a symlinked name.
    let canon = |p: &Path| {
        if p == Path::new("/dev/disk/by-id/disk1") {
            PathBuf::from("/dev/sdb")
        } else {
            p.to_path_buf()
        }
    };
    let mounts = "/dev/disk/by-id/disk1 /srv ext4 rw 0 0\nproc /proc proc rw 0 0\n";
    assert_eq!(
        busy_in_tables(&sdb(), "", mounts, "", &canon).as_deref(),
        Some("the device is mounted at /srv")
    );
    let swaps = "Filename\tType\tSize\tUsed\tPriority\n/dev/sdb2 partition 1048572 0 -2\n";
    assert_eq!(
        busy_in_tables(&sdb(), "", "", swaps, &same).as_deref(),
        Some("its partition sdb2 is in use as swap")
    );
    assert_eq!(
        busy_in_tables(
            &sdb(),
            "101 27 0:50 / /x rw - tmpfs tmpfs rw\n",
            "",
            "",
            &same
        ),
        None
    );
}

#[test]
fn loop_device_read_write_refusals_and_signature() {
    let Some(lo) = LoopDev::new(16 * MIB) else {
        return;
    };
    let dev = lo.dev.as_path();
    let reader = job("r", &[dev], 100, None);
    let l = prepare(std::slice::from_ref(&reader), false).unwrap();
    let f = &l.files[0];
    assert_eq!(
        (f.kind, f.size_bytes, f.created_by_iolab),
        (FileKind::BlockDevice, 16 * MIB, false)
    );
    assert_eq!(
        f.direct_align_bytes,
        Some(512),
        "loop devices have 512-byte logical blocks by default"
    );
    assert_eq!(
        layout::regions_for_worker(&l, &reader, 0).unwrap()[0].len,
        16 * MIB
    );

    let writer = job("w", &[dev], 0, Some(MIB));
    let msg = prepare(std::slice::from_ref(&writer), false)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("block device") && msg.contains("--allow-overwrite"),
        "{msg}"
    );
    assert!(
        read(lo.image.path()).iter().all(|&b| b == 0),
        "refused device was written"
    );
    let l = prepare(std::slice::from_ref(&writer), true).unwrap();
    assert!(l.notes[0].contains("no signature found"), "{:?}", l.notes);

    let msg = prepare(&[job("big", &[dev], 100, Some(32 * MIB))], false)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("is a block device of 16777216 bytes, smaller than offset+size = 33554432"),
        "{msg}"
    );

    if let Err(e) = sh("mkfs.ext4", &["-q", "-F", dev.to_str().unwrap()]) {
        skip(&format!("the rest: {e}"));
        return;
    }
    let err = prepare(std::slice::from_ref(&writer), true).unwrap_err();
    assert!(matches!(err, EngineError::Refused { .. }));
    assert!(
        err.to_string()
            .contains("it carries a signature (ext2/3/4 filesystem, at byte 1080)"),
        "{err}"
    );
    assert!(
        prepare(&[reader], false).is_ok(),
        "reading a device with a filesystem is fine"
    );
}

#[test]
fn mounted_loop_device_is_refused_even_with_allow_overwrite() {
    let Some(lo) = LoopDev::new(16 * MIB) else {
        return;
    };
    let dev = lo.dev.to_str().unwrap();
    if let Err(e) = sh("mkfs.ext4", &["-q", "-F", dev]) {
        skip(&e);
        return;
    }
    let Some(m) = Mount::device(&lo.dev) else {
        return;
    };
    let msg = prepare(&[job("w", &[&lo.dev], 0, Some(MIB))], true)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains(&format!("the device is mounted at {}", m.path().display())),
        "{msg}"
    );
}

#[test]
fn loop_device_in_use_as_swap_is_refused() {
    let Some(lo) = LoopDev::new(16 * MIB) else {
        return;
    };
    let Some(_swap) = Swap::on(&lo) else {
        return;
    };
    let msg = prepare(&[job("w", &[&lo.dev], 0, Some(MIB))], true)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("the device is in use as swap"), "{msg}");
}

/// An exclusive claim on the device, as a mount or another program holds.
fn claim(lo: &LoopDev) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&lo.dev)
        .unwrap()
}

/// Fixes a flaky failure of the last assertion: another test thread that
/// forked while the claim was open kept a copy of it in its child until
/// the exec, so the claim outlived `drop`. `LoopDev` now keeps every
/// other test from forking while a device test runs (see `system`).
#[test]
fn loop_device_claimed_exclusively_elsewhere_is_refused() {
    let Some(lo) = LoopDev::new(16 * MIB) else {
        return;
    };
    // An exclusive claim shows in no table in /proc; only the kernel knows.
    let claim = claim(&lo);
    let msg = prepare(&[job("w", &[&lo.dev], 0, Some(MIB))], true)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("the kernel reports it busy"), "{msg}");
    drop(claim);
    if let Err(e) = prepare(&[job("w", &[&lo.dev], 0, Some(MIB))], true) {
        panic!("the claim is gone, the device is free: {e}");
    }
}

#[test]
fn a_claim_that_ends_at_once_is_not_a_user() {
    let Some(lo) = LoopDev::new(16 * MIB) else {
        return;
    };
    // As a forked child holds one until it execs: released within ~10 ms,
    // well inside the check's half second of retries.
    let claim = claim(&lo);
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(10));
        drop(claim);
    });
    let res = prepare(&[job("w", &[&lo.dev], 0, Some(MIB))], true);
    release.join().unwrap();
    assert!(res.is_ok(), "{res:?}");
}

#[test]
fn read_only_loop_device_is_reported_when_written() {
    let Some(lo) = LoopDev::new(16 * MIB) else {
        return;
    };
    let Some(_ro) = ReadOnly::set(&lo) else {
        return;
    };
    let msg = prepare(&[job("w", &[&lo.dev], 0, Some(MIB))], true)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("is a read-only device"), "{msg}");
    let read = prepare(&[job("r", &[&lo.dev], 100, Some(MIB))], false);
    assert!(read.is_ok(), "{read:?}");
}
