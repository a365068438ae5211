//! The job model.
//!
//! A [`JobSpec`] is what the user wrote: a name and an ordered list of
//! fio-style `(option, value)` pairs (a job file section after `[global]`
//! was applied, or command-line `--opt=value` flags, or the Python API).
//! [`JobSpec::prepare`] validates it against the option table
//! ([`crate::options`]) into a [`PreparedJob`]: typed, with units resolved,
//! every value range-checked. Unknown or unsupported options are errors
//! that name the option — nothing is ignored.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::JobError;

mod errors;
mod files;
mod groups;
mod zones;
pub use errors::{errno_name, ErrorKind, ErrorOptions, ExitWhat};
mod control;
pub mod prio;
mod replay;
mod reporting;
mod think;
mod worker_opts;
pub use control::{IoControl, SubmitMode};
pub use files::{
    draw_sizes, parse_file_service, FileOptions, FileService, Preallocate, DEFAULT_FILENAME_FORMAT,
};
pub use groups::DedupeMode;
pub use groups::{
    Amounts, DataOptions, EngineOptions, FadviseHint, UringOptions, VerifyKind, VERIFY_HEADER_BYTES,
};
pub use prio::PrioOptions;
pub use replay::{LoadedLog, ReplayOptions, ReplaySkip};
pub use reporting::UnifiedRw;
pub use think::{ThinkBlocksType, ThinkOptions};
pub use worker_opts::{CpuMode, MemPolicy, WorkerOptions};
pub use zones::{ZoneMode, ZoneOptions};

/// Direction of one I/O. Index into per-direction arrays with `as usize`:
/// the measured ones ([`IoDir::MEASURED`], results and statistics) have
/// three slots, read, write and trim (fio's order); the per-direction
/// options (`bs`, `rate`, …) have two, and a trim takes the write slot's
/// ([`IoDir::option_slot`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoDir {
    Read = 0,
    Write = 1,
    /// A discard: fallocate(PUNCH_HOLE) on a file, BLKDISCARD on a block
    /// device, NBD_CMD_TRIM on an NBD export. Moves no data.
    Trim = 2,
}

impl IoDir {
    /// The directions that carry data and per-direction options.
    pub const ALL: [IoDir; 2] = [IoDir::Read, IoDir::Write];
    /// Every direction results count, in fio's order.
    pub const MEASURED: [IoDir; 3] = [IoDir::Read, IoDir::Write, IoDir::Trim];
    pub fn name(self) -> &'static str {
        match self {
            IoDir::Read => "read",
            IoDir::Write => "write",
            IoDir::Trim => "trim",
        }
    }
    /// The index of this direction's per-direction options (`bs`, `rate`,
    /// `blockalign`, …): a trim uses the write value, as fio's `bs=4k,8k`
    /// gives writes and trims 8k.
    pub fn option_slot(self) -> usize {
        match self {
            IoDir::Read => 0,
            IoDir::Write | IoDir::Trim => 1,
        }
    }
}

/// Offset pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Sequential,
    Random,
}

/// `rw=` resolved: pattern plus the read share in percent (100 = read only,
/// 0 = write only). `rw=rw`/`readwrite`/`randrw` take it from `rwmixread`
/// (default 50) or `rwmixwrite`. `trim` says whether the job trims
/// (`rw=trim`/`randtrim`: only; `trimwrite`/`randtrimwrite`: each block
/// trimmed, then written); the read share is 0 then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RwMix {
    pub pattern: Pattern,
    pub read_pct: u32,
    #[serde(default, skip_serializing_if = "TrimMode::is_none")]
    pub trim: TrimMode,
}

/// Whether and how `rw=` trims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrimMode {
    #[default]
    None,
    /// `rw=trim`, `randtrim`: every I/O a trim.
    Only,
    /// `rw=trimwrite`, `randtrimwrite`: a trim of each block, then a write
    /// of the same offset and length (fio's order).
    ThenWrite,
}

impl TrimMode {
    pub fn is_none(&self) -> bool {
        *self == TrimMode::None
    }
}

impl RwMix {
    pub fn does(&self, dir: IoDir) -> bool {
        match dir {
            IoDir::Read => self.read_pct > 0,
            IoDir::Write => self.read_pct < 100 && self.trim != TrimMode::Only,
            IoDir::Trim => self.trim != TrimMode::None,
        }
    }

