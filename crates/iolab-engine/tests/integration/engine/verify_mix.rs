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

/// fio's per-direction runtime (issue 21): a write job's verify reads ran in
/// their own phase after the writes, so each direction's runtime is its
/// phase — the two add up to the window, neither is the whole of it; a mix
/// ran both directions the whole window; with verify_backlog the reads ran
/// in the write phase (and any verify phase) too.
#[test]
fn verify_phases_have_their_own_runtime() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let base = ["bs=4k", "size=1m", "ioengine=psync", "verify=crc32c"];
    let runtimes = |extra: &[&str]| {
        let r = run_ok(config(vec![job(
            "p",
            dir.path(),
            &[&base[..], extra].concat(),
        )]));
        let w = worker(&r, 0, 0);
        assert_eq!((w.dirs[0].ios, w.dirs[1].ios), (256, 256), "{extra:?}");
        let rt = |d: usize| w.dirs[d].runtime_ns.expect("recorded");
        (rt(0), rt(1), w.runtime_ns)
    };
    let (read, write, window) = runtimes(&["rw=randwrite"]);
    assert!(read > 0 && write > 0, "{read} {write}");
    assert!(
        read < window && write < window,
        "{read} {write} of {window}"
    );
    assert!(read + write <= window, "{read} + {write} > {window}");
    // Only the clock readings between the phases are in neither.
    assert!(
        window - (read + write) < window / 10,
        "{read} + {write} of {window}"
    );

    let (read, write, window) = runtimes(&["rw=write", "verify_backlog=16"]);
    assert!(
        window - read < window / 10,
        "backlog reads: {read} of {window}"
    );
    assert!(write <= read, "{write} > {read}");

    let r = run_ok(config(vec![job(
        "p",
        dir.path(),
        &["rw=randrw", "bs=4k", "size=1m"],
    )]));
    let w = worker(&r, 0, 0);
    assert_eq!(
        w.dirs.each_ref().map(|d| d.runtime_ns),
        [Some(w.runtime_ns), Some(w.runtime_ns), Some(0)]
    );
}
