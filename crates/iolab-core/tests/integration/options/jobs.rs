//! Valid jobs: fio's defaults, the seed-002 commands, and each option of
//! the table parsed into its PreparedJob field.

use super::{prep, spec};
use iolab_core::job::*;
use iolab_core::options::DEFAULT_RANDSEED;
use iolab_core::units::{parse_size, NS_PER_S};

#[test]
fn defaults_mirror_fio() {
    let j = prep(&["size=1m"]);
    assert_eq!(j.name, "t");
    assert_eq!(
        j.rw,
        RwMix {
            pattern: Pattern::Sequential,
            read_pct: 100,
            trim: TrimMode::None,
        }
    );
    assert_eq!(j.bs, [BsSpec::Fixed(4096), BsSpec::Fixed(4096)]);
    assert_eq!(j.blockalign, [4096, 4096]);
    assert_eq!((j.iodepth, j.iodepth_batch_submit), (1, 1));
    assert_eq!(
        (j.iodepth_batch_complete_min, j.iodepth_batch_complete_max),
        (1, 1)
    );
    assert_eq!((j.numjobs, j.loops), (1, 1));
    assert_eq!(
        (j.runtime_ns, j.time_based, j.ramp_time_ns, j.startdelay_ns),
        (None, false, 0, 0)
    );
    assert!(!j.direct && j.sync == SyncMode::None && !j.end_fsync);
    assert_eq!((j.fsync, j.fdatasync), (0, 0));
    assert_eq!(j.ioengine, IoEngine::Psync);
    assert_eq!(
        (j.rate_bytes_per_s, j.rate_iops),
        ([None, None], [None, None])
    );
    assert_eq!(j.rate_process, RateProcess::Linear);
    assert_eq!(j.thinktime_ns, 0);
    assert_eq!(
        (j.cpus_allowed.clone(), j.cpus_allowed_policy),
        (None, CpusAllowedPolicy::Shared)
    );
    assert_eq!(
        (j.randseed, j.randrepeat, j.norandommap),
        (DEFAULT_RANDSEED, true, false)
    );
    assert_eq!(j.random_distribution, RandomDistribution::Uniform);
    assert_eq!(j.percentile_list, DEFAULT_PERCENTILES.to_vec());
    assert!(!j.group_reporting && !j.stonewall);
    assert_eq!(
        (j.filenames.clone(), j.shared_files, j.directory.clone()),
        (vec![], false, None)
    );
    assert_eq!((j.size, j.offset), (Some(1 << 20), 0));
    assert!(j.warnings.is_empty(), "{:?}", j.warnings);
    assert_eq!(
        j.files_for_worker(3),
        vec![std::path::PathBuf::from("./t.3.0")]
    );
}

/// The three sweeps of seed 002, as written there (bs, rwmixread, iodepth varied).
#[test]
fn seed_002_commands() {
    for (bs, mix, depth) in [("4k", "50", "16"), ("512k", "70", "16"), ("4k", "50", "64")] {
        let (bs_opt, mix_opt, depth_opt) = (
            format!("bs={bs}"),
            format!("rwmixread={mix}"),
            format!("iodepth={depth}"),
        );
        let j = spec(&[
            "filename=testfile",
            "size=10G",
            "rw=randrw",
            &mix_opt,
            &bs_opt,
            &depth_opt,
            "time_based",
            "runtime=60",
        ]);
        let j = JobSpec {
            name: "test".into(),
            ..j
        }
        .prepare()
        .unwrap();
        assert_eq!(j.name, "test");
        assert_eq!(j.filenames, vec![std::path::PathBuf::from("testfile")]);
        assert!(j.shared_files);
        assert_eq!(j.size, Some(10 << 30));
        assert_eq!(
            j.rw,
            RwMix {
                pattern: Pattern::Random,
                read_pct: mix.parse().unwrap(),
                trim: TrimMode::None,
            }
        );
        assert_eq!(j.bs[0], BsSpec::Fixed(parse_size(bs, 1024).unwrap()));
        assert_eq!((j.time_based, j.runtime_ns), (true, Some(60 * NS_PER_S)));
        // fio's default engine is psync, which keeps one I/O in flight whatever
        // iodepth says; iolab does the same and says so.
        assert_eq!(j.iodepth, 1);
        assert!(j.warnings[0].contains("iodepth=") && j.warnings[0].contains("io_uring"));
        let with_uring = spec(&["filename=testfile", "ioengine=io_uring", &depth_opt]).prepare();
        assert_eq!(with_uring.unwrap().iodepth, depth.parse::<u32>().unwrap());
    }
}