    /// Whether the job uses `dir`'s per-direction options (`bs`, `rate`,
    /// …; see [`IoDir::option_slot`]): trims use the write slot's.
    pub fn uses_slot(&self, dir: IoDir) -> bool {
        match dir {
            IoDir::Read => self.does(IoDir::Read),
            IoDir::Write | IoDir::Trim => self.does(IoDir::Write) || self.does(IoDir::Trim),
        }
    }
}

/// Block sizes of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BsSpec {
    /// `bs=4k`.
    Fixed(u64),
    /// `bsrange=4k-64k`: uniform over multiples of the minimum (fio's rule),
    /// aligned to `blockalign`.
    Range { min: u64, max: u64 },
    /// `bssplit=4k/50:64k/50`: (size in bytes, share in percent); shares sum to 100.
    Split(Vec<(u64, u32)>),
}

impl BsSpec {
    pub fn min(&self) -> u64 {
        match self {
            BsSpec::Fixed(b) => *b,
            BsSpec::Range { min, .. } => *min,
            BsSpec::Split(v) => v.iter().map(|(b, _)| *b).min().unwrap_or(0),
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            BsSpec::Fixed(b) => *b,
            BsSpec::Range { max, .. } => *max,
            BsSpec::Split(v) => v.iter().map(|(b, _)| *b).max().unwrap_or(0),
        }
    }
}

/// The engines and what each can do: one table, `crate::engines`.
pub use crate::engines::IoEngine;

/// How to reach an NBD server: `nbd://host[:port]/export` (TCP, port 10809
/// by default) or `nbd+unix:///export?socket=PATH` (libnbd's and fio's URI
/// forms).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NbdAddr {
    Tcp { host: String, port: u16 },
    Unix { socket: PathBuf },
}

/// `ioengine=nbd`: the parsed `uri=` and `nbd_connections=`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NbdTarget {
    /// The URI as written, for messages and the result.
    pub uri: String,
    pub addr: NbdAddr,
    /// Export name ("" = the server's default export).
    pub export: String,
    /// Connections per worker; requests are spread over them round-robin.
    pub connections: u32,
}

