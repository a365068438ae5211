//! Layout and safety: every file of every job checked and made ready before
//! the workers start.
//!
//! [`prepare`] runs once per run, in two phases. Phase 1 looks and changes
//! nothing (beyond a small O_DIRECT probe file, created and removed at
//! once): it gathers what the jobs need from each path (`plan`),
//! inspects regular files (`regular`) and block devices (`blockdev`),
//! checks O_DIRECT support and alignment (`direct`) and free space
//! (`space`). Any refusal or error stops the run before a single byte of
//! a job's file is written. Phase 2 (`act`) creates, extends and fills
//! files (`fill`) and marks the ones iolab created (`marker`). The result is a [`Layout`]: one
//! [`PreparedFile`] per path plus one note per file saying what was done.
//!
//! Workers then call [`open`] (the job's O_DIRECT / O_SYNC / read-only
//! flags) and [`regions_for_worker`] (where in each file they do I/O).
//! [`mounts`] and [`signature`] are public for tools that want the same
//! device checks (and for tests on fixed input).

mod act;
mod blockdev;
mod chardev;
mod direct;
mod fill;
mod filldev;
mod marker;
pub mod mounts;
mod plan;
mod regular;
pub mod signature;
mod space;
mod zoned;

use std::fs::{self, File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use iolab_core::job::{PreparedJob, SyncMode};

pub use direct::direct_supported;
pub use space::check_space;

use crate::EngineError;

/// An OS error on `path` during `op`, as the layout reports every one.
pub(crate) fn io_err(path: &Path, op: &'static str, source: std::io::Error) -> EngineError {
    EngineError::Io {
        path: path.to_path_buf(),
        op,
        source,
    }
}

/// Extended attribute marking files iolab created.
pub const CREATED_XATTR: &str = marker::XATTR_NAME;
/// Sidecar file listing iolab's files where the filesystem has no user xattrs.
pub const CREATED_SIDECAR: &str = marker::SIDECAR_NAME;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Regular,
    BlockDevice,
    /// `/dev/null` or `/dev/zero` (see `chardev`).
    CharDevice,
}

/// One path as the workers will use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedFile {
    pub path: PathBuf,
    pub kind: FileKind,
    /// Size after layout (of the file) or of the device, in bytes.
    pub size_bytes: u64,
    pub created_by_iolab: bool,
    /// True when some job writes to it (it passed the write checks).
    pub written: bool,
    /// Offset/length alignment O_DIRECT needs, in bytes. `None` for a
    /// regular file no job opens with direct=1 (not probed).
    pub direct_align_bytes: Option<u64>,
}

/// What [`prepare`] did: the files, and one line per file for the user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    pub files: Vec<PreparedFile>,
    pub notes: Vec<String>,
}

impl Layout {
    pub fn file(&self, path: &Path) -> Option<&PreparedFile> {
        self.files.iter().find(|f| f.path == path)
    }
}

/// Where one worker does I/O in one file: bytes `[start, start + len)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub path: PathBuf,
    pub start: u64,
    pub len: u64,
}

/// What phase 2 does to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Keep,
    /// Create, fill `[0, to)`, mark as iolab's.
    Create {
        to: u64,
    },
    /// Fill `[from, to)` (extending the file if needed); `mark`: update
    /// iolab's mark (the file is iolab's).
    Fill {
        from: u64,
        to: u64,
        mark: bool,
    },
}

/// Phase 1's verdict on one path.
#[derive(Debug)]
struct Checked {
    need: plan::FileNeed,
    kind: FileKind,
    /// Current size (0 for a file still to be created).
    size_bytes: u64,
    created_by_iolab: bool,
    action: Action,
    direct_align: Option<direct::DirectAlign>,
    growth: Option<space::Growth>,
    /// The note for `Action::Keep` (others are written once done).
    note: String,
}