// ---- each option ---------------------------------------------------------

#[test]
fn files_and_directory() {
    let j = prep(&["filename=/dev/a:rel\\:x:b", "directory=/mnt/d", "numjobs=4"]);
    assert_eq!(
        j.filenames,
        ["/dev/a", "/mnt/d/rel:x", "/mnt/d/b"].map(std::path::PathBuf::from)
    );
    assert!(j.shared_files && j.size.is_none());
    assert_eq!(j.files_for_worker(2), j.filenames);
    let j = prep(&["size=1m", "directory=/tmp/x", "name=other"]);
    assert_eq!(j.name, "other");
    assert_eq!(
        j.files_for_worker(0),
        vec![std::path::PathBuf::from("/tmp/x/other.0.0")]
    );
}

#[test]
fn rw_and_mix() {
    let cases = [
        ("read", Pattern::Sequential, 100),
        ("write", Pattern::Sequential, 0),
        ("randread", Pattern::Random, 100),
        ("randwrite", Pattern::Random, 0),
        ("rw", Pattern::Sequential, 50),
        ("readwrite", Pattern::Sequential, 50),
        ("randrw", Pattern::Random, 50),
    ];
    for (rw, pattern, read_pct) in cases {
        assert_eq!(
            prep(&["size=1m", &format!("rw={rw}")]).rw,
            RwMix {
                pattern,
                read_pct,
                trim: TrimMode::None
            }
        );
    }
    assert_eq!(
        prep(&["size=1m", "readwrite=randrw", "rwmixwrite=30"])
            .rw
            .read_pct,
        70
    );
    assert_eq!(
        prep(&["size=1m", "rw=randrw", "rwmixread=100"]).rw.read_pct,
        100
    );
    // fio: the later of rwmixread/rwmixwrite wins; iolab also says so.
    let j = prep(&["size=1m", "rw=randrw", "rwmixread=70", "rwmixwrite=50"]);
    assert_eq!(j.rw.read_pct, 50);
    assert!(j.warnings[0].contains("rwmixwrite=50 overrides the earlier rwmixread=70"));
    assert!(
        prep(&["size=1m", "rw=randrw", "rwmixread=70", "rwmixwrite=30"])
            .warnings
            .is_empty()
    );
    let j = prep(&["size=1m", "rw=read", "rwmixread=70"]);
    assert!(j.warnings[0].contains("rwmixread=70 has no effect"));
}

#[test]
fn block_sizes() {
    let j = prep(&["size=1m", "rw=randrw", "bs=4k,64k"]);
    assert_eq!(j.bs, [BsSpec::Fixed(4096), BsSpec::Fixed(65536)]);
    assert_eq!(j.blockalign, [4096, 65536]);
    let j = prep(&["size=1m", "rw=randrw", "blocksize=,8k"]);
    assert_eq!(j.bs, [BsSpec::Fixed(4096), BsSpec::Fixed(8192)]);
    let j = prep(&["size=1m", "rw=randrw", "bsrange=4k-16k,8k-8k"]);
    assert_eq!(
        j.bs,
        [
            BsSpec::Range {
                min: 4096,
                max: 16384
            },
            BsSpec::Fixed(8192)
        ]
    );
    let j = prep(&["size=1m", "rw=randrw", "bssplit=2k/50:4k/50,4k/90:8k/10"]);
    assert_eq!(
        j.bs,
        [
            BsSpec::Split(vec![(2048, 50), (4096, 50)]),
            BsSpec::Split(vec![(4096, 90), (8192, 10)])
        ]
    );
    // The last of bs/bsrange/bssplit wins, per direction.
    let j = prep(&["size=1m", "rw=randrw", "bssplit=4k/50:8k/50", "bs=,16k"]);
    assert_eq!(j.bs[1], BsSpec::Fixed(16384));
    assert!(matches!(j.bs[0], BsSpec::Split(_)));
}

