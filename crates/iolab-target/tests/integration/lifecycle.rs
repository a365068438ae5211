//! Server lifecycle: shutdown, connection limit, counters, file durability.

use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use iolab_target::stack::delay::{DelayLayer, DelayParams};
use iolab_target::stack::file::{FileDev, FileParams};
use iolab_target::stack::inject::{InjectLayer, InjectParams};
use iolab_target::stack::memory::MemoryDev;
use iolab_target::stack::Op;
use iolab_target::{Export, TargetError};

use crate::client::*;
use crate::util::*;

fn delayed(read_ms: u64) -> DelayLayer {
    let p = DelayParams {
        read: Duration::from_millis(read_ms),
        ..Default::default()
    };
    DelayLayer::new(Arc::new(MemoryDev::new(1 << 20).unwrap()), p)
}

#[test]
fn shutdown_answers_requests_in_flight_then_closes() {
    // Read 1 is held by the delay; read 2 is held on the reader's thread by
    // the gate, so read 3 sits unread in the socket until the shutdown.
    let gate = Gate::new(Arc::new(delayed(300)), 2);
    let t = Target::start(vec![Export::new("d", gate.clone()).unwrap()]);
    let mut c = Client::open(&t.sock, "d");
    let ids: Vec<u64> = (0..3)
        .map(|i| c.send(CMD_READ, 0, i * 4096, 4096, &[]))
        .collect();
    gate.wait_entered(2);
    let sock = t.sock.clone();
    let handle = t.handle().clone();
    handle.shutdown();
    let t0 = Instant::now();
    gate.open();
    let stopper = std::thread::spawn(move || t.stop());
    // The first two were received before the shutdown: both are served.
    // The third was still unread: ESHUTDOWN.
    let mut replies: Vec<Reply> = (0..3).map(|_| c.recv().unwrap()).collect();
    replies.sort_by_key(|r| r.cookie);
    assert_eq!((replies[0].cookie, replies[0].error), (ids[0], 0));
    assert_eq!((replies[1].cookie, replies[1].error), (ids[1], 0));
    assert_eq!(
        (replies[2].cookie, replies[2].error),
        (ids[2], NBD_ESHUTDOWN)
    );
    assert_eq!(replies[0].data.len(), 4096);
    let mut b = [0u8; 1];
    assert_eq!(
        std::io::Read::read(&mut c.s, &mut b).unwrap(),
        0,
        "closed after the last reply"
    );
    stopper.join().unwrap().unwrap();
    assert!(
        t0.elapsed() >= Duration::from_millis(300),
        "the stop waited for read 2's hold"
    );
    assert!(!sock.exists(), "the socket file is removed");
    assert!(UnixStream::connect(&sock).is_err());
}

#[test]
fn shutdown_with_idle_and_handshaking_clients_is_prompt() {
    let t = Target::start(vec![memory("m", 4096)]);
    let _idle = Client::open(&t.sock, "m");
    let _greeted = Handshake::connect(&t.sock).unwrap();
    let t0 = Instant::now();
    t.stop().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
}

#[test]
fn connections_over_the_limit_are_closed_and_counted() {
    let t = Target::start_with(vec![memory("m", 4096)], |c| c.max_connections = 1);
    let mut first = Client::open(&t.sock, "m");
    let e = Handshake::connect(&t.sock)
        .err()
        .expect("the second connection is closed at once");
    assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
    first.write(0, &[1u8; 16], 0).unwrap();
    let s = t.handle().stats().snapshot().unwrap();
    assert_eq!(
        (
            s.connections.accepted,
            s.connections.refused,
            s.connections.active
        ),
        (1, 1, 1)
    );
    first.disconnect();
    // Once the first is gone, a new one is accepted.
    wait_until(
        "the first connection to end",
        Duration::from_secs(20),
        || t.handle().connections() == 0,
    );
    Client::open(&t.sock, "m").read(0, 16).unwrap();
}