/// `sync=`: open flags for synchronous writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    None,
    /// O_SYNC (`sync=1` or `sync=sync`).
    Sync,
    /// O_DSYNC (`sync=dsync`, or the `dsync=1` option).
    Dsync,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RateProcess {
    Linear,
    Poisson,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RandomDistribution {
    /// `random`: uniform.
    Uniform,
    /// `zipf:theta` (theta > 0, != 1 as in fio).
    Zipf(f64),
    /// `pareto:h` (0 < h < 1).
    Pareto(f64),
    /// `normal:dev` — Gaussian around the middle, `dev` percent of the
    /// region as standard deviation.
    Normal(f64),
    /// `zoned:a1/s1:a2/s2...` — `access_pct` of I/Os go to the next
    /// `size_pct` of the region, zones in order.
    Zoned(Vec<Zone>),
    /// `sequence:2,0,1` — these block indices (of the smallest block size),
    /// in this order, over and over; with `random_sequence_stride` each
    /// round moves on by the sequence's length (2,0,1, 5,3,4, ...).
    Sequence { blocks: Vec<u64>, stride: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    pub access_pct: f64,
    pub size_pct: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpusAllowedPolicy {
    /// All workers of the job share the whole set.
    Shared,
    /// Worker i is pinned to the i-th CPU of the set (wrapping).
    Split,
}

/// What the user wrote for one job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub name: String,
    /// Ordered `(option, value)`; `value` is `None` for bare flags (`time_based`).
    /// Later entries override earlier ones, so `[global]` entries go first.
    pub options: Vec<(String, Option<String>)>,
}

/// A validated job. Sizes in bytes, times in nanoseconds, rates in units/s.
/// Per-direction arrays are indexed by [`IoDir`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparedJob {
    pub name: String,
    /// Files this job's workers use. If the user gave `filename`, every
    /// worker (numjobs clone) shares these files; otherwise each worker i
    /// gets `directory/name.i.0` (fio's naming) — see [`PreparedJob::files_for_worker`].
    pub filenames: Vec<PathBuf>,
    /// True when `filename` was given (files shared by all clones).
    pub shared_files: bool,
    pub directory: Option<PathBuf>,
    /// Bytes of I/O per worker per pass (split equally among the files);
    /// `None` = the whole existing file/device from `offset` on.
    pub size: Option<u64>,
    /// Start offset within each file, in bytes.
    pub offset: u64,
    pub rw: RwMix,
    /// `rw=read:17m`: bytes added to the sequential position after each
    /// I/O (negative: moved back; `rw=read:-8k` with bs=4k reads backwards);
    /// the position wraps around the region, as in fio. 0 = none.
    #[serde(default)]
    pub rw_seq_add_bytes: i64,
    pub bs: [BsSpec; 2],
    /// Offset alignment of random I/O, bytes; 0 = not given (the random
    /// map's block, or the direction's minimum block size as in fio).
    pub blockalign: [u64; 2],
    /// `percentage_random`: per direction, the share (%) of a random job's
    /// I/Os whose offset is random; each other one starts where the
    /// direction's last I/O in its file ended. 100 (fio's default) on a
    /// sequential job and in results written before the option existed.
    #[serde(default = "fully_random")]
    pub percentage_random: [u32; 2],
    pub iodepth: u32,
    pub iodepth_batch_submit: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    pub numjobs: u32,
    pub runtime_ns: Option<u64>,
    pub time_based: bool,
    pub ramp_time_ns: u64,
    pub startdelay_ns: u64,
    pub loops: u32,
    pub direct: bool,
    pub sync: SyncMode,
    /// fsync after every N writes (0 = never).
    pub fsync: u32,
    /// fdatasync after every N writes (0 = never).
    pub fdatasync: u32,
    pub end_fsync: bool,
    pub ioengine: IoEngine,
    /// The server for `ioengine=nbd` (None for every other engine, and in
    /// results written before the nbd engine existed).
    #[serde(default)]
    pub nbd: Option<NbdTarget>,
    /// Engine-specific options (absent in older results: all defaults).
    #[serde(default)]
    pub engine: EngineOptions,
    /// Buffer contents and verification (absent in older results: defaults).
    #[serde(default)]
    pub data: DataOptions,
    /// io_size and number_ios (absent in older results: no limits).
    #[serde(default)]
    pub amounts: Amounts,
    /// I/O priorities: prio, prioclass, cmdprio_* (absent: none).
    #[serde(default)]
    pub prio: PrioOptions,
    /// numa_mem_policy, cpumode, per_io_log (absent: defaults).
    #[serde(default)]
    pub worker: WorkerOptions,
    /// write_iolog, read_iolog and replay_* (absent in older results: none).
    #[serde(default)]
    pub replay: ReplayOptions,
    /// nrfiles, filesize, filename_format (absent in older results: one
    /// file per worker named name.N.0).
    #[serde(default)]
    pub files: FileOptions,
    /// zonemode and its sizes, fill_device (absent in older results: none).
    #[serde(default)]
    pub zones: ZoneOptions,
    /// continue_on_error, ignore_error, error_dump, exit_what (absent in
    /// older results: fio's defaults).
    #[serde(default)]
    pub errors: ErrorOptions,
    /// `offset_increment`: worker N starts at offset + N × this, bytes.
    #[serde(default)]
    pub offset_increment: u64,
    /// flow, latency_target and io_submit_mode (absent in older results: off).
    #[serde(default)]
    pub control: IoControl,
    pub rate_bytes_per_s: [Option<u64>; 2],
    pub rate_iops: [Option<u64>; 2],
    pub rate_process: RateProcess,
    pub thinktime_ns: u64,
    /// `thinktime_blocks`, `_blocks_type`, `_spin`, `_iotime` (absent in
    /// older results: fio's defaults).
    #[serde(default, skip_serializing_if = "ThinkOptions::is_default")]
    pub think: ThinkOptions,
    pub cpus_allowed: Option<Vec<usize>>,
    pub cpus_allowed_policy: CpusAllowedPolicy,
    pub randseed: u64,
    pub randrepeat: bool,
    /// `randseed` was written by the user: every host of a fleet draws the
    /// same sequence (otherwise each host's rank is mixed into the seeds).
    #[serde(default)]
    pub randseed_given: bool,
    /// The run-wide number of this job's first worker (fio's
    /// `thread_number` less one), mixed into its workers' seeds so that
    /// jobs differ as fio's do. Set by the engine's run; 0 for a lone job.
    #[serde(default)]
    pub first_worker: u32,
    /// The fleet host's rank, mixed into the seeds unless `randseed` was
    /// given; 0 for a single-host run.
    #[serde(default)]
    pub seed_host: u32,
    pub norandommap: bool,
    pub random_distribution: RandomDistribution,
    /// Percentiles to report, in percent (e.g. 99.9).
    pub percentile_list: Vec<f64>,
    pub group_reporting: bool,
    /// `unified_rw_reporting` (absent in older results: none).
    #[serde(default, skip_serializing_if = "UnifiedRw::is_none")]
    pub unified_rw_reporting: UnifiedRw,
    pub stonewall: bool,
    /// How the options were taken where it may surprise: settings that have
    /// no effect (rwmixread with rw=read), values adjusted as fio adjusts
    /// them (iodepth with a synchronous engine). One sentence each, for the
    /// CLI to print and the result to keep.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The options as written, for the result's record of its configuration.
    pub spec: JobSpec,
}

fn fully_random() -> [u32; 2] {
    [100, 100]
}

/// Percentiles reported when `percentile_list` is not given.
pub const DEFAULT_PERCENTILES: [f64; 16] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99,
];

