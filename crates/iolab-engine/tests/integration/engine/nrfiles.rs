//! Files iolab creates for a job (`nrfiles`, `filesize`, `filename_format`):
//! checked on disk — which files exist, their sizes, and that every byte of
//! each was written by the job (a pattern over files that start empty).

use std::path::Path;

use super::common::*;

/// Names of the regular files in `dir`, sorted, with their sizes.
fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                e.metadata().unwrap().len(),
            )
        })
        .filter(|(n, _)| !n.starts_with('.'))
        .collect();
    v.sort();
    v
}

#[test]
fn nrfiles_splits_size_and_names_files_like_fio() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "nf",
        dir.path(),
        &[
            "rw=write",
            "bs=4k",
            "size=96k",
            "nrfiles=3",
            "numjobs=2",
            "buffer_pattern=0xab",
        ],
    );
    let r = run_ok(config(vec![j]));
    let names: Vec<(String, u64)> = (0..2)
        .flat_map(|w| (0..3).map(move |f| (format!("nf.{w}.{f}"), 32 * 1024)))
        .collect();
    assert_eq!(listing(dir.path()), names);
    for w in 0..2 {
        assert_eq!(worker(&r, 0, w).dirs[1].bytes, 96 * 1024);
    }
    for (name, _) in names {
        let data = std::fs::read(dir.path().join(&name)).unwrap();
        assert!(data.iter().all(|b| *b == 0xab), "{name} not fully written");
    }
}

#[test]
fn filesize_range_draws_each_file_and_sets_the_amount() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "fs",
        dir.path(),
        &[
            "rw=write",
            "bs=4k",
            "filesize=16k-256k",
            "nrfiles=4",
            "filename_format=f$filenum.$jobname",
            "buffer_pattern=0xcd",
        ],
    );
    let sizes = j.files.sizes_bytes.clone();
    assert_eq!(sizes.len(), 4);
    let r = run_ok(config(vec![j]));
    let got = listing(dir.path());
    let want: Vec<(String, u64)> = (0..4).map(|f| (format!("f{f}.fs"), sizes[f])).collect();
    assert_eq!(got, want);
    for (_, len) in &got {
        assert!(
            (16 * 1024..=256 * 1024).contains(len) && len % 4096 == 0,
            "{len}"
        );
    }
    assert!(
        sizes.windows(2).any(|w| w[0] != w[1]),
        "drawn sizes differ: {sizes:?}"
    );
    assert_eq!(worker(&r, 0, 0).dirs[1].bytes, sizes.iter().sum::<u64>());
    for (name, _) in got {
        let data = std::fs::read(dir.path().join(&name)).unwrap();
        assert!(data.iter().all(|b| *b == 0xcd), "{name} not fully written");
    }
}

/// Which 4 KiB blocks of each file hold the job's pattern after 4 writes
/// over three 16 KiB files.
fn written_blocks(service: &str) -> Vec<Vec<bool>> {
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "sv",
        dir.path(),
        &[
            "rw=write",
            "bs=4k",
            "size=48k",
            "nrfiles=3",
            "number_ios=4",
            "buffer_pattern=0x5a",
            service,
        ],
    );
    run_ok(config(vec![j]));
    (0..3)
        .map(|f| {
            let data = std::fs::read(dir.path().join(format!("sv.0.{f}"))).unwrap();
            assert_eq!(data.len(), 16 * 1024);
            data.chunks(4096)
                .map(|b| b.iter().all(|x| *x == 0x5a))
                .collect()
        })
        .collect()
}

#[test]
fn file_service_type_decides_which_file_each_write_reaches() {
    let _serial = serial();
    let (t, f) = (true, false);
    assert_eq!(
        written_blocks("file_service_type=sequential"),
        [[t, t, t, t], [f, f, f, f], [f, f, f, f]]
    );
    assert_eq!(
        written_blocks("file_service_type=roundrobin"),
        [[t, t, f, f], [t, f, f, f], [t, f, f, f]]
    );
    assert_eq!(
        written_blocks("file_service_type=roundrobin:2"),
        [[t, t, f, f], [t, t, f, f], [f, f, f, f]]
    );
}

#[test]
fn unlink_removes_only_the_files_iolab_created() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let found = dir.path().join("found.dat");
    std::fs::write(&found, vec![7u8; 64 * 1024]).unwrap();
    let created = job(
        "un",
        dir.path(),
        &["rw=write", "bs=4k", "size=32k", "nrfiles=2", "unlink=1"],
    );
    let theirs = job(
        "th",
        dir.path(),
        &["rw=read", "bs=4k", "filename=found.dat", "unlink=1"],
    );
    let r = run_ok(config(vec![created, theirs]));
    assert_eq!(
        worker(&r, 0, 0).dirs[1].bytes,
        32 * 1024,
        "the writes were done"
    );
    assert_eq!(listing(dir.path()), [("found.dat".to_string(), 64 * 1024)]);
    assert_eq!(std::fs::read(&found).unwrap(), vec![7u8; 64 * 1024]);
}

#[test]
fn size_under_filesize_does_that_much_io_over_whole_files() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let j = job(
        "io",
        dir.path(),
        &["rw=randread", "bs=4k", "filesize=256k", "size=64k"],
    );
    let r = run_ok(config(vec![j]));
    assert_eq!(listing(dir.path()), [("io.0.0".to_string(), 256 * 1024)]);
    assert_eq!(worker(&r, 0, 0).dirs[0].bytes, 64 * 1024);
}
