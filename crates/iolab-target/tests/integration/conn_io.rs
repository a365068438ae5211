//! Both receive paths (`[server] conn_io`: io_uring and threads) give the
//! same answers: large writes that span many of io_uring's receive
//! buffers, 128 pipelined reads, and requests that arrive in the same segment
//! as the end of the handshake.

use std::collections::HashMap;
use std::io::Write;

use iolab_target::server_config::ConnIo;

use crate::client::*;
use crate::util::*;

const MODES: [ConnIo; 2] = [ConnIo::Uring, ConnIo::Threads];

fn start(mode: ConnIo) -> Target {
    Target::start_with(vec![memory("m", 32 << 20)], |c| c.conn_io = mode)
}

#[test]
fn large_writes_and_deep_pipelines_read_back_on_both_paths() {
    for mode in MODES {
        let t = start(mode);
        let mut c = Client::open_structured(&t.sock, "m");
        // 1 MiB writes: 16 of io_uring's 64 KiB receive buffers each, so the
        // receive runs out of buffers and is re-armed mid-payload.
        let big: Vec<Vec<u8>> = (0..6u64).map(|i| pattern(100 + i, 1 << 20)).collect();
        for (i, d) in big.iter().enumerate() {
            c.send(CMD_WRITE, 0, (i as u64) << 20, d.len() as u32, d);
        }
        for _ in &big {
            assert_eq!(c.recv().unwrap().error, 0, "{mode}");
        }
        // 128 small reads in flight at once, answered by cookie. (Not many
        // more: this client reads no reply until it has sent them all, and
        // a Unix socket charges each small send ~1 KiB of the sender's
        // buffer until the server reads it — while the server, its replies
        // unread, waits to write.)
        let mut want = HashMap::new();
        for i in 0..128u64 {
            let off = (i * 12_288) % (6 << 20);
            let cookie = c.send(CMD_READ, 0, off, 4096, &[]);
            let (b, at) = ((off >> 20) as usize, (off & ((1 << 20) - 1)) as usize);
            want.insert(cookie, big[b][at..at + 4096].to_vec());
        }
        for _ in 0..128 {
            let r = c.recv().unwrap();
            assert_eq!(r.data, want[&r.cookie], "{mode}: cookie {}", r.cookie);
        }
        c.flush().unwrap();
        c.disconnect();
    }
}

#[test]
fn requests_sent_with_the_last_option_are_served_on_both_paths() {
    for mode in MODES {
        let t = start(mode);
        let mut h = Handshake::start(&t.sock).unwrap();
        // NBD_OPT_GO and two requests in one write: the server's handshake
        // reader takes them in one receive, and the transmission phase must
        // start from the bytes it already holds.
        let data = pattern(7, 4096);
        let mut m = Vec::new();
        let go = Handshake::info_data("m", &[]);
        m.extend_from_slice(b"IHAVEOPT");
        m.extend_from_slice(&OPT_GO.to_be_bytes());
        m.extend_from_slice(&(go.len() as u32).to_be_bytes());
        m.extend_from_slice(&go);
        for (kind, cookie, payload) in [(CMD_WRITE, 1u64, &data[..]), (CMD_READ, 2, &[][..])] {
            m.extend_from_slice(&0x2560_9513u32.to_be_bytes());
            m.extend_from_slice(&0u16.to_be_bytes());
            m.extend_from_slice(&kind.to_be_bytes());
            m.extend_from_slice(&cookie.to_be_bytes());
            m.extend_from_slice(&8192u64.to_be_bytes());
            m.extend_from_slice(&4096u32.to_be_bytes());
            m.extend_from_slice(payload);
        }
        h.s.write_all(&m).unwrap();
        while h.read_reply().unwrap().kind != REP_ACK {}
        // Simple replies: magic, error, cookie (and a READ's data).
        let w = read_n(&mut h.s, 16).unwrap();
        assert_eq!(
            (&w[4..8], &w[8..16]),
            (&[0u8; 4][..], &1u64.to_be_bytes()[..]),
            "{mode}"
        );
        let r = read_n(&mut h.s, 16 + 4096).unwrap();
        assert_eq!(
            (&r[4..8], &r[8..16]),
            (&[0u8; 4][..], &2u64.to_be_bytes()[..]),
            "{mode}"
        );
        assert!(r[16..] == data[..], "{mode}: the read returns the write");
    }
}
