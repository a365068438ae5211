//! Data paths: round trips, pipelining, out-of-order replies, multi-conn.

use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_target::stack::delay::{DelayLayer, DelayParams};
use iolab_target::stack::memory::MemoryDev;
use iolab_target::stack::null::NullDev;

use crate::client::*;
use crate::util::*;

#[test]
fn memory_round_trip_of_random_data_at_random_offsets() {
    let t = Target::start(vec![memory("m", 64 << 20)]);
    for structured in [false, true] {
        let mut c = if structured {
            Client::open_structured(&t.sock, "m")
        } else {
            Client::open(&t.sock, "m")
        };
        let mut rng = fastrand::Rng::with_seed(structured as u64);
        let mut written = Vec::new();
        for i in 0..64 {
            let len = rng.usize(1..300_000);
            let off = rng.u64(0..(64 << 20) - len as u64);
            let data = pattern(i, len);
            c.write(off, &data, if i % 3 == 0 { FLAG_FUA } else { 0 })
                .unwrap();
            assert_eq!(c.read(off, len as u32).unwrap(), data);
            written.push((off, data));
        }
        c.flush().unwrap();
        // The last write to each byte wins: check the final state of the last few.
        let (off, data) = written.last().unwrap();
        assert_eq!(&c.read(*off, data.len() as u32).unwrap(), data);
        c.disconnect();
    }
}

#[test]
fn trim_and_write_zeroes_read_back_as_zero() {
    let t = Target::start(vec![memory("m", 1 << 20)]);
    let mut c = Client::open(&t.sock, "m");
    c.write(0, &[0xaa; 200_000], 0).unwrap();
    c.trim(0, 100_000).unwrap();
    c.zero(100_000, 50_000, FLAG_NO_HOLE).unwrap();
    c.zero(150_000, 10_000, FLAG_FUA).unwrap();
    let back = c.read(0, 200_000).unwrap();
    assert!(back[..160_000].iter().all(|&b| b == 0));
    assert!(back[160_000..].iter().all(|&b| b == 0xaa));
}

#[test]
fn zero_length_requests_succeed() {
    let t = Target::start(vec![memory("m", 4096)]);
    for structured in [false, true] {
        let mut c = if structured {
            Client::open_structured(&t.sock, "m")
        } else {
            Client::open(&t.sock, "m")
        };
        assert_eq!(c.read(4096, 0).unwrap(), Vec::<u8>::new());
        c.write(0, &[], 0).unwrap();
        c.trim(0, 0).unwrap();
    }
}

#[test]
fn pipelined_requests_all_answered_with_their_cookies() {
    let t = Target::start(vec![memory("m", 8 << 20)]);
    let mut c = Client::open(&t.sock, "m");
    let mut expect = std::collections::HashMap::new();
    for i in 0..128u64 {
        let data = pattern(i, 4096);
        c.send(CMD_WRITE, 0, i * 4096, 4096, &data);
        expect.insert(i, data);
    }
    for _ in 0..128 {
        assert_eq!(c.recv().unwrap().error, 0);
    }
    let cookies: Vec<(u64, u64)> = (0..128u64)
        .map(|i| (c.send(CMD_READ, 0, i * 4096, 4096, &[]), i))
        .collect();
    let by_cookie: std::collections::HashMap<u64, u64> = cookies.into_iter().collect();
    for _ in 0..128 {
        let r = c.recv().unwrap();
        assert_eq!(r.data, expect[&by_cookie[&r.cookie]]);
    }
}

#[test]
fn delayed_requests_do_not_hold_back_others() {
    // Reads take 200 ms, writes none: a write sent after a read is answered first,
    // and many delayed reads overlap instead of queuing behind each other.
    let p = DelayParams {
        read: Duration::from_millis(200),
        ..Default::default()
    };
    let dev = DelayLayer::new(Arc::new(MemoryDev::new(1 << 20).unwrap()), p);
    let t = Target::start(vec![export("d", dev)]);
    let mut c = Client::open_structured(&t.sock, "d");
    let t0 = Instant::now();
    let reads: Vec<u64> = (0..16)
        .map(|i| c.send(CMD_READ, 0, i * 4096, 4096, &[]))
        .collect();
    let w = c.send(CMD_WRITE, 0, 0, 512, &[1u8; 512]);
    let first = c.recv().unwrap();
    assert_eq!(
        first.cookie, w,
        "the undelayed write overtakes the delayed reads"
    );
    assert!(
        t0.elapsed() < Duration::from_millis(150),
        "{:?}",
        t0.elapsed()
    );
    let mut got: Vec<u64> = (0..16).map(|_| c.recv().unwrap().cookie).collect();
    got.sort_unstable();
    assert_eq!(got, reads);
    let all = t0.elapsed();
    assert!(
        all >= Duration::from_millis(200) && all < Duration::from_millis(350),
        "16 reads overlap: {all:?}"
    );
}

#[test]
fn writes_are_visible_across_connections_after_flush() {
    let t = Target::start(vec![memory("m", 1 << 20)]);
    let (mut a, mut b) = (Client::open(&t.sock, "m"), Client::open(&t.sock, "m"));
    assert_ne!(a.tflags & 256, 0, "CAN_MULTI_CONN");
    let data = pattern(5, 65536);
    a.write(8192, &data, 0).unwrap();
    a.flush().unwrap();
    assert_eq!(b.read(8192, 65536).unwrap(), data);
}

#[test]
fn null_export_reads_zeroes_and_accepts_writes() {
    let t = Target::start(vec![export("n", NullDev::new(1 << 40))]);
    let mut c = Client::open(&t.sock, "n");
    assert_eq!(c.size, 1 << 40);
    c.write((1 << 40) - 4096, &[7u8; 4096], FLAG_FUA).unwrap();
    assert!(c
        .read((1 << 40) - 4096, 4096)
        .unwrap()
        .iter()
        .all(|&b| b == 0));
}

#[test]
fn many_clients_in_parallel_each_verify_their_region() {
    let t = Target::start(vec![memory("m", 16 << 20)]);
    let sock = t.sock.clone();
    let threads: Vec<_> = (0..8u64)
        .map(|k| {
            let sock = sock.clone();
            std::thread::spawn(move || {
                let mut c = Client::open(&sock, "m");
                let base = k * (2 << 20);
                for i in 0..50u64 {
                    let data = pattern(k * 1000 + i, 8192);
                    let off = base + (i % 200) * 8192;
                    c.write(off, &data, 0).unwrap();
                    assert_eq!(c.read(off, 8192).unwrap(), data);
                }
                c.disconnect();
            })
        })
        .collect();
    threads.into_iter().for_each(|h| h.join().unwrap());
}
