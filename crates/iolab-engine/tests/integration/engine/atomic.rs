//! atomic=1 (fio's examples/atomic-verify.fio, xfstests generic/774):
//! writes carry RWF_ATOMIC and a file that cannot take them is refused
//! before any I/O, naming its statx limits. The truth is the file's own
//! answer: statx(STATX_WRITE_ATOMIC) on a probe file in the same
//! directory, and the kernel's verdict on one RWF_ATOMIC write.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use iolab_engine::backend::atomic::{limits, AtomicLimits};
use iolab_engine::backend::libaio::LibaioBackend;
use iolab_engine::backend::pvsync2::Pvsync2Backend;
use iolab_engine::backend::uring::UringBackend;
use iolab_engine::backend::{Backend, BackendConfig, Op, OpenFile, Queued, Request};
use iolab_engine::layout::direct_supported;
use iolab_engine::run::RunOutcome;
use iolab_engine::worker::buffers::AlignedBufs;
use iolab_engine::{EngineError, Run, RunConfig};

use super::common::*;

const ENGINES: [&str; 3] = ["ioengine=libaio", "ioengine=io_uring", "ioengine=pvsync2"];

fn probe(dir: &Path) -> (File, AtomicLimits) {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(dir.join("probe"))
        .unwrap();
    f.set_len(1 << 20).unwrap();
    let lim = limits(&f).unwrap();
    (f, lim)
}

/// A run whose refusal at prepare time comes back as an error.
fn run_outcome_result(cfg: RunConfig) -> Result<RunOutcome, EngineError> {
    let mut run = Run::prepare(cfg)?;
    run.start(None)?;
    run.finish()
}

fn atomic_job(dir: &Path, engine: &str, bs: u64) -> Result<u64, EngineError> {
    let bs = format!("bs={bs}");
    let j = job(
        "atomic",
        dir,
        &[
            engine,
            "rw=randwrite",
            "direct=1",
            "atomic=1",
            "size=1m",
            &bs,
        ],
    );
    let o = run_outcome_result(config(vec![j]))?;
    match o.error {
        Some(e) => Err(e),
        None => Ok(o.result.jobs[0].workers[0].dirs[1].ios),
    }
}

#[test]
fn atomic_jobs_run_or_are_refused_as_the_files_statx_says() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    if !direct_supported(dir.path()) {
        // No O_DIRECT here (an old tmpfs): atomic=1 (which needs it) is refused.
        for engine in ENGINES {
            assert!(atomic_job(dir.path(), engine, 4096).is_err(), "{engine}");
        }
        return;
    }
    let (_f, lim) = probe(dir.path());
    eprintln!("atomic write limits here: {lim:?}");
    for engine in ENGINES {
        if lim.unit_max_bytes == 0 {
            // No torn-write protection on this file system / device.
            match atomic_job(dir.path(), engine, 4096) {
                Err(EngineError::File { reason, .. }) => {
                    assert!(reason.contains("atomic_write_unit_max = 0"), "{reason}")
                }
                other => panic!("{engine}: expected a refusal, got {other:?}"),
            }
            continue;
        }
        let ok = u64::from(lim.unit_min_bytes.max(4096)).min(u64::from(lim.unit_max_bytes));
        assert_eq!(atomic_job(dir.path(), engine, ok).unwrap(), (1 << 20) / ok);
        let too_big = u64::from(lim.unit_max_bytes) * 2;
        match atomic_job(dir.path(), engine, too_big) {
            Err(EngineError::File { reason, .. }) => assert!(
                reason.contains(&format!("atomic_write_unit_max = {}", lim.unit_max_bytes)),
                "{reason}"
            ),
            other => panic!("{engine}: bs={too_big}: expected a refusal, got {other:?}"),
        }
    }
}

/// One write of 4 KiB at offset 0 through backend `B`: bytes, or -errno.
fn one_write<B: Backend>(f: &File, atomic: bool) -> i64 {
    let bufs = AlignedBufs::new(1, 4096, 0);
    let mut cfg = BackendConfig {
        iodepth: 1,
        buffers: bufs.regions(),
        ..BackendConfig::default()
    };
    cfg.engine.atomic = atomic;
    let mut b = B::open(
        &[OpenFile {
            fd: f.as_raw_fd(),
            region_end: 0,
        }],
        &cfg,
    )
    .unwrap();
    let req = Request {
        slot: 0,
        op: Op::Write,
        file: 0,
        offset: 0,
        len: 4096,
        buf: bufs.slot_ptr(0),
        ioprio: 0,
    };
    // Safety: the buffer outlives the request, which completes below.
    match unsafe { b.queue(&req) }.unwrap() {
        Queued::Done(c) => c.result,
        Queued::Staged => {
            // libaio refuses a bad iocb in io_submit itself.
            if let Err(e) = b.commit() {
                return -i64::from(e.raw_os_error().unwrap());
            }
            let mut out = Vec::new();
            while out.is_empty() {
                b.reap(1, 1, &mut out).unwrap();
            }
            out[0].result
        }
    }
}

/// The flag reaches the kernel through each engine: an RWF_ATOMIC write
/// succeeds exactly when statx says 4 KiB fits (here it fails where the
/// file offers no atomic writes), and the same write without it always does.
#[test]
fn rwf_atomic_writes_succeed_exactly_where_statx_allows() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    if !direct_supported(dir.path()) {
        eprintln!(
            "no O_DIRECT in {}: RWF_ATOMIC needs it; nothing to write",
            dir.path().display()
        );
        return;
    }
    let (f, lim) = probe(dir.path());
    let fits = lim.unit_min_bytes <= 4096 && 4096 <= lim.unit_max_bytes;
    let results = [
        (
            "libaio",
            one_write::<LibaioBackend>(&f, false),
            one_write::<LibaioBackend>(&f, true),
        ),
        (
            "io_uring",
            one_write::<UringBackend>(&f, false),
            one_write::<UringBackend>(&f, true),
        ),
        (
            "pvsync2",
            one_write::<Pvsync2Backend>(&f, false),
            one_write::<Pvsync2Backend>(&f, true),
        ),
    ];
    for (engine, plain, atomic) in results {
        assert_eq!(plain, 4096, "{engine}: plain write");
        assert_eq!(
            atomic == 4096,
            fits,
            "{engine}: RWF_ATOMIC write gave {atomic}; limits {lim:?}"
        );
        if !fits {
            assert!(atomic < 0, "{engine}: {atomic}");
        }
    }
}
