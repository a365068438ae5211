//! What lands on disk: buffer contents (zeros, patterns, compressibility
//! measured with zlib, duplicate blocks counted) and data verification
//! (a clean run passes; bytes changed under iolab's feet are found, each
//! corrupted block counted, the first named by offset, expected, found).

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use iolab_engine::EngineError;

use crate::engine::common::*;

/// Writes `size` to dir/w.0.0 with `opts`; returns the file's bytes.
fn written(dir: &Path, size: &str, opts: &[&str]) -> Vec<u8> {
    let mut all = vec!["rw=write", "bs=4k", "iodepth=4", "ioengine=io_uring"];
    all.push(size);
    all.extend_from_slice(opts);
    run_ok(config(vec![job("w", dir, &all)]));
    std::fs::read(dir.join("w.0.0")).unwrap()
}

fn zlib_ratio(data: &[u8]) -> f64 {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(data).unwrap();
    z.finish().unwrap().len() as f64 / data.len() as f64
}

/// Blocks whose content already appeared in an earlier block.
fn repeated_blocks(data: &[u8]) -> usize {
    let mut seen = HashSet::new();
    data.chunks(4096)
        .filter(|b| !seen.insert(b.to_vec()))
        .count()
}

#[test]
fn zero_and_pattern_buffers_land_on_disk() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let z = written(dir.path(), "size=256k", &["zero_buffers"]);
    assert!(z.iter().all(|&b| b == 0));
    let p = written(dir.path(), "size=256k", &["buffer_pattern=0xdeadbeef"]);
    assert!(p.chunks(4).all(|c| c == [0xde, 0xad, 0xbe, 0xef]));
    let s = written(dir.path(), "size=256k", &["buffer_pattern=\"ab\""]);
    assert!(s.chunks(2).all(|c| c == b"ab"));
}

#[test]
fn compress_percentage_is_what_zlib_finds() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let plain = written(dir.path(), "size=4m", &["refill_buffers"]);
    assert!(
        zlib_ratio(&plain) > 0.99,
        "fresh random data does not compress"
    );
    for pct in [25u32, 50, 75] {
        let d = written(
            dir.path(),
            "size=4m",
            &[
                &format!("buffer_compress_percentage={pct}"),
                "buffer_compress_chunk=4k",
            ],
        );
        let ratio = zlib_ratio(&d);
        let want = f64::from(100 - pct) / 100.0;
        assert!(
            (ratio - want).abs() < 0.03,
            "compress {pct}%: zlib ratio {ratio:.3}, want {want:.2} ± 0.03"
        );
    }
}

#[test]
fn dedupe_scramble_and_refill_decide_repeated_blocks() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    // 1024 blocks; 4 slot buffers without stamps repeat all the time.
    let plain = written(dir.path(), "size=4m", &["scramble_buffers=0"]);
    assert_eq!(repeated_blocks(&plain), 1024 - 4);
    for opts in [&[][..], &["refill_buffers"][..]] {
        let d = written(dir.path(), "size=4m", opts);
        assert_eq!(repeated_blocks(&d), 0, "{opts:?}");
    }
    let d = written(dir.path(), "size=4m", &["dedupe_percentage=30"]);
    let share = repeated_blocks(&d) as f64 / 1024.0;
    // Binomial(1024, 0.3): sd 1.4 points; 6 points is over 4 sd.
    assert!(
        (share - 0.30).abs() < 0.06,
        "dedupe 30%: {share:.3} repeated"
    );
}

fn verify_err(dir: &Path, opts: &[&str]) -> (EngineError, u64, u64) {
    let o = run_outcome(config(vec![job("w", dir, opts)]));
    match o.error {
        Some(
            e @ EngineError::Verify {
                failures, offset, ..
            },
        ) => (e, failures, offset),
        other => panic!("{opts:?}: expected a verify error, got {other:?}"),
    }
}

