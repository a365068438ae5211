//! The threads path's receive side: a `BufReader` on the socket that, for
//! a client keeping its queue full, lingers before a blocking `recv`.
//!
//! With one fio job at QD 32 the reader's blocking `recv` returned after
//! nearly every request (the client's next one was just on its way), so
//! each request cost a `recv`, a `writev` of its reply alone and often a
//! sleep and wake-up. [`Lingering`] uses io_uring's pacing ([`Pace`], in
//! `conn/uring.rs`): when the waits for the next request average under
//! [`super::uring::DEEP_WAIT`], the reader sleeps [`LINGER`] first, so one
//! `recv` takes the requests that arrived meanwhile and their replies go
//! out as one set; a linger that brings fewer than two requests holds off
//! the next ones. A client at QD 1 (waits of tens of µs) is never lingered
//! for. The replies already held are written before the linger (the
//! reader flushes before any read its buffer cannot satisfy).

use std::io::{self, BufReader, Read};
use std::time::Instant;

use super::uring::{Input, Pace, LINGER};
use crate::net::Stream;

/// A buffered socket reader that lingers for deep clients.
#[derive(Debug)]
pub(super) struct Lingering<R = Stream> {
    r: BufReader<R>,
    pace: Pace,
}

impl<R: Read> Lingering<R> {
    pub fn new(r: BufReader<R>) -> Lingering<R> {
        Lingering {
            r,
            pace: Pace::default(),
        }
    }
}

impl<R: Read> Read for Lingering<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if !self.r.buffer().is_empty() {
            return self.r.read(out);
        }
        if self.pace.linger() {
            std::thread::sleep(LINGER);
            return self.r.read(out);
        }
        let t0 = Instant::now();
        let n = self.r.read(out);
        self.pace.note_wait(t0.elapsed().as_nanos() as u64);
        n
    }
}

impl<R: Read> Input for Lingering<R> {
    fn buffered(&mut self) -> usize {
        self.r.buffer().len()
    }

    fn note_request(&mut self) {
        self.pace.note_request();
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    use super::*;

    #[test]
    fn a_deep_client_is_lingered_for_and_every_byte_arrives_in_order() {
        let (mut tx, rx) = UnixStream::pair().unwrap();
        let mut l = Lingering::new(BufReader::with_capacity(4096, rx));
        // Waits seen as short: the reader takes the client for deep.
        for _ in 0..64 {
            l.pace.note_wait(1_000);
        }
        let want: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
        let sent = want.clone();
        let writer = std::thread::spawn(move || {
            for c in sent.chunks(28) {
                tx.write_all(c).unwrap();
            }
        });
        let mut got = Vec::new();
        let mut m = [0u8; 28];
        while got.len() < want.len() {
            let n = l.read(&mut m).unwrap();
            assert!(n > 0, "the stream ended early");
            got.extend_from_slice(&m[..n]);
            l.note_request();
        }
        writer.join().unwrap();
        assert!(got == want, "bytes lost or reordered");
        assert_eq!(l.buffered(), 0);
    }
}
