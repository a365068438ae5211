//! Layers seen from a client: delay timing, split exports, stats, corruption.

use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_target::measure::Recorder;
use iolab_target::stack::corrupt::{CorruptLayer, CorruptParams};
use iolab_target::stack::delay::{DelayLayer, DelayParams};
use iolab_target::stack::memory::MemoryDev;
use iolab_target::stack::split::split;
use iolab_target::stack::stats::StatsLayer;
use iolab_target::stack::BlockDev;
use iolab_target::{Export, ExportSet, ListenAddr, Server, ServerConfig};

use crate::client::*;
use crate::util::*;

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// What a 1 ms delay layer does, measured where the noise is not: the
/// server records, for every reply it held, how long after its hold time
/// it was written (`hold_late_ns`), so the hold applied is 1 ms plus that,
/// whatever the machine's load.
///
/// The client sees more than the hold: on a 2-core machine, debug build,
/// under load, a client blocked for 1 ms took 30–55 µs longer to wake than
/// one blocked for the ~20 µs a 2 µs delay takes through the same timer
/// thread (client p50 minus server p50: 59–87 µs at 1 ms, 28–33 µs at 2 µs,
/// 26–32 µs with no delay), while the server held 1 ms + 1.5–2 µs at p50.
/// That wake-up (a CPU leaving an idle state, or taken back from another
/// process) is the machine's, not the delay layer's, so client-side figures
/// are bounded only from below here.
#[test]
fn a_1ms_delay_holds_1ms_within_1_percent_at_p50() {
    let mem = || Arc::new(MemoryDev::new(1 << 20).unwrap());
    let slow = DelayLayer::new(
        mem(),
        DelayParams {
            read: Duration::from_millis(1),
            ..Default::default()
        },
    );
    let t = Target::start(vec![
        export("plain", MemoryDev::new(1 << 20).unwrap()),
        export("slow", slow),
    ]);
    let (mut plain, mut slow) = (
        Client::open(&t.sock, "plain"),
        Client::open(&t.sock, "slow"),
    );
    let mut client_ns = Vec::new();
    for i in 0..300u64 {
        plain.read((i % 256) * 4096, 4096).unwrap();
        let t0 = Instant::now();
        slow.read((i % 256) * 4096, 4096).unwrap();
        client_ns.push(t0.elapsed().as_nanos() as u64);
    }
    let s = t.handle().stats().snapshot().unwrap();
    let (held, not_held) = (
        &s.export("slow").unwrap().read,
        &s.export("plain").unwrap().read,
    );
    assert_eq!(
        (held.hold_late_ns.count(), not_held.hold_late_ns.count()),
        (300, 0)
    );
    let late_p50 = held.hold_late_ns.percentile(50.0);
    eprintln!(
        "1 ms hold: late by {late_p50} ns at p50, {} ns at p90; client p50 {} ns",
        held.hold_late_ns.percentile(90.0),
        median(client_ns.clone())
    );
    // The timer's precision (late under 1 % at p50: it learns how late its
    // wake-ups come, wakes that much early and spins the rest) is iolab's
    // where the timer gets a CPU when it wakes. Beside CPU-bound work its
    // lead (at most 200 µs) can fall short of a wake-up that waits for a time
    // slice: in a Python probe of the same timer beside two busy loops and
    // other builds, a lone 2 ms hold went out 1.9 ms late at p50. So the 1 %
    // is asserted when the window's own CPU record (the host's busy time
    // less this process's, which holds the timer and any spin of it) shows
    // other work kept at most a quarter of the CPUs busy; on every run the
    // hold is the delay plus the lateness recorded at the same instant as
    // the reply's latency (conn/write.rs): latency p50 less late p50 within
    // 1 % above the delay (the hold starts a few µs after the request is
    // read; 0.1 % below for the histograms' 3 digits). A layer that holds
    // the wrong time, or a late reply the record missed, fails anywhere.
    let sys = s.cpu.sys_pct();
    let others_pct =
        (100.0 - sys.idle - sys.iowait - s.cpu.proc_cpu_pct() / f64::from(s.cpu.ncpus)).max(0.0);
    let hold = held.lat_ns.percentile(50.0) as f64 - late_p50 as f64;
    assert!(
        (999_000.0..=1_010_000.0).contains(&hold),
        "latency p50 less late p50 is {hold} ns, not the 1 ms hold"
    );
    if others_pct <= 25.0 {
        assert!(
            late_p50 <= 10_000,
            "the hold ran {late_p50} ns (over 1%) long at p50"
        );
    } else {
        eprintln!("precision not asserted: other work kept {others_pct:.0} % of the CPUs busy");
    }
    // The per-export fidelity record is that same record, every op merged:
    // the delayed export held all 300 replies, the plain one none.
    let fid = |n: &str| s.fidelity.iter().find(|f| f.export == n).unwrap();
    let (f, p) = (fid("slow"), fid("plain"));
    assert_eq!((f.held, p.held), (300, 0));
    assert_eq!(f.late_ns_p50, late_p50);
    assert_eq!(f.late_ns_p99, held.hold_late_ns.percentile(99.0));
    // A hold never ends early, on either side (the histogram keeps 3
    // significant digits: its minimum may read up to 0.1% low).
    assert!(held.lat_ns.min() >= 999_000, "{}", held.lat_ns.min());
    assert!(client_ns.iter().all(|&ns| ns >= 1_000_000));
}

