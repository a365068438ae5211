//! The splicer: what a late reader gets, byte-identical replies, the
//! recycle bound, and the fallback when no pipe can be made.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Instant;

use super::*;
use crate::conn::reply::{Done, Replier};
use crate::measure::Recorder;
use crate::proto::Errno;
use crate::stack::{BlockError, Op};

fn replier(structured: bool, zc: bool) -> (Replier, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    let r = Replier::new(
        Stream::Unix(a),
        structured,
        Arc::new(Recorder::new()),
        (1024, 1 << 30),
    );
    let z = zc.then(|| Splicer::new().unwrap());
    (r.with_splicer(z), b)
}

fn done(cookie: u64, len: usize, r: &Replier) -> Done {
    let mut buf = r.bufs.get(len);
    for (i, x) in buf.iter_mut().enumerate() {
        *x = (cookie as u8).wrapping_mul(31).wrapping_add(i as u8);
    }
    Done {
        cookie,
        op: Some(Op::Read),
        bytes: len as u64,
        read_offset: Some(cookie * 4096),
        buf: Some(buf),
        grant: None,
        result: Ok(()),
        started: Instant::now(),
        hold_until: None,
        tickets: Default::default(),
    }
}

/// Reads of 4 KiB and of 0 bytes, an I/O error, a write's ack: every
/// kind of header, with and without data after it.
fn mixed(r: &Replier) -> Vec<Done> {
    let mut v: Vec<Done> = (0..12).map(|c| done(c, 4096, r)).collect();
    v[3].result = Err(BlockError::new(Errno::Io, "bad sector"));
    v[5] = done(5, 0, r);
    v[8].op = Some(Op::Write);
    v[8].read_offset = None;
    v[8].buf = None;
    v
}

fn answer(structured: bool, zc: bool) -> Vec<u8> {
    let (r, mut peer) = replier(structured, zc);
    let mut d = mixed(&r);
    for x in &d {
        assert!(r.try_begin(x.buf.as_ref().map_or(0, |b| b.len() as u64)));
    }
    r.send_all(&mut d);
    drop(r);
    let mut got = Vec::new();
    peer.read_to_end(&mut got).unwrap();
    got
}

#[test]
fn spliced_replies_are_byte_identical_to_written_ones() {
    for structured in [false, true] {
        let (copied, spliced) = (answer(structured, false), answer(structured, true));
        assert!(copied.len() > 9 * 4096, "the set carries its data");
        assert!(
            copied == spliced,
            "structured={structured}: the bytes differ"
        );
    }
}

#[test]
fn a_slow_client_reads_what_was_sent_while_the_server_reuses_buffers() {
    let (r, mut peer) = replier(true, true);
    let fd = r.lock_out().stream.as_raw_fd();
    // Three sets of 8 replies, sent and not read (96 KiB: within the
    // socket's buffer, so nothing blocks).
    let mut want = Vec::new();
    for set in 0..3u64 {
        let mut d: Vec<Done> = (0..8).map(|i| done(set * 8 + i, 4096, &r)).collect();
        for x in &d {
            assert!(r.try_begin(4096));
            want.push(x.buf.as_deref().unwrap().to_vec());
        }
        r.send_all(&mut d);
    }
    // Meanwhile the server serves on: every buffer it can get is
    // overwritten, as a new request's data would be.
    let mut reused: Vec<_> = (0..64).map(|_| r.bufs.get(4096)).collect();
    for b in &mut reused {
        b.fill(0xEE);
    }
    r.bufs.put_all(reused);
    {
        let mut out = r.lock_out();
        let z = out.zc.as_mut().unwrap();
        assert_eq!(
            z.parked(),
            3 * 9,
            "24 data buffers and 3 header buffers parked"
        );
        assert!(z.reclaim(fd).unwrap().is_empty(), "nothing is read yet");
    }
    for (c, data) in want.iter().enumerate() {
        let mut head = [0u8; 28];
        peer.read_exact(&mut head).unwrap();
        assert_eq!(head, offset_data_header(c as u64, c as u64 * 4096, 4096));
        let mut got = vec![0u8; 4096];
        peer.read_exact(&mut got).unwrap();
        assert!(&got == data, "reply {c}'s data changed under the client");
    }
    let mut out = r.lock_out();
    let z = out.zc.as_mut().unwrap();
    assert_eq!(
        z.reclaim(fd).unwrap().len(),
        24,
        "all read: every data buffer returned (the header buffers to the splicer's pool)"
    );
    assert_eq!(z.parked(), 0);
}

