//! The nbd backend used directly (queue/commit/reap): written data read
//! back through another connection, TCP (`nbd://host:port/export`)
//! against an iolab target, and the fallback to
//! NBD_OPT_EXPORT_NAME (with the 124 zero bytes of a server without
//! NO_ZEROES) against a minimal scripted server that does not know OPT_GO.

use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::sync::Arc;

use iolab_core::job::JobSpec;
use iolab_engine::backend::nbd::NbdBackend;
use iolab_engine::backend::{Backend, BackendConfig, Completion, Op, Queued, Request};
use iolab_target::stack::memory::MemoryDev;
use iolab_target::{Export, ExportSet, ListenAddr, RunningServer, Server, ServerConfig};

const MIB: u64 = 1 << 20;

/// An iolab target on `addr` serving a memory export `name`; its address.
fn serve(addr: ListenAddr, name: &str, size: u64) -> (RunningServer, ListenAddr) {
    let mem = MemoryDev::new(size).unwrap();
    let exports = ExportSet::new(vec![Export::new(name, Arc::new(mem)).unwrap()]).unwrap();
    let server = Server::bind(ServerConfig::new(addr), exports).unwrap();
    let at = server.local_addr().clone();
    (server.spawn().unwrap(), at)
}

/// One request, waited for: its result.
fn one(b: &mut NbdBackend, op: Op, offset: u64, buf: &mut [u8]) -> i64 {
    let req = Request {
        slot: 1,
        op,
        file: 0,
        offset,
        len: buf.len() as u32,
        buf: buf.as_mut_ptr(),
        ioprio: 0,
    };
    q(b, &req).unwrap();
    b.commit().unwrap();
    let mut out = Vec::new();
    b.reap(1, 1, &mut out).unwrap();
    assert_eq!(out[0].slot, 1);
    out[0].result
}

#[test]
fn tcp_uris_reach_the_export() {
    let (running, at) = serve(ListenAddr::Tcp("127.0.0.1:0".parse().unwrap()), "t", MIB);
    let ListenAddr::Tcp(addr) = at else {
        panic!("bound to TCP")
    };
    let mut b = backend(&format!("nbd://127.0.0.1:{}/t", addr.port()), 1, 4);
    let mut data = vec![7u8; 8192];
    assert_eq!(one(&mut b, Op::Write, 4096, &mut data), 8192);
    let mut back = vec![0u8; 8192];
    assert_eq!(one(&mut b, Op::Read, 4096, &mut back), 8192);
    assert_eq!(back, data);
    drop(b);
    running.stop().unwrap();
}

/// A server that answers OPT_GO with ERR_UNSUP, offers no NO_ZEROES, and
/// serves one READ of `size` bytes of 0xab.
fn old_server(l: UnixListener, size: u64) {
    let (mut s, _) = l.accept().unwrap();
    s.write_all(b"NBDMAGICIHAVEOPT\x00\x01").unwrap(); // FIXED_NEWSTYLE only
    let mut b4 = [0u8; 4];
    s.read_exact(&mut b4).unwrap();
    assert_eq!(
        u32::from_be_bytes(b4),
        1,
        "client flags: FIXED_NEWSTYLE only"
    );
    let mut hdr = [0u8; 16];
    s.read_exact(&mut hdr).unwrap();
    let (opt, len) = (
        u32::from_be_bytes(hdr[8..12].try_into().unwrap()),
        u32::from_be_bytes(hdr[12..16].try_into().unwrap()),
    );
    assert_eq!(opt, 7, "NBD_OPT_GO first");
    s.read_exact(&mut vec![0u8; len as usize]).unwrap();
    let mut rep = 0x0003_e889_0455_65a9u64.to_be_bytes().to_vec();
    rep.extend_from_slice(&7u32.to_be_bytes());
    rep.extend_from_slice(&(0x8000_0001u32).to_be_bytes()); // ERR_UNSUP
    rep.extend_from_slice(&0u32.to_be_bytes());
    s.write_all(&rep).unwrap();
    s.read_exact(&mut hdr).unwrap();
    let (opt, len) = (
        u32::from_be_bytes(hdr[8..12].try_into().unwrap()),
        u32::from_be_bytes(hdr[12..16].try_into().unwrap()),
    );
    assert_eq!(opt, 1, "then NBD_OPT_EXPORT_NAME");
    let mut name = vec![0u8; len as usize];
    s.read_exact(&mut name).unwrap();
    assert_eq!(name, b"old");
    let mut reply = size.to_be_bytes().to_vec();
    reply.extend_from_slice(&(1u16 | 4).to_be_bytes()); // HAS_FLAGS | SEND_FLUSH
    reply.extend_from_slice(&[0u8; 124]);
    s.write_all(&reply).unwrap();
    let mut req = [0u8; 28];
    s.read_exact(&mut req).unwrap();
    assert_eq!(u16::from_be_bytes([req[6], req[7]]), 0, "NBD_CMD_READ");
    let len = u32::from_be_bytes(req[24..28].try_into().unwrap());
    let mut reply = 0x6744_6698u32.to_be_bytes().to_vec();
    reply.extend_from_slice(&0u32.to_be_bytes());
    reply.extend_from_slice(&req[8..16]); // the cookie, echoed
    reply.extend(std::iter::repeat_n(0xabu8, len as usize));
    s.write_all(&reply).unwrap();
    s.read_exact(&mut req).unwrap();
    assert_eq!(
        u16::from_be_bytes([req[6], req[7]]),
        2,
        "NBD_CMD_DISC at the end"
    );
}