#[test]
fn blockalign_follows_fio() {
    let j = prep(&["size=1m", "rw=randread", "bs=8k", "ba=4k"]);
    assert_eq!(j.blockalign, [4096, 4096]);
    assert!(
        j.norandommap,
        "fio: any use of blockalign turns off the random map"
    );
    assert!(j.warnings[0].contains("random map is off"));
    let j = prep(&["size=1m", "rw=read", "bs=8k", "blockalign=4k"]);
    assert_eq!(j.blockalign, [8192, 8192]);
    assert!(!j.norandommap && j.warnings[0].contains("no effect on sequential"));
}

#[test]
fn queue_depth_and_batches() {
    let j = prep(&[
        "size=1m",
        "ioengine=io_uring",
        "iodepth=32",
        "iodepth_batch=8",
        "iodepth_batch_complete=4",
        "iodepth_batch_complete_max=64",
    ]);
    assert_eq!((j.iodepth, j.iodepth_batch_submit), (32, 8));
    assert_eq!(
        (j.iodepth_batch_complete_min, j.iodepth_batch_complete_max),
        (4, 32)
    );
    let j = prep(&[
        "size=1m",
        "ioengine=io_uring",
        "iodepth=16",
        "iodepth_batch_submit=0",
        "iodepth_batch_complete_min=0",
    ]);
    assert_eq!(
        (j.iodepth_batch_submit, j.iodepth_batch_complete_min),
        (16, 0)
    );
    assert_eq!(j.iodepth_batch_complete_max, 1);
    let j = prep(&["size=1m", "ioengine=null", "iodepth=8"]);
    assert_eq!((j.ioengine, j.iodepth), (IoEngine::Null, 8));
    assert!(j.warnings.is_empty());
}

#[test]
fn time_options() {
    let j = prep(&[
        "size=1m",
        "timeout=2m",
        "time_based=1",
        "ramp_time=500ms",
        "startdelay=3",
        "thinktime=250",
        "loops=3",
    ]);
    assert_eq!(j.runtime_ns, Some(120 * NS_PER_S));
    assert!(j.time_based);
    assert_eq!(
        (j.ramp_time_ns, j.startdelay_ns),
        (500_000_000, 3 * NS_PER_S)
    );
    assert_eq!((j.thinktime_ns, j.loops), (250_000, 3));
    assert_eq!(prep(&["size=1m", "runtime=0"]).runtime_ns, None);
    assert!(!prep(&["size=1m", "time_based=0"]).time_based);
    // fio 3.33 does the size once when time_based has no runtime (or runtime=0).
    for no_runtime in [
        &["size=1m", "time_based"][..],
        &["size=1m", "time_based", "runtime=0"],
    ] {
        let j = prep(no_runtime);
        assert!(!j.time_based && j.runtime_ns.is_none());
        assert!(j
            .warnings
            .iter()
            .any(|w| w.contains("time_based without runtime has no effect")));
    }
}