impl PreparedJob {
    /// Total workers (threads) of this job.
    pub fn workers(&self) -> u32 {
        self.numjobs
    }

    /// Where worker `i` (0-based clone index) starts in each file: `offset`
    /// plus `i × offset_increment` (fio's rule); `u64::MAX` when that does
    /// not fit, which the engine refuses as a region past the end.
    pub fn offset_of_worker(&self, i: u32) -> u64 {
        u64::from(i)
            .checked_mul(self.offset_increment)
            .and_then(|d| d.checked_add(self.offset))
            .unwrap_or(u64::MAX)
    }

    /// Files worker `i` (0-based clone index) works on.
    /// For `ioengine=nbd` this is the URI: the one "file" every worker uses.
    pub fn files_for_worker(&self, i: u32) -> Vec<PathBuf> {
        if let Some(nbd) = &self.nbd {
            return vec![PathBuf::from(&nbd.uri)];
        }
        if self.shared_files {
            return self.filenames.clone();
        }
        let dir = self.directory.clone().unwrap_or_else(|| PathBuf::from("."));
        self.files.generated(&dir, &self.name, i)
    }

    /// Bytes of file number `file` (index into [`Self::files_for_worker`])
    /// a worker uses per pass: its `filesize`, or `size` split equally over
    /// the files (fio's rule); `None` when `size` is not given.
    pub fn file_len(&self, file: usize, nfiles: usize) -> Option<u64> {
        if let Some(len) = self.files.sizes_bytes.get(file) {
            return Some(*len);
        }
        self.size.map(|s| s / nfiles.max(1) as u64)
    }

    /// True if the job is rate limited in either direction.
    pub fn rate_limited(&self) -> bool {
        self.rate_bytes_per_s.iter().any(Option::is_some)
            || self.rate_iops.iter().any(Option::is_some)
    }

    /// Whether this job issues trims: `rw=trim` and its kin, fio's
    /// verify-trim (`trim_percentage` with `trim_backlog`), or a replayed
    /// log's `trim` lines.
    pub fn trims(&self) -> bool {
        self.rw.does(IoDir::Trim) || self.data.verify_trims() || self.replay.has_trims
    }

    /// Whether this job may change its files' contents — it writes or
    /// trims — and so needs them writable and checked for safety.
    pub fn writes(&self) -> bool {
        self.rw.does(IoDir::Write) || self.trims()
    }
}

impl JobSpec {
    pub fn new(name: impl Into<String>) -> Self {
        JobSpec {
            name: name.into(),
            options: Vec::new(),
        }
    }

    /// Append an option (builder style).
    pub fn opt(mut self, name: &str, value: Option<&str>) -> Self {
        self.options
            .push((name.to_string(), value.map(str::to_string)));
        self
    }

    /// Append options written as on fio's command line without the dashes:
    /// `"bs=4k"`, or a bare flag such as `"time_based"` (builder style).
    pub fn args<'a>(mut self, args: impl IntoIterator<Item = &'a str>) -> Self {
        for arg in args {
            self = match arg.split_once('=') {
                Some((name, value)) => self.opt(name, Some(value)),
                None => self.opt(arg, None),
            };
        }
        self
    }

    /// Validate into a [`PreparedJob`]. See [`crate::options`] for the table.
    pub fn prepare(&self) -> Result<PreparedJob, JobError> {
        crate::options::prepare(self)
    }
}
