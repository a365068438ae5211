//! The lab runner's model against the same stack served live.

use std::time::Duration;

use iolab_target::config::parse_compact;
use iolab_target::lab::{model, VJob};
use iolab_target::{ListenAddr, ServerConfig};

use crate::client::*;

/// Lab 2B's "write-through, disk cache on" array, and its request size.
const SPEC: &str = "r5=raid5,members=6,strip=64k,member=sim-hdd(wcache=on,seed={i})\
                    +cache,write=through,read=none";
const BS: u64 = 64 << 10;

/// The model's service time per 64 KiB sequential write at QD 1, ns: its
/// time per request less the gap `rtt` it was run with.
fn model_service_ns(spec: &str, rtt: Duration) -> f64 {
    let job = VJob {
        write: true,
        random: false,
        bs: BS,
        iodepth: 1,
        region: 1 << 30,
        runtime: Duration::from_millis(500),
        rtt,
    };
    let m = model(spec, job, 0).unwrap();
    m.elapsed.as_nanos() as f64 / m.ios as f64 - rtt.as_nanos() as f64
}

/// The live stack serves `iolab lab raid`'s 2B "write-through, disk cache
/// on" array as its virtual-clock model does: the target's own service
/// time per request (its hold, less how late its reply went out) within
/// 2/3 to 3/2 of the model's, the model run with a prompt client (30 µs from
/// a request's completion to the next one's arrival). Before stack::clock
/// the model said 1.25 ms and the live stack 4.2 ms (3.3x): the bound is
/// far inside that. The model alone moves by ±7 % with the gap at small
/// gaps (4.36–4.94 ms for 30 µs to 1.5 ms: the rotational phase the next
/// request meets). At the long, uneven gaps a loaded machine's client
/// leaves (10–25 ms beside a busy loop with builds running) the model
/// destages in the idle time and falls to 1.9–2.7 ms while the live stack
/// stays at 3.5–5.3 ms: an open difference (issue 25), which is why the
/// model is not run with the measured gap.
///
/// Live timing needs a machine that is not overloaded (at load 7 on two
/// cores the live service itself rose to 10–11 ms), so this comparison is
/// run by hand (`cargo test -p iolab-target --release -- --ignored lab_live`,
/// 1.01 in release on a quiet machine); the model's own figure, which is
/// where the bug was, is checked on every run by
/// `the_model_writes_through_at_the_drives_pace` below.
#[test]
#[ignore = "live timing: run on a quiet machine with --ignored"]
fn write_through_with_the_disk_cache_on_serves_as_the_model_says() {
    let spec = SPEC;
    let bs = BS;

    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("nbd.sock");
    let t = parse_compact(&[spec], ServerConfig::new(ListenAddr::Unix(sock.clone()))).unwrap();
    let server = t.bind().unwrap().spawn().unwrap();
    let mut c = Client::open(&sock, "r5");
    let data = vec![0x5a; bs as usize];
    let n = 120u64;
    for i in 0..n {
        c.write(i * bs, &data, 0).unwrap();
    }
    let s = server.handle().stats().snapshot().unwrap();
    server.stop().unwrap();
    let w = &s.export("r5").unwrap().write;
    assert_eq!(w.ios, n);
    let service_ns = w.lat_ns.mean() - w.hold_late_ns.mean();
    let rtt = Duration::from_micros(30);
    let model_ns = model_service_ns(SPEC, rtt);
    let ratio = service_ns / model_ns;
    eprintln!(
        "write-through, disk cache on: live service {:.0} µs, model {:.0} µs ({ratio:.3}), gap {:?}",
        service_ns / 1e3,
        model_ns / 1e3,
        rtt
    );
    assert!(
        (2.0 / 3.0..=1.5).contains(&ratio),
        "live {service_ns} ns vs model {model_ns} ns"
    );
}

/// The virtual-clock model of the same array, on its own (no wall clock, so
/// no load can move it): a 64 KiB write-through write with the drives'
/// caches on costs a RAID 5 read-modify-write at the drives' pace, 4.36–4.94
/// ms per request at QD 1 for gaps of 30 µs to 1.5 ms. Before stack::clock
/// the model's drives read the wall clock, decided no request on arrival,
/// and the model said 1.25 ms.
#[test]
fn the_model_writes_through_at_the_drives_pace() {
    for gap_us in [30, 1_500] {
        let per_io_ns = model_service_ns(SPEC, Duration::from_micros(gap_us));
        assert!(
            (4.0e6..=5.2e6).contains(&per_io_ns),
            "gap {gap_us} µs: model {per_io_ns} ns per write"
        );
    }
}
