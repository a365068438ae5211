//! Every file engine (psync, io_uring, libaio, sync, pvsync, pvsync2, mmap, vsync,
//! posixaio) on real files in a temporary directory (on the same
//! filesystem as the target dir's tmp; O_DIRECT is used where it works).

use std::os::unix::fs::FileExt;
use std::path::Path;

use iolab_core::gen::worker_seed;
use iolab_core::job::PreparedJob;
use iolab_engine::layout::direct_supported;
use iolab_engine::worker::buffers::{fill_incompressible, BUF_ALIGN};
use iolab_engine::{EngineError, Run};

use super::common::*;

const ENGINES: [&str; 9] = [
    "ioengine=psync",
    "ioengine=io_uring",
    "ioengine=libaio",
    "ioengine=sync",
    "ioengine=pvsync",
    "ioengine=pvsync2",
    "ioengine=mmap",
    "ioengine=vsync",
    "ioengine=posixaio",
];

/// "direct=1" where the filesystem supports O_DIRECT (tmpfs does not).
fn direct(dir: &Path) -> &'static str {
    if direct_supported(dir) {
        return "direct=1";
    }
    eprintln!(
        "O_DIRECT not supported in {}: testing buffered I/O only",
        dir.display()
    );
    "direct=0"
}

#[test]
fn size_based_read_moves_exactly_size() {
    let _serial = serial();
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let j = job(
            "r",
            dir.path(),
            &[
                engine,
                "rw=randread",
                "size=8m",
                "iodepth=8",
                direct(dir.path()),
            ],
        );
        let r = run_ok(config(vec![j]));
        let w = worker(&r, 0, 0);
        assert_eq!(
            (w.dirs[0].ios, w.dirs[0].bytes),
            (2048, 8 * MIB),
            "{engine:?}"
        );
        assert_eq!(w.dirs[0].lat_ns.count(), 2048);
        if r.jobs[0].job.ioengine.synchronous() {
            assert_eq!(
                w.dirs[0].slat_ns.count(),
                0,
                "{engine}: a synchronous engine has no submission stage"
            );
        } else {
            assert_eq!(w.dirs[0].slat_ns.count(), 2048);
        }
        assert!(!r.layout_notes.is_empty());
    }
}

/// The bytes slot `slot` of worker 0 writes: its buffer is a slice of the
/// worker's seeded incompressible stream.
fn slot_buffers(j: &PreparedJob) -> Vec<Vec<u8>> {
    let slot_bytes = (j.bs[1].max() as usize).next_multiple_of(BUF_ALIGN);
    let mut all = vec![0u8; slot_bytes * j.iodepth as usize];
    fill_incompressible(worker_seed(j, 0), &mut all);
    all.chunks(slot_bytes)
        .map(|c| c[..j.bs[1].max() as usize].to_vec())
        .collect()
}

#[test]
fn written_data_reaches_the_file() {
    let _serial = serial();
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let j = job(
            "w",
            dir.path(),
            &[
                engine,
                "rw=randwrite",
                "size=2m",
                "iodepth=4",
                // Unstamped, so each block is exactly a slot's buffer.
                "scramble_buffers=0",
                direct(dir.path()),
            ],
        );
        let path = dir.path().join("w.0.0");
        let cfg = config(vec![j.clone()]);
        let run = Run::prepare(cfg).unwrap();
        let before = std::fs::read(&path).unwrap();
        let mut run = run;
        run.start(None).unwrap();
        let r = run.wait().unwrap();
        assert_eq!(worker(&r, 0, 0).dirs[1].bytes, 2 * MIB);
        let after = std::fs::read(&path).unwrap();
        assert_eq!(after.len(), before.len());
        let bufs = slot_buffers(&j);
        for (i, block) in after.chunks(4096).enumerate() {
            assert!(
                bufs.iter().any(|b| b == block),
                "{engine:?}: block {i} is not a worker buffer"
            );
            assert_ne!(
                block,
                &before[i * 4096..(i + 1) * 4096],
                "{engine:?}: block {i} unchanged"
            );
        }
        // Read it back through the engine too.
        let rj = job(
            "w",
            dir.path(),
            &[engine, "rw=read", "size=2m", direct(dir.path())],
        );
        let rr = run_ok(config(vec![rj]));
        assert_eq!(worker(&rr, 0, 0).dirs[0].bytes, 2 * MIB);
    }
}

#[test]
fn fsync_every_n_writes_and_end_fsync() {
    let _serial = serial();
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let j = job(
            "s",
            dir.path(),
            &[
                engine,
                "rw=write",
                "size=1m",
                "iodepth=4",
                "fsync=32",
                "end_fsync=1",
            ],
        );
        let r = run_ok(config(vec![j]));
        let w = worker(&r, 0, 0);
        assert_eq!(w.dirs[1].ios, 256);
        assert_eq!(
            w.syncs,
            256 / 32 + 1,
            "{engine:?}: 8 periodic + 1 end_fsync"
        );
        assert_eq!(w.sync_lat_ns.count(), w.syncs);
    }
}

