//! verify with a read/write mix, as fio does it (spdk's vhost integrity
//! jobs: `verify=md5` with `rw=randrw`): the mix's reads are not checked
//! (the file holds iolab's fill there, not verified chunks), every block
//! the mix wrote is read back and checked after the writes, and a block
//! changed under iolab's feet is still found.

use iolab_engine::EngineError;

use crate::engine::common::*;

#[test]
fn a_mix_verifies_what_it_wrote_and_only_that() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let opts = [
        "rw=randrw",
        "bs=4k",
        "size=1m",
        "ioengine=io_uring",
        "iodepth=8",
        "verify=md5",
    ];
    let r = run_ok(config(vec![job("m", dir.path(), &opts)]));
    let w = worker(&r, 0, 0);
    let (reads, writes) = (w.dirs[0].ios, w.dirs[1].ios);
    // One pass: 256 blocks, each read or written once by the mix; then each
    // written block read back once: reads = (256 - writes) + writes.
    assert!(writes > 60 && writes < 196, "{writes} writes");
    assert_eq!(reads, 256, "{reads} reads for {writes} writes");
    // The same mix with verify_backlog checks as it goes, with the same counts.
    let backlog = [&opts[..], &["verify_backlog=16"]].concat();
    let r = run_ok(config(vec![job("m", dir.path(), &backlog)]));
    assert_eq!(worker(&r, 0, 0).dirs[0].ios, 256);
}

#[test]
fn a_mix_finds_a_block_changed_before_its_verify_read() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    // Write everything once, with verified chunks, then a mix with
    // verify_only re-reads it; flip one block in between.
    let write = ["rw=write", "bs=4k", "size=256k", "verify=crc32c"];
    run_ok(config(vec![job("m", dir.path(), &write)]));
    let path = dir.path().join("m.0.0");
    let mut f = std::fs::read(&path).unwrap();
    f[10 * 4096 + 100] ^= 1;
    std::fs::write(&path, &f).unwrap();
    let only = [
        "rw=randrw",
        "bs=4k",
        "size=256k",
        "verify=crc32c",
        "verify_only",
    ];
    let o = run_outcome(config(vec![job("m", dir.path(), &only)]));
    match o.error {
        Some(EngineError::Verify {
            failures, offset, ..
        }) => {
            assert_eq!((failures, offset), (1, 10 * 4096));
        }
        other => panic!("expected one verify failure, got {other:?}"),
    }
}