#[test]
fn servers_without_opt_go_are_reached_with_export_name() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("old.sock");
    let l = UnixListener::bind(&sock).unwrap();
    let server = std::thread::spawn(move || old_server(l, 1 << 20));
    let mut b = backend(&format!("nbd+unix:///old?socket={}", sock.display()), 1, 4);
    let mut buf = vec![0u8; 4096];
    assert_eq!(one(&mut b, Op::Read, 8192, &mut buf), 4096);
    assert!(buf.iter().all(|&x| x == 0xab));
    drop(b);
    server.join().unwrap();
}

/// Raw backend use: `(slot, op, offset, buffer)` requests, all completed.
fn io(b: &mut NbdBackend, reqs: &mut [(u32, Op, u64, Vec<u8>)]) -> Vec<Completion> {
    for (slot, op, offset, buf) in reqs.iter_mut() {
        let r = Request {
            slot: *slot,
            op: *op,
            file: 0,
            offset: *offset,
            len: buf.len() as u32,
            buf: buf.as_mut_ptr(),
            ioprio: 0,
        };
        assert!(matches!(q(b, &r).unwrap(), Queued::Staged));
    }
    b.commit().unwrap();
    let mut out = Vec::new();
    while out.len() < reqs.len() {
        b.reap(1, 64, &mut out).unwrap();
    }
    out
}

fn backend(uri: &str, connections: u32, depth: u32) -> NbdBackend {
    let job = JobSpec::new("j")
        .args([
            "ioengine=nbd",
            &format!("uri={uri}"),
            &format!("nbd_connections={connections}"),
            &format!("iodepth={depth}"),
        ])
        .prepare()
        .unwrap();
    let cfg = BackendConfig {
        iodepth: depth,
        buffers: Vec::new(),
        nbd: job.nbd,
        sync_writes: false,
        engine: Default::default(),
        trims: false,
        trims_reset_zones: false,
    };
    NbdBackend::open(&[], &cfg).unwrap()
}

#[test]
fn written_data_reads_back_through_another_connection() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("s");
    let (running, _) = serve(ListenAddr::Unix(sock.clone()), "m", 4 * MIB);
    let uri = format!("nbd+unix:///m?socket={}", sock.display());
    let mut w = backend(&uri, 2, 8);
    let pattern =
        |i: u64, n: usize| -> Vec<u8> { (0..n).map(|k| (k as u64 * 31 + i * 7) as u8).collect() };
    let mut writes: Vec<_> = (0..8u64)
        .map(|i| {
            (
                i as u32,
                Op::Write,
                i * 300_000,
                pattern(i, 4096 + 512 * i as usize),
            )
        })
        .collect();
    let c = io(&mut w, &mut writes);
    assert!(
        c.iter()
            .all(|c| c.result == writes[c.slot as usize].3.len() as i64),
        "{c:?}"
    );
    assert_eq!(
        io(&mut w, &mut [(3, Op::Fsync, 0, Vec::new())])[0].result,
        0
    );
    // Large reads take the receive-into-the-slot path too.
    let mut r = backend(&uri, 1, 8);
    let mut reads: Vec<_> = writes
        .iter()
        .map(|(s, _, off, b)| (*s, Op::Read, *off, vec![0u8; b.len()]))
        .collect();
    reads.push((8, Op::Read, 0, vec![0u8; (2 * MIB) as usize]));
    let c = io(&mut r, &mut reads);
    assert!(
        c.iter()
            .all(|c| c.result == reads[c.slot as usize].3.len() as i64),
        "{c:?}"
    );
    for (w, r) in writes.iter().zip(&reads) {
        assert_eq!(w.3, r.3, "data at offset {}", w.2);
    }
    assert_eq!(reads[8].3[..4096], writes[0].3[..4096]);
    drop((w, r));
    running.stop().unwrap();
}

/// Tests queue into buffers that outlive the request's completion.
fn q<B: Backend>(b: &mut B, r: &Request) -> std::io::Result<Queued> {
    // Safety: every caller here keeps the buffer alive and untouched
    // until the completion is reaped (the queue contract).
    unsafe { b.queue(r) }
}
