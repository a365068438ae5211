//! `serialize_overlap` and verify at a high queue depth on a tiny region,
//! seen from the device: an in-process iolab target whose device applies
//! each request on arrival and holds its reply for a fixed delay (as a
//! device with a write cache acknowledges late). The device counts every
//! request that arrives over bytes of a request whose reply cannot have
//! been sent yet — an overlap the client allowed, counted at the far end.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use iolab_core::job::{IoDir, JobSpec, PreparedJob};
use iolab_engine::run::RunOutcome;
use iolab_engine::{Run, RunConfig};
use iolab_target::stack::memory::MemoryDev;
use iolab_target::stack::{BlockDev, BlockResult, Caps, IoCtx, ZeroReq};
use iolab_target::{Export, ExportSet, ListenAddr, Server, ServerConfig};

/// Long enough that the queue fills well within it on a loaded machine.
const DELAY: Duration = Duration::from_millis(10);

#[derive(Debug)]
struct OverlapProbe {
    mem: MemoryDev,
    /// (start, end, instant before which the reply cannot have been sent).
    live: Mutex<Vec<(u64, u64, Instant)>>,
    overlaps: AtomicU64,
    ios: AtomicU64,
}

impl OverlapProbe {
    fn arrive(&self, ctx: &mut IoCtx, offset: u64, len: u64) {
        let now = Instant::now();
        let mut live = self.live.lock().unwrap();
        live.retain(|r| r.2 > now);
        if live.iter().any(|r| r.0 < offset + len && offset < r.1) {
            self.overlaps.fetch_add(1, Relaxed);
        }
        live.push((offset, offset + len, now + DELAY));
        self.ios.fetch_add(1, Relaxed);
        // The reply waits at least DELAY from a later instant than `now`.
        ctx.hold_for(DELAY);
    }
}

impl BlockDev for OverlapProbe {
    fn caps(&self) -> Caps {
        self.mem.caps()
    }
    fn describe(&self) -> String {
        format!("overlap-probe <- {}", self.mem.describe())
    }
    fn read_at(&self, ctx: &mut IoCtx, buf: &mut [u8], offset: u64) -> BlockResult {
        self.mem.read_at(ctx, buf, offset)?;
        self.arrive(ctx, offset, buf.len() as u64);
        Ok(())
    }
    fn write_at(&self, ctx: &mut IoCtx, buf: &[u8], offset: u64, fua: bool) -> BlockResult {
        self.mem.write_at(ctx, buf, offset, fua)?;
        self.arrive(ctx, offset, buf.len() as u64);
        Ok(())
    }
    fn flush(&self, ctx: &mut IoCtx) -> BlockResult {
        self.mem.flush(ctx)
    }
    fn trim(&self, ctx: &mut IoCtx, offset: u64, len: u64, fua: bool) -> BlockResult {
        self.mem.trim(ctx, offset, len, fua)
    }
    fn zero(&self, ctx: &mut IoCtx, z: ZeroReq) -> BlockResult {
        self.mem.zero(ctx, z)
    }
}

/// Runs `opts` against a fresh probe; returns the outcome, the overlaps
/// and the requests the device saw.
fn probe_run(opts: &[&str]) -> (RunOutcome, u64, u64) {
    let dev = Arc::new(OverlapProbe {
        mem: MemoryDev::new(1 << 20).unwrap(),
        live: Mutex::new(Vec::new()),
        overlaps: AtomicU64::new(0),
        ios: AtomicU64::new(0),
    });
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("nbd.sock");
    let export = Export::new("p", dev.clone()).unwrap();
    let cfg = ServerConfig::new(ListenAddr::Unix(sock.clone()));
    let server = Server::bind(cfg, ExportSet::new(vec![export]).unwrap()).unwrap();
    let running = server.spawn().unwrap();
    let uri = format!("nbd+unix:///p?socket={}", sock.display());
    let job: PreparedJob = JobSpec::new("o")
        .opt("ioengine", Some("nbd"))
        .opt("uri", Some(&uri))
        .args(opts.iter().copied())
        .prepare()
        .unwrap_or_else(|e| panic!("{opts:?}: {e}"));
    let mut run = Run::prepare(RunConfig {
        jobs: vec![job],
        interval: Duration::from_secs(1),
        allow_overwrite: false,
        host: "test".into(),
        host_index: 0,
    })
    .unwrap();
    run.start(None).unwrap();
    let outcome = run.finish().unwrap();
    running.stop().unwrap();
    (outcome, dev.overlaps.load(Relaxed), dev.ios.load(Relaxed))
}

/// 4 blocks, 16 in flight, 32 passes: without serialize_overlap the queue
/// holds several I/Os to one block; with it, never two.
#[test]
fn serialize_overlap_never_has_two_overlapping_ios_in_flight() {
    for rw in ["rw=randwrite", "rw=randrw"] {
        let base = [rw, "bs=4k", "size=16k", "loops=32", "iodepth=16"];
        let (o, overlaps, ios) = probe_run(&base);
        assert!(o.error.is_none(), "{:?}", o.error);
        assert_eq!(ios, 128, "{rw}: every I/O reached the device");
        assert!(
            overlaps > 0,
            "{rw}: without the option the queue overlaps ({overlaps})"
        );
        let (o, overlaps, ios) = probe_run(&[&base[..], &["serialize_overlap=1"]].concat());
        assert!(o.error.is_none(), "{:?}", o.error);
        assert_eq!((overlaps, ios), (0, 128), "{rw} with serialize_overlap");
    }
}

/// spdk's hotplug default_integrity.job in small: verify_backlog at a deep
/// queue over a tiny region, writes acknowledged late. Every block written
/// is read back once its last write completed, and none is reported
/// corrupt: a verify read never races a write to its block. (Before the
/// verify log marked writes in flight, this run reported false
/// mismatches: a block was read back, expecting its previous write, while
/// a newer write to it was already applied and not yet acknowledged.)
#[test]
fn verify_at_a_deep_queue_on_a_tiny_region_reports_no_false_mismatch() {
    for rw in ["rw=randwrite", "rw=randrw"] {
        let opts = [
            rw,
            "bs=4k",
            "size=16k",
            "loops=64",
            "iodepth=16",
            "verify=md5",
            "verify_backlog=2",
            "serialize_overlap=1",
        ];
        let (o, overlaps, _) = probe_run(&opts);
        assert!(o.error.is_none(), "{rw}: {:?}", o.error);
        assert_eq!(overlaps, 0);
        let w = &o.result.jobs[0].workers[0];
        let (reads, writes) = (
            w.dirs[IoDir::Read as usize].ios,
            w.dirs[IoDir::Write as usize].ios,
        );
        assert!(
            writes > 0 && reads >= 4,
            "{rw}: {reads} reads, {writes} writes"
        );
    }
}
