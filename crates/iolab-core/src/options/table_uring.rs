//! Option rows of the io_uring engine, named and parsed as fio names them
//! (`fixedbufs`, `registerfiles`, `sqthread_poll`, `sqthread_poll_cpu`,
//! `nonvectored`, `uncached`, `force_async`; `hipri` is the job table's and
//! io_uring honours it with `IORING_SETUP_IOPOLL`). Each is honoured by
//! iolab-engine's io_uring backend; [`check`] says when one cannot act.
//! Part of the one option table (see `table`).

use super::draft::Draft;
use super::val::put;
use super::DefaultValue::{Note, Value};
use super::OptionDef;
use super::OptionKind::*;
use crate::error::JobError;
use crate::job::IoEngine;
use crate::units::parse_uint;

pub(super) static URING_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "fixedbufs",
        set: |d, v| put(&mut d.engine.uring.fixedbufs, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "io_uring: register the worker's buffers with the ring (IORING_REGISTER_BUFFERS) \
               and issue READ_FIXED/WRITE_FIXED, which spares the kernel a page pin per I/O. \
               On by default in iolab (fio's default is 0); fixedbufs=0 turns it off. When \
               the kernel refuses (RLIMIT_MEMLOCK) the run says so and goes on without.",
    },
    OptionDef {
        name: "registerfiles",
        set: |d, v| put(&mut d.engine.uring.registerfiles, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("1"),
        unit: "",
        help: "io_uring: register the job's files with the ring (fixed descriptors), which \
               spares an fd lookup per I/O. On by default in iolab (fio's default is 0); \
               registerfiles=0 turns it off.",
    },
    OptionDef {
        name: "sqthread_poll",
        set: |d, v| put(&mut d.engine.uring.sqthread_poll, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "io_uring: a kernel thread polls the submission queue (IORING_SETUP_SQPOLL, \
               1 s idle), so submitting costs the worker no system call; the thread uses a \
               CPU of its own while busy (count it when comparing CPU per I/O).",
    },
    OptionDef {
        name: "sqthread_poll_cpu",
        set: |d, v| {
            put(
                &mut d.engine.uring.sqthread_poll_cpu,
                v.wrap(parse_uint(v.text()).and_then(|n| {
                    u32::try_from(n).map_err(|_| format!("CPU {n} is out of range"))
                }))
                .map(Some),
            )
        },
        aliases: &[],
        kind: Int,
        default: Note("none (the kernel places the thread)"),
        unit: "",
        help: "io_uring with sqthread_poll=1: bind the polling thread to this CPU \
               (IORING_SETUP_SQ_AFF).",
    },
    OptionDef {
        name: "nonvectored",
        set: |d, v| {
            put(
                &mut d.engine.uring.nonvectored,
                match v.text() {
                    "-1" | "1" => Ok(true),
                    "0" => Ok(false),
                    _ => Err(v.invalid("must be -1, 0 or 1 (as fio's)")),
                },
            )
        },
        aliases: &[],
        kind: Int,
        default: Value("-1"),
        unit: "",
        help: "io_uring: 1 or -1 (the default, as fio's auto) issue reads and writes as \
               READ/WRITE (READ_FIXED/WRITE_FIXED with fixedbufs); 0 issues READV/WRITEV of \
               one segment, which cannot use registered buffers, so fixedbufs is then off.",
    },
    OptionDef {
        name: "uncached",
        set: |d, v| put(&mut d.engine.uring.uncached, v.flag()),
        aliases: &[],
        kind: Bool,
        default: Value("0"),
        unit: "",
        help: "io_uring: reads and writes carry RWF_DONTCACHE: buffered I/O whose pages are \
               dropped from the page cache once done (Linux 6.14+, and only on file systems \
               that support it; elsewhere each I/O fails with EOPNOTSUPP).",
    },
    OptionDef {
        name: "force_async",
        set: |d, v| {
            put(
                &mut d.engine.uring.force_async,
                v.wrap(
                    parse_uint(v.text())
                        .and_then(|n| u32::try_from(n).map_err(|_| format!("{n} is out of range"))),
                ),
            )
        },
        aliases: &[],
        kind: Int,
        default: Value("0"),
        unit: "",
        help: "io_uring: every Nth request goes out with IOSQE_ASYNC (handed to the kernel's \
               io-wq worker threads instead of tried inline first); 0 = never, 1 = every one.",
    },
];

/// Names of the rows above, for [`check`]'s warning.
fn given(d: &Draft) -> Vec<&'static str> {
    URING_OPTIONS
        .iter()
        .map(|o| o.name)
        .filter(|n| d.explicit.contains(*n))
        .collect()
}

/// Checks of these options against the others (called by `finish`).
pub(super) fn check(d: &mut Draft) -> Result<(), JobError> {
    if d.ioengine != IoEngine::IoUring {
        let names = given(d);
        if !names.is_empty() {
            d.warnings.push(format!(
                "{} {} no effect with ioengine={} ({} io_uring's)",
                names.join(", "),
                if names.len() == 1 { "has" } else { "have" },
                d.ioengine.name(),
                if names.len() == 1 {
                    "it is"
                } else {
                    "they are"
                },
            ));
        }
        return Ok(());
    }
    let u = &d.engine.uring;
    if let (Some(cpu), false) = (u.sqthread_poll_cpu, u.sqthread_poll) {
        d.warnings.push(format!(
            "sqthread_poll_cpu={cpu} has no effect without sqthread_poll=1"
        ));
    }
    if let (Some(cpu), true) = (u.sqthread_poll_cpu, u.sqthread_poll) {
        // Safety: sysconf only reads a system constant.
        let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
        if cpus > 0 && i64::from(cpu) >= cpus as i64 {
            return Err(JobError::Conflict(format!(
                "sqthread_poll_cpu={cpu}: this machine has CPUs 0-{}; name one of them",
                cpus - 1
            )));
        }
    }
    if !u.nonvectored && u.fixedbufs && d.explicit.contains("fixedbufs") {
        d.warnings.push(
            "fixedbufs=1 has no effect with nonvectored=0 (READV/WRITEV cannot use registered \
             buffers)"
                .into(),
        );
    }
    if d.engine.hipri && !d.direct {
        return Err(JobError::Conflict(
            "hipri=1 with ioengine=io_uring polls for completions (IORING_SETUP_IOPOLL), which \
             Linux allows only on O_DIRECT files; add direct=1"
                .into(),
        ));
    }
    if u.uncached && d.direct {
        d.warnings.push(
            "uncached=1 has no effect with direct=1 (O_DIRECT bypasses the page cache already)"
                .into(),
        );
    }
    Ok(())
}
