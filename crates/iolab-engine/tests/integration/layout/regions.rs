//! Which bytes of which file each worker uses (fio's rules), and the
//! file sizes that follow from them.

use iolab_core::job::IoEngine;
use iolab_engine::layout::{self, Region};
use iolab_engine::EngineError;

use super::common::{job, prepare, MIB};

#[test]
fn size_is_split_over_shared_files_and_offset_extends_them() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let mut j = job("j", &[&a, &b], 100, Some(2 * MIB));
    j.offset = MIB;
    j.numjobs = 3;
    let l = prepare(std::slice::from_ref(&j), false).unwrap();
    assert_eq!(l.files.len(), 2, "shared files are prepared once");
    for f in &l.files {
        assert_eq!(f.size_bytes, 2 * MIB, "offset + size/2");
        assert_eq!(std::fs::metadata(&f.path).unwrap().len(), 2 * MIB);
    }
    for worker in 0..3 {
        let r = layout::regions_for_worker(&l, &j, worker).unwrap();
        let want = vec![
            Region {
                path: a.clone(),
                start: MIB,
                len: MIB,
            },
            Region {
                path: b.clone(),
                start: MIB,
                len: MIB,
            },
        ];
        assert_eq!(r, want);
    }
}

#[test]
fn each_clone_gets_its_own_file_without_filename() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = job("seq", &[], 0, Some(MIB));
    j.shared_files = false;
    j.directory = Some(dir.path().to_path_buf());
    j.numjobs = 2;
    let l = prepare(std::slice::from_ref(&j), false).unwrap();
    for worker in 0..2 {
        let path = dir.path().join(format!("seq.{worker}.0"));
        assert_eq!(
            layout::regions_for_worker(&l, &j, worker).unwrap(),
            vec![Region {
                path: path.clone(),
                start: 0,
                len: MIB
            }]
        );
        assert!(l.file(&path).unwrap().created_by_iolab);
    }
}

#[test]
fn without_size_the_region_runs_to_the_end_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![3u8; 10_000]).unwrap();
    let mut j = job("r", &[&path], 100, None);
    j.offset = 4096;
    let l = prepare(std::slice::from_ref(&j), false).unwrap();
    assert_eq!(
        layout::regions_for_worker(&l, &j, 0).unwrap()[0],
        Region {
            path: path.clone(),
            start: 4096,
            len: 10_000 - 4096
        }
    );
    j.offset = 10_000;
    let msg = prepare(&[j], false).unwrap_err().to_string();
    assert!(
        msg.contains("is 10000 bytes, not larger than offset = 10000 bytes"),
        "{msg}"
    );
}

#[test]
fn a_file_shared_by_jobs_is_as_large_as_the_largest_needs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let small = job("small", &[&path], 100, Some(MIB));
    let mut big = job("big", &[&path], 0, Some(MIB));
    big.offset = 2 * MIB;
    let l = prepare(&[small.clone(), big.clone()], false).unwrap();
    assert_eq!(l.files.len(), 1);
    assert_eq!((l.files[0].size_bytes, l.files[0].written), (3 * MIB, true));
    assert_eq!(
        layout::regions_for_worker(&l, &small, 0).unwrap()[0].start,
        0
    );
    assert_eq!(
        layout::regions_for_worker(&l, &big, 0).unwrap()[0].start,
        2 * MIB
    );
}

#[test]
fn null_engine_touches_no_file_but_needs_a_size() {
    let path = std::path::Path::new("/nonexistent/dir/f");
    let mut j = job("n", &[path], 50, Some(MIB));
    j.ioengine = IoEngine::Null;
    let l = prepare(std::slice::from_ref(&j), false).unwrap();
    assert!(l.files.is_empty());
    assert_eq!(layout::regions_for_worker(&l, &j, 0).unwrap()[0].len, MIB);
    j.size = None;
    let msg = prepare(&[j], false).unwrap_err().to_string();
    assert!(msg.contains("ioengine=null needs size="), "{msg}");
}

#[test]
fn a_job_not_prepared_has_no_regions() {
    let dir = tempfile::tempdir().unwrap();
    let j = job("j", &[&dir.path().join("f")], 100, Some(MIB));
    let l = prepare(&[], false).unwrap();
    assert!(matches!(
        layout::regions_for_worker(&l, &j, 0),
        Err(EngineError::Lifecycle(_))
    ));
}
