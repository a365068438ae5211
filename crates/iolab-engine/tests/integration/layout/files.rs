//! Regular files: what iolab creates, what it reuses, what it refuses.

use std::io::Write;
use std::os::unix::fs::MetadataExt;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use iolab_engine::layout::{self, FileKind};
use iolab_engine::EngineError;

use super::common::{has_mark, job, prepare, read, MIB};
use super::system::{Immutable, Mount};

/// Every 4 KiB block nonzero, chunks distinct, deflate cannot shrink it.
fn assert_incompressible(data: &[u8]) {
    assert!(
        data.chunks(4096).all(|b| b.iter().any(|&x| x != 0)),
        "a block of zeros: the fill left a hole"
    );
    let chunks: Vec<&[u8]> = data.chunks(MIB as usize).collect();
    for pair in chunks.windows(2) {
        assert_ne!(
            pair[0], pair[1],
            "two chunks are equal: the fill repeats itself"
        );
    }
    let sample = &data[..data.len().min(MIB as usize)];
    let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
    z.write_all(sample).unwrap();
    let packed = z.finish().unwrap().len();
    assert!(
        packed as f64 > 0.99 * sample.len() as f64,
        "deflate packed {} bytes into {packed}",
        sample.len()
    );
}

#[test]
fn missing_file_is_created_filled_and_marked_even_for_a_read_only_job() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let mut calls = Vec::new();
    let l = layout::prepare(
        &[job("r", &[&path], 100, Some(4 * MIB))],
        false,
        &mut |f, done, total| calls.push((f.to_string(), done, total)),
    )
    .unwrap();
    let data = read(&path);
    assert_eq!(data.len() as u64, 4 * MIB);
    assert_incompressible(&data);
    let md = std::fs::metadata(&path).unwrap();
    assert!(
        md.blocks() * 512 >= 4 * MIB,
        "file is sparse: {} blocks",
        md.blocks()
    );
    assert!(has_mark(&path));
    let f = &l.files[0];
    assert_eq!(
        (f.kind, f.size_bytes, f.created_by_iolab, f.written),
        (FileKind::Regular, 4 * MIB, true, false)
    );
    assert!(
        l.notes[0].starts_with(&format!(
            "created {}: 4194304 bytes, filled",
            path.display()
        )),
        "{:?}",
        l.notes
    );
    assert_eq!(
        calls.last().unwrap(),
        &(path.display().to_string(), 4 * MIB, 4 * MIB)
    );
    assert!(
        calls.windows(2).all(|w| w[0].1 <= w[1].1),
        "progress went backwards: {calls:?}"
    );
}

#[test]
fn file_iolab_created_is_reused_for_writing_without_allow_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    prepare(&[job("r", &[&path], 100, Some(2 * MIB))], false).unwrap();
    let before = read(&path);
    let l = prepare(&[job("w", &[&path], 0, Some(2 * MIB))], false).unwrap();
    assert_eq!(read(&path), before, "a reused file is not filled again");
    assert!(l.files[0].created_by_iolab && l.files[0].written);
    assert!(l.notes[0].starts_with("reused"), "{:?}", l.notes);
}

#[test]
fn file_iolab_created_too_small_is_extended_and_filled() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    prepare(&[job("a", &[&path], 100, Some(MIB))], false).unwrap();
    let before = read(&path);
    let l = prepare(&[job("b", &[&path], 50, Some(3 * MIB))], false).unwrap();
    let after = read(&path);
    assert_eq!(after.len() as u64, 3 * MIB);
    assert_eq!(
        &after[..MIB as usize],
        &before[..],
        "the filled part is kept"
    );
    assert_incompressible(&after[MIB as usize..]);
    assert!(
        l.notes[0].contains("filled bytes 1048576..3145728"),
        "{:?}",
        l.notes
    );
}

#[test]
fn interrupted_fill_is_completed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    prepare(&[job("a", &[&path], 100, Some(2 * MIB))], false).unwrap();
    // As if the fill had stopped after 1 MiB: the mark says so and the
    // second MiB is still zeros.
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    rustix::fs::fsetxattr(
        &f,
        layout::CREATED_XATTR,
        b"iolab-created v1 filled_bytes=1048576",
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &vec![0u8; MIB as usize], MIB).unwrap();
    let first = read(&path)[..MIB as usize].to_vec();
    prepare(&[job("a", &[&path], 100, Some(2 * MIB))], false).unwrap();
    let after = read(&path);
    assert_eq!(&after[..MIB as usize], &first[..]);
    assert_incompressible(&after[MIB as usize..]);
}

