//! continue_on_error, ignore_error and error_dump against failures the
//! target injects (its inject layer, EIO; its corrupt layer, verify
//! failures counted as EILSEQ) or a device that fills up
//! (ENOSPC past a byte limit, as a file system hitting its end): the count
//! injected is the count reported (fio's total_err), the first errno is
//! named (first_error), and the job goes on or stops as fio's rules say.

use std::sync::Arc;

use iolab_core::job::IoDir;
use iolab_core::stats::RunResult;
use iolab_engine::EngineError;
use iolab_target::proto::Errno;
use iolab_target::stack::inject::{InjectLayer, InjectParams};
use iolab_target::stack::memory::MemoryDev;
use iolab_target::stack::{BlockDev, BlockError, BlockResult, Forward, IoCtx, Layer, Op, Req};
use iolab_target::Export;

use crate::nbd::{done, job, memory, outcome, serial, Target, MIB};

/// Blocks of 64 KiB whose writes the inject layer fails, in a 4 MiB export.
const BAD_BLOCKS: [u64; 5] = [1, 9, 20, 33, 62];
const BS: u64 = 64 * 1024;

fn injecting(name: &str, ops: Vec<Op>) -> Export {
    let mem: Arc<dyn BlockDev> = Arc::new(MemoryDev::new(4 * MIB).unwrap());
    let p = InjectParams {
        rate: 0.0,
        offsets: BAD_BLOCKS.iter().map(|b| b * BS + 100).collect(),
        ops,
        seed: 0,
    };
    Export::new(name, Arc::new(InjectLayer::new(mem, p).unwrap())).unwrap()
}

fn errs(r: &RunResult) -> (u64, i32, u64) {
    let m = r.jobs[0].merged();
    let measured: u64 = m.dirs.iter().map(|d| d.errors).sum();
    (m.total_err, m.first_error, measured)
}

#[test]
fn continue_on_error_write_counts_every_injected_eio_and_finishes_the_job() {
    let _g = serial();
    let t = Target::start(vec![injecting("bad", vec![Op::Write])]);
    let opts = ["rw=write", "bs=64k", "iodepth=4", "continue_on_error=write"];
    let o = outcome(vec![job(&t.uri("bad"), &opts)]).unwrap();
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(errs(&o.result), (5, libc::EIO, 5));
    // Every other block was written: 64 blocks less the 5 failed.
    assert_eq!(done(&o.result, IoDir::Write), (59, 59 * BS));
}

#[test]
fn by_default_the_first_failure_ends_the_job_with_its_error() {
    let _g = serial();
    let t = Target::start(vec![injecting("bad", vec![Op::Write])]);
    // iodepth=1: nothing else is in flight when the first failure stops it.
    let o = outcome(vec![job(&t.uri("bad"), &["rw=write", "bs=64k"])]).unwrap();
    match o.error {
        Some(EngineError::IoFailed { offset, .. }) => assert_eq!(offset, BAD_BLOCKS[0] * BS),
        other => panic!("expected the injected EIO, got {other:?}"),
    }
    assert_eq!(errs(&o.result), (1, libc::EIO, 1));
    assert_eq!(done(&o.result, IoDir::Write).0, BAD_BLOCKS[0]);
}

#[test]
fn continue_on_error_of_another_kind_or_errno_still_ends_the_job() {
    let _g = serial();
    let t = Target::start(vec![injecting("bad", vec![Op::Write])]);
    let uri = t.uri("bad");
    for opts in [
        // Reads continue, writes do not.
        &["rw=write", "bs=64k", "continue_on_error=read"][..],
        // The write list replaces fio's default (EIO, EILSEQ): EIO is fatal.
        &["rw=write", "bs=64k", "ignore_error=,ENOSPC"][..],
    ] {
        let o = outcome(vec![job(&uri, opts)]).unwrap();
        assert!(
            matches!(o.error, Some(EngineError::IoFailed { .. })),
            "{opts:?}: {:?}",
            o.error
        );
        assert_eq!(errs(&o.result).0, 1, "{opts:?}");
    }
}

/// A layer that fails every write reaching past `limit` bytes with
/// ENOSPC, as a file system does once it is full.
#[derive(Debug)]
struct Full {
    next: Arc<dyn BlockDev>,
    limit: u64,
}

impl Layer for Full {
    fn next(&self) -> &Arc<dyn BlockDev> {
        &self.next
    }
    fn label(&self) -> String {
        format!("full(at={})", self.limit)
    }
    fn around(&self, ctx: &mut IoCtx, req: Req, forward: Forward<'_>) -> BlockResult {
        if req.op == Op::Write && req.offset + req.len_bytes > self.limit {
            return Err(BlockError::new(Errno::NoSpc, "full"));
        }
        forward(ctx)
    }
}

/// enospc-pressure.fio's settings: writes go on past ENOSPC, which is
/// counted; EIO would still end the job.
#[test]
fn ignore_error_enospc_keeps_writing_past_a_full_device() {
    let _g = serial();
    let dev = Arc::new(Full {
        next: Arc::new(MemoryDev::new(4 * MIB).unwrap()),
        limit: 3 * MIB,
    });
    let t = Target::start(vec![Export::new("full", dev).unwrap(), memory("m", MIB)]);
    let opts = [
        "rw=write",
        "bs=64k",
        "iodepth=8",
        "continue_on_error=write",
        "ignore_error=,ENOSPC",
        "error_dump=0",
    ];
    let o = outcome(vec![job(&t.uri("full"), &opts)]).unwrap();
    assert!(o.error.is_none(), "{:?}", o.error);
    assert_eq!(errs(&o.result), (16, libc::ENOSPC, 16));
    assert_eq!(done(&o.result, IoDir::Write), (48, 3 * MIB));
    // Without ignore_error, ENOSPC is not in fio's default list: fatal.
    let o = outcome(vec![job(&t.uri("full"), &opts[..4])]).unwrap();
    assert!(matches!(o.error, Some(EngineError::IoFailed { .. })));
    assert_eq!(errs(&o.result).1, libc::ENOSPC);
}

/// continue_on_error=verify: every block the corrupt layer flips is one
/// failure counted as EILSEQ (count injected = total_err), and the job
/// ends without an error, verify_fatal=1 or not.
#[test]
fn continue_on_error_verify_counts_every_corrupted_block() {
    use iolab_target::stack::corrupt::{CorruptLayer, CorruptParams};
    let _g = serial();
    let offsets: Vec<u64> = [2u64, 17, 40, 41].iter().map(|b| b * BS + 7).collect();
    let mem: Arc<dyn BlockDev> = Arc::new(MemoryDev::new(4 * MIB).unwrap());
    let p = CorruptParams {
        rate: 0.0,
        bits: 1,
        offsets,
        seed: 0,
    };
    let bad = Export::new("bad", Arc::new(CorruptLayer::new(mem, p).unwrap())).unwrap();
    let t = Target::start(vec![bad]);
    for fatal in ["verify_fatal=0", "verify_fatal=1"] {
        let opts = [
            "rw=randwrite",
            "bs=64k",
            "verify=crc32c",
            "continue_on_error=verify",
            "error_dump=0",
            fatal,
        ];
        let o = outcome(vec![job(&t.uri("bad"), &opts)]).unwrap();
        assert!(o.error.is_none(), "{fatal}: {:?}", o.error);
        let m = o.result.jobs[0].merged();
        assert_eq!((m.total_err, m.first_error), (4, libc::EILSEQ), "{fatal}");
        assert_eq!(
            done(&o.result, IoDir::Read).0,
            64,
            "{fatal}: every block read back"
        );
    }
}
