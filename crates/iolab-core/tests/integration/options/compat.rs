//! Options met in other projects' job files (storage test suites and
//! benchmark kits), each parsed into the meaning fio gives it.

use super::{err, prep};
use iolab_core::options::DEFAULT_RANDSEED;

#[test]
fn cpumask_is_a_bit_mask_of_cpus() {
    assert_eq!(prep(&["size=1m", "cpumask=1"]).cpus_allowed, Some(vec![0]));
    assert_eq!(
        prep(&["size=1m", "cpumask=0x0a"]).cpus_allowed,
        Some(vec![1, 3])
    );
    assert_eq!(
        prep(&["size=1m", "cpumask=0x8000000000000001"]).cpus_allowed,
        Some(vec![0, 63])
    );
    // The later of cpumask and cpus_allowed wins, as in fio (one setting).
    assert_eq!(
        prep(&["size=1m", "cpumask=1", "cpus_allowed=2-3"]).cpus_allowed,
        Some(vec![2, 3])
    );
    assert!(err(&["size=1m", "cpumask=0"]).contains("allows no CPU"));
    assert!(err(&["size=1m", "cpumask=0-3"]).contains("'cpumask'"));
}

#[test]
fn fsync_on_close_syncs_at_the_one_close() {
    assert!(prep(&["size=1m", "rw=write", "fsync_on_close=1"]).end_fsync);
    assert!(!prep(&["size=1m", "rw=write", "fsync_on_close=0"]).end_fsync);
    // Not undone by an explicit end_fsync=0: they are two reasons to sync.
    assert!(prep(&["size=1m", "fsync_on_close=1", "end_fsync=0"]).end_fsync);
}

#[test]
fn allrandrepeat_fixes_the_seed() {
    let j = prep(&["size=1m", "randrepeat=0", "allrandrepeat=1"]);
    assert!(j.randrepeat);
    assert_eq!(j.randseed, DEFAULT_RANDSEED);
    let j = prep(&["size=1m", "randrepeat=0", "allrandrepeat=0"]);
    assert!(!j.randrepeat);
}

#[test]
fn verify_state_files_are_refused_by_value_not_by_name() {
    prep(&[
        "size=1m",
        "verify=md5",
        "verify_state_save=0",
        "verify_state_load=0",
    ]);
    assert!(err(&["size=1m", "verify_state_save=1"])
        .contains("iolab does not save verify state files; set verify_state_save=0"));
    assert!(err(&["size=1m", "verify_state_load=1"]).contains("set verify_state_load=0"));
}

#[test]
fn fallocate_takes_fios_modes() {
    use iolab_core::job::Preallocate;
    let mode = |v: &str| {
        prep(&["size=1m", &format!("fallocate={v}")])
            .files
            .fallocate
    };
    assert_eq!(prep(&["size=1m"]).files.fallocate, Preallocate::Native);
    assert_eq!(mode("none"), Preallocate::None);
    assert_eq!(mode("0"), Preallocate::None);
    assert_eq!(mode("posix"), Preallocate::Posix);
    assert_eq!(mode("1"), Preallocate::Posix);
    assert_eq!(mode("keep"), Preallocate::Keep);
    assert_eq!(mode("truncate"), Preallocate::Truncate);
    let e = err(&["size=1m", "fallocate=sometimes"]);
    assert!(e.contains("'fallocate'") && e.contains("keep"), "{e}");
}

/// fio's examples/exitwhat.fio: `rate=300,300,300`. The third value is for
/// trims; this job issues none, so it has no effect, in fio as here:
/// accepted, and said in a note (options/trims.rs: jobs that trim).
#[test]
fn a_trim_value_is_noted_as_having_no_effect() {
    let j = prep(&["size=1m", "rate=300,300,300"]);
    assert_eq!(j.rate_bytes_per_s, [Some(300), Some(300)]);
    assert_eq!(j.warnings.len(), 1, "{:?}", j.warnings);
    assert!(j.warnings[0].contains("rate's third value (300) is for trims and has no effect"));
    let j = prep(&["size=1m", "rate_iops=10,20,30", "bs=4k,8k,16k"]);
    assert_eq!(j.rate_iops, [Some(10), Some(20)]);
    assert_eq!(j.warnings.len(), 2, "{:?}", j.warnings);
    assert!(j
        .warnings
        .iter()
        .any(|w| w.starts_with("bs's third value (16k)")));
}