fn foreign_file(dir: &std::path::Path, bytes: usize) -> (std::path::PathBuf, Vec<u8>) {
    let path = dir.join("precious");
    let content: Vec<u8> = (0..bytes).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &content).unwrap();
    (path, content)
}

#[test]
fn foreign_file_is_not_written_without_allow_overwrite_and_stays_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = foreign_file(dir.path(), 2 * MIB as usize);
    for read_pct in [0, 70] {
        let err = prepare(&[job("w", &[&path], read_pct, Some(MIB))], false).unwrap_err();
        assert!(matches!(err, EngineError::Refused { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("--allow-overwrite") && msg.contains(&path.display().to_string()),
            "{msg}"
        );
        assert_eq!(read(&path), content, "refused file changed");
        assert!(!has_mark(&path));
    }
}

#[test]
fn foreign_file_is_read_without_being_modified() {
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = foreign_file(dir.path(), 2 * MIB as usize);
    let j = job("r", &[&path], 100, None);
    let l = prepare(std::slice::from_ref(&j), false).unwrap();
    assert_eq!(read(&path), content);
    assert!(!has_mark(&path));
    assert!(!l.files[0].created_by_iolab);
    assert!(l.notes[0].contains("never modified"), "{:?}", l.notes);
    let mut f = layout::open(&l.files[0], &j).unwrap();
    assert!(
        f.write_all(b"x").is_err(),
        "a read-only job's file must be opened read-only"
    );
    assert_eq!(read(&path), content);
}

#[test]
fn foreign_file_may_be_written_with_allow_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = foreign_file(dir.path(), 2 * MIB as usize);
    let l = prepare(&[job("w", &[&path], 0, Some(MIB))], true).unwrap();
    assert!(!l.files[0].created_by_iolab && l.files[0].written);
    assert_eq!(
        read(&path),
        content,
        "prepare itself writes nothing to a file that is large enough"
    );
    assert!(
        l.notes[0].contains("allowed by --allow-overwrite"),
        "{:?}",
        l.notes
    );
}

#[test]
fn foreign_file_too_small_is_an_error_naming_both_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = foreign_file(dir.path(), 1000);
    let mut j = job("r", &[&path], 100, Some(4096));
    j.offset = 4096;
    let msg = prepare(&[j.clone()], false).unwrap_err().to_string();
    assert!(
        msg.contains("is 1000 bytes, smaller than offset+size = 8192 bytes"),
        "{msg}"
    );
    assert_eq!(read(&path), content);
    // With --allow-overwrite it is extended, the old bytes kept.
    let l = prepare(&[j], true).unwrap();
    let after = read(&path);
    assert_eq!((after.len(), &after[..1000]), (8192, &content[..]));
    assert!(!l.files[0].created_by_iolab);
}

#[test]
fn missing_directory_is_an_error_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nodir/f");
    let msg = prepare(&[job("r", &[&path], 100, Some(MIB))], false)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains(&format!(
            "directory {} does not exist",
            dir.path().join("nodir").display()
        )),
        "{msg}"
    );
    assert!(!dir.path().join("nodir").exists());
}

#[test]
fn a_missing_device_is_an_error_and_no_file_is_made_under_dev() {
    // Session 12, a fio user's first hour: `--filename=/dev/sdz` (a typo) created a 1 MiB
    // regular file in /dev and ran on it, as fio does.
    let path =
        std::path::PathBuf::from(format!("/dev/iolab-no-such-device-{}", std::process::id()));
    let msg = prepare(&[job("r", &[&path], 100, Some(MIB))], false)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains(&format!(
            "{}: no such device; iolab creates no files under /dev",
            path.display()
        )),
        "{msg}"
    );
    assert!(!path.exists());
    // /dev/shm is a file system for files: a test file there is laid out as anywhere.
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        let dir = tempfile::tempdir_in(shm).unwrap();
        let file = dir.path().join("f");
        prepare(&[job("r", &[&file], 100, Some(MIB))], false).unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().len(), MIB);
    }
}

