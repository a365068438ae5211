//! offset_increment (fio's cross-stripe-verify.fio, xfstests generic/773):
//! clone N of a job starts at offset + N × offset_increment. The truth is
//! where the I/O lands: an export that fails writes at one offset fails
//! only the clone whose region holds it, and a file iolab creates is sized
//! to the last clone's region end.

use std::sync::Arc;

use iolab_core::job::JobSpec;
use iolab_target::stack::inject::{InjectLayer, InjectParams};
use iolab_target::stack::memory::MemoryDev;
use iolab_target::stack::{BlockDev, Op};
use iolab_target::Export;

use crate::nbd::{job, outcome, serial, Target, MIB};

const KIB: u64 = 1024;

#[test]
fn each_clone_works_on_its_own_region() {
    let _g = serial();
    let mem: Arc<dyn BlockDev> = Arc::new(MemoryDev::new(MIB).unwrap());
    // Fails writes covering byte 8 KiB + 100: inside clone 1's region only.
    let p = InjectParams {
        rate: 0.0,
        offsets: vec![8 * KIB + 100],
        ops: vec![Op::Write],
        seed: 0,
    };
    let bad = Export::new("bad", Arc::new(InjectLayer::new(mem, p).unwrap())).unwrap();
    let t = Target::start(vec![bad]);
    let base = [
        "rw=write",
        "bs=4k",
        "size=8k",
        "numjobs=3",
        "continue_on_error=write",
    ];
    let run = |extra: &[&str]| {
        let opts: Vec<&str> = base.iter().chain(extra).copied().collect();
        let o = outcome(vec![job(&t.uri("bad"), &opts)]).unwrap();
        assert!(o.error.is_none(), "{:?}", o.error);
        let ws = &o.result.jobs[0].workers;
        ws.iter()
            .map(|w| (w.dirs[1].ios, w.total_err))
            .collect::<Vec<_>>()
    };
    // Clones at 0, 8 KiB, 16 KiB: only clone 1 meets the failing block.
    assert_eq!(run(&["offset_increment=8k"]), vec![(2, 0), (1, 1), (2, 0)]);
    // Without it every clone writes [0, 8 KiB): none fails.
    assert_eq!(run(&[]), vec![(2, 0), (2, 0), (2, 0)]);
    // With offset=4k the clones start at 4, 12, 20 KiB: clone 0's second
    // block (8-12 KiB) now holds the failing byte.
    assert_eq!(
        run(&["offset=4k", "offset_increment=8k"]),
        vec![(1, 1), (2, 0), (2, 0)]
    );
}

#[test]
fn a_created_file_reaches_the_last_clones_region() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared");
    let j = JobSpec::new("inc")
        .opt("filename", Some(path.to_str().unwrap()))
        .args([
            "rw=write",
            "bs=4k",
            "size=8k",
            "numjobs=3",
            "offset_increment=1m",
            "verify=crc32c",
        ])
        .prepare()
        .unwrap();
    let o = outcome(vec![j]).unwrap();
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 2 * MIB + 8 * KIB);
    let ws = &o.result.jobs[0].workers;
    // Each clone wrote and read back its own 8 KiB.
    assert!(ws
        .iter()
        .all(|w| w.dirs[1].bytes == 8 * KIB && w.dirs[0].bytes == 8 * KIB));
}
