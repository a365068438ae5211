//! Tests of the io_uring receive side: bytes in order through every path, ends and cancellation, the linger's pacing.

use std::io::Write;
use std::os::unix::net::UnixStream;

use super::*;

/// A `UringInput` on one end of a socket pair whose handshake left
/// `leftover` in the reader's buffer; the other end.
fn input(leftover: &[u8], force: Option<Mode>) -> (UringInput, UnixStream) {
    let (a, mut b) = UnixStream::pair().unwrap();
    b.write_all(leftover).unwrap();
    let mut r = BufReader::new(Stream::Unix(a));
    if !leftover.is_empty() {
        // Fill the reader's buffer, as the handshake's reads would.
        assert_eq!(std::io::BufRead::fill_buf(&mut r).unwrap(), leftover);
    }
    (UringInput::with_mode(&r, force).unwrap(), b)
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
}

/// The truth: every byte written, in order, through any mix of the
/// handshake's leftover, many receives and reads that span them.
fn reads_back_what_was_written(force: Option<Mode>) {
    // 4 MiB: four times the provided buffers, so the receive runs out
    // of buffers and is re-armed as they are read.
    let data = pattern(4 << 20);
    let (mut u, mut peer) = input(&data[..100], force);
    assert_eq!(u.buffered(), 100, "the leftover counts as received");
    let rest = data[100..].to_vec();
    let w = std::thread::spawn(move || {
        for c in rest.chunks(28 + 4096) {
            peer.write_all(c).unwrap();
        }
    });
    let mut got = vec![0u8; data.len()];
    let mut at = 0;
    while at < got.len() {
        let n = (at % 5000 + 1).min(got.len() - at);
        u.read_exact(&mut got[at..at + n]).unwrap();
        at += n;
    }
    w.join().unwrap();
    assert!(got == data, "bytes differ");
    let mut one = [0u8; 1];
    assert_eq!(
        u.read(&mut one).unwrap(),
        0,
        "end of stream after the peer closed"
    );
}

#[test]
fn multishot_reads_back_what_was_written() {
    let (u, _) = input(b"", None);
    assert_eq!(u.mode, Mode::Multishot, "this kernel has multishot receive");
    reads_back_what_was_written(None);
}

#[test]
fn single_shot_reads_back_what_was_written() {
    reads_back_what_was_written(Some(Mode::Single));
}

#[test]
fn a_shutdown_ends_the_stream_and_a_drop_cancels_the_receive() {
    let (mut u, peer) = input(b"", None);
    let mut b = [0u8; 4];
    // Arm the receive: nothing has arrived yet.
    assert_eq!(u.buffered(), 0);
    peer.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(u.read(&mut b).unwrap(), 0);
    // Armed again on a live socket, then dropped: the drop waits for
    // the cancelled receive's last completion.
    let (mut u, _peer) = input(b"", None);
    u.arm().unwrap();
    u.enter(0).unwrap();
    drop(u);
}

#[test]
fn a_reader_lingers_for_a_deep_client_and_backs_off_when_it_gains_nothing() {
    let mut p = Pace::default();
    assert!(!p.linger(), "not deep until seen to be");
    for _ in 0..40 {
        p.note_wait(1_000);
    }
    // Lingers that bring sets of requests go on.
    for _ in 0..10 {
        assert!(p.linger());
        (0..5).for_each(|_| p.note_request());
    }
    // One that brings a single request (a fast client at QD 1) holds
    // lingering off for a number of waits that doubles per miss.
    let mut holds = Vec::new();
    for _ in 0..10 {
        assert!(p.linger());
        p.note_request();
        let mut n = 0;
        while !p.linger() {
            n += 1;
        }
        p.note_request();
        p.note_request();
        holds.push(n);
    }
    assert_eq!(
        holds[..3],
        [8, 8, 8],
        "a hit after each miss halves back to 8"
    );
    // Waits of a client at QD 1 (tens of µs) end lingering.
    for _ in 0..40 {
        p.note_wait(20_000);
    }
    assert!(!p.linger());
    // Misses in a row: 8, 16, 32, ... up to the cap.
    let mut p = Pace::default();
    for _ in 0..40 {
        p.note_wait(1_000);
    }
    let mut holds = Vec::new();
    assert!(p.linger());
    for _ in 0..10 {
        p.note_request(); // each linger brings one request
        let mut n = 0;
        while !p.linger() {
            n += 1;
        }
        holds.push(n);
    }
    assert_eq!(holds[..4], [8, 16, 32, 64]);
    assert_eq!(holds[9], MAX_HOLDOFF);
}
