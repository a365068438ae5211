//! O_DIRECT: support per filesystem, alignment checks, and open flags.

use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use iolab_core::job::{BsSpec, SyncMode};
use iolab_engine::layout;
use iolab_engine::EngineError;

use super::common::{job, prepare, MIB};
use super::system::Mount;

/// Independent of the library: can a file in `dir` be opened with O_DIRECT?
fn plain_direct_open_works(dir: &Path) -> bool {
    let probe = tempfile::NamedTempFile::new_in(dir).unwrap();
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(probe.path())
        .is_ok()
}

/// Open flags of an fd, from /proc/self/fdinfo (octal).
fn fd_flags(f: &std::fs::File) -> i32 {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", f.as_raw_fd())).unwrap();
    let flags = info
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .unwrap()
        .trim();
    i32::from_str_radix(flags, 8).unwrap()
}

fn direct_job(path: &Path, read_pct: u32) -> iolab_core::job::PreparedJob {
    let mut j = job("d", &[path], read_pct, Some(MIB));
    j.direct = true;
    j
}

#[test]
fn filesystem_without_o_direct_is_refused_with_its_name() {
    let Some(m) = Mount::new("ramfs", "mode=755") else {
        return;
    };
    assert!(!layout::direct_supported(m.path()));
    let path = m.path().join("f");
    let msg = prepare(&[direct_job(&path, 100)], false)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("its filesystem (ramfs) does not support O_DIRECT (direct=1); use direct=0"),
        "{msg}"
    );
    assert!(!path.exists());
    let leftovers: Vec<_> = std::fs::read_dir(m.path()).unwrap().collect();
    assert!(
        leftovers.is_empty(),
        "the probe file was left behind: {leftovers:?}"
    );
}

#[test]
fn direct_supported_agrees_with_a_plain_open_on_tmpfs_and_tmp() {
    for dir in [Path::new("/dev/shm"), &std::env::temp_dir()] {
        assert_eq!(
            layout::direct_supported(dir),
            plain_direct_open_works(dir),
            "{}",
            dir.display()
        );
    }
    // tmpfs: O_DIRECT since Linux 6.6; before, prepare must say so.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let res = prepare(&[direct_job(&shm.path().join("f"), 100)], false);
    match layout::direct_supported(shm.path()) {
        true => assert!(res.is_ok(), "{res:?}"),
        false => assert!(res
            .unwrap_err()
            .to_string()
            .contains("(tmpfs) does not support O_DIRECT")),
    }
}

/// A directory whose filesystem supports O_DIRECT, or `None` (skip).
fn direct_dir() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    if layout::direct_supported(dir.path()) {
        return Some(dir);
    }
    eprintln!("SKIP: {} does not support O_DIRECT", dir.path().display());
    None
}

/// A change to a job.
type Edit = Box<dyn Fn(&mut iolab_core::job::PreparedJob)>;

#[test]
fn misaligned_offset_and_block_sizes_are_refused_naming_the_option() {
    let Some(dir) = direct_dir() else { return };
    let path = dir.path().join("f");
    let l = prepare(&[direct_job(&path, 100)], false).unwrap();
    let align = l.files[0].direct_align_bytes.unwrap();
    assert!(align >= 512 && 4096 % align == 0, "alignment {align}");
    let cases: Vec<(&str, Edit)> = vec![
        ("offset to be a multiple", Box::new(|j| j.offset = 100)),
        (
            "bs to be a multiple",
            Box::new(|j| j.bs[0] = BsSpec::Fixed(100)),
        ),
        (
            "bssplit to be a multiple",
            Box::new(|j| j.bs[0] = BsSpec::Split(vec![(4096, 50), (100, 50)])),
        ),
        (
            "bsrange to be a multiple",
            Box::new(|j| {
                j.bs[0] = BsSpec::Range {
                    min: 100,
                    max: 4096,
                }
            }),
        ),
        (
            "blockalign to be a multiple",
            Box::new(|j| j.blockalign[0] = 100),
        ),
    ];
    for (want, edit) in cases {
        let mut j = direct_job(&path, 100);
        edit(&mut j);
        let msg = prepare(&[j], false).unwrap_err().to_string();
        assert!(
            msg.contains(want) && msg.contains("but it is 100") && msg.contains("direct=0"),
            "{msg}"
        );
    }
    let mut mixed = direct_job(&path, 50);
    mixed.bs[1] = BsSpec::Fixed(100);
    let msg = prepare(&[mixed], false).unwrap_err().to_string();
    assert!(msg.contains("bs (write) to be a multiple"), "{msg}");
}

#[test]
fn misaligned_block_size_is_fine_without_direct() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = job("b", &[&dir.path().join("f")], 100, Some(MIB));
    j.bs[0] = BsSpec::Fixed(100);
    let l = prepare(&[j], false).unwrap();
    assert_eq!(l.files[0].direct_align_bytes, None);
}

#[test]
fn open_uses_the_jobs_flags() {
    let Some(dir) = direct_dir() else { return };
    let path = dir.path().join("f");
    let mut w = direct_job(&path, 0);
    w.sync = SyncMode::Dsync;
    let r = job("r", &[&path], 100, Some(MIB));
    let l = prepare(&[w.clone(), r.clone()], false).unwrap();
    let fw = layout::open(&l.files[0], &w).unwrap();
    let flags = fd_flags(&fw);
    assert_eq!(flags & libc::O_ACCMODE, libc::O_RDWR);
    assert_ne!(flags & libc::O_DIRECT, 0, "flags {flags:o}");
    assert_eq!(flags & libc::O_DSYNC, libc::O_DSYNC, "flags {flags:o}");
    let fr = layout::open(&l.files[0], &r).unwrap();
    let flags = fd_flags(&fr);
    assert_eq!(
        (flags & libc::O_ACCMODE, flags & libc::O_DIRECT),
        (libc::O_RDONLY, 0)
    );
}

#[test]
fn open_refuses_what_prepare_did_not_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let r = job("r", &[&path], 100, Some(MIB));
    let l = prepare(std::slice::from_ref(&r), false).unwrap();
    let w = job("w", &[&path], 0, Some(MIB));
    assert!(matches!(
        layout::open(&l.files[0], &w),
        Err(EngineError::Lifecycle(_))
    ));
    assert!(matches!(
        layout::open(&l.files[0], &direct_job(&path, 100)),
        Err(EngineError::Lifecycle(_))
    ));
}

/// tmpfs, like FUSE, takes O_DIRECT at any offset and length: the read
/// probe finds 1, so `bs=1` with `direct=1` runs there (fio runs it too)
/// instead of being refused against an assumed 512.
#[test]
fn a_filesystem_taking_unaligned_o_direct_gets_alignment_1() {
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    if !layout::direct_supported(shm.path()) {
        eprintln!("SKIP: tmpfs here has no O_DIRECT (Linux < 6.6)");
        return;
    }
    let mut j = direct_job(&shm.path().join("f"), 100);
    j.bs = [BsSpec::Fixed(1), BsSpec::Fixed(1)];
    j.offset = 3;
    let l = prepare(&[j], false).unwrap();
    assert_eq!(l.files[0].direct_align_bytes, Some(1));
}
