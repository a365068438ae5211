//! Bad input, one class per test, asserting the message the user reads.

use super::{err, spec};
use iolab_core::JobError;

#[test]
fn unknown_options_get_a_hint() {
    assert_eq!(
        err(&["iodpeth=4"]),
        "unknown option 'iodpeth': did you mean 'iodepth'?"
    );
    assert_eq!(
        err(&["--bs=4k"]),
        "unknown option '--bs': did you mean 'bs'?"
    );
    assert_eq!(err(&["BS=4k"]), "unknown option 'BS': did you mean 'bs'?");
    assert_eq!(
        err(&["opendir=/x"]),
        "unknown option 'opendir': fio option not supported by \
        iolab yet (name the files with filename=a:b)"
    );
    assert_eq!(
        err(&["cgroup=x"]),
        "unknown option 'cgroup': fio option not supported by iolab yet"
    );
    assert_eq!(
        err(&["uri=nbd://x"]),
        "uri= is only used by ioengine=nbd (this job uses ioengine=psync); add ioengine=nbd"
    );
    assert!(err(&["frobnicate=1"]).contains("see `iolab options`"));
    assert!(matches!(
        spec(&["opendir=x"]).prepare(),
        Err(JobError::UnknownOption { .. })
    ));
}

#[test]
fn values_out_of_range() {
    assert_eq!(
        err(&["size=1m", "bs=0"]),
        "invalid value '0' for option 'bs': must be greater than 0"
    );
    assert_eq!(
        err(&["size=1m", "iodepth=0"]),
        "invalid value '0' for option 'iodepth': must be at least 1"
    );
    assert!(err(&["size=1m", "iodepth=-4"]).contains("must not be negative"));
    assert!(err(&["size=1m", "numjobs=0"]).contains("'numjobs': must be at least 1"));
    assert!(err(&["size=1m", "loops=0"]).contains("'loops': must be at least 1"));
    assert!(err(&["size=1m", "rwmixread=101"]).contains("percentage from 0 to 100"));
    assert!(err(&["size=0"]).contains("'size': must be greater than 0"));
    assert!(err(&["size=1m", "iodepth=4k"]).contains("without a unit"));
    assert!(err(&["size=1m", "iodepth_batch_complete_max=0"]).contains("must be at least 1"));
    assert!(err(&["size=1m", "kb_base=512"]).contains("must be 1000 or 1024"));
    assert!(err(&["size=1m", "kb_base=512", "kb_base=1000"]).contains("must be 1000 or 1024"));
}

#[test]
fn malformed_values() {
    assert!(err(&["size=1m", "bsrange=64k-4k"]).contains("'bsrange': minimum 65536 is larger"));
    assert!(err(&["size=1m", "bsrange=4k"]).contains("expected a range like 4k-64k"));
    assert!(err(&["size=1m", "bssplit=4k/50:8k/60"]).contains("add up to 110 percent"));
    assert!(err(&["size=1m", "bssplit=4k/50:8k/40"]).contains("add up to 90 percent"));
    assert!(err(&["size=1m", "bssplit=4k/33.5:8k/66.5"]).contains("whole percent only"));
    assert!(err(&["size=1m", "bssplit=4k:8k"]).contains("is not size/percent"));
    assert!(err(&["size=1m", "bs=4k,8k,16k,1k"]).contains("at most read,write,trim"));
    assert!(err(&["size=1m", "bs=4k,8k,x"]).contains("trim value 'x'"));
    assert!(err(&["size=1m", "direct=yes"]).contains("'direct': expected 0 or 1"));
    assert!(err(&["size=1m", "time_based=2"]).contains("expected 0 or 1"));
    assert!(err(&["size=1m", "runtime=1.5s"]).contains("fractional"));
    assert!(err(&["size=1m", "startdelay=1-10"]).contains("ranges"));
    assert!(err(&["size=1m", "cpus_allowed=a"]).contains("'cpus_allowed': CPU 'a'"));
    assert!(err(&["size=1m", "percentile_list=50:0"]).contains("outside (0, 100]"));
    assert!(err(&["size=1m", "filename=a::b"]).contains("empty entry"));
    assert!(err(&["size=1m", "directory=a:b"]).contains("one directory only"));
    assert!(err(&["size=50%"]).contains("percentages of the file size are not supported yet"));
    assert!(err(&["size=1m", "offset=10%"]).contains("'offset': percentages"));
}