#[test]
fn the_target_counts_what_the_client_sent_per_window() {
    let t = Target::start(vec![memory("m", 1 << 20), memory("other", 4096)]);
    let mut c = Client::open(&t.sock, "m");
    c.write(0, &[1u8; 100], 0).unwrap();
    let stats = t.handle().stats().clone();
    stats.snapshot_and_reset().unwrap();
    for i in 0..37u64 {
        c.write(i * 512, &[2u8; 512], 0).unwrap();
    }
    for i in 0..53u64 {
        c.read(i * 1000, 1000).unwrap();
    }
    c.flush().unwrap();
    c.trim(0, 4096).unwrap();
    c.zero(4096, 8192, 0).unwrap();
    assert_eq!(c.read(1 << 20, 1), Err(NBD_EINVAL));
    let s = stats.snapshot_and_reset().unwrap();
    let m = s.export("m").unwrap();
    assert_eq!(
        (m.write.ios, m.write.bytes, m.write.errors),
        (37, 37 * 512, 0)
    );
    assert_eq!(
        (m.read.ios, m.read.bytes, m.read.errors),
        (54, 53 * 1000, 1)
    );
    assert_eq!((m.flush.ios, m.trim.bytes, m.zero.bytes), (1, 4096, 8192));
    assert_eq!(m.read.lat_ns.count(), 54);
    assert!(m.read.lat_ns.min() > 0);
    assert_eq!(s.export("other").unwrap().total_ios(), 0);
    assert!(s.cpu.window_ns > 0 && s.window_ns > 0);
    assert_eq!(
        stats.snapshot().unwrap().export("m").unwrap().total_ios(),
        0,
        "reset"
    );
}

fn file_export(path: &std::path::Path, direct: bool) -> iolab_target::Export {
    let p = FileParams {
        path: path.to_path_buf(),
        size_bytes: Some(4 << 20),
        direct,
        read_only: false,
    };
    export("f", FileDev::open(p).unwrap())
}

#[test]
fn file_writes_acknowledged_before_a_flush_reply_are_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("disk.img");
    let t = Target::start(vec![file_export(&path, false)]);
    let mut c = Client::open(&t.sock, "f");
    let data = pattern(11, 1 << 20);
    for i in 0..16u64 {
        c.write(i * 65536, &data[(i * 65536) as usize..][..65536], 0)
            .unwrap();
    }
    c.flush().unwrap();
    // Reopen the file on its own: everything acknowledged is there.
    let on_disk = std::fs::read(&path).unwrap();
    assert_eq!(&on_disk[..1 << 20], &data[..]);
    c.disconnect();
    t.stop().unwrap();
    // A new server on the same file serves the same data.
    let t = Target::start(vec![export(
        "f",
        FileDev::open(FileParams {
            path: path.clone(),
            size_bytes: None,
            direct: true,
            read_only: false,
        })
        .unwrap(),
    )]);
    let mut c = Client::open(&t.sock, "f");
    assert_eq!(c.read(0, 1 << 20).unwrap(), data);
}

#[test]
fn file_backend_serves_pipelined_requests_on_workers() {
    let dir = tempfile::tempdir().unwrap();
    let t = Target::start_with(vec![file_export(&dir.path().join("d.img"), false)], |c| {
        c.workers = 4
    });
    let mut c = Client::open_structured(&t.sock, "f");
    for i in 0..64u64 {
        c.send(
            CMD_WRITE,
            if i % 2 == 0 { FLAG_FUA } else { 0 },
            i * 8192,
            8192,
            &pattern(i, 8192),
        );
    }
    for _ in 0..64 {
        assert_eq!(c.recv().unwrap().error, 0);
    }
    for i in 0..64u64 {
        assert_eq!(c.read(i * 8192, 8192).unwrap(), pattern(i, 8192));
    }
}

