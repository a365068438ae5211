//! The files a job creates and how its amount is spread over them (fio's
//! `nrfiles`, `filesize`, `filename_format`): how many files each worker
//! has, what they are called, and how many bytes of each it uses.
//!
//! Sizes are resolved once, when the job is prepared (`options::files`),
//! so every worker of a job and the layout see the same sizes; a
//! `filesize` range is drawn there from the job's seed.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// fio's default `filename_format`.
pub const DEFAULT_FILENAME_FORMAT: &str = "$jobname.$jobnum.$filenum";

/// The file options of one job, grouped so a new one is a field here plus
/// its row in the option table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileOptions {
    /// `create_fsync`: flush a file's data to the device once iolab has
    /// laid it out (fio's default); 0 leaves it to writeback.
    pub create_fsync: bool,
    /// `nrfiles`: files per worker that iolab creates (no `filename`).
    pub nrfiles: u32,
    /// `filesize`: the size of each file, or a range `(lo, hi)` each file's
    /// size is drawn from (bytes). `None`: `size` split equally.
    pub filesize: Option<(u64, u64)>,
    /// `filename_format`, with fio's tokens ($jobname, $jobnum, $filenum,
    /// $clientuid).
    pub filename_format: String,
    /// Bytes each file is used for, by file index, resolved from
    /// `filesize` when the job was prepared; empty when `size` is split
    /// equally.
    pub sizes_bytes: Vec<u64>,
    /// `file_service_type`: how a worker moves between its files.
    pub service: FileService,
    /// The `:N` of `file_service_type`: I/Os on one file before moving on
    /// (fio's default 1).
    pub service_batch: u32,
    /// `unlink`: remove the job's files at the end of the run, but only
    /// those iolab created (its marker says so).
    pub unlink: bool,
    /// `fallocate`: how the blocks of a file iolab lays out are reserved
    /// before it is filled.
    pub fallocate: Preallocate,
}

/// fio's `fallocate` modes: how a file's blocks are reserved before iolab
/// fills it. The fill writes every byte either way (a read benchmark on
/// holes would measure memset), so the mode decides only how the file is
/// laid out on the filesystem (extents reserved up front or as written).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preallocate {
    /// No reservation: blocks are allocated as the fill writes them.
    None,
    /// `fallocate(2)` with no flags; a filesystem without it is filled all
    /// the same (fio's default on Linux).
    #[default]
    Native,
    /// `posix_fallocate(3)`: as native, but an error when the filesystem
    /// cannot reserve the blocks.
    Posix,
    /// `fallocate(2)` with `FALLOC_FL_KEEP_SIZE`: blocks reserved, the
    /// size grows as the fill writes.
    Keep,
    /// `ftruncate(2)` to the final size (a sparse file), then filled.
    Truncate,
}

impl Preallocate {
    /// fio's spellings: none, native, posix, keep, truncate, 0 (none), 1 (posix).
    pub fn parse(s: &str) -> Result<Preallocate, String> {
        Ok(match s {
            "none" | "0" => Preallocate::None,
            "native" => Preallocate::Native,
            "posix" | "1" => Preallocate::Posix,
            "keep" => Preallocate::Keep,
            "truncate" => Preallocate::Truncate,
            _ => return Err("expected one of none, native, posix, keep, truncate, 0 or 1".into()),
        })
    }
}

/// fio's `file_service_type` kinds iolab implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileService {
    /// Files in turn, `service_batch` I/Os each.
    Roundrobin,
    /// A file drawn at random among those with bytes left, `service_batch`
    /// I/Os each.
    Random,
    /// Each file to its end before the next.
    Sequential,
}

impl Default for FileOptions {
    fn default() -> Self {
        FileOptions {
            nrfiles: 1,
            filesize: None,
            filename_format: DEFAULT_FILENAME_FORMAT.into(),
            sizes_bytes: Vec::new(),
            service: FileService::Roundrobin,
            service_batch: 1,
            unlink: false,
            fallocate: Preallocate::Native,
            create_fsync: true,
        }
    }
}

impl FileOptions {
    /// The name of file `filenum` of worker `jobnum` of job `jobname`.
    /// `$clientuid` is the client's address in fio's client/server mode
    /// and empty in a local run, as in fio; iolab only runs locally.
    pub fn file_name(&self, jobname: &str, jobnum: u32, filenum: u32) -> String {
        // Longest token first: none is a prefix of another, but keep the
        // order explicit so a future `$jobnumber` cannot be eaten.
        self.filename_format
            .replace("$clientuid", "")
            .replace("$jobname", jobname)
            .replace("$jobnum", &jobnum.to_string())
            .replace("$filenum", &filenum.to_string())
    }

    /// Files of worker `jobnum` that iolab creates in `dir`.
    pub fn generated(&self, dir: &std::path::Path, jobname: &str, jobnum: u32) -> Vec<PathBuf> {
        (0..self.nrfiles)
            .map(|f| dir.join(self.file_name(jobname, jobnum, f)))
            .collect()
    }
}

/// Parse fio's `file_service_type` value: `roundrobin`, `random` or
/// `sequential`, optionally with `:N` (I/Os per file before switching).
pub fn parse_file_service(text: &str) -> Result<(FileService, u32), String> {
    let (kind, batch) = match text.split_once(':') {
        Some((k, n)) => {
            let n: u32 = n
                .trim()
                .parse()
                .map_err(|_| format!("':{n}' is not a whole number of I/Os"))?;
            if n == 0 {
                return Err("the :N batch must be at least 1".into());
            }
            (k, n)
        }
        None => (text, 1),
    };
    let kind = match kind.trim() {
        "roundrobin" => FileService::Roundrobin,
        "random" => FileService::Random,
        "sequential" => FileService::Sequential,
        other => {
            return Err(format!(
                "'{other}' is not supported; use roundrobin, random or sequential (fio's \
                 zipf, pareto, normal and gauss file choices are not implemented)"
            ))
        }
    };
    Ok((kind, batch))
}

/// Bytes of each of `n` files when `filesize` is `(lo, hi)`: `lo` when
/// fixed; otherwise drawn uniformly in the range from `seed`, rounded down
/// to `grain` (the smallest block size, as fio does) but never below `lo`
/// rounded up to it. Deterministic: the same seed gives the same sizes.
pub fn draw_sizes(lo: u64, hi: u64, n: u32, grain: u64, seed: u64) -> Vec<u64> {
    let grain = grain.max(1);
    (0..n)
        .map(|f| {
            if lo == hi {
                return lo;
            }
            let r = crate::gen::mix64(seed ^ crate::gen::mix64(u64::from(f) + 1));
            let drawn = lo + r % (hi - lo + 1);
            let floor = lo.div_ceil(grain) * grain;
            (drawn - drawn % grain).max(floor).min(hi.max(floor))
        })
        .collect()
}