#[test]
fn thinktime_options() {
    let j = prep(&["size=1m", "thinktime=10ms"]);
    assert_eq!(j.think, ThinkOptions::default());
    assert_eq!(
        (
            j.think.blocks,
            j.think.blocks_type,
            j.think.spin_ns,
            j.think.iotime_ns
        ),
        (1, ThinkBlocksType::Complete, 0, 0)
    );
    let j = prep(&[
        "size=1m",
        "thinktime=10ms",
        "thinktime_blocks=4",
        "thinktime_blocks_type=issue",
        "thinktime_spin=2500",
        "thinktime_iotime=2",
    ]);
    assert_eq!(
        (
            j.think.blocks,
            j.think.blocks_type,
            j.think.spin_ns,
            j.think.iotime_ns
        ),
        (4, ThinkBlocksType::Issue, 2_500_000, 2 * NS_PER_S)
    );
    assert!(j.think.blocks_given && j.think.counts_blocks() && j.warnings.is_empty());
    // fio: thinktime_iotime alone decides, without the default of 1 block.
    let j = prep(&["size=1m", "thinktime=1s", "thinktime_iotime=9s"]);
    assert!(!j.think.counts_blocks());
    // fio cuts a spin longer than the stall to the stall.
    let j = prep(&["size=1m", "thinktime=1ms", "thinktime_spin=5ms"]);
    assert_eq!(j.think.spin_ns, 1_000_000);
    assert!(j
        .warnings
        .iter()
        .any(|w| w.contains("thinktime_spin is longer")));
    let j = prep(&["size=1m", "thinktime_blocks=4", "thinktime_spin=1"]);
    assert!(
        j.warnings
            .iter()
            .any(|w| w == "thinktime_blocks, thinktime_spin have no effect without thinktime"),
        "{:?}",
        j.warnings
    );
    let e = super::err(&["size=1m", "thinktime=1", "thinktime_blocks_type=later"]);
    assert!(e.contains("expected complete or issue"), "{e}");
    let e = super::err(&["size=1m", "thinktime=1", "thinktime_blocks=0"]);
    assert!(e.contains("must be at least 1"), "{e}");
}

#[test]
fn caching_and_durability() {
    let j = prep(&[
        "size=1m",
        "rw=write",
        "direct=1",
        "sync=dsync",
        "fsync=32",
        "fdatasync=8",
        "end_fsync",
    ]);
    assert!(j.direct && j.end_fsync);
    assert_eq!((j.sync, j.fsync, j.fdatasync), (SyncMode::Dsync, 32, 8));
    assert!(!prep(&["size=1m", "direct=1", "buffered=1"]).direct);
    assert!(prep(&["size=1m", "buffered=0"]).direct);
    for (text, mode) in [
        ("0", SyncMode::None),
        ("none", SyncMode::None),
        ("1", SyncMode::Sync),
        ("sync", SyncMode::Sync),
        ("dsync", SyncMode::Dsync),
    ] {
        assert_eq!(
            prep(&["size=1m", "rw=write", &format!("sync={text}")]).sync,
            mode
        );
    }
    assert_eq!(
        prep(&["size=1m", "rw=write", "dsync"]).sync,
        SyncMode::Dsync
    );
    let j = prep(&["size=1m", "rw=read", "fsync=4"]);
    assert!(j.warnings[0].contains("fsync has no effect on a job that does not write"));
}

#[test]
fn rates() {
    let j = prep(&[
        "size=1m",
        "rw=randrw",
        "rate=1m,500k",
        "rate_process=poisson",
    ]);
    assert_eq!(j.rate_bytes_per_s, [Some(1 << 20), Some(500 << 10)]);
    assert_eq!(j.rate_process, RateProcess::Poisson);
    assert!(j.rate_limited());
    assert_eq!(
        prep(&["size=1m", "rate=500k,"]).rate_bytes_per_s,
        [Some(500 << 10), None]
    );
    assert_eq!(
        prep(&["size=1m", "rate=,500k"]).rate_bytes_per_s,
        [None, Some(500 << 10)]
    );
    assert_eq!(
        prep(&["size=1m", "rate_iops=1k"]).rate_iops,
        [Some(1024), Some(1024)]
    );
    assert!(!prep(&["size=1m", "rate=0"]).rate_limited());
}

