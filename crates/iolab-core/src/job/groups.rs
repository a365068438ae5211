//! Option groups of a prepared job that the engine reads as a whole:
//! engine-specific options, amounts and run-ending options, and what the
//! data written looks like and how it is verified. Each is one struct with
//! its defaults, so a new option is a field here plus its table row.

use serde::{Deserialize, Serialize};

/// Options of single engines (fio's engine-specific options), grouped so a
/// new one is a field here plus its row in the option table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineOptions {
    /// `hipri`: pvsync2 issues with `RWF_HIPRI` (polled completion).
    pub hipri: bool,
    /// `cpuload`: percent of one CPU a cpuio worker burns (0 = not given).
    pub cpuload: u32,
    /// `cpuchunks`: length of one burn-and-rest cycle, microseconds.
    pub cpuchunks_us: u64,
    /// `invalidate`: drop the files' cached pages before the run.
    pub invalidate: bool,
    /// `pre_read`: read each worker's regions into the page cache before
    /// the run (buffered I/O only; it turns `invalidate` off, as in fio).
    pub pre_read: bool,
    /// `fadvise_hint`: the access-pattern advice given to the kernel for
    /// each file when it is opened (fio's default: by the job's pattern).
    pub fadvise_hint: FadviseHint,
    /// `numa_cpu_nodes`: NUMA nodes whose CPUs the workers may use (read
    /// from /sys when the run is prepared).
    pub numa_cpu_nodes: Option<Vec<usize>>,
    /// `atomic`: writes carry `RWF_ATOMIC` (pvsync2, libaio, io_uring).
    pub atomic: bool,
    /// io_uring's own options (fio's `fixedbufs`, `sqthread_poll`, …).
    pub uring: UringOptions,
}

/// io_uring's engine options, named as fio names them (`hipri` is in
/// [`EngineOptions`]: io_uring honours it with `IORING_SETUP_IOPOLL`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct UringOptions {
    /// `fixedbufs`: register the worker's buffers (`READ_FIXED`/`WRITE_FIXED`).
    /// iolab's default is on (fio's is off): it spares a page pin per I/O.
    pub fixedbufs: bool,
    /// `registerfiles`: register the files (fixed descriptors); default on.
    pub registerfiles: bool,
    /// `sqthread_poll`: a kernel thread polls the submission queue
    /// (`IORING_SETUP_SQPOLL`), so submitting costs no system call.
    pub sqthread_poll: bool,
    /// `sqthread_poll_cpu`: the CPU that thread is bound to (`IORING_SETUP_SQ_AFF`).
    pub sqthread_poll_cpu: Option<u32>,
    /// `nonvectored`: reads and writes as `READ`/`WRITE` (true, iolab's and
    /// fio's default) or as `READV`/`WRITEV` of one segment (false).
    pub nonvectored: bool,
    /// `uncached`: reads and writes carry `RWF_DONTCACHE` (buffered I/O
    /// whose pages are dropped once done).
    pub uncached: bool,
    /// `force_async`: every Nth request goes out with `IOSQE_ASYNC` (0 = none).
    pub force_async: u32,
}

impl Default for UringOptions {
    fn default() -> Self {
        UringOptions {
            fixedbufs: true,
            registerfiles: true,
            sqthread_poll: false,
            sqthread_poll_cpu: None,
            nonvectored: true,
            uncached: false,
            force_async: 0,
        }
    }
}

/// How much I/O a worker does beyond size × loops, and when the whole run
/// ends early (fio's amounts and exitall options).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Amounts {
    /// `io_size`/`io_limit`: bytes of I/O per worker; passes over the region
    /// repeat (loops is raised to cover it) and stop once this is issued.
    pub io_size: Option<u64>,
    /// `number_ios`: I/Os per worker, after which the worker stops.
    pub number_ios: Option<u64>,
    /// `exitall`: the first worker of this job to finish stops the run.
    pub exitall: bool,
    /// `exitall_on_error`: a worker of this job that fails stops the run.
    pub exitall_on_error: bool,
    /// `rate_min`: bytes/s per direction a worker must keep (0 = none).
    pub rate_min_bytes: [u64; 2],
    /// `rate_iops_min`: I/Os per second per direction (0 = none).
    pub rate_min_iops: [u64; 2],
    /// `ratecycle`: the window the minimums are averaged over, ms.
    pub ratecycle_ms: u64,
}