/// Check safety and prepare every file of every job (create, extend,
/// fill). `progress(file, done_bytes, total_bytes)` is called as files
/// are filled. Nothing is written unless every check passes.
pub fn prepare(
    jobs: &[PreparedJob],
    allow_overwrite: bool,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<Layout, EngineError> {
    let checked = plan::file_needs(jobs)?
        .iter()
        .map(|need| inspect(need, allow_overwrite))
        .collect::<Result<Vec<_>, _>>()?;
    check_direct_jobs(jobs, &checked)?;
    let growth: Vec<space::Growth> = checked.iter().filter_map(|c| c.growth.clone()).collect();
    space::check_all(&growth)?;
    let mut layout = Layout::default();
    for c in checked {
        let (file, note) = act::act(c, progress)?;
        layout.files.push(file);
        layout.notes.push(note);
    }
    Ok(layout)
}

/// Every direct=1 job against the O_DIRECT alignment of each of its files
/// (phase 1 probed every file a direct job uses).
fn check_direct_jobs(jobs: &[PreparedJob], checked: &[Checked]) -> Result<(), EngineError> {
    for job in jobs.iter().filter(|j| j.direct && plan::uses_files(j)) {
        for worker in 0..job.workers() {
            for path in job.files_for_worker(worker) {
                let found = checked
                    .iter()
                    .find(|c| c.need.path == path)
                    .and_then(|c| c.direct_align);
                let Some(align) = found else {
                    return Err(EngineError::Lifecycle(format!(
                        "{} was not probed for O_DIRECT",
                        path.display()
                    )));
                };
                direct::check_job(job, &path, align)?;
            }
        }
    }
    Ok(())
}

fn inspect(need: &plan::FileNeed, allow_overwrite: bool) -> Result<Checked, EngineError> {
    let need = &filldev::layout_need(need);
    let path = &need.path;
    let md = match fs::metadata(path) {
        Ok(md) => md,
        Err(e) if e.kind() == ErrorKind::NotFound => return regular::inspect_missing(need),
        Err(e) => {
            return Err(EngineError::Io {
                path: path.clone(),
                op: "stat",
                source: e,
            })
        }
    };
    let ft = md.file_type();
    if ft.is_block_device() {
        return blockdev::inspect(need, &md, allow_overwrite);
    }
    if ft.is_file() {
        return regular::inspect_existing(need, &md, allow_overwrite);
    }
    if ft.is_char_device() {
        return chardev::inspect(need);
    }
    let what = if ft.is_dir() {
        "a directory; name a file (filename=) or put the jobs' files in it with directory="
    } else {
        "not a regular file or block device (a FIFO or socket); iolab works on regular files and block devices"
    };
    Err(EngineError::File {
        path: path.clone(),
        reason: format!("is {what}"),
    })
}

/// Open for writing now, so a read-only filesystem or device, an immutable
/// file or a missing permission is reported before anything is laid out.
pub(crate) fn check_writable(path: &Path) -> Result<(), EngineError> {
    OpenOptions::new()
        .write(true)
        .open(path)
        .map(drop)
        .map_err(|e| EngineError::Io {
            path: path.to_path_buf(),
            op: "open for writing",
            source: e,
        })
}

/// The directory a path lives in (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Open a prepared file for one of `job`'s workers: read-only unless the
/// job writes, O_DIRECT for direct=1, O_SYNC / O_DSYNC for sync=.
pub fn open(file: &PreparedFile, job: &PreparedJob) -> Result<File, EngineError> {
    let path = &file.path;
    let unprepared = |what: &str| {
        EngineError::Lifecycle(format!(
            "{} was not prepared for {what} (job '{}'); pass every job to layout::prepare",
            path.display(),
            job.name
        ))
    };
    if job.writes() && !file.written {
        return Err(unprepared("writing"));
    }
    if job.direct && file.direct_align_bytes.is_none() {
        return Err(unprepared("O_DIRECT"));
    }
    let mut flags = 0;
    if job.direct {
        flags |= libc::O_DIRECT;
    }
    flags |= match job.sync {
        SyncMode::None => 0,
        SyncMode::Sync => libc::O_SYNC,
        SyncMode::Dsync => libc::O_DSYNC,
    };
    let op = if job.writes() {
        "open for writing"
    } else {
        "open for reading"
    };
    let f = OpenOptions::new()
        .read(true)
        .write(job.writes())
        .custom_flags(flags)
        .open(path)
        .map_err(|e| EngineError::Io {
            path: path.clone(),
            op,
            source: e,
        })?;
    if job.engine.invalidate {
        drop_cached_pages(&f, path)?;
    }
    advise(&f, job);
    Ok(f)
}

/// `fadvise_hint`: the access-pattern advice for the whole file, as fio
/// gives it when it opens a file (`1`, the default: `POSIX_FADV_RANDOM`
/// for a random job, so the kernel reads ahead nothing and a buffered
/// random read costs the device one block). Advice is a hint: as in fio,
/// a refusal is not the job's error.
fn advise(f: &File, job: &PreparedJob) {
    use iolab_core::job::{FadviseHint, Pattern};
    use std::os::fd::AsRawFd;
    let random = job.rw.pattern == Pattern::Random;
    let advice = match job.engine.fadvise_hint {
        FadviseHint::None => return,
        FadviseHint::Pattern if random => libc::POSIX_FADV_RANDOM,
        FadviseHint::Pattern | FadviseHint::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        FadviseHint::Random => libc::POSIX_FADV_RANDOM,
        FadviseHint::Noreuse => libc::POSIX_FADV_NOREUSE,
    };
    // Safety: advice on an open descriptor; it changes no memory of ours.
    let _ = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, advice) };
}

/// `invalidate=1`: drop the file's clean cached pages, as fio does before
/// a job, so buffered reads start from the device (and before a verify
/// phase, whatever `invalidate` says: worker/mod.rs).
pub(crate) fn drop_cached_pages(f: &File, path: &Path) -> Result<(), EngineError> {
    use std::os::fd::AsRawFd;
    // Safety: advice on an open descriptor; it changes no memory of ours.
    let r = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if r != 0 {
        return Err(EngineError::Io {
            path: path.to_path_buf(),
            op: "drop cached pages (invalidate=1; set invalidate=0 to keep them)",
            source: std::io::Error::from_raw_os_error(r),
        });
    }
    Ok(())
}

/// The regions worker `worker` (0-based clone index) of `job` works on, one
/// per file of [`PreparedJob::files_for_worker`], in that order. For the
/// null engine (no files) the regions come from `size` alone.
pub fn regions_for_worker(
    layout: &Layout,
    job: &PreparedJob,
    worker: u32,
) -> Result<Vec<Region>, EngineError> {
    let paths = job.files_for_worker(worker);
    let nfiles = paths.len();
    paths
        .into_iter()
        .enumerate()
        .map(|(k, path)| {
            let file_bytes = layout.file(&path).map(|f| f.size_bytes);
            if plan::uses_files(job) && file_bytes.is_none() {
                return Err(EngineError::Lifecycle(format!(
                    "{} is not in the layout (job '{}'); pass every job to layout::prepare",
                    path.display(),
                    job.name
                )));
            }
            let regular = layout.file(&path).map(|f| f.kind) == Some(FileKind::Regular);
            let (start, len) = match file_bytes {
                Some(b)
                    if job.zones.fill_device && regular && job.file_len(k, nfiles).is_none() =>
                {
                    filldev::region(job, &path, b, nfiles)?
                }
                _ => plan::region(job, worker, (&path, k, nfiles), file_bytes)?,
            };
            Ok(Region { path, start, len })
        })
        .collect()
}
