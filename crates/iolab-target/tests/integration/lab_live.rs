//! The lab runner's model against the same stack served live.

use std::time::{Duration, Instant};

use iolab_target::config::parse_compact;
use iolab_target::lab::{model, VJob};
use iolab_target::{ListenAddr, ServerConfig};

use crate::client::*;

/// The live stack serves `iolab lab raid`'s 2B "write-through, disk cache
/// on" array as its virtual-clock model does: the target's own service
/// time per request (its hold, less how late its reply went out) within
/// 2/3 to 3/2 of the model's (see below), the model run with the gap the drives saw live between
/// a request's completion and the next one's arrival (a longer gap leaves
/// them more time to destage). Before stack::clock the model said 1.25 ms and the live
/// stack 4.2 ms (3.3x). The bound is not tighter because the model's gap
/// is one fixed figure and the live one varies: the model alone moves by
/// ±7 % with the gap (4.36–4.94 ms for gaps of 30 µs to 1.5 ms: the
/// rotational phase the next request meets), and the live stack came out
/// 0.85–0.97 of the model on a loaded 2-core machine, 0.77 once beside a
/// busy loop while other builds ran (a client slowed by the load leaves
/// uneven gaps, and a long gap lets the drives destage: faster service than
/// the mean gap predicts). So the bound is 2/3..3/2: far inside the 3.3x
/// the test exists to catch.
#[test]
fn write_through_with_the_disk_cache_on_serves_as_the_model_says() {
    let spec = "r5=raid5,members=6,strip=64k,member=sim-hdd(wcache=on,seed={i})\
                +cache,write=through,read=none";
    let bs: u64 = 64 << 10;

    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("nbd.sock");
    let t = parse_compact(&[spec], ServerConfig::new(ListenAddr::Unix(sock.clone()))).unwrap();
    let server = t.bind().unwrap().spawn().unwrap();
    let mut c = Client::open(&sock, "r5");
    let data = vec![0x5a; bs as usize];
    let n = 120u64;
    let t0 = Instant::now();
    for i in 0..n {
        c.write(i * bs, &data, 0).unwrap();
    }
    let per_io_ns = t0.elapsed().as_nanos() as f64 / n as f64;
    let s = server.handle().stats().snapshot().unwrap();
    server.stop().unwrap();
    let w = &s.export("r5").unwrap().write;
    assert_eq!(w.ios, n);
    let service_ns = w.lat_ns.mean() - w.hold_late_ns.mean();
    // From a request's completion (its model time) to the next request's
    // arrival, as the drives saw it live: the reply's lateness, the socket
    // and the client.
    let rtt = Duration::from_nanos((per_io_ns - service_ns).max(0.0) as u64);
    let job = VJob {
        write: true,
        random: false,
        bs,
        iodepth: 1,
        region: 1 << 30,
        runtime: Duration::from_millis(500),
        rtt,
    };
    let m = model(spec, job, 0).unwrap();
    let model_ns = m.elapsed.as_nanos() as f64 / m.ios as f64 - rtt.as_nanos() as f64;
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
