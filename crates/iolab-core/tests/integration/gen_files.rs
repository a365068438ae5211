//! The generator across several files (`file_service_type` and its `:N`):
//! the exact order fio's rules give, and that every file still gets its
//! whole region once per pass.

use iolab_core::gen::{FileRegion, IoGen};
use iolab_core::job::JobSpec;

const K: u64 = 1024;

/// File index of each I/O of one pass over three 16 KiB files, bs=4k.
fn order(opts: &[&str]) -> Vec<u32> {
    let j = JobSpec::new("t")
        .args(["size=48k", "nrfiles=3", "ioengine=null"])
        .args(opts.iter().copied())
        .prepare()
        .unwrap_or_else(|e| panic!("{opts:?}: {e}"));
    let regions = vec![
        FileRegion {
            start: 0,
            len: 16 * K
        };
        3
    ];
    let units: Vec<_> = IoGen::new(&j, 0, regions).unwrap().collect();
    for f in 0..3 {
        let bytes: u64 = units.iter().filter(|u| u.file == f).map(|u| u.len).sum();
        assert_eq!(bytes, 16 * K, "{opts:?}: file {f} gets its whole region");
    }
    units.iter().map(|u| u.file).collect()
}

#[test]
fn roundrobin_default_is_one_io_each() {
    assert_eq!(order(&[]), [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]);
    assert_eq!(order(&["file_service_type=roundrobin"]), order(&[]));
}

#[test]
fn roundrobin_batch_does_n_ios_per_file() {
    assert_eq!(
        order(&["file_service_type=roundrobin:3"]),
        [0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 1, 2]
    );
}

#[test]
fn sequential_finishes_each_file_first() {
    assert_eq!(
        order(&["file_service_type=sequential"]),
        [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    );
}

#[test]
fn random_batch_switches_only_after_n_and_is_not_round_robin() {
    let o = order(&["file_service_type=random:2"]);
    // Switches happen only at even positions (every 2 I/Os) while all
    // files still have bytes left; a file can end mid-batch.
    assert_ne!(o, order(&["file_service_type=roundrobin:2"]));
    assert_eq!(o, order(&["file_service_type=random:2"]), "seeded");
    let other = order(&["file_service_type=random", "randseed=99"]);
    assert_ne!(other, order(&["file_service_type=random", "randseed=5"]));
}

#[test]
fn unsupported_kinds_are_refused_by_name() {
    let e = JobSpec::new("t")
        .args(["size=8k", "file_service_type=zipf:1.2"])
        .prepare()
        .unwrap_err()
        .to_string();
    assert!(e.contains("file_service_type") && e.contains("zipf"), "{e}");
    let e = JobSpec::new("t")
        .args(["size=8k", "file_service_type=random:0"])
        .prepare()
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least 1"), "{e}");
}
