//! The option table: every job option iolab accepts, in fio's vocabulary.
//!
//! A declarative list, so it is long on purpose. Each row carries its
//! setter (`set`): how the value is parsed and where it is stored, so a new
//! option is one row here plus its field. Defaults written as
//! [`DefaultValue::Value`] are parsed and applied exactly like user input
//! (see `draft::Draft::with_defaults`), so the documented default is the
//! one in force.

use super::val::{parse_bs_range, positive_size, put};
use super::values;
use super::DefaultValue::{Note, Value};
use super::OptionDef;
use super::OptionKind::{self, *};
use crate::job::BsSpec;
use crate::units::{self, parse_size, NS_PER_S, NS_PER_US};

const SECONDS: OptionKind = Time {
    default_unit_ns: NS_PER_S,
};
const MICROSECONDS: OptionKind = Time {
    default_unit_ns: NS_PER_US,
};

/// The job's options (the data and verify rows are in `table_data`).
/// Order = documentation order.
pub(super) static JOB_OPTIONS: &[OptionDef] = &[
    // --- identity -------------------------------------------------------
    OptionDef {
        name: "name",
        set: |d, v| put(&mut d.name, v.nonempty_text().map(str::to_string)),
        aliases: &[],
        kind: Text,
        default: Note("the job's section name or --name"),
        unit: "",
        help: "Name of the job; generated files are called name.N.0.",
    },
    OptionDef {
        name: "description",
        // Kept in the spec, which the prepared job carries.
        set: |_, _| Ok(()),
        aliases: &[],
        kind: Text,
        default: Note("none"),
        unit: "",
        help: "Free text kept with the job's configuration in the result.",
    },
    // --- files ----------------------------------------------------------
    OptionDef {
        name: "filename",
        set: |d, v| put(&mut d.filename, v.some_text()),
        aliases: &[],
        kind: Text,
        default: Note("each worker N uses its own file directory/name.N.0"),
        unit: "",
        help: "File(s) or device(s) to use, separated by ':' (write '\\:' for a colon in a \
               name). All workers (numjobs) share them; size is split evenly among them.",
    },
    OptionDef {
        name: "directory",
        set: |d, v| put(&mut d.directory, v.some_text()),
        aliases: &[],
        kind: Text,
        default: Note("the current directory"),
        unit: "",
        help: "Directory for generated files, and prefix of relative filename entries. \
               One directory only.",
    },
    OptionDef {
        name: "size",
        set: |d, v| {
            if let Some(n) = super::table_zones::zone_count(v) {
                d.zones_given.size = Some(n?);
                return Ok(());
            }
            d.zones_given.size = None;
            put(
                &mut d.size,
                v.size_no_pct().and_then(|n| v.positive(n)).map(Some),
            )
        },
        aliases: &[],
        kind: Size,
        default: Note(
            "the whole existing file or device (needs filename), or nbd export, from offset on",
        ),
        unit: "bytes",
        help: "Bytes of I/O per worker per pass, split evenly among the files. Required \
               when iolab creates the files. A percentage (50%) of existing files is \
               resolved by `iolab run` (fio compatibility, below).",
    },
    OptionDef {
        name: "offset",
        set: |d, v| {
            if let Some(n) = super::table_zones::zone_count(v) {
                d.zones_given.offset = Some(n?);
                return Ok(());
            }
            d.zones_given.offset = None;
            put(&mut d.offset, v.size_no_pct())
        },
        aliases: &[],
        kind: Size,
        default: Value("0"),
        unit: "bytes",
        help: "Start of the I/O region within each file. A percentage is resolved by \
               `iolab run` against existing files.",
    },
    OptionDef {
        name: "io_size",
        set: |d, v| {
            put(
                &mut d.amounts.io_size,
                v.size().and_then(|n| v.positive(n)).map(Some),
            )
        },
        aliases: &["io_limit"],
        kind: Size,
        default: Note("size x loops"),
        unit: "bytes",
        help: "Bytes of I/O per worker; when more than size, passes over the region repeat \
               until this much is issued (as in fio). Overrides loops.",
    },
    OptionDef {
        name: "number_ios",
        set: |d, v| {
            put(
                &mut d.amounts.number_ios,
                v.size().and_then(|n| v.positive(n)).map(Some),
            )
        },
        aliases: &[],
        kind: Int,
        default: Note("no limit"),
        unit: "I/Os",
        help: "Stop each worker after this many I/Os, even if size is not done.",
    },
    OptionDef {
        name: "thread",
        set: |d, v| d.apply_thread(v.flag()?),
        aliases: &["threads"],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "Accepted for fio job files: iolab always runs workers as threads (fio's \
               thread=1); thread=0 (processes) is not offered: it runs threads and says so.",
    },
    OptionDef {
        name: "exitall",
        set: |d, v| put(&mut d.amounts.exitall, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "When a worker of this job finishes, stop the jobs exit_what names: by \
               default its stonewall group (the next group still starts); exit_what=all \
               stops every job and no later group starts.",
    },
    OptionDef {
        name: "exitall_on_error",
        set: |d, v| put(&mut d.amounts.exitall_on_error, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "When a worker of this job fails, stop the jobs exit_what names (as \
               exitall does); later groups do not start after a failure.",
    },
    // --- what I/O -------------------------------------------------------
    OptionDef {
        name: "rw",
        set: |d, v| d.apply_rw(v),
        aliases: &["readwrite"],
        kind: Choice(&[
            "read",
            "write",
            "randread",
            "randwrite",
            "rw",
            "readwrite",
            "randrw",
            "trim",
            "randtrim",
            "trimwrite",
            "randtrimwrite",
        ]),
        default: Value("read"),
        unit: "",
        help: "I/O pattern: sequential or random reads, writes, or a mix (rw/readwrite = \
               sequential mix, randrw = random mix; share from rwmixread), or trims: \
               trim/randtrim discard blocks, trimwrite/randtrimwrite trim each block and \
               then write it (fio's order; io_size and number_ios count the writes). A trim \
               is fallocate(PUNCH_HOLE) on a file, BLKDISCARD on a block device, NBD_CMD_TRIM \
               with ioengine=nbd; trims use the write value of bs, rate and the other \
               read,write options. fio's offset modifier for sequential patterns: \
               rw=read:17m adds 17 MiB after each I/O, rw=read:-8k steps back (reads \
               backwards with bs=4k).",
    },
    OptionDef {
        name: "rwmixread",
        set: |d, v| d.apply_rwmix("rwmixread", v),
        aliases: &[],
        kind: Int,
        default: Value("50"),
        unit: "%",
        help: "Share of reads in a mixed workload (0-100).",
    },
    OptionDef {
        name: "rwmixwrite",
        set: |d, v| d.apply_rwmix("rwmixwrite", v),
        aliases: &[],
        kind: Int,
        default: Note("100 - rwmixread"),
        unit: "%",
        help: "Share of writes in a mixed workload; the later of rwmixread/rwmixwrite wins \
               (as in fio).",
    },
    OptionDef {
        name: "bs",
        set: |d, v| v.per_dir(&mut d.bs, |t, kb| Ok(BsSpec::Fixed(positive_size(t, kb)?))),
        aliases: &["blocksize"],
        kind: SizePerDir,
        // Written in bytes so that kb_base=1000 leaves it at 4096, as in fio.
        default: Value("4096"),
        unit: "bytes",
        help: "Block size, or read,write block sizes ('4k,64k'; ',64k' sets writes only). \
               The last of bs/bsrange/bssplit given wins.",
    },
    OptionDef {
        name: "bsrange",
        set: |d, v| v.per_dir(&mut d.bs, parse_bs_range),
        aliases: &["blocksize_range"],
        kind: RangePerDir,
        default: Note("bs"),
        unit: "bytes",
        help: "Block sizes drawn uniformly from min-max in multiples of min, per direction \
               ('4k-64k' or '4k-64k,8k-16k').",
    },
    OptionDef {
        name: "bssplit",
        set: |d, v| {
            v.per_dir(&mut d.bs, |t, kb| {
                units::parse_bssplit(t, kb).map(BsSpec::Split)
            })
        },
        aliases: &[],
        kind: SplitPerDir,
        default: Note("bs"),
        unit: "bytes/%",
        help: "Weighted block sizes 'size/percent:size/percent', per direction separated by \
               ','. Whole percents adding up to 100; blank shares split the rest evenly.",
    },
    OptionDef {
        name: "blockalign",
        set: |d, v| v.per_dir(&mut d.blockalign, |t, kb| Ok(Some(positive_size(t, kb)?))),
        aliases: &["ba"],
        kind: SizePerDir,
        default: Note("the smallest block size of the direction"),
        unit: "bytes",
        help: "Alignment of random offsets, per direction. Any value other than the smallest \
               block size turns off the random map (as in fio); no effect on sequential I/O.",
    },
    // --- queueing -------------------------------------------------------
    OptionDef {
        name: "iodepth",
        set: |d, v| put(&mut d.iodepth, v.u32_min(1)),
        aliases: &[],
        kind: Int,
        default: Value("1"),
        unit: "I/Os",
        help: "I/Os kept in flight per worker. Synchronous engines (see ioengine) always \
               keep 1.",
    },
    OptionDef {
        name: "iodepth_batch_submit",
        set: |d, v| put(&mut d.batch_submit, v.u32_min(0)),
        aliases: &["iodepth_batch"],
        kind: Int,
        default: Value("1"),
        unit: "I/Os",
        help: "I/Os submitted per system call; 0 means iodepth. Capped at iodepth.",
    },
    OptionDef {
        name: "iodepth_batch_complete_min",
        set: |d, v| put(&mut d.batch_complete_min, v.u32_min(0)),
        aliases: &["iodepth_batch_complete"],
        kind: Int,
        default: Value("1"),
        unit: "I/Os",
        help: "Completions to wait for per reap. Capped at iodepth. 0 is kept as written but \
               waits for 1, as in fio: the worker reaps only when the queue is full (or it \
               must wait), and a full queue must give one back.",
    },
    OptionDef {
        name: "iodepth_batch_complete_max",
        set: |d, v| put(&mut d.batch_complete_max, v.u32_min(1).map(Some)),
        aliases: &[],
        kind: Int,
        default: Note("iodepth_batch_complete_min (as in fio)"),
        unit: "I/Os",
        help: "Most completions taken per reap (at least 1, not below the minimum). \
               Capped at iodepth.",
    },
    OptionDef {
        name: "numjobs",
        set: |d, v| put(&mut d.numjobs, v.u32_min(1)),
        aliases: &[],
        kind: Int,
        default: Value("1"),
        unit: "workers",
        help: "Workers (threads) running this job, each with its own queue.",
    },
    // --- time -----------------------------------------------------------
    OptionDef {
        name: "runtime",
        set: |d, v| put(&mut d.runtime_ns, v.time()),
        aliases: &["timeout"],
        kind: SECONDS,
        default: Note("none: run until size (x loops) is done"),
        unit: "s",
        help: "Stop after this time (units ns, us, ms, s, m, h, d). 0 means no limit.",
    },
    OptionDef {
        name: "time_based",
        set: |d, v| put(&mut d.time_based, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Keep running (looping over the region) until runtime has passed. Without \
               runtime it has no effect, as in fio 3.33 (the job does its size once), with a \
               note.",
    },
    OptionDef {
        name: "ramp_time",
        set: |d, v| put(&mut d.ramp_time_ns, v.time()),
        aliases: &[],
        kind: SECONDS,
        default: Value("0"),
        unit: "s",
        help: "Run this long before measuring; not counted in the results.",
    },
    OptionDef {
        name: "startdelay",
        set: |d, v| put(&mut d.startdelay_ns, v.time_no_range()),
        aliases: &[],
        kind: SECONDS,
        default: Value("0"),
        unit: "s",
        help: "Wait this long after the common start before starting. Ranges not supported.",
    },
    OptionDef {
        name: "loops",
        set: |d, v| put(&mut d.loops, v.u32_min(1)),
        aliases: &[],
        kind: Int,
        default: Value("1"),
        unit: "passes",
        help: "Passes over the region (when not time_based).",
    },
    // --- caching and durability ----------------------------------------
    OptionDef {
        name: "direct",
        set: |d, v| put(&mut d.direct, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Open with O_DIRECT (bypass the page cache). Block sizes, blockalign and \
               offset must then be multiples of the file system's O_DIRECT alignment (statx \
               STATX_DIOALIGN, else a read probe, else the device's logical block size): 1 \
               on FUSE or tmpfs that take unaligned O_DIRECT, 512 or 4096 on ext4/xfs.",
    },
    OptionDef {
        name: "buffered",
        set: |d, v| put(&mut d.direct, v.flag().map(|b| !b)),
        aliases: &[],
        kind: Bool,
        default: Note("1 (the opposite of direct)"),
        unit: "",
        help: "The opposite of direct; the later of the two wins.",
    },
    OptionDef {
        name: "pre_read",
        set: |d, v| put(&mut d.engine.pre_read, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Read each worker's region of its files into the page cache before the run \
               starts (not measured), as fio does; it turns invalidate off, so buffered \
               reads then come from the cache. Buffered I/O only: refused with direct=1.",
    },
    OptionDef {
        name: "invalidate",
        set: |d, v| put(&mut d.engine.invalidate, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "Drop the files' cached pages (posix_fadvise DONTNEED) when a worker opens \
               them and again at the start of every later pass (a time_based run wrapping \
               around, each of loops), so buffered reads come from the device, as fio's \
               default does. Dirty pages stay until written back.",
    },
    OptionDef {
        name: "fadvise_hint",
        set: |d, v| put(&mut d.engine.fadvise_hint, v.wrap(values::parse_fadvise_hint(v.text()))),
        aliases: &[],
        kind: Choice(&["0", "1", "random", "sequential", "noreuse"]),
        default: Value("1"),
        unit: "",
        help: "posix_fadvise advice for each file when a worker opens it, as fio gives it: \
               1 = random (POSIX_FADV_RANDOM: no read-ahead) for a random job, sequential \
               otherwise; 0 = none; or random, sequential, noreuse.",
    },
    OptionDef {
        name: "sync",
        set: |d, v| put(&mut d.sync, v.wrap(values::parse_sync(v.text()))),
        aliases: &[],
        kind: Choice(&["none", "0", "sync", "1", "dsync"]),
        default: Value("none"),
        unit: "",
        help: "Synchronous writes: sync/1 opens with O_SYNC, dsync with O_DSYNC.",
    },
    OptionDef {
        name: "dsync",
        set: |d, v| d.apply_dsync(v.flag()?),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Same as sync=dsync (an older fio spelling; fio 3.33 no longer has it).",
    },
    OptionDef {
        name: "fsync",
        set: |d, v| put(&mut d.fsync, v.u32_min(0)),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "writes",
        help: "fsync the file after every N writes (0 = never).",
    },
    OptionDef {
        name: "fdatasync",
        set: |d, v| put(&mut d.fdatasync, v.u32_min(0)),
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "writes",
        help: "fdatasync the file after every N writes (0 = never).",
    },
    OptionDef {
        name: "end_fsync",
        set: |d, v| put(&mut d.end_fsync, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "fsync the files when the job's writing is done.",
    },
    OptionDef {
        name: "fsync_on_close",
        set: |d, v| put(&mut d.fsync_on_close, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "fsync each written file when it is closed. iolab keeps a job's files open \
               until the job ends, so this is one fsync per written file at the end, as \
               end_fsync.",
    },
    // --- engine ---------------------------------------------------------
    OptionDef {
        name: "ioengine",
        set: |d, v| put(&mut d.ioengine, v.wrap(values::parse_ioengine(v.text()))),
        aliases: &[],
        kind: Choice(crate::engines::ENGINE_NAMES),
        default: Value("psync"),
        unit: "",
        help: crate::engines::IOENGINE_HELP,
    },
    OptionDef {
        name: "cpuload",
        set: |d, v| put(&mut d.engine.cpuload, v.percent()),
        aliases: &[],
        kind: Int,
        default: Note("none; required with ioengine=cpuio"),
        unit: "%",
        help: "cpuio: percent of one CPU each worker burns (1-100), measured in the \
               thread's own CPU time, so a busy host stretches the cycle rather than \
               lowering the load.",
    },
    OptionDef {
        name: "cpuchunks",
        set: |d, v| {
            put(
                &mut d.engine.cpuchunks_us,
                v.wrap(units::parse_uint(v.text()))
                    .and_then(|n| v.positive(n)),
            )
        },
        aliases: &[],
        kind: Int,
        default: Value("50000"),
        unit: "us",
        help: "cpuio: one cycle of burning then resting, in microseconds (as in fio).",
    },
    OptionDef {
        name: "hipri",
        set: |d, v| put(&mut d.engine.hipri, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Polled completion: pvsync2 issues with RWF_HIPRI; io_uring sets up its ring \
               with IORING_SETUP_IOPOLL (needs direct=1). The device must support polling \
               (poll queues), else I/O fails with EOPNOTSUPP.",
    },
    OptionDef {
        name: "uri",
        set: |d, v| put(&mut d.uri, v.some_text()),
        aliases: &[],
        kind: Text,
        default: Note("none; required with ioengine=nbd"),
        unit: "",
        help: "NBD server for ioengine=nbd, in libnbd's (and fio's) URI form: \
               nbd://host[:port]/export (TCP, port 10809 by default) or \
               nbd+unix:///export?socket=PATH. TLS (nbds://) is not supported. No filename= is \
               needed; size defaults to the export's size from offset on; fsync/fdatasync send \
               NBD_CMD_FLUSH and sync= sends writes with FUA.",
    },
    OptionDef {
        name: "nbd_connections",
        set: |d, v| put(&mut d.nbd_connections, v.u32_min(1)),
        aliases: &[],
        kind: Int,
        default: Value("1"),
        unit: "connections",
        help: "NBD connections per worker (iolab's own option; fio's nbd engine has none). \
               The worker's requests, up to iodepth, are spread over them round-robin.",
    },
    // --- rate -----------------------------------------------------------
    OptionDef {
        name: "rate",
        set: |d, v| v.per_dir(&mut d.rate, parse_size),
        aliases: &[],
        kind: SizePerDir,
        default: Note("no limit"),
        unit: "bytes/s",
        help: "Bandwidth cap per worker, per direction ('1m,500k'; '500k,' caps reads only). \
               0 = no limit. Not together with rate_iops.",
    },
    OptionDef {
        name: "rate_iops",
        set: |d, v| v.per_dir(&mut d.rate_iops, parse_size),
        aliases: &[],
        kind: SizePerDir,
        default: Note("no limit"),
        unit: "IOPS",
        help: "I/O rate cap per worker, per direction (size suffixes apply as in fio: \
               1k = 1024). 0 = no limit.",
    },
    OptionDef {
        name: "rate_min",
        set: |d, v| v.per_dir(&mut d.amounts.rate_min_bytes, parse_size),
        aliases: &["ratemin"],
        kind: SizePerDir,
        default: Note("none"),
        unit: "bytes/s",
        help: "Minimum bandwidth per worker, per direction: a worker that moves less over \
               a ratecycle (after ramp_time) ends with an error naming both figures.",
    },
    OptionDef {
        name: "rate_iops_min",
        set: |d, v| v.per_dir(&mut d.amounts.rate_min_iops, parse_size),
        aliases: &[],
        kind: SizePerDir,
        default: Note("none"),
        unit: "IOPS",
        help: "Minimum I/O rate per worker, per direction, checked like rate_min.",
    },
    OptionDef {
        name: "ratecycle",
        set: |d, v| {
            put(
                &mut d.amounts.ratecycle_ms,
                v.wrap(units::parse_uint(v.text()))
                    .and_then(|n| v.positive(n)),
            )
        },
        aliases: &["rate_cycle"],
        kind: Int,
        default: Value("1000"),
        unit: "ms",
        help: "Window over which rate_min and rate_iops_min are averaged.",
    },
    OptionDef {
        name: "rate_process",
        set: |d, v| put(&mut d.rate_process, v.rate_process()),
        aliases: &[],
        kind: Choice(&["linear", "poisson"]),
        default: Value("linear"),
        unit: "",
        help: "Spacing of rate-limited I/Os: evenly (linear) or as a Poisson process.",
    },
    OptionDef {
        name: "thinktime",
        set: |d, v| put(&mut d.thinktime_ns, v.time()),
        aliases: &[],
        kind: MICROSECONDS,
        default: Value("0"),
        unit: "us",
        help: "Stall for this long after every thinktime_blocks I/Os (1: each completed I/O) \
               before issuing more (bare number = us); the stall begins once the I/Os in \
               flight have completed.",
    },
    OptionDef {
        name: "thinktime_blocks",
        set: |d, v| put(&mut d.think.blocks, v.u32_min(1)),
        aliases: &[],
        kind: Int,
        default: Value("1"),
        unit: "I/Os",
        help: "Stall for thinktime after this many I/Os (counted as thinktime_blocks_type \
               says).",
    },
    OptionDef {
        name: "thinktime_blocks_type",
        set: |d, v| put(&mut d.think.blocks_type, v.wrap(values::parse_think_blocks_type(v.text()))),
        aliases: &[],
        kind: Choice(&["complete", "issue"]),
        default: Value("complete"),
        unit: "",
        help: "What thinktime_blocks counts: complete = completed I/Os (an asynchronous \
               engine at iodepth > 1 may issue up to iodepth before that many complete, as \
               fio's does); issue = issued I/Os, so no more than thinktime_blocks are in \
               flight between stalls.",
    },
    OptionDef {
        name: "thinktime_spin",
        set: |d, v| put(&mut d.think.spin_ns, v.time()),
        aliases: &[],
        kind: MICROSECONDS,
        default: Value("0"),
        unit: "us",
        help: "Spend this much of each thinktime stall busy (spinning on the CPU), the rest \
               asleep (bare number = us; at most thinktime).",
    },
    OptionDef {
        name: "thinktime_iotime",
        set: |d, v| put(&mut d.think.iotime_ns, v.time()),
        aliases: &[],
        kind: SECONDS,
        default: Value("0"),
        unit: "s",
        help: "Also stall for thinktime once I/O has run this long since the last stall \
               (bare number = s; 0 = off). Given without thinktime_blocks, only this \
               triggers the stall; with it, whichever comes first.",
    },
    // --- CPUs -----------------------------------------------------------
    OptionDef {
        name: "cpus_allowed",
        set: |d, v| {
            put(
                &mut d.cpus_allowed,
                v.wrap(units::parse_cpu_list(v.text())).map(Some),
            )
        },
        aliases: &[],
        kind: CpuList,
        default: Note("any CPU"),
        unit: "",
        help: "CPUs the workers may run on, e.g. '0-3,6'.",
    },
    OptionDef {
        name: "cpumask",
        set: |d, v| {
            put(
                &mut d.cpus_allowed,
                v.wrap(values::parse_cpu_mask(v.text())).map(Some),
            )
        },
        aliases: &[],
        kind: Int,
        default: Note("any CPU"),
        unit: "",
        help: "fio's bit mask of the CPUs the workers may run on (bit N = CPU N, decimal or \
               0x hex, up to CPU 63): another way to write cpus_allowed.",
    },
    OptionDef {
        name: "numa_cpu_nodes",
        set: |d, v| {
            put(
                &mut d.engine.numa_cpu_nodes,
                v.wrap(units::parse_cpu_list(v.text())).map(Some),
            )
        },
        aliases: &[],
        kind: CpuList,
        default: Note("any node"),
        unit: "",
        help: "NUMA nodes ('0-1,3') whose CPUs (from /sys/devices/system/node) the workers \
               may run on; with cpus_allowed, only CPUs in both. Memory placement \
               (numa_mem_policy) is not offered.",
    },
    OptionDef {
        name: "cpus_allowed_policy",
        set: |d, v| put(&mut d.cpus_policy, v.cpus_policy()),
        aliases: &[],
        kind: Choice(&["shared", "split"]),
        default: Value("shared"),
        unit: "",
        help: "shared: every worker may use all of cpus_allowed; split: worker i is pinned to \
               the i-th CPU of the list (wrapping). split needs cpus_allowed.",
    },
    // --- randomness -----------------------------------------------------
    OptionDef {
        name: "randseed",
        set: |d, v| {
            put(
                &mut d.randseed,
                v.wrap(units::parse_uint(v.text())).map(Some),
            )
        },
        aliases: &[],
        kind: Int,
        default: Note("0xb1899bed when randrepeat=1, else a fresh random seed (recorded)"),
        unit: "",
        help: "Seed of the offset, block-size and mix generators. Each worker's seed also \
               mixes in its number in the run (fio's rule: two jobs never draw the same \
               offsets); given, every fleet host draws the same sequence, else each host's \
               rank is mixed in too.",
    },
    OptionDef {
        name: "randrepeat",
        set: |d, v| put(&mut d.randrepeat, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "Use the fixed default seed so runs repeat the same pattern (each job and \
               each fleet host still its own, as fio's jobs are).",
    },
    OptionDef {
        name: "allrandrepeat",
        set: |d, v| put(&mut d.allrandrepeat, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Seed every generator repeatably. iolab's offset, block-size and mix \
               generators share one seed, so 1 does what randrepeat=1 does.",
    },
    OptionDef {
        name: "norandommap",
        set: |d, v| put(&mut d.norandommap, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Draw random offsets without tracking coverage (blocks may repeat or be skipped).",
    },
    OptionDef {
        name: "percentage_random",
        set: |d, v| v.per_dir(&mut d.percentage_random, |t, _| values::parse_percent(t)),
        aliases: &[],
        kind: IntPerDir,
        default: Value("100"),
        unit: "%",
        help: "For random I/O, per direction: the share of I/Os whose offset is random; each \
               other one starts where the direction's last I/O in that file ended (a random one \
               where that would run past the region's end). 100 = fully random, 0 = sequential. \
               Below 100 the random map still gives random offsets only blocks not yet done, \
               while the sequential ones may do a block again, as in fio.",
    },
    OptionDef {
        name: "random_distribution",
        set: |d, v| {
            put(
                &mut d.distribution,
                v.wrap(values::parse_distribution(v.text())),
            )
        },
        aliases: &[],
        kind: Distribution,
        default: Value("random"),
        unit: "",
        help: "Offsets of random I/O: random (uniform), zipf:theta, pareto:h, normal:dev (% of \
               the region), zoned:access%/size%:... or sequence:b1,b2,... (these blocks in this \
               order; see random_sequence_stride). Non-uniform ones never use the random map.",
    },
    // --- reporting ------------------------------------------------------
    OptionDef {
        name: "percentile_list",
        set: |d, v| {
            put(
                &mut d.percentiles,
                v.wrap(units::parse_percentile_list(v.text())),
            )
        },
        aliases: &[],
        kind: PercentileList,
        default: Value("1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.99"),
        unit: "%",
        help: "Latency percentiles to report, separated by ':'.",
    },
    OptionDef {
        name: "group_reporting",
        set: |d, v| put(&mut d.group_reporting, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Report the group's jobs (those that set it) as one entry, as fio does, not one per worker.",
    },
    OptionDef {
        name: "unified_rw_reporting",
        set: |d, v| put(&mut d.unified_rw_reporting, v.wrap(crate::job::UnifiedRw::parse(v.text()))),
        aliases: &[],
        kind: Choice(&["none", "mixed", "both", "0", "1", "2"]),
        default: Value("none"),
        unit: "",
        help: "none (0): reads, writes and trims reported apart; mixed (1): as one direction, \
               'mixed' (I/Os and bytes added, latency histograms merged, over the longest \
               direction's runtime), in place of them; both (2): apart, then mixed too. In \
               the text and fio-json outputs, as fio's; iolab's own json has the summary's \
               'mixed' next to read, write and trim.",
    },
    OptionDef {
        name: "stonewall",
        set: |d, v| put(&mut d.stonewall, v.flag()),
        aliases: &["wait_for_previous"],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Start only after all previous jobs have finished (and start a new group).",
    },
    OptionDef {
        name: "kb_base",
        set: |_, v| v.kb_base_check(),
        aliases: &[],
        kind: Choice(&["1024", "1000"]),
        default: Value("1024"),
        unit: "",
        help: "1024: k/m/g are powers of 1024 and KiB/MiB are powers of 1000 (fio's \
               compatibility rule); 1000: the other way round. Applies wherever it is written.",
    },
];
