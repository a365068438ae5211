//! The options of failures and run-ending (continue_on_error, ignore_error,
//! error_dump, exit_what), clone offsets and atomic writes: what they
//! become in the prepared job, and what is refused or noted.

use super::{err, prep};
use iolab_core::job::{ErrorKind, ExitWhat, IoDir};

#[test]
fn continue_on_error_and_ignore_error_decide_what_is_non_fatal() {
    let j = prep(&[
        "size=1m",
        "continue_on_error=write",
        "ignore_error=EIO,ENOSPC:122",
    ]);
    let e = &j.errors;
    assert!(e.continuing() && e.error_dump);
    assert!(e.non_fatal(ErrorKind::Write, libc::ENOSPC));
    assert!(e.non_fatal(ErrorKind::Write, libc::EDQUOT));
    assert!(
        e.non_fatal(ErrorKind::Read, libc::EIO),
        "the read list turns reads on"
    );
    assert!(!e.non_fatal(ErrorKind::Verify, libc::EILSEQ));
    // The last continue_on_error wins, as fio applies options in order.
    let j = prep(&[
        "size=1m",
        "continue_on_error=all",
        "continue_on_error=none",
        "error_dump=0",
    ]);
    assert!(!j.errors.continuing() && !j.errors.error_dump);
    assert!(!j
        .errors
        .non_fatal(ErrorKind::of(IoDir::Read, libc::EIO), libc::EIO));
    assert!(err(&["size=1m", "continue_on_error=maybe"]).contains("none, read, write, io"));
    assert!(err(&["size=1m", "ignore_error=,ENOPE"]).contains("'ENOPE' is not an errno name"));
}

#[test]
fn exit_what_and_offset_increment_are_kept_and_checked() {
    let j = prep(&[
        "size=1m",
        "exitall",
        "exit_what=stonewall",
        "numjobs=4",
        "offset_increment=1m",
    ]);
    assert_eq!(j.errors.exit_what, ExitWhat::Stonewall);
    assert_eq!(
        (0..4).map(|w| j.offset_of_worker(w)).collect::<Vec<_>>(),
        [0, 1 << 20, 2 << 20, 3 << 20]
    );
    assert!(err(&["size=1m", "exit_what=job"]).contains("group, stonewall, all"));
    assert!(
        err(&["size=1m", "direct=1", "numjobs=2", "offset_increment=1000"])
            .contains("offset_increment=1000 bytes is not a multiple of 512")
    );
    assert!(err(&["size=1m", "offset_increment=10%"]).contains("percentages"));
    let single = prep(&["size=1m", "offset_increment=1m"]);
    assert!(
        single.warnings.iter().any(|w| w.contains("numjobs=1")),
        "{:?}",
        single.warnings
    );
}

#[test]
fn atomic_needs_a_capable_engine_direct_io_and_writes() {
    let ok = prep(&[
        "size=1m",
        "ioengine=libaio",
        "direct=1",
        "rw=randwrite",
        "atomic=1",
    ]);
    assert!(ok.engine.atomic);
    assert!(err(&[
        "size=1m",
        "ioengine=psync",
        "direct=1",
        "rw=write",
        "atomic=1"
    ])
    .contains("not ioengine=psync"));
    assert!(err(&["size=1m", "ioengine=io_uring", "rw=write", "atomic=1"]).contains("direct=1"));
    let reads = prep(&[
        "size=1m",
        "ioengine=pvsync2",
        "direct=1",
        "rw=read",
        "atomic=1",
    ]);
    assert!(!reads.engine.atomic);
    assert!(reads.warnings.iter().any(|w| w.contains("does not write")));
}

/// fio's `rate=r,w,t` (examples/exitwhat.fio): the trim value is parsed
/// and noted, since the job issues no trims; read and write are kept.
#[test]
fn a_third_trim_rate_is_noted_not_refused() {
    let j = prep(&["size=1m", "rw=randrw", "rate=300,400,500"]);
    assert_eq!(j.rate_bytes_per_s, [Some(300), Some(400)]);
    assert!(
        j.warnings.iter().any(|w| w.contains("trim")),
        "{:?}",
        j.warnings
    );
    let j = prep(&["size=1m", "rw=randrw", "rate_iops=10,,30"]);
    assert_eq!(j.rate_iops, [Some(10), None]);
    assert!(err(&["size=1m", "rate=1m,1m,fast"]).contains("rate"));
    // bs's trim size is noted the same way (the job issues no trims).
    let j = prep(&["size=1m", "bs=4k,4k,4k"]);
    assert!(
        j.warnings.iter().any(|w| w.contains("trim")),
        "{:?}",
        j.warnings
    );
}
