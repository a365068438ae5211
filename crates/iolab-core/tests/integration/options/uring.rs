//! io_uring's engine options: parsed as fio parses them, carried to the
//! engine, and warned about where they cannot act. Their effect on the ring
//! is tested in iolab-engine's io_uring backend.

use super::{err, prep};
use iolab_core::job::UringOptions;

#[test]
fn io_uring_options_reach_the_engine() {
    let j = prep(&[
        "size=1m",
        "ioengine=io_uring",
        "fixedbufs=0",
        "registerfiles=0",
        "sqthread_poll=1",
        "sqthread_poll_cpu=0",
        "nonvectored=0",
        "uncached=1",
        "force_async=4",
    ]);
    assert_eq!(
        j.engine.uring,
        UringOptions {
            fixedbufs: false,
            registerfiles: false,
            sqthread_poll: true,
            sqthread_poll_cpu: Some(0),
            nonvectored: false,
            uncached: true,
            force_async: 4,
        }
    );
    assert!(j.warnings.is_empty(), "{:?}", j.warnings);
    // iolab registers by default; fio's defaults are accepted as written.
    let d = prep(&[
        "size=1m",
        "ioengine=io_uring",
        "direct=1",
        "fixedbufs",
        "registerfiles=1",
    ]);
    assert_eq!(d.engine.uring, UringOptions::default());
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    for v in ["-1", "1"] {
        let j = prep(&["size=1m", "ioengine=io_uring", &format!("nonvectored={v}")]);
        assert!(j.engine.uring.nonvectored, "nonvectored={v}");
    }
}

#[test]
fn io_uring_options_say_when_they_cannot_act() {
    let w = prep(&[
        "size=1m",
        "ioengine=libaio",
        "direct=1",
        "fixedbufs",
        "sqthread_poll",
    ])
    .warnings;
    assert!(
        w.iter().any(|w| {
            w
            == "fixedbufs, sqthread_poll have no effect with ioengine=libaio (they are io_uring's)"
        }),
        "{w:?}"
    );
    let w = prep(&["size=1m", "ioengine=io_uring", "sqthread_poll_cpu=0"]).warnings;
    assert!(
        w.iter()
            .any(|w| w.contains("no effect without sqthread_poll=1")),
        "{w:?}"
    );
    let w = prep(&["size=1m", "ioengine=io_uring", "direct=1", "uncached=1"]).warnings;
    assert!(
        w.iter()
            .any(|w| w.contains("uncached=1 has no effect with direct=1")),
        "{w:?}"
    );
    let w = prep(&[
        "size=1m",
        "ioengine=io_uring",
        "nonvectored=0",
        "fixedbufs=1",
    ])
    .warnings;
    assert!(
        w.iter()
            .any(|w| w.contains("fixedbufs=1 has no effect with nonvectored=0")),
        "{w:?}"
    );
    // io_uring honours hipri (IOPOLL), which needs O_DIRECT.
    let j = prep(&["size=1m", "ioengine=io_uring", "direct=1", "hipri"]);
    assert!(j.engine.hipri && j.warnings.is_empty(), "{:?}", j.warnings);
}

#[test]
fn io_uring_options_refuse_what_cannot_run() {
    let e = err(&["size=1m", "ioengine=io_uring", "hipri"]);
    assert!(
        e.contains("hipri=1 with ioengine=io_uring") && e.contains("add direct=1"),
        "{e}"
    );
    let e = err(&[
        "size=1m",
        "ioengine=io_uring",
        "sqthread_poll=1",
        "sqthread_poll_cpu=4096",
    ]);
    assert!(
        e.contains("sqthread_poll_cpu=4096") && e.contains("name one of them"),
        "{e}"
    );
    let e = err(&["size=1m", "ioengine=io_uring", "nonvectored=2"]);
    assert!(e.contains("nonvectored") && e.contains("-1, 0 or 1"), "{e}");
    let e = err(&["size=1m", "ioengine=io_uring", "force_async=-1"]);
    assert!(e.contains("force_async"), "{e}");
}