#[test]
fn parked_bytes_trigger_a_check_and_headers_stay_in_their_own_pool() {
    let mut z = Splicer::new().unwrap();
    // Two large data buffers: far fewer than RECLAIM_AT, but their bytes
    // reach RECLAIM_BYTES, so the next send checks what the client read.
    z.park(AlignedBuf::new((RECLAIM_BYTES / 2) as usize));
    assert!(!z.should_reclaim());
    let h = z.head_buf(&[7u8; 48]);
    assert_eq!(&h[..], &[7u8; 48][..]);
    z.park_head(h);
    z.park(AlignedBuf::new((RECLAIM_BYTES / 2) as usize));
    assert!(z.should_reclaim(), "{} bytes parked", RECLAIM_BYTES);
    // All read: the two data buffers come back for the cache; the header
    // buffer goes to the splicer's pool and is the next header buffer.
    let back = z.release_read(0);
    assert_eq!(back.len(), 2);
    assert!(back.iter().all(|b| b.len() == (RECLAIM_BYTES / 2) as usize));
    assert!(!z.should_reclaim());
    let again = z.head_buf(&[9u8; 16]);
    assert_eq!(&again[..], &[9u8; 16][..]);
    assert_eq!(
        again.capacity(),
        HEAD_BYTES,
        "the pooled 4 KiB header buffer, reused"
    );
}

#[test]
fn buffers_come_back_only_below_the_unread_bytes() {
    let mut z = Splicer::new().unwrap();
    // Three buffers ending at stream offsets 100, 250 and 400.
    for (end, len) in [(100, 1), (250, 2), (400, 3)] {
        z.spliced = end;
        z.park(AlignedBuf::new(len));
    }
    // 160 unread: the client has read up to 240 — only the first is free.
    let b = z.release_read(160);
    assert_eq!(b.iter().map(|b| b.len()).collect::<Vec<_>>(), [1]);
    assert!(z.release_read(151).is_empty(), "read up to 249: 250 is not");
    assert_eq!(z.release_read(150).len(), 1, "read up to 250");
    assert!(
        z.release_read(u64::MAX).is_empty(),
        "an outq above all: none"
    );
    assert_eq!(z.release_read(0).len(), 1);
    assert_eq!(z.parked(), 0);
}

#[test]
fn a_pipe_refused_falls_back_under_auto_and_fails_under_on() {
    let (a, _b) = UnixStream::pair().unwrap();
    let unix = Stream::Unix(a);
    let emfile = || Err(io::Error::from_raw_os_error(libc::EMFILE));
    assert!(for_conn(ZeroCopy::Auto, &unix, emfile).unwrap().is_none());
    let e = for_conn(ZeroCopy::On, &unix, emfile).unwrap_err();
    assert!(e.to_string().starts_with("zero-copy pipe: "), "{e}");
    let never = || -> io::Result<Splicer> { panic!("no pipe is made under off") };
    assert!(for_conn(ZeroCopy::Off, &unix, never).unwrap().is_none());
    let auto = for_conn(ZeroCopy::Auto, &unix, Splicer::new)
        .unwrap()
        .unwrap();
    let on = for_conn(ZeroCopy::On, &unix, Splicer::new)
        .unwrap()
        .unwrap();
    // 32 replies of 4 KiB; 4 of 64 KiB; 2 of 128 KiB; 1 of 1 MiB; none.
    let sets = [
        (32, 128 << 10),
        (4, 256 << 10),
        (2, 256 << 10),
        (1, 1 << 20),
        (0, 0),
    ];
    let by = |z: &Splicer| sets.map(|(n, b)| z.takes(n, b));
    assert_eq!(by(&on), [true, true, true, true, false]);
    assert_eq!(by(&auto), [false, false, false, false, false]);
    assert!(auto.takes(2, 128 << 10) && auto.takes(8, 128 << 10));
    assert!(
        !auto.takes(9, 128 << 10),
        "14 KiB a reply is below the mean"
    );
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let tcp = Stream::Tcp(std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap());
    assert!(
        for_conn(ZeroCopy::On, &tcp, never).unwrap().is_none(),
        "TCP copies"
    );
}

use crate::proto::reply::offset_data_header;