impl Default for Amounts {
    fn default() -> Self {
        Amounts {
            io_size: None,
            number_ios: None,
            exitall: false,
            exitall_on_error: false,
            rate_min_bytes: [0, 0],
            rate_min_iops: [0, 0],
            ratecycle_ms: 1000,
        }
    }
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            hipri: false,
            cpuload: 0,
            cpuchunks_us: 50_000,
            invalidate: true,
            pre_read: false,
            fadvise_hint: FadviseHint::Pattern,
            numa_cpu_nodes: None,
            atomic: false,
            uring: UringOptions::default(),
        }
    }
}

/// `fadvise_hint=`: the `posix_fadvise` advice for a job's files when
/// they are opened. fio's default, `1`, advises by the job's pattern:
/// `POSIX_FADV_RANDOM` for a random job (the kernel reads ahead nothing,
/// so a buffered random read costs the device one block, as fio measures
/// it) and `POSIX_FADV_SEQUENTIAL` otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FadviseHint {
    /// `0`: no advice.
    None,
    /// `1`: random or sequential, by the job's pattern.
    #[default]
    Pattern,
    Random,
    Sequential,
    Noreuse,
}

/// `verify=`: how written data is checked when read back (fio's names).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifyKind {
    /// No verification (`verify=0`, the default).
    #[default]
    Off,
    /// A header per chunk and a CRC-32C of its data (`crc32c`, `crc32c-intel`).
    Crc32c,
    Md5,
    Sha1,
    Sha256,
    /// XXH32 of the data.
    Xxhash,
    /// The header only (offset, length, seed, its own CRC).
    Meta,
    /// No header: every byte is `verify_pattern`, compared byte by byte.
    Pattern,
    /// Written as for a digest, but nothing is checked (fio's `null`).
    Null,
    /// fio's crc64 (CRC-64/REDIS: reflected, init 0, no final xor); last,
    /// so the kind byte in headers written before it stays the same.
    Crc64,
    /// fio's crc32 (crc/crc32.c): polynomial 0x04C11DB7, not reflected,
    /// init 0, no final xor — not zlib's CRC-32.
    Crc32,
    /// fio's crc16 (crc/crc16.c): CRC-16/ARC.
    Crc16,
    /// fio's crc7 (crc/crc7.c): CRC-7/MMC, one byte.
    Crc7,
}

impl VerifyKind {
    pub fn name(self) -> &'static str {
        match self {
            VerifyKind::Off => "0",
            VerifyKind::Crc32c => "crc32c",
            VerifyKind::Crc64 => "crc64",
            VerifyKind::Crc32 => "crc32",
            VerifyKind::Crc16 => "crc16",
            VerifyKind::Crc7 => "crc7",
            VerifyKind::Md5 => "md5",
            VerifyKind::Sha1 => "sha1",
            VerifyKind::Sha256 => "sha256",
            VerifyKind::Xxhash => "xxhash",
            VerifyKind::Meta => "meta",
            VerifyKind::Pattern => "pattern",
            VerifyKind::Null => "null",
        }
    }
}

/// Bytes of iolab's verify header at the start (or `verify_offset`) of
/// every verified chunk.
pub const VERIFY_HEADER_BYTES: u64 = 64;

