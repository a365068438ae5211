//! Jobs that trim: `rw=trim|randtrim|trimwrite|randtrimwrite`, the third
//! (trim) value of the per-direction options, and what trims do not go with.

use super::{err, prep};
use iolab_core::job::*;

#[test]
fn rw_names_the_trim_patterns_as_fio() {
    let cases = [
        ("trim", Pattern::Sequential, TrimMode::Only),
        ("randtrim", Pattern::Random, TrimMode::Only),
        ("trimwrite", Pattern::Sequential, TrimMode::ThenWrite),
        ("randtrimwrite", Pattern::Random, TrimMode::ThenWrite),
    ];
    for (rw, pattern, trim) in cases {
        let j = prep(&["size=1m", &format!("rw={rw}")]);
        assert_eq!(
            j.rw,
            RwMix {
                pattern,
                read_pct: 0,
                trim
            },
            "{rw}"
        );
        assert!(j.rw.does(IoDir::Trim) && !j.rw.does(IoDir::Read), "{rw}");
        assert_eq!(j.rw.does(IoDir::Write), trim == TrimMode::ThenWrite, "{rw}");
        // Trims change the files: checked and opened as a write job's.
        assert!(j.writes(), "{rw}");
        assert!(j.rw.uses_slot(IoDir::Write) && j.rw.uses_slot(IoDir::Trim));
    }
    assert!(!prep(&["size=1m", "rw=randwrite"]).rw.does(IoDir::Trim));
}

#[test]
fn trims_take_the_write_value_and_a_third_value_must_agree() {
    // fio's bs=4k,8k: writes and trims 8k. A trim-only job uses it.
    let j = prep(&["size=1m", "rw=randtrim", "bs=4k,8k"]);
    assert_eq!(j.bs[IoDir::Trim.option_slot()], BsSpec::Fixed(8192));
    // The same third value is accepted, silently.
    let j = prep(&["size=1m", "rw=trimwrite", "rate=1m,1m,1m"]);
    assert!(j.warnings.is_empty(), "{:?}", j.warnings);
    // A different one would be dropped: refused by name instead.
    let e = err(&["size=1m", "rw=randtrim", "bs=4k,8k,16k"]);
    assert!(
        e.contains("bs: iolab's trims use the write value (8k)"),
        "{e}"
    );
    let e = err(&["size=1m", "rw=trimwrite", "bs=4k,8k,16k"]);
    assert!(e.contains("each write repeats the trim before it"), "{e}");
}

#[test]
fn what_trims_do_not_go_with_is_refused_by_name() {
    let e = err(&[
        "size=1m",
        "rw=randtrim",
        "ioengine=cpuio",
        "cpuload=50",
        "runtime=1s",
    ]);
    assert!(
        e.contains("ioengine=cpuio cannot trim (rw=randtrim)"),
        "{e}"
    );
    let e = err(&["size=1m", "rw=trimwrite", "verify=crc32c"]);
    assert!(e.contains("verify with rw=trimwrite is not offered"), "{e}");
    let e = err(&[
        "size=64m",
        "rw=trimwrite",
        "zonemode=zbd",
        "zonesize=32m",
        "filename=/tmp/iolab-trim-zbd",
    ]);
    assert!(e.contains("rw=trimwrite with zonemode=zbd"), "{e}");
}