#[test]
fn missing_file_without_size_directory_and_char_device_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("f");
    let msg = prepare(&[job("r", &[&missing], 100, None)], false)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("no size was given; set size="), "{msg}");
    let msg = prepare(&[job("r", &[dir.path()], 100, Some(MIB))], false)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("is a directory"), "{msg}");
    let null = std::path::Path::new("/dev/null");
    let msg = prepare(&[job("r", &[null], 100, Some(MIB))], false)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("/dev/null: returns nothing to reads"), "{msg}");
}

#[test]
fn nothing_is_created_when_another_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new");
    let (precious, _) = foreign_file(dir.path(), 4096);
    let jobs = [
        job("a", &[&new], 0, Some(MIB)),
        job("b", &[&precious], 0, Some(4096)),
    ];
    assert!(matches!(
        prepare(&jobs, false),
        Err(EngineError::Refused { .. })
    ));
    assert!(
        !new.exists(),
        "phase 1 must refuse before phase 2 creates anything"
    );
}

#[test]
fn immutable_file_is_reported_with_the_operation() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = foreign_file(dir.path(), 8192);
    let Some(_immutable) = Immutable::set(&path) else {
        return;
    };
    let msg = prepare(&[job("w", &[&path], 0, Some(4096))], true)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("open for writing") && msg.contains("not permitted"),
        "{msg}"
    );
}

#[test]
fn unwritable_directory_is_reported_before_anything_is_created() {
    // Root ignores permission bits, so a read-only mount stands in for
    // "permission denied" (both come from the same access(W_OK) check).
    let Some(m) = Mount::new("tmpfs", "size=1m,ro") else {
        return;
    };
    let path = m.path().join("f");
    let msg = prepare(&[job("r", &[&path], 100, Some(4096))], false)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("create (its directory is not writable)") && msg.contains("Read-only"),
        "{msg}"
    );
}

#[test]
fn not_enough_space_is_found_before_writing() {
    let Some(m) = Mount::new("tmpfs", "size=1m") else {
        return;
    };
    let a = m.path().join("a");
    let b = m.path().join("b");
    // Each fits alone; together they do not.
    let jobs = [
        job("a", &[&a], 100, Some(768 * 1024)),
        job("b", &[&b], 100, Some(768 * 1024)),
    ];
    let err = prepare(&jobs, false).unwrap_err();
    match &err {
        EngineError::NoSpace {
            need_bytes,
            available_bytes,
            ..
        } => {
            assert_eq!(*need_bytes, 1536 * 1024);
            assert!(*available_bytes <= MIB);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().starts_with(&format!(
        "not enough space in {}: need 1572864 bytes",
        m.path().display()
    )));
    assert!(!a.exists() && !b.exists());
}

#[test]
fn space_check_compares_need_with_available() {
    let dir = std::path::Path::new("/data");
    assert!(layout::check_space(dir, 10, 10).is_ok());
    let msg = layout::check_space(dir, 11, 10).unwrap_err().to_string();
    assert_eq!(msg, "not enough space in /data: need 11 bytes, 10 available; free some space or use a smaller size");
}

#[test]
fn without_user_xattrs_the_sidecar_marks_iolab_files() {
    // ramfs has no user xattrs.
    let Some(m) = Mount::new("ramfs", "mode=755") else {
        return;
    };
    let path = m.path().join("f");
    let l = prepare(&[job("w", &[&path], 0, Some(MIB))], false).unwrap();
    assert!(
        l.notes[0].contains(layout::CREATED_SIDECAR),
        "{:?}",
        l.notes
    );
    let sidecar = std::fs::read_to_string(m.path().join(layout::CREATED_SIDECAR)).unwrap();
    assert!(
        sidecar.lines().any(|l| l.ends_with("\t1048576\tf")),
        "{sidecar}"
    );
    assert!(
        prepare(&[job("w", &[&path], 0, Some(MIB))], false)
            .unwrap()
            .files[0]
            .created_by_iolab
    );
    // Another file put in its place is not iolab's.
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, vec![1u8; MIB as usize]).unwrap();
    assert!(matches!(
        prepare(&[job("w", &[&path], 0, Some(MIB))], false),
        Err(EngineError::Refused { .. })
    ));
}
