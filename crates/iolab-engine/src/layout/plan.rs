//! What every file must offer, gathered from the jobs before anything is
//! looked at on disk: how large it must be, whether any job writes to it or
//! opens it with O_DIRECT, and which region each worker uses.
//!
//! A path used by several jobs (or shared by all clones of one job) is
//! described once: its required size is the largest any job needs, and it
//! is "written" if any job writes. Pure functions, no system calls.

use std::path::{Path, PathBuf};

use iolab_core::engines::Target;
use iolab_core::job::{Preallocate, PreparedJob};
use iolab_core::JobError;

use crate::EngineError;

/// What the jobs need from one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileNeed {
    pub path: PathBuf,
    /// Largest `offset + region length` over the jobs that give `size`;
    /// `None` when no job does (the file or device must then exist).
    pub sized_bytes: Option<u64>,
    /// Largest `offset` over the jobs that do not give `size` (they use the
    /// file from `offset` to its end, so it must be larger than this).
    pub unsized_offset: Option<u64>,
    pub writes: bool,
    pub direct: bool,
    /// A job uses it with zonemode=zbd (a real zoned device is refused).
    pub zbd: bool,
    /// A job fills it (fill_device): that job's writes size it, not layout.
    pub fill_device: bool,
    /// How its blocks are reserved before the fill (`fallocate` of the
    /// first job that uses the path).
    pub prealloc: Preallocate,
    /// Whether its fill ends with fdatasync (`create_fsync` of the first
    /// job that uses the path).
    pub create_fsync: bool,
    /// Names of the jobs using the path, for messages.
    pub jobs: Vec<String>,
}

impl FileNeed {
    /// Bytes from the start of the file that jobs will touch, given its
    /// current size (`current_bytes`; 0 for a file still to be created):
    /// the largest `offset + size`, or the whole file when a job without
    /// `size` reads to its end. Errors when such a job would get an empty
    /// region.
    pub fn target_bytes(&self, current_bytes: u64) -> Result<u64, EngineError> {
        let Some(offset) = self.unsized_offset else {
            return Ok(self.sized_bytes.unwrap_or(0));
        };
        let target = self.sized_bytes.unwrap_or(0).max(current_bytes);
        if target <= offset {
            return Err(EngineError::File {
                path: self.path.clone(),
                reason: format!(
                    "is {target} bytes, not larger than offset = {offset} bytes, so a job without size= would have \
                     nothing to do; use a smaller offset or set size="
                ),
            });
        }
        Ok(target)
    }
}

/// Jobs that touch no file: the null engine only pretends to do I/O, cpuio
/// does none, and nbd jobs do theirs on a server's export (set up in
/// `run::nbd`).
pub(crate) fn uses_files(job: &PreparedJob) -> bool {
    job.ioengine.caps().target.opens_files()
}

/// Every path the jobs use, in first-use order, each described once.
pub(crate) fn file_needs(jobs: &[PreparedJob]) -> Result<Vec<FileNeed>, EngineError> {
    let mut needs: Vec<FileNeed> = Vec::new();
    for job in jobs {
        per_file_len(job)?;
        if !uses_files(job) {
            continue;
        }
        for worker in 0..job.workers() {
            let paths = job.files_for_worker(worker);
            let nfiles = paths.len();
            let offset = job.offset_of_worker(worker);
            for (k, path) in paths.into_iter().enumerate() {
                let sized = match job.file_len(k, nfiles) {
                    Some(len) => Some(region_end(&path, offset, len)?),
                    None => None,
                };
                let need = match needs.iter_mut().position(|n| n.path == path) {
                    Some(i) => &mut needs[i],
                    None => {
                        needs.push(empty_need(path));
                        needs.last_mut().expect("just pushed")
                    }
                };
                merge(need, job, sized, offset);
            }
        }
    }
    Ok(needs)
}

fn empty_need(path: PathBuf) -> FileNeed {
    FileNeed {
        path,
        sized_bytes: None,
        unsized_offset: None,
        writes: false,
        direct: false,
        zbd: false,
        fill_device: false,
        prealloc: Preallocate::Native,
        create_fsync: true,
        jobs: Vec::new(),
    }
}

fn merge(need: &mut FileNeed, job: &PreparedJob, sized: Option<u64>, offset: u64) {
    need.fill_device |= job.zones.fill_device;
    match sized {
        // fill_device: the job's writes size the file (see `filldev`).
        _ if job.zones.fill_device => {}
        Some(end) => need.sized_bytes = Some(need.sized_bytes.map_or(end, |b| b.max(end))),
        None => need.unsized_offset = Some(need.unsized_offset.map_or(offset, |o| o.max(offset))),
    }
    need.writes |= job.writes();
    need.direct |= job.direct;
    need.zbd |= job.zones.mode == iolab_core::job::ZoneMode::Zbd;
    if need.jobs.is_empty() {
        need.prealloc = job.files.fallocate;
        need.create_fsync = job.files.create_fsync;
    }
    if !need.jobs.contains(&job.name) {
        need.jobs.push(job.name.clone());
    }
}

/// Region length of each file of one worker: `size` split equally over the
/// worker's files (fio's rule), or `None` when `size` is not given.
pub(crate) fn per_file_len(job: &PreparedJob) -> Result<Option<u64>, EngineError> {
    let files = job.files_for_worker(0);
    if files.is_empty() && uses_files(job) {
        return Err(JobError::Conflict(format!(
            "job '{}' has no file: set filename= or directory=",
            job.name
        ))
        .into());
    }
    let Some(size) = job.size else {
        // nbd: the export's size, known once connected (run::nbd).
        if uses_files(job) || job.ioengine.caps().target == Target::NbdExport {
            return Ok(None);
        }
        return Err(JobError::Conflict(format!(
            "job '{}': ioengine=null needs size= (there is no file to take the size from)",
            job.name
        ))
        .into());
    };
    let per_file = size / files.len().max(1) as u64;
    if per_file == 0 {
        return Err(JobError::Conflict(format!(
            "job '{}': size={size} bytes split over {} files leaves 0 bytes per file; use a larger size",
            job.name,
            files.len()
        ))
        .into());
    }
    Ok(Some(per_file))
}

/// `offset + len`, refusing overflow with a message naming the file.
pub(crate) fn region_end(path: &Path, offset: u64, len: u64) -> Result<u64, EngineError> {
    offset.checked_add(len).ok_or_else(|| EngineError::File {
        path: path.to_path_buf(),
        reason: format!("offset ({offset}) + size ({len}) is larger than 2^64 bytes"),
    })
}

/// Region `(start, len)` of worker `worker` of one job in its file number
/// `file` of `nfiles` (`path`), a file of `file_bytes` bytes.
pub(crate) fn region(
    job: &PreparedJob,
    worker: u32,
    (path, file, nfiles): (&Path, usize, usize),
    file_bytes: Option<u64>,
) -> Result<(u64, u64), EngineError> {
    per_file_len(job)?;
    let offset = job.offset_of_worker(worker);
    if let Some(len) = job.file_len(file, nfiles) {
        region_end(path, offset, len)?;
        return Ok((offset, len));
    }
    let Some(file_bytes) = file_bytes else {
        return Err(EngineError::Lifecycle(format!(
            "{} was not prepared by layout::prepare for job '{}'",
            path.display(),
            job.name
        )));
    };
    match file_bytes.checked_sub(offset) {
        Some(len) if len > 0 => Ok((offset, len)),
        _ => Err(EngineError::File {
            path: path.to_path_buf(),
            reason: format!(
                "is {file_bytes} bytes, not larger than offset = {offset} bytes (worker {worker})"
            ),
        }),
    }
}
