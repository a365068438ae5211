//! Spliced replies (`[server] zero_copy = "on"`, conn/splice.rs) carry
//! the data written, whoever sends them: the reader inline, the timer
//! after a delay layer's hold; in sets of many small replies, and in
//! replies larger than the connection's pipe.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use iolab_target::server_config::ZeroCopy;
use iolab_target::stack::delay::{DelayLayer, DelayParams};
use iolab_target::stack::memory::MemoryDev;

use crate::client::*;
use crate::util::*;

fn spliced(exports: Vec<iolab_target::export::Export>) -> Target {
    Target::start_with(exports, |c| c.zero_copy = ZeroCopy::On)
}

/// Write `n` MiB of patterns, then read them back pipelined: 4 KiB and
/// 64 KiB reads in flight together, then two 2 MiB reads (each more than
/// the pipe holds). Every reply's data is compared with what was written.
fn round_trip(c: &mut Client, n: u64) {
    let big: Vec<Vec<u8>> = (0..n).map(|i| pattern(300 + i, 1 << 20)).collect();
    for (i, d) in big.iter().enumerate() {
        c.write((i as u64) << 20, d, 0).unwrap();
    }
    let at = |off: u64, len: usize| -> Vec<u8> {
        let mut v = Vec::with_capacity(len);
        let mut o = off;
        while v.len() < len {
            let (b, i) = ((o >> 20) as usize, (o & ((1 << 20) - 1)) as usize);
            let take = (len - v.len()).min((1 << 20) - i);
            v.extend_from_slice(&big[b][i..i + take]);
            o += take as u64;
        }
        v
    };
    let mut want = HashMap::new();
    // 48 reads in flight: few enough that the client's own unread sends
    // never fill the server's receive side while its replies wait.
    for i in 0..48u64 {
        let len: u32 = if i % 3 == 0 { 65536 } else { 4096 };
        let off = (i * 69_632) % ((n << 20) - 65536);
        let cookie = c.send(CMD_READ, 0, off, len, &[]);
        want.insert(cookie, at(off, len as usize));
    }
    for _ in 0..48 {
        let r = c.recv().unwrap();
        assert_eq!(r.error, 0);
        assert!(
            r.data == want[&r.cookie],
            "cookie {}'s data differ",
            r.cookie
        );
    }
    for off in [0, (n - 2) << 20] {
        assert!(
            c.read(off, 2 << 20).unwrap() == at(off, 2 << 20),
            "2 MiB at {off}"
        );
    }
}

#[test]
fn spliced_replies_carry_the_data_written_simple_and_structured() {
    let t = spliced(vec![memory("m", 8 << 20)]);
    for structured in [false, true] {
        let mut c = if structured {
            Client::open_structured(&t.sock, "m")
        } else {
            Client::open(&t.sock, "m")
        };
        round_trip(&mut c, 6);
        c.disconnect();
    }
}

#[test]
fn replies_held_by_a_delay_layer_are_spliced_by_the_timer_intact() {
    let slow = DelayLayer::new(
        Arc::new(MemoryDev::new(8 << 20).unwrap()),
        DelayParams {
            read: Duration::from_micros(200),
            ..Default::default()
        },
    );
    let t = spliced(vec![export("slow", slow)]);
    let mut c = Client::open_structured(&t.sock, "slow");
    round_trip(&mut c, 6);
    let s = t.handle().stats().snapshot().unwrap();
    let reads = 48 + 2; // round_trip's pipelined reads and its two large ones
    let held = &s.export("slow").unwrap().read;
    assert_eq!(held.hold_late_ns.count(), reads, "every read was held");
    c.disconnect();
}