#[test]
fn split_parts_are_independent_exports_of_one_device() {
    let dev: Arc<dyn BlockDev> = Arc::new(MemoryDev::new(3 << 20).unwrap());
    let parts = split(dev.clone(), 3).unwrap();
    let slow = DelayParams {
        read: Duration::from_millis(300),
        ..Default::default()
    };
    let p1 = Arc::new(DelayLayer::new(parts[1].clone(), slow));
    let exports = vec![
        Export::new("whole", dev).unwrap(),
        Export::new("p0", parts[0].clone()).unwrap(),
        Export::new("p1", p1).unwrap(),
        Export::new("p2", parts[2].clone()).unwrap(),
    ];
    let t = Target::start(exports);
    let mut cs: Vec<Client> = ["p0", "p1", "p2"]
        .iter()
        .map(|n| Client::open(&t.sock, n))
        .collect();
    for (i, c) in cs.iter_mut().enumerate() {
        assert_eq!(c.size, 1 << 20);
        c.write(0, &[i as u8 + 1; 4096], 0).unwrap();
        assert_eq!(
            c.write(1 << 20, &[0u8; 512], 0),
            Err(NBD_ENOSPC),
            "a part ends at its own size"
        );
    }
    let mut whole = Client::open(&t.sock, "whole");
    for i in 0..3u64 {
        assert_eq!(whole.read(i << 20, 4096).unwrap(), vec![i as u8 + 1; 4096]);
    }
    // The delay on part 1 does not slow part 0 down.
    let slow_read = cs[1].send(CMD_READ, 0, 0, 4096, &[]);
    let t0 = Instant::now();
    assert_eq!(cs[0].read(0, 4096).unwrap(), vec![1u8; 4096]);
    assert!(t0.elapsed() < Duration::from_millis(100));
    assert_eq!(cs[1].recv().unwrap().cookie, slow_read);
    assert!(t0.elapsed() >= Duration::from_millis(290));
}

#[test]
fn stats_layer_below_a_split_counts_every_part() {
    let rec = Arc::new(Recorder::new());
    let mem = Arc::new(MemoryDev::new(2 << 20).unwrap());
    let counted: Arc<dyn BlockDev> = Arc::new(StatsLayer::new(mem, "disk".into(), rec.clone()));
    let parts = split(counted, 2).unwrap();
    let exports = vec![
        Export::new("a", parts[0].clone()).unwrap(),
        Export::new("b", parts[1].clone()).unwrap(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("s");
    let cfg = ServerConfig::new(ListenAddr::Unix(sock.clone()));
    let server = Server::bind_with_layers(
        cfg,
        ExportSet::new(exports).unwrap(),
        vec![("disk".into(), rec)],
    )
    .unwrap();
    let running = server.spawn().unwrap();
    for (name, n) in [("a", 3), ("b", 5)] {
        let mut c = Client::open(&sock, name);
        for i in 0..n {
            c.write(i * 4096, &[1u8; 4096], 0).unwrap();
        }
        c.read(0, 8192).unwrap();
    }
    let s = running.handle().stats().snapshot_and_reset().unwrap();
    let disk = s.layer("disk").unwrap();
    assert_eq!((disk.write.ios, disk.write.bytes), (8, 8 * 4096));
    assert_eq!((disk.read.ios, disk.read.bytes), (2, 2 * 8192));
    assert_eq!(s.export("a").unwrap().write.ios, 3);
    assert_eq!(s.export("b").unwrap().write.ios, 5);
    running.stop().unwrap();
}

#[test]
fn corruption_reaches_the_client_but_not_the_storage() {
    let mem = Arc::new(MemoryDev::new(1 << 20).unwrap());
    let p = CorruptParams {
        rate: 0.0,
        bits: 1,
        offsets: vec![4096 + 10],
        seed: 0,
    };
    let bad = CorruptLayer::new(mem.clone(), p).unwrap();
    let t = Target::start(vec![export("bad", bad), Export::new("raw", mem).unwrap()]);
    let mut c = Client::open(&t.sock, "bad");
    c.write(4096, &[0u8; 4096], 0).unwrap();
    let back = c.read(4096, 4096).unwrap();
    assert_eq!(back[10], 1);
    assert_eq!(back.iter().filter(|&&b| b != 0).count(), 1);
    assert_eq!(
        Client::open(&t.sock, "raw").read(4096, 4096).unwrap(),
        vec![0u8; 4096]
    );
}