#[test]
fn a_failing_flush_at_shutdown_is_reported() {
    let p = InjectParams {
        rate: 1.0,
        offsets: vec![],
        ops: vec![Op::Flush],
        seed: 0,
    };
    let dev = InjectLayer::new(Arc::new(MemoryDev::new(4096).unwrap()), p).unwrap();
    let t = Target::start(vec![export("x", dev)]);
    match t.stop() {
        Err(TargetError::Flush { export, .. }) => assert_eq!(export, "x"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_client_that_stops_reading_is_cut_at_shutdown_and_blocks_nobody() {
    let t = Target::start_with(vec![memory("m", 1 << 20)], |c| {
        c.shutdown_grace = Duration::from_millis(300);
    });
    let mut stuck = Client::open(&t.sock, "m");
    stuck.s.set_nonblocking(true).unwrap();
    // Pipeline reads and never read a reply: the server's writes fill the
    // socket and block that connection only.
    let req = {
        let mut m = 0x2560_9513u32.to_be_bytes().to_vec();
        m.extend_from_slice(&[0, 0, 0, 0]);
        m.extend_from_slice(&[0u8; 8]);
        m.extend_from_slice(&[0u8; 8]);
        m.extend_from_slice(&65536u32.to_be_bytes());
        m
    };
    let mut sent = 0;
    while sent < 2000 && std::io::Write::write_all(&mut stuck.s, &req).is_ok() {
        sent += 1;
    }
    assert!(sent > 10);
    let mut good = Client::open(&t.sock, "m");
    good.write(0, &[3u8; 4096], 0).unwrap();
    assert_eq!(good.read(0, 4096).unwrap(), vec![3u8; 4096]);
    good.disconnect();
    let t0 = Instant::now();
    t.stop().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}

#[test]
fn inflight_data_is_capped_per_connection() {
    // 4 KiB reads held 100 ms each, at most 16 KiB in flight: 16 reads take
    // at least 4 rounds of 100 ms.
    let t = Target::start_with(vec![export("d", delayed(100))], |c| {
        c.max_inflight_bytes = 16 << 10
    });
    let mut c = Client::open(&t.sock, "d");
    let t0 = Instant::now();
    for i in 0..16 {
        c.send(CMD_READ, 0, i * 4096, 4096, &[]);
    }
    for _ in 0..16 {
        assert_eq!(c.recv().unwrap().error, 0);
    }
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_millis(900),
        "{took:?}"
    );
}

#[test]
fn a_toml_config_serves_what_it_describes() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("s");
    let text = format!(
        "[server]\nlisten = \"unix:{}\"\n\n[[export]]\nname = \"null\"\nbackend = \"null\"\nsize = \"1g\"\ncount = 16\n\n\
         [[export]]\nname = \"mem\"\nbackend = \"memory\"\nsize = \"4m\"\nsplit = 2\n\
         layers = [{{ type = \"delay\", write = \"20ms\" }}]\n",
        sock.display()
    );
    let running = iolab_target::config::parse_toml(&text)
        .unwrap()
        .bind()
        .unwrap()
        .spawn()
        .unwrap();
    let mut n = Client::open(&sock, "null15");
    assert_eq!(n.size, 1 << 30);
    assert_eq!(n.read(0, 4096).unwrap(), vec![0u8; 4096]);
    let mut m = Client::open(&sock, "mem1");
    assert_eq!(m.size, 2 << 20);
    let t0 = Instant::now();
    m.write(0, &[5u8; 4096], 0).unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(20));
    running.stop().unwrap();
}

/// docs/target.md's complete TOML example ("every key shown"), as written
/// but for the file's path and the address: it must load and bind. Session
/// 12: it was refused (`server.max_request_bytes: 67108864 is more than one
/// request may hold under pacing`) after creating its 3 GiB file.
#[test]
fn the_documented_complete_config_binds() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/target.md"))
        .unwrap();
    let start = doc
        .find("A complete\nexample")
        .expect("docs/target.md's complete example");
    let body = &doc[start..];
    let open = body.find("```toml\n").unwrap() + "```toml\n".len();
    let text = &body[open..open + body[open..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("ssd.img");
    let text = text
        .replace("/var/tmp/ssd.img", img.to_str().unwrap())
        .replace("127.0.0.1:10809", "127.0.0.1:0");
    let running = iolab_target::config::parse_toml(&text)
        .unwrap_or_else(|e| panic!("{e}"))
        .bind()
        .unwrap_or_else(|e| panic!("{e}"))
        .spawn()
        .unwrap();
    running.stop().unwrap();
}
