//! fio's zone modes and fill_device on real files (psync): what the jobs
//! moved, and what ended up in the file.

use iolab_core::job::IoDir;

use super::common::*;

const K: u64 = 1024;

#[test]
fn zbd_reads_only_what_an_earlier_job_wrote() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let zones = [
        "filename=z.img",
        "size=256k",
        "zonemode=zbd",
        "zonesize=64k",
        "zonecapacity=32k",
    ];
    let w = job("w", dir.path(), &[&zones[..], &["rw=write"]].concat());
    let r = job(
        "r",
        dir.path(),
        &[&zones[..], &["rw=read", "stonewall"]].concat(),
    );
    let res = run_ok(config(vec![w, r]));
    // Four zones of which 32 KiB each are writable: the sequential write
    // pass fills the capacities and ends; the reader (sharing the write
    // pointers) reads exactly those bytes and nothing past a pointer.
    let wrote = &worker(&res, 0, 0).dirs[IoDir::Write as usize];
    let read = &worker(&res, 1, 0).dirs[IoDir::Read as usize];
    assert_eq!(wrote.bytes, 4 * 32 * K);
    assert_eq!(read.bytes, 4 * 32 * K);
    assert_eq!((wrote.errors, read.errors), (0, 0));
}

#[test]
fn zbd_on_a_fresh_file_reads_nothing() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let r = job(
        "r",
        dir.path(),
        &[
            "filename=e.img",
            "size=256k",
            "zonemode=zbd",
            "zonesize=64k",
            "rw=randread",
            "time_based",
            "runtime=5",
        ],
    );
    // Emulated zones start empty: no data below any write pointer, so the
    // job ends at once (as fio's does) instead of reading for 5 s.
    let res = run_ok(config(vec![r]));
    assert_eq!(worker(&res, 0, 0).dirs[IoDir::Read as usize].ios, 0);
}

#[test]
fn strided_reads_cover_the_zones_only() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let r = job(
        "s",
        dir.path(),
        &[
            "filename=s.img",
            "size=1m",
            "zonesize=64k",
            "zoneskip=192k",
            "bs=64k",
            "rw=read",
        ],
    );
    let res = run_ok(config(vec![r]));
    // 1 MiB of reads over 4 zones of 64 KiB, 256 KiB apart: each zone 4 times.
    let read = &worker(&res, 0, 0).dirs[IoDir::Read as usize];
    assert_eq!((read.ios, read.bytes), (16, 1024 * K));
}

#[test]
fn fill_device_with_size_writes_size_into_an_unfilled_file() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let w = job(
        "f",
        dir.path(),
        &[
            "filename=f.img",
            "size=512k",
            "bs=64k",
            "rw=write",
            "fill_device=1",
        ],
    );
    let res = run_ok(config(vec![w]));
    assert_eq!(
        worker(&res, 0, 0).dirs[IoDir::Write as usize].bytes,
        512 * K
    );
    // The file holds what the job wrote (layout created it empty).
    assert_eq!(
        std::fs::metadata(dir.path().join("f.img")).unwrap().len(),
        512 * K
    );
}