/// What the data written looks like and how it is verified: fio's buffer
/// and verify options, grouped so a new one is a field here plus its row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DataOptions {
    /// `buffer_pattern`: bytes repeated over every buffer.
    pub buffer_pattern: Option<Vec<u8>>,
    pub zero_buffers: bool,
    /// Fresh random content before every write.
    pub refill_buffers: bool,
    /// Change a few bytes of every write so blocks do not repeat (fio's default).
    pub scramble_buffers: bool,
    /// `buffer_compress_percentage`: share of each chunk that compresses away.
    pub compress_pct: u32,
    /// `buffer_compress_chunk`, bytes.
    pub compress_chunk: u64,
    /// `dedupe_percentage`: share of writes that repeat an earlier block.
    pub dedupe_pct: u32,
    pub verify: VerifyKind,
    pub verify_pattern: Option<Vec<u8>>,
    pub do_verify: bool,
    pub verify_only: bool,
    pub verify_fatal: bool,
    /// Verify after every N writes (0 = after the write phase).
    pub verify_backlog: u64,
    /// Bytes per verified chunk (0 = the smallest block size).
    pub verify_interval: u64,
    /// Where the header sits in each chunk (swapped with the data there).
    pub verify_offset: u64,
    pub verify_dump: bool,
    /// `dedupe_mode`: where a duplicate write's content comes from.
    pub dedupe_mode: DedupeMode,
    /// `dedupe_working_set_percentage`: the working set's share of the region.
    pub dedupe_working_set_pct: u32,
    /// `dedupe_global`: working sets are shared among the workers that set it.
    pub dedupe_global: bool,
    /// `verify_write_sequence`: a verify read expects the seed of the last
    /// write to its block (0: any intact chunk passes, stale or not).
    pub verify_write_sequence: bool,
    /// `serialize_overlap`: an I/O waits until no in-flight I/O of its
    /// worker overlaps it.
    pub serialize_overlap: bool,
    /// `sprandom`: fio's SPRandom preconditioning places every write.
    pub sprandom: bool,
    /// `spr_op`: over-provisioning, in millionths (0.15 = 150000).
    pub spr_op_ppm: u32,
    /// `spr_num_regions`.
    pub spr_num_regions: u32,
    /// `spr_cs`: the drive's cache, bytes (0: none).
    pub spr_cs_bytes: u64,
    /// `trim_percentage`: share of the blocks a verify job logs that it
    /// also trims while it writes (fio's verify-trim; needs `trim_backlog`).
    pub trim_pct: u32,
    /// `trim_backlog`: trims start every N logged writes (0: never).
    pub trim_backlog: u64,
    /// `trim_backlog_batch`: trims per batch (0: `trim_backlog`).
    pub trim_backlog_batch: u64,
    /// `trim_verify_zero`: a trimmed block is read back and must be zero
    /// (else it leaves the verify log).
    pub trim_verify_zero: bool,
}

impl DataOptions {
    /// A verify job that trims some of its logged blocks (fio needs
    /// verify, trim_percentage and trim_backlog together).
    pub fn verify_trims(&self) -> bool {
        self.verify != VerifyKind::Off && self.trim_pct > 0 && self.trim_backlog > 0
    }
}

/// `dedupe_mode`: what a write chosen to be a duplicate repeats (fio's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DedupeMode {
    /// The last unique write (the duplicate share holds at every moment).
    Repeat,
    /// A block drawn from the working set: the first unique writes, as many
    /// as `dedupe_working_set_percentage` of the region holds.
    WorkingSet,
}

impl Default for DataOptions {
    fn default() -> Self {
        DataOptions {
            buffer_pattern: None,
            zero_buffers: false,
            refill_buffers: false,
            scramble_buffers: true,
            compress_pct: 0,
            compress_chunk: 512,
            dedupe_pct: 0,
            verify: VerifyKind::Off,
            verify_pattern: None,
            do_verify: true,
            verify_only: false,
            verify_fatal: false,
            verify_backlog: 0,
            verify_interval: 0,
            verify_offset: 0,
            verify_dump: false,
            dedupe_mode: DedupeMode::Repeat,
            dedupe_working_set_pct: 5,
            dedupe_global: false,
            verify_write_sequence: true,
            serialize_overlap: false,
            sprandom: false,
            spr_op_ppm: 150_000,
            spr_num_regions: 100,
            spr_cs_bytes: 0,
            trim_pct: 0,
            trim_backlog: 0,
            trim_backlog_batch: 0,
            trim_verify_zero: true,
        }
    }
}