#[test]
fn cpus_seeds_distributions_and_reporting() {
    let j = prep(&["size=1m", "cpus_allowed=0-3,6", "cpus_allowed_policy=split"]);
    assert_eq!(j.cpus_allowed, Some(vec![0, 1, 2, 3, 6]));
    assert_eq!(j.cpus_allowed_policy, CpusAllowedPolicy::Split);
    assert_eq!(
        prep(&["size=1m", "randseed=42", "randrepeat=0"]).randseed,
        42
    );
    let (a, b) = (
        prep(&["size=1m", "randrepeat=0"]),
        prep(&["size=1m", "randrepeat=false"]),
    );
    assert!(
        !a.randrepeat && a.randseed != b.randseed,
        "fresh seeds differ"
    );
    assert!(prep(&["size=1m", "norandommap"]).norandommap);
    let dist = |d: &str| {
        prep(&[
            "size=1m",
            "rw=randread",
            &format!("random_distribution={d}"),
        ])
    };
    assert_eq!(
        dist("zipf:1.2").random_distribution,
        RandomDistribution::Zipf(1.2)
    );
    assert!(
        dist("zipf:1.2").norandommap,
        "fio: non-uniform distributions drop the random map"
    );
    assert_eq!(
        dist("pareto:0.9").random_distribution,
        RandomDistribution::Pareto(0.9)
    );
    assert_eq!(
        dist("normal:10").random_distribution,
        RandomDistribution::Normal(10.0)
    );
    let zones = vec![
        Zone {
            access_pct: 60.0,
            size_pct: 10.0,
        },
        Zone {
            access_pct: 40.0,
            size_pct: 90.0,
        },
    ];
    assert_eq!(
        dist("zoned:60/10:40/90").random_distribution,
        RandomDistribution::Zoned(zones.clone())
    );
    // fio's examples/rand-zones.fio: a last zone without a size covers the rest.
    assert_eq!(
        dist("zoned:60/10:40/").random_distribution,
        RandomDistribution::Zoned(zones)
    );
    // Fixes a bug: prepare warned "no effect" and kept the distribution,
    // which the generator then refused, so the job could not run.
    let seq = prep(&["size=1m", "rw=read", "random_distribution=zipf:1.2"]);
    assert_eq!(seq.random_distribution, RandomDistribution::Uniform);
    assert!(seq.warnings[0].contains("no effect on sequential"));
    let regions = vec![iolab_core::gen::FileRegion {
        start: 0,
        len: 1 << 20,
    }];
    assert!(iolab_core::gen::IoGen::new(&seq, 0, regions).is_ok());
    let j = prep(&[
        "size=1m",
        "percentile_list=50:99.9",
        "group_reporting",
        "wait_for_previous",
        "description=a test",
        "kb_base=1000",
        "bs=4k",
    ]);
    assert_eq!(j.percentile_list, vec![50.0, 99.9]);
    assert!(j.group_reporting && j.stonewall);
    assert_eq!(
        (j.size, j.bs[0].clone()),
        (Some(1_000_000), BsSpec::Fixed(4000))
    );
    assert_eq!(j.spec.options.len(), 7, "the spec is kept as written");
}

#[test]
fn kb_base_applies_wherever_written() {
    assert_eq!(prep(&["size=1m", "kb_base=1000"]).size, Some(1_000_000));
    assert_eq!(prep(&["kb_base=1000", "size=8KiB"]).size, Some(8192));
    // fio's default bs is 4096 bytes whatever kb_base says (checked with fio 3.33:
    // kb_base=1000 size=1m gives 244 I/Os, i.e. 1000000 / 4096).
    assert_eq!(
        prep(&["kb_base=1000", "size=1m"]).bs[0],
        BsSpec::Fixed(4096)
    );
}