#[test]
fn unsupported_choices() {
    assert!(err(&["size=1m", "rw=randread:8"])
        .contains("'randread:8' (I/Os per random offset) is not supported yet; write rw=randread"));
    assert!(err(&["size=1m", "rw=read:x"]).contains("'rw'"));
    assert!(err(&["size=1m", "rw=trimread"]).contains("trimwrite or randtrimwrite"));
    assert!(err(&["size=1m", "rw=sideways"]).contains("expected read, write"));
    assert!(err(&["size=1m", "ioengine=splice"])
        .contains("supported engines: io_uring, libaio, psync, sync, pvsync, pvsync2, mmap, null"));
    assert!(err(&["size=1m", "sync=maybe"]).contains("expected none (or 0)"));
    assert!(err(&["size=1m", "rate_process=bursty"]).contains("linear or poisson"));
    assert!(err(&["size=1m", "cpus_allowed_policy=spread"]).contains("shared or split"));
    let dist = |d: &str| {
        err(&[
            "size=1m",
            "rw=randread",
            &format!("random_distribution={d}"),
        ])
    };
    assert!(dist("zipf:1").contains("not 1"));
    assert!(dist("zipf").contains("needs a parameter"));
    assert!(dist("zipf:1.2:0.25").contains("centre"));
    assert!(dist("pareto:1.5").contains("between 0 and 1"));
    assert!(dist("normal:0").contains("(0, 100]"));
    assert!(dist("zoned:50/50:40/40").contains("access shares add up to 90"));
    assert!(dist("zoned:50/50:50/40").contains("size shares add up to 90"));
    assert!(dist("zoned_abs:60/20G:40/100G").contains("not supported yet"));
    assert!(dist("gamma:2").contains("expected random, zipf"));
    assert!(dist("zipf:1.2,zipf:1.1").contains("per-direction"));
}

#[test]
fn form_errors() {
    assert_eq!(
        err(&["size=1m", "bs"]),
        "option 'bs' needs a value (bs=VALUE)"
    );
    assert_eq!(
        err(&["rw=read"]),
        "option 'size' is required when iolab creates the files (no \
        filename given); give size=, or filename= of an existing file or device"
    );
    assert!(err(&["size=1m", "name="]).contains("'name': must not be empty"));
    assert!(err(&["size=1m", "name=a/b"]).contains("must not contain '/'"));
    assert!(err(&["size=1m", "filename=-"]).contains("stdin"));
}

#[test]
fn conflicts() {
    let conflict = |opts: &[&str]| match spec(opts).prepare() {
        Err(JobError::Conflict(m)) => m,
        other => panic!("{opts:?}: expected a conflict, got {other:?}"),
    };
    assert!(conflict(&["size=1m", "rate=1m", "rate_iops=100"]).contains("mutually exclusive"));
    assert!(conflict(&["size=1m", "cpus_allowed_policy=split"]).contains("needs cpus_allowed"));
    assert!(conflict(&["size=8k", "bs=16k"]).contains("less than the largest block size (16384"));
    assert!(conflict(&["filename=a:b", "size=8k", "bs=8k"]).contains("4096 bytes per file"));
    assert!(conflict(&[
        "size=1m",
        "ioengine=io_uring",
        "iodepth=8",
        "iodepth_batch_complete_min=4",
        "iodepth_batch_complete_max=2"
    ])
    .contains("less than iodepth_batch_complete_min=4"));
}

/// vsync (fio's readv/writev engine) queues: iodepth stands, it merges what
/// one commit stages, and it is refused where it cannot go.
#[test]
fn vsync_keeps_iodepth_and_names_what_it_cannot_do() {
    let j = super::prep(&["size=1m", "ioengine=vsync", "iodepth=8", "iodepth_batch=8"]);
    assert_eq!(
        (j.ioengine.name(), j.iodepth, j.iodepth_batch_submit),
        ("vsync", 8, 8)
    );
    assert!(j.warnings.is_empty(), "{:?}", j.warnings);
    assert!(
        err(&["size=1m", "ioengine=vsync", "io_submit_mode=offload"])
            .contains("io_submit_mode=offload with ioengine=vsync (its file position")
    );
    assert!(err(&[
        "size=1m",
        "ioengine=vsync",
        "rw=write",
        "direct=1",
        "atomic=1"
    ])
    .contains("(io_uring, libaio, pvsync2), not ioengine=vsync"));
    let j = super::prep(&["size=1m", "ioengine=vsync", "hipri"]);
    assert_eq!(
        j.warnings,
        ["hipri has no effect with ioengine=vsync (iolab honours it with io_uring, pvsync2)"]
    );
}

/// posixaio is asynchronous: iodepth and the batch options stand, with or
/// without direct=1, and nothing is refused that other queued file engines
/// accept (offload included).
#[test]
fn posixaio_keeps_iodepth() {
    let j = super::prep(&[
        "size=1m",
        "ioengine=posixaio",
        "iodepth=16",
        "iodepth_batch=4",
    ]);
    assert_eq!(
        (j.ioengine.name(), j.iodepth, j.iodepth_batch_submit),
        ("posixaio", 16, 4)
    );
    assert!(j.warnings.is_empty(), "{:?}", j.warnings);
    let offload = ["ioengine=posixaio", "io_submit_mode=offload", "iodepth=4"];
    let j = super::prep(&[&["size=1m"][..], &offload].concat());
    assert_eq!(j.iodepth, 4);
    assert!(
        err(&["size=1m", "ioengine=posixaio", "cmdprio_percentage=50"])
            .contains("only ioengine=io_uring and libaio do")
    );
}