#[test]
fn reading_past_a_truncated_file_is_an_io_error_with_partial_result() {
    let _serial = serial();
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let j = job("t", dir.path(), &[engine, "rw=read", "size=4m"]);
        let mut run = Run::prepare(config(vec![j])).unwrap();
        // The file shrinks under the run to 1 MiB + 1000 bytes: the read at
        // 1 MiB comes back short (1000 bytes), its rest is issued again
        // (fio's rule) and finds end of file: 0 bytes, an error.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("t.0.0"))
            .unwrap();
        f.set_len(MIB + 1000).unwrap();
        run.start(None).unwrap();
        let o = run.finish().unwrap();
        match o.error {
            Some(EngineError::IoFailed {
                offset, len, dir, ..
            }) => {
                assert_eq!((offset, len, dir), (MIB, 4096, "read"), "{engine:?}");
            }
            other => panic!("{engine:?}: expected IoFailed, got {other:?}"),
        }
        let w = worker(&o.result, 0, 0);
        assert_eq!(
            (w.dirs[0].ios, w.dirs[0].errors),
            (256, 1),
            "{engine:?}: the work before the error is kept"
        );
        let _ = f.write_at(&[0], 0);
    }
}

/// Pages of `path` in the page cache (mincore over a mapping of it).
fn resident_pages(path: &Path) -> usize {
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    let page = 4096;
    let mut vec = vec![0u8; len.div_ceil(page)];
    // Safety: a private read-only mapping of the whole file, unmapped below;
    // `vec` has one byte per page as mincore needs.
    unsafe {
        use std::os::fd::AsRawFd;
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        assert_eq!(libc::mincore(p, len, vec.as_mut_ptr()), 0);
        libc::munmap(p, len);
    }
    vec.iter().filter(|&&b| b & 1 == 1).count()
}

/// invalidate=1 (fio's default) drops the file's cached pages when a worker
/// opens it; invalidate=0 keeps them.
#[test]
fn invalidate_drops_the_files_cached_pages() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.0.0");
    let read = |inv: &str| {
        let j = job(
            "c",
            dir.path(),
            &["rw=read", "size=4m", "number_ios=1", inv],
        );
        run_ok(config(vec![j]));
    };
    read("invalidate=0"); // lays the file out
    std::fs::read(&path).unwrap(); // every page cached
    read("invalidate=0");
    assert_eq!(resident_pages(&path), 1024, "invalidate=0 keeps the cache");
    read("invalidate=1");
    // One 4 KiB read after the drop (plus the kernel's readahead around it).
    let left = resident_pages(&path);
    assert!(left < 512, "{left} of 1024 pages still cached");
}

/// Writes 2 MiB of 4 KiB blocks with `engine` (its options first) and
/// verify=crc32c: exact counts, every block read back and checked; then one
/// changed byte in block 100 fails verify when the engine reads it again.
fn verified_write_catches_a_changed_byte(engine: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let base = ["bs=4k", "size=2m", "verify=crc32c"];
    let write = [engine, &base[..], &["rw=write"]].concat();
    let r = run_ok(config(vec![job("v", dir.path(), &write)]));
    let w = worker(&r, 0, 0);
    assert_eq!(
        (w.dirs[1].ios, w.dirs[1].bytes),
        (512, 2 * MIB),
        "{engine:?}"
    );
    let verified = (w.dirs[0].ios, w.dirs[0].bytes);
    assert_eq!(verified, (512, 2 * MIB), "{engine:?}: verified");
    let path = dir.path().join("v.0.0");
    let mut f = std::fs::read(&path).unwrap();
    f[100 * 4096 + 300] ^= 0xff;
    std::fs::write(&path, &f).unwrap();
    let read = [engine, &base[..], &["rw=read"]].concat();
    let o = run_outcome(config(vec![job("v", dir.path(), &read)]));
    match o.error {
        Some(EngineError::Verify {
            failures, offset, ..
        }) => assert_eq!((failures, offset), (1, 100 * 4096), "{engine:?}"),
        other => panic!("{engine:?}: expected a verify error in block 100, got {other:?}"),
    }
}

/// vsync merges the neighbours one commit stages into one readv/writev
/// (iodepth_batch=8: runs of 8, all 8 completions handed back at once, as
/// fio's vsync returns them).
#[test]
fn vsync_merged_writes_verify() {
    let _serial = serial();
    verified_write_catches_a_changed_byte(&["ioengine=vsync", "iodepth=8", "iodepth_batch=8"]);
}

/// posixaio keeps iodepth requests in flight in the C library's threads,
/// completing out of order; buffered, so not only O_DIRECT queues.
#[test]
fn posixaio_writes_at_depth_verify() {
    let _serial = serial();
    verified_write_catches_a_changed_byte(&["ioengine=posixaio", "iodepth=16"]);
    verified_write_catches_a_changed_byte(&[
        "ioengine=posixaio",
        "iodepth=16",
        "iodepth_batch_submit=4",
        "iodepth_batch_complete_min=2",
        "iodepth_batch_complete_max=8",
    ]);
}