#[test]
fn new_engines_are_taken_with_fio_adjustments() {
    for (engine, sync) in [
        ("libaio", false),
        ("sync", true),
        ("pvsync", true),
        ("pvsync2", true),
        ("mmap", true),
    ] {
        let j = prep(&["size=1m", &format!("ioengine={engine}"), "iodepth=8"]);
        assert_eq!(j.ioengine.name(), engine);
        assert_eq!(j.ioengine.synchronous(), sync);
        // Synchronous engines keep one I/O in flight, and say so (as fio does).
        assert_eq!(j.iodepth, if sync { 1 } else { 8 }, "{engine}");
        assert_eq!(
            j.warnings.iter().any(|w| w.contains("is synchronous")),
            sync
        );
    }
    let buffered = prep(&["size=1m", "ioengine=libaio"]);
    assert!(buffered
        .warnings
        .iter()
        .any(|w| w.contains("without direct=1")));
    let direct = prep(&["size=1m", "ioengine=libaio", "direct=1"]);
    assert!(direct.warnings.is_empty(), "{:?}", direct.warnings);
    let hipri = prep(&["size=1m", "ioengine=pvsync2", "hipri"]);
    assert!(hipri.engine.hipri && hipri.warnings.is_empty());
    let idle = prep(&["size=1m", "ioengine=psync", "hipri"]);
    assert!(idle
        .warnings
        .iter()
        .any(|w| w.contains("hipri has no effect")));
}

#[test]
fn buffer_and_verify_options_as_fio_reads_them() {
    let d = prep(&["size=1m", "rw=write", "buffer_pattern=0xDEADbeef"]).data;
    assert_eq!(d.buffer_pattern, Some(vec![0xde, 0xad, 0xbe, 0xef]));
    assert!(d.scramble_buffers, "fio's default");
    let d = prep(&["size=1m", "rw=write", "buffer_pattern='ab'"]).data;
    assert_eq!(d.buffer_pattern.as_deref(), Some(&b"ab"[..]));
    let d = prep(&["size=1m", "rw=write", "buffer_pattern=258"]).data;
    assert_eq!(d.buffer_pattern, Some(vec![2, 1]));
    // verify_pattern alone means verify=pattern; the interval defaults to bs.
    let d = prep(&["size=1m", "rw=write", "bs=8k", "verify_pattern=0x5a"]).data;
    assert_eq!((d.verify, d.verify_interval), (VerifyKind::Pattern, 8192));
    let d = prep(&["size=1m", "rw=read", "verify=crc32c-intel"]).data;
    assert_eq!(d.verify, VerifyKind::Crc32c);
    let w = prep(&["size=1m", "rw=read", "zero_buffers"]).warnings;
    assert!(w
        .iter()
        .any(|w| w.contains("zero_buffers has no effect: the job does not write")));
    let w = prep(&["size=1m", "rw=write", "verify_fatal"]).warnings;
    assert!(w
        .iter()
        .any(|w| w.contains("verify_fatal has no effect without verify")));
}

#[test]
fn verify_conflicts_are_named() {
    let e = |o: &[&str]| spec(o).prepare().unwrap_err().to_string();
    // A mix verifies what it writes, as fio does (no longer refused).
    assert!(spec(&["size=1m", "rw=randrw", "verify=md5"])
        .prepare()
        .is_ok());
    assert!(e(&["size=1m", "rw=write", "ioengine=null", "verify=md5"]).contains("moves none"));
    assert!(e(&["size=1m", "rw=write", "verify=pattern"]).contains("needs verify_pattern"));
    assert!(e(&[
        "size=1m",
        "rw=write",
        "bs=4k",
        "verify=md5",
        "verify_interval=3k"
    ])
    .contains("must divide every block size"));
    assert!(e(&[
        "size=1m",
        "rw=write",
        "bs=4k",
        "verify=md5",
        "verify_offset=4080"
    ])
    .contains("does not fit"));
    assert!(e(&["size=1m", "verify=sha512"]).contains("not supported yet"));
    for kind in ["crc32", "crc16", "crc7"] {
        let j = spec(&["size=1m", "rw=write", &format!("verify={kind}")])
            .prepare()
            .unwrap();
        assert_eq!(j.data.verify.name(), kind);
    }
    assert!(spec(&["size=1m", "rw=write", "verify=crc64"])
        .prepare()
        .is_ok());
    assert!(e(&["size=1m", "buffer_compress_percentage=101"]).contains("0 to 100"));
    assert!(e(&["size=1m", "buffer_pattern=0xzz"]).contains("not a hex number"));
}