#[test]
fn verify_finds_every_block_changed_under_its_feet() {
    let _s = serial();
    for kind in ["crc32c", "md5", "sha1", "sha256", "xxhash", "meta"] {
        let dir = tempfile::tempdir().unwrap();
        let write = [
            "rw=randwrite",
            "bs=4k",
            "size=1m",
            "ioengine=libaio",
            "iodepth=8",
        ];
        let v = format!("verify={kind}");
        // Write and verify: clean.
        let o = run_outcome(config(vec![job(
            "w",
            dir.path(),
            &[&write[..], &[&v]].concat(),
        )]));
        assert!(o.error.is_none(), "{kind}: {:?}", o.error);
        let r = &o.result.jobs[0].workers[0];
        assert_eq!(
            (r.dirs[1].ios, r.dirs[0].ios),
            (256, 256),
            "every block read back"
        );
        // Change three blocks (a header byte for meta, data for the rest).
        let path = dir.path().join("w.0.0");
        let mut f = std::fs::read(&path).unwrap();
        let at = if kind == "meta" { 20 } else { 1000 };
        for block in [3usize, 100, 255] {
            f[block * 4096 + at] ^= 0x40;
        }
        std::fs::write(&path, &f).unwrap();
        let read = [&["rw=read", "bs=4k", "size=1m"][..], &[&v]].concat();
        let (e, failures, offset) = verify_err(dir.path(), &read);
        assert_eq!((failures, offset), (3, 3 * 4096), "{kind}: {e}");
        let text = e.to_string();
        assert!(
            text.contains("3 of 256 blocks") && text.contains("expected"),
            "{text}"
        );
        // verify_only re-reads what the write job wrote; verify_fatal stops at one.
        let only = [&write[..], &[&v, "verify_only", "verify_fatal"]].concat();
        let (_, failures, _) = verify_err(dir.path(), &only);
        assert_eq!(failures, 1, "{kind}");
    }
}

/// Overwritten blocks are expected with their last content: passes over the
/// same region, and random sizes that overlap earlier writes, verify clean.
#[test]
fn verify_expects_the_last_write_of_every_byte() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let loops = ["rw=write", "bs=16k", "size=1m", "loops=3", "verify=md5"];
    let o = run_outcome(config(vec![job("w", dir.path(), &loops)]));
    assert!(o.error.is_none(), "{:?}", o.error);
    let w = &o.result.jobs[0].workers[0];
    assert_eq!(
        (w.dirs[1].ios, w.dirs[0].ios),
        (192, 64),
        "each block read back once"
    );
    let overlap = [
        "rw=randwrite",
        "bsrange=4k-16k",
        "norandommap",
        "size=1m",
        "loops=2",
        "verify=crc32c",
        "verify_interval=4k",
    ];
    let o = run_outcome(config(vec![job("w", dir.path(), &overlap)]));
    assert!(o.error.is_none(), "{:?}", o.error);
}

#[test]
fn verify_backlog_interval_offset_pattern_and_dump() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let base = ["rw=write", "bs=16k", "size=1m", "ioengine=psync"];
    for extra in [
        &["verify=crc32c", "verify_backlog=4"][..],
        &["verify=sha256", "verify_interval=4k", "verify_offset=1000"][..],
        &["verify_pattern=0x5a"][..],
    ] {
        let o = run_outcome(config(vec![job(
            "w",
            dir.path(),
            &[&base[..], extra].concat(),
        )]));
        assert!(o.error.is_none(), "{extra:?}: {:?}", o.error);
        assert_eq!(o.result.jobs[0].workers[0].dirs[0].ios, 64, "{extra:?}");
    }
    // The file now holds 0x5a everywhere; one changed byte fails one block
    // of verify=pattern, and verify_dump writes what was found and expected.
    let path = dir.path().join("w.0.0");
    let mut f = std::fs::read(&path).unwrap();
    assert!(f.iter().all(|&b| b == 0x5a));
    f[5 * 16384 + 7] = 0;
    std::fs::write(&path, &f).unwrap();
    let read = [
        "rw=read",
        "bs=16k",
        "size=1m",
        "verify_pattern=0x5a",
        "verify_dump",
    ];
    let (e, failures, offset) = verify_err(dir.path(), &read);
    assert_eq!((failures, offset), (1, 5 * 16384), "{e}");
    assert!(
        e.to_string()
            .contains("expected 0x5a at chunk byte 7, found 0x00"),
        "{e}"
    );
    let dumped = std::fs::read(format!("{}.{}.received", path.display(), 5 * 16384)).unwrap();
    assert_eq!(dumped[7], 0);
    let expected = std::fs::read(format!("{}.{}.expected", path.display(), 5 * 16384)).unwrap();
    assert!(expected.iter().all(|&b| b == 0x5a));
}
