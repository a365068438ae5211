//! Trims on real files: counts in the trim slot, holes that read back
//! zero, and fio's verify-trim (a share of the verified blocks trimmed at
//! the backlog points, then read back as zeroes).

use std::os::unix::fs::MetadataExt;

use crate::engine::common::*;

#[test]
fn randtrim_counts_in_the_trim_slot_and_leaves_holes() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    for engine in ["psync", "io_uring", "libaio", "vsync", "posixaio"] {
        let write = ["rw=write", "bs=64k", "size=1m"];
        run_ok(config(vec![job("t", dir.path(), &write)]));
        let path = dir.path().join("t.0.0");
        let engine_opt = format!("ioengine={engine}");
        let opts = ["rw=randtrim", "bs=16k", "size=1m", "iodepth=4", &engine_opt];
        let r = run_ok(config(vec![job("t", dir.path(), &opts)]));
        let w = worker(&r, 0, 0);
        assert_eq!((w.dirs[2].ios, w.dirs[2].bytes), (64, 1 << 20), "{engine}");
        assert_eq!((w.dirs[0].ios, w.dirs[1].ios), (0, 0), "{engine}");
        assert_eq!(w.dirs[2].lat_ns.count(), 64, "{engine}: every trim timed");
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), 1 << 20, "{engine}");
        assert!(
            data.iter().all(|&b| b == 0),
            "{engine}: trimmed bytes read zero"
        );
        let meta = std::fs::metadata(&path).unwrap();
        assert!(
            meta.blocks() * 512 <= 16 << 10,
            "{engine}: {} bytes still allocated",
            meta.blocks() * 512
        );
    }
}

#[test]
fn verify_trim_trims_a_share_of_the_written_blocks_and_checks_they_read_zero() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let opts = [
        "rw=randwrite",
        "bs=4k",
        "size=1m",
        "verify=crc32c",
        "trim_percentage=50",
        "trim_backlog=16",
    ];
    let r = run_ok(config(vec![job("v", dir.path(), &opts)]));
    let w = worker(&r, 0, 0);
    let (writes, trims, reads) = (w.dirs[1].ios, w.dirs[2].ios, w.dirs[0].ios);
    assert_eq!(writes, 256);
    // About half of the 256 blocks chosen; each read back (zeroes or data).
    assert!(trims > 90 && trims < 166, "{trims} trims");
    assert_eq!(reads, 256, "every block verified, trimmed ones as zeroes");
    let data = std::fs::read(dir.path().join("v.0.0")).unwrap();
    let zero_blocks = data
        .chunks(4096)
        .filter(|c| c.iter().all(|&b| b == 0))
        .count();
    assert_eq!(
        zero_blocks as u64, trims,
        "each trim left one block of zeroes"
    );
}

#[test]
fn a_zbd_trim_resets_its_zone_without_a_discard() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    run_ok(config(vec![job(
        "z",
        dir.path(),
        &["rw=write", "bs=64k", "size=256k"],
    )]));
    let before = std::fs::read(dir.path().join("z.0.0")).unwrap();
    let opts = [
        "rw=randtrim",
        "zonemode=zbd",
        "zonesize=64k",
        "bs=64k",
        "size=256k",
    ];
    let r = run_ok(config(vec![job("z", dir.path(), &opts)]));
    let w = worker(&r, 0, 0);
    assert_eq!((w.dirs[2].ios, w.dirs[2].bytes), (4, 256 << 10));
    // fio's emulation over a regular file moves the write pointer only.
    assert_eq!(std::fs::read(dir.path().join("z.0.0")).unwrap(), before);
}
