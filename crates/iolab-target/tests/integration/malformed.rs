//! Broken and hostile clients: each gets an error or a disconnect, and a
//! well-behaved client working at the same time never notices.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::client::*;
use crate::util::*;

/// A client verifying its own writes in a loop until told to stop.
fn good_client(
    sock: &Path,
    stop: Arc<AtomicBool>,
    rounds: Arc<AtomicU64>,
) -> std::thread::JoinHandle<()> {
    let sock = sock.to_path_buf();
    std::thread::spawn(move || {
        let mut c = Client::open(&sock, "m");
        let mut i = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let data = pattern(i, 4096);
            let off = (i % 256) * 4096;
            c.write(off, &data, 0).unwrap();
            assert_eq!(c.read(off, 4096).unwrap(), data);
            i += 1;
            rounds.store(i, Ordering::Relaxed);
        }
        c.disconnect();
    })
}

/// Expect the server to close the connection (EOF) soon.
fn assert_closed(s: &mut UnixStream) {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {} // replies sent before the cut
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return,
            Err(e) => panic!("expected the server to hang up, got {e}"),
        }
    }
}

fn request(kind: u16, offset: u64, len: u32) -> Vec<u8> {
    let mut m = 0x2560_9513u32.to_be_bytes().to_vec();
    m.extend_from_slice(&0u16.to_be_bytes());
    m.extend_from_slice(&kind.to_be_bytes());
    m.extend_from_slice(&7u64.to_be_bytes());
    m.extend_from_slice(&offset.to_be_bytes());
    m.extend_from_slice(&len.to_be_bytes());
    m
}

#[test]
fn hostile_clients_are_cut_off_without_disturbing_others() {
    let t = Target::start_with(vec![memory("m", 1 << 20)], |c| {
        c.handshake_timeout = Duration::from_millis(500)
    });
    let (stop, rounds) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let good = good_client(&t.sock, stop.clone(), rounds.clone());
    let mut cases = 0;

    // 1. Unknown client flags.
    let mut h = Handshake::connect(&t.sock).unwrap();
    h.s.write_all(&0xffu32.to_be_bytes()).unwrap();
    assert_closed(&mut h.s);
    cases += 1;

    // 2. Bad option magic.
    let mut h = Handshake::start(&t.sock).unwrap();
    h.s.write_all(b"NOTMAGIC\0\0\0\x07\0\0\0\0").unwrap();
    assert_closed(&mut h.s);
    cases += 1;

    // 3. An option claiming 1 GiB of data.
    let mut h = Handshake::start(&t.sock).unwrap();
    h.s.write_all(b"IHAVEOPT\0\0\0\x07\x40\0\0\0").unwrap();
    assert_closed(&mut h.s);
    cases += 1;

    // 4. Bad request magic after a good handshake.
    let mut c = Client::open(&t.sock, "m");
    let mut bad = request(CMD_READ, 0, 512);
    bad[0] = 0xde;
    c.s.write_all(&bad).unwrap();
    assert_closed(&mut c.s);
    cases += 1;

    // 5. A write announcing 4 GiB of payload.
    let mut c = Client::open(&t.sock, "m");
    c.s.write_all(&request(CMD_WRITE, 0, u32::MAX)).unwrap();
    assert_closed(&mut c.s);
    cases += 1;

    // 6. A request header cut short, then the client leaves.
    let mut c = Client::open(&t.sock, "m");
    c.s.write_all(&request(CMD_READ, 0, 512)[..13]).unwrap();
    drop(c);
    cases += 1;

    // 7. A write whose payload stops halfway.
    let mut c = Client::open(&t.sock, "m");
    let mut w = request(CMD_WRITE, 0, 65536);
    w.extend_from_slice(&[1u8; 1000]);
    c.s.write_all(&w).unwrap();
    drop(c);
    cases += 1;

    // 8. A client that never completes the handshake is timed out (not counted
    //    as a protocol error: it said nothing wrong).
    let mut h = Handshake::connect(&t.sock).unwrap();
    assert_closed(&mut h.s);

    // 9. Garbage instead of a handshake.
    let mut s = UnixStream::connect(&t.sock).unwrap();
    s.write_all(&[0x55u8; 64]).unwrap();
    assert_closed(&mut s);
    cases += 1;

    // The good client kept working throughout, and nothing it wrote was touched.
    let before = rounds.load(Ordering::Relaxed);
    wait_until(
        "the good client to make progress",
        Duration::from_secs(20),
        || rounds.load(Ordering::Relaxed) > before,
    );
    stop.store(true, Ordering::Relaxed);
    good.join().unwrap();
    // Sessions end asynchronously; wait for the last ones to be counted.
    wait_until("every bad session counted", Duration::from_secs(20), || {
        t.handle()
            .stats()
            .snapshot()
            .unwrap()
            .connections
            .protocol_errors
            >= cases
    });
    let snap = t.handle().stats().snapshot().unwrap();
    assert_eq!(
        snap.connections.protocol_errors, cases,
        "{:?}",
        snap.connections
    );
    assert!(snap.connections.last_error.is_some());
}

#[test]
fn random_bytes_never_hurt_the_server() {
    let t = Target::start(vec![memory("m", 1 << 20)]);
    let mut rng = fastrand::Rng::with_seed(2024);
    for i in 0..100u64 {
        // Half start with a valid handshake, so the garbage reaches the
        // transmission phase; the rest is garbage from the first byte.
        let mut s = if i % 2 == 0 {
            Client::open(&t.sock, "m").s
        } else {
            Handshake::connect(&t.sock).unwrap().s
        };
        let mut junk: Vec<u8> = (0..rng.usize(1..4096)).map(|_| rng.u8(..)).collect();
        if i % 4 == 0 {
            // A valid request magic makes the server read further into the junk.
            junk[..4].copy_from_slice(&0x2560_9513u32.to_be_bytes());
        }
        let _ = s.write_all(&junk);
        let _ = s.shutdown(std::net::Shutdown::Write);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let _ = std::io::copy(&mut s, &mut std::io::sink());
    }
    let mut c = Client::open(&t.sock, "m");
    c.write(0, &[1u8; 512], 0).unwrap();
    assert_eq!(c.read(0, 512).unwrap(), vec![1u8; 512]);
}