#[test]
fn cpuio_needs_a_load_and_a_runtime_and_no_size() {
    let j = prep(&["ioengine=cpuio", "cpuload=30", "runtime=5"]);
    assert_eq!((j.engine.cpuload, j.engine.cpuchunks_us), (30, 50_000));
    assert!(j.time_based && j.filenames.is_empty());
    let e = |o: &[&str]| spec(o).prepare().unwrap_err().to_string();
    assert!(e(&["ioengine=cpuio", "runtime=5"]).contains("needs cpuload"));
    assert!(e(&["ioengine=cpuio", "cpuload=30"]).contains("needs runtime"));
    assert!(e(&["ioengine=cpuio", "cpuload=130", "runtime=1"]).contains("0 to 100"));
    let w = prep(&["size=1m", "cpuload=30"]).warnings;
    assert!(w
        .iter()
        .any(|w| w.contains("cpuload and cpuchunks have no effect")));
}

#[test]
fn amounts_and_thread_as_fio_takes_them() {
    let j = prep(&["size=4m", "io_size=10m"]);
    assert_eq!((j.amounts.io_size, j.loops), (Some(10 << 20), 3));
    let j = prep(&["size=4m", "number_ios=7", "thread"]);
    assert_eq!(j.amounts.number_ios, Some(7));
    assert!(j.warnings.is_empty(), "{:?}", j.warnings);
    let w = prep(&["size=4m", "thread=0"]).warnings;
    assert!(w
        .iter()
        .any(|w| w.contains("iolab runs workers as threads")));
    let w = prep(&["size=4m", "loops=5", "io_size=8m"]).warnings;
    assert!(w.iter().any(|w| w.contains("loops=5 has no effect")));
}

#[test]
fn data_shape_options_that_cannot_act_say_so() {
    let w = |o: &[&str]| prep(o).warnings.join("; ");
    assert!(
        w(&["size=1m", "dedupe_mode=working_set", "dedupe_global=1"])
            .contains("dedupe_mode, dedupe_global have no effect without dedupe_percentage")
    );
    assert!(w(&[
        "size=1m",
        "dedupe_percentage=10",
        "dedupe_working_set_percentage=9"
    ])
    .contains("no effect with dedupe_mode=repeat"));
    assert!(w(&["size=1m", "rw=randread", "random_sequence_stride=1"])
        .contains("random_sequence_stride has no effect"));
    assert!(w(&["size=1m", "verify_write_sequence=0"]).contains("no effect without verify"));
    assert!(w(&[
        "size=1m",
        "rw=read",
        "verify=md5",
        "verify_write_sequence=1"
    ])
    .contains("verify_write_sequence=1 has no effect when the job does not write"));
    let j = prep(&[
        "size=1m",
        "rw=randwrite",
        "dedupe_percentage=10",
        "dedupe_mode=working_set",
    ]);
    assert_eq!(j.data.dedupe_mode, iolab_core::job::DedupeMode::WorkingSet);
    assert_eq!(j.data.dedupe_working_set_pct, 5, "fio's default");
    let e = spec(&["size=1m", "dedupe_mode=often"])
        .prepare()
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected repeat or working_set"), "{e}");
}
