//! exitall with exit_what (fio's examples/exitwhat.fio): which jobs a
//! finishing job stops, and whether the next stonewall group still runs.
//! The long job would run for 120 s if nothing stopped it; the counts of
//! the next group's job are the truth of whether it ran.

use super::common::{config, job, run_ok, serial, worker};

/// Group 0: a long job and a short one that ends first with exitall and
/// exit_what=`what`; group 1: a stonewall job of 256 I/Os.
fn run(what: &str) -> (u64, u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let exit_what = format!("exit_what={what}");
    let jobs = vec![
        job(
            "long",
            dir.path(),
            &["ioengine=null", "size=1m", "runtime=120", "time_based"],
        ),
        job(
            "short",
            dir.path(),
            &[
                "ioengine=null",
                "size=1m",
                "number_ios=5",
                "exitall",
                &exit_what,
            ],
        ),
        job(
            "next",
            dir.path(),
            &["ioengine=null", "size=1m", "stonewall"],
        ),
    ];
    let r = run_ok(config(jobs));
    (
        worker(&r, 0, 0).runtime_ns,
        worker(&r, 1, 0).dirs[0].ios,
        worker(&r, 2, 0).dirs[0].ios,
    )
}

#[test]
fn exit_what_group_and_stonewall_end_the_group_and_the_next_group_runs() {
    let _serial = serial();
    for what in ["group", "stonewall"] {
        let (long_ns, short, next) = run(what);
        assert!(long_ns < 60_000_000_000, "{what}: long ran {long_ns} ns");
        assert_eq!((short, next), (5, 256), "{what}");
    }
}

#[test]
fn exit_what_all_ends_every_job_and_no_later_group_starts() {
    let _serial = serial();
    let (long_ns, short, next) = run("all");
    assert!(long_ns < 60_000_000_000, "long ran {long_ns} ns");
    assert_eq!((short, next), (5, 0));
}
