//! The option table: every job option iolab accepts, in fio's vocabulary.
//!
//! A declarative list, so it is long on purpose. Defaults written as
//! [`DefaultValue::Value`] are parsed and applied exactly like user input
//! (see `draft::Draft::with_defaults`), so the documented default is the
//! one in force.

use super::DefaultValue::{Note, Value};
use super::OptionDef;
use super::OptionKind::{self, *};
use crate::units::{NS_PER_S, NS_PER_US};

const SECONDS: OptionKind = Time {
    default_unit_ns: NS_PER_S,
};
const MICROSECONDS: OptionKind = Time {
    default_unit_ns: NS_PER_US,
};

/// Every option iolab knows. Order = documentation order.
pub static OPTIONS: &[OptionDef] = &[
    // --- identity -------------------------------------------------------
    OptionDef {
        name: "name",
        aliases: &[],
        kind: Text,
        default: Note("the job's section name or --name"),
        unit: "",
        help: "Name of the job; generated files are called name.N.0.",
    },
    OptionDef {
        name: "description",
        aliases: &[],
        kind: Text,
        default: Note("none"),
        unit: "",
        help: "Free text kept with the job's configuration in the result.",
    },
    // --- files ----------------------------------------------------------
    OptionDef {
        name: "filename",
        aliases: &[],
        kind: Text,
        default: Note("each worker N uses its own file directory/name.N.0"),
        unit: "",
        help: "File(s) or device(s) to use, separated by ':' (write '\\:' for a colon in a \
               name). All workers (numjobs) share them; size is split evenly among them.",
    },
    OptionDef {
        name: "directory",
        aliases: &[],
        kind: Text,
        default: Note("the current directory"),
        unit: "",
        help: "Directory for generated files, and prefix of relative filename entries. \
               One directory only.",
    },
    OptionDef {
        name: "size",
        aliases: &[],
        kind: Size,
        default: Note(
            "the whole existing file or device (needs filename), or nbd export, from offset on",
        ),
        unit: "bytes",
        help: "Bytes of I/O per worker per pass, split evenly among the files. Required \
               when iolab creates the files. Percentages are not supported yet.",
    },
    OptionDef {
        name: "offset",
        aliases: &[],
        kind: Size,
        default: Value("0"),
        unit: "bytes",
        help: "Start of the I/O region within each file. Percentages are not supported yet.",
    },
    // --- what I/O -------------------------------------------------------
    OptionDef {
        name: "rw",
        aliases: &["readwrite"],
        kind: Choice(&[
            "read",
            "write",
            "randread",
            "randwrite",
            "rw",
            "readwrite",
            "randrw",
        ]),
        default: Value("read"),
        unit: "",
        help: "I/O pattern: sequential or random reads, writes, or a mix (rw/readwrite = \
               sequential mix, randrw = random mix; share from rwmixread).",
    },
    OptionDef {
        name: "rwmixread",
        aliases: &[],
        kind: Int,
        default: Value("50"),
        unit: "%",
        help: "Share of reads in a mixed workload (0-100).",
    },
    OptionDef {
        name: "rwmixwrite",
        aliases: &[],
        kind: Int,
        default: Note("100 - rwmixread"),
        unit: "%",
        help: "Share of writes in a mixed workload; the later of rwmixread/rwmixwrite wins \
               (as in fio).",
    },
    OptionDef {
        name: "bs",
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
        aliases: &["blocksize_range"],
        kind: RangePerDir,
        default: Note("bs"),
        unit: "bytes",
        help: "Block sizes drawn uniformly from min-max in multiples of min, per direction \
               ('4k-64k' or '4k-64k,8k-16k').",
    },
    OptionDef {
        name: "bssplit",
        aliases: &[],
        kind: SplitPerDir,
        default: Note("bs"),
        unit: "bytes/%",
        help: "Weighted block sizes 'size/percent:size/percent', per direction separated by \
               ','. Whole percents adding up to 100; blank shares split the rest evenly.",
    },
    OptionDef {
        name: "blockalign",
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
        aliases: &[],
        kind: Int,
        default: Value("1"),
        unit: "I/Os",
        help: "I/Os kept in flight per worker. Synchronous engines (psync) always keep 1.",
    },
    OptionDef {
        name: "iodepth_batch_submit",
        aliases: &["iodepth_batch"],
        kind: Int,
        default: Value("1"),
        unit: "I/Os",
        help: "I/Os submitted per system call; 0 means iodepth. Capped at iodepth.",
    },
    OptionDef {
        name: "iodepth_batch_complete_min",
        aliases: &["iodepth_batch_complete"],
        kind: Int,
        default: Value("1"),
        unit: "I/Os",
        help: "Completions to wait for per reap; 0 polls without waiting. Capped at iodepth.",
    },
    OptionDef {
        name: "iodepth_batch_complete_max",
        aliases: &[],
        kind: Int,
        default: Note("iodepth_batch_complete_min (as in fio)"),
        unit: "I/Os",
        help: "Most completions taken per reap (at least 1, not below the minimum). \
               Capped at iodepth.",
    },
    OptionDef {
        name: "numjobs",
        aliases: &[],
        kind: Int,
        default: Value("1"),
        unit: "workers",
        help: "Workers (threads) running this job, each with its own queue.",
    },
    // --- time -----------------------------------------------------------
    OptionDef {
        name: "runtime",
        aliases: &["timeout"],
        kind: SECONDS,
        default: Note("none: run until size (x loops) is done"),
        unit: "s",
        help: "Stop after this time (units ns, us, ms, s, m, h, d). 0 means no limit.",
    },
    OptionDef {
        name: "time_based",
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Keep running (looping over the region) until runtime has passed. Needs runtime.",
    },
    OptionDef {
        name: "ramp_time",
        aliases: &[],
        kind: SECONDS,
        default: Value("0"),
        unit: "s",
        help: "Run this long before measuring; not counted in the results.",
    },
    OptionDef {
        name: "startdelay",
        aliases: &[],
        kind: SECONDS,
        default: Value("0"),
        unit: "s",
        help: "Wait this long after the common start before starting. Ranges not supported.",
    },
    OptionDef {
        name: "loops",
        aliases: &[],
        kind: Int,
        default: Value("1"),
        unit: "passes",
        help: "Passes over the region (when not time_based).",
    },
    // --- caching and durability ----------------------------------------
    OptionDef {
        name: "direct",
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Open with O_DIRECT (bypass the page cache). Block sizes, blockalign and \
               offset must then be multiples of 512.",
    },
    OptionDef {
        name: "buffered",
        aliases: &[],
        kind: Bool,
        default: Note("1 (the opposite of direct)"),
        unit: "",
        help: "The opposite of direct; the later of the two wins.",
    },
    OptionDef {
        name: "sync",
        aliases: &[],
        kind: Choice(&["none", "0", "sync", "1", "dsync"]),
        default: Value("none"),
        unit: "",
        help: "Synchronous writes: sync/1 opens with O_SYNC, dsync with O_DSYNC.",
    },
    OptionDef {
        name: "dsync",
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Same as sync=dsync (an older fio spelling; fio 3.33 no longer has it).",
    },
    OptionDef {
        name: "fsync",
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "writes",
        help: "fsync the file after every N writes (0 = never).",
    },
    OptionDef {
        name: "fdatasync",
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "writes",
        help: "fdatasync the file after every N writes (0 = never).",
    },
    OptionDef {
        name: "end_fsync",
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "fsync the files when the job's writing is done.",
    },
    // --- engine ---------------------------------------------------------
    OptionDef {
        name: "ioengine",
        aliases: &[],
        kind: Choice(&["io_uring", "psync", "null", "nbd"]),
        default: Value("psync"),
        unit: "",
        help: "How I/O is issued: io_uring (asynchronous, honours iodepth), psync \
               (pread/pwrite, fio's default on Linux), null (no I/O, measures iolab itself) \
               or nbd (requests to an NBD server named by uri=, pipelined up to iodepth).",
    },
    OptionDef {
        name: "uri",
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
        aliases: &[],
        kind: SizePerDir,
        default: Note("no limit"),
        unit: "bytes/s",
        help: "Bandwidth cap per worker, per direction ('1m,500k'; '500k,' caps reads only). \
               0 = no limit. Not together with rate_iops.",
    },
    OptionDef {
        name: "rate_iops",
        aliases: &[],
        kind: SizePerDir,
        default: Note("no limit"),
        unit: "IOPS",
        help: "I/O rate cap per worker, per direction (size suffixes apply as in fio: \
               1k = 1024). 0 = no limit.",
    },
    OptionDef {
        name: "rate_process",
        aliases: &[],
        kind: Choice(&["linear", "poisson"]),
        default: Value("linear"),
        unit: "",
        help: "Spacing of rate-limited I/Os: evenly (linear) or as a Poisson process.",
    },
    OptionDef {
        name: "thinktime",
        aliases: &[],
        kind: MICROSECONDS,
        default: Value("0"),
        unit: "us",
        help: "Pause after each completed I/O before issuing the next (bare number = us).",
    },
    // --- CPUs -----------------------------------------------------------
    OptionDef {
        name: "cpus_allowed",
        aliases: &[],
        kind: CpuList,
        default: Note("any CPU"),
        unit: "",
        help: "CPUs the workers may run on, e.g. '0-3,6'.",
    },
    OptionDef {
        name: "cpus_allowed_policy",
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
        aliases: &[],
        kind: Int,
        default: Note("0xb1899bed when randrepeat=1, else a fresh random seed (recorded)"),
        unit: "",
        help: "Seed of the offset, block-size and mix generators.",
    },
    OptionDef {
        name: "randrepeat",
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "Use the fixed default seed so runs repeat the same pattern.",
    },
    OptionDef {
        name: "norandommap",
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Draw random offsets without tracking coverage (blocks may repeat or be skipped).",
    },
    OptionDef {
        name: "random_distribution",
        aliases: &[],
        kind: Distribution,
        default: Value("random"),
        unit: "",
        help: "Offsets of random I/O: random (uniform), zipf:theta, pareto:h, normal:dev (% of \
               the region) or zoned:access%/size%:... Non-uniform ones never use the random map.",
    },
    // --- reporting ------------------------------------------------------
    OptionDef {
        name: "percentile_list",
        aliases: &[],
        kind: PercentileList,
        default: Value("1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.99"),
        unit: "%",
        help: "Latency percentiles to report, separated by ':'.",
    },
    OptionDef {
        name: "group_reporting",
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Report the job's workers together instead of one by one.",
    },
    OptionDef {
        name: "stonewall",
        aliases: &["wait_for_previous"],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "Start only after all previous jobs have finished (and start a new group).",
    },
    OptionDef {
        name: "kb_base",
        aliases: &[],
        kind: Choice(&["1024", "1000"]),
        default: Value("1024"),
        unit: "",
        help: "1024: k/m/g are powers of 1024 and KiB/MiB are powers of 1000 (fio's \
               compatibility rule); 1000: the other way round. Applies wherever it is written.",
    },
];
