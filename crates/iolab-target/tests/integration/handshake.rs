//! The handshake over a real socket.

use std::io::{Read, Write};

use crate::client::*;
use crate::util::*;

fn two() -> Target {
    let d = memory("disk0", 1 << 20)
        .with_description("the first disk")
        .unwrap();
    Target::start(vec![d, memory("disk1", 4096).with_read_only(true)])
}

#[test]
fn greeting_offers_fixed_newstyle_and_no_zeroes() {
    let t = two();
    let h = Handshake::connect(&t.sock).unwrap();
    assert_eq!(h.handshake_flags, 3);
}

#[test]
fn go_reports_size_flags_and_block_sizes() {
    let t = two();
    let c = Handshake::start(&t.sock)
        .unwrap()
        .go("disk0", false)
        .unwrap();
    assert_eq!(c.size, 1 << 20);
    // HAS_FLAGS, SEND_FLUSH, SEND_FUA, SEND_TRIM, SEND_WRITE_ZEROES, CAN_MULTI_CONN
    assert_eq!(c.tflags, 1 | 4 | 8 | 32 | 64 | 256);
    assert_eq!(c.block_sizes, (1, 4096, 64 << 20));
    let ro = Handshake::start(&t.sock)
        .unwrap()
        .go("disk1", true)
        .unwrap();
    // HAS_FLAGS, READ_ONLY, SEND_FLUSH, SEND_DF (structured), CAN_MULTI_CONN
    assert_eq!(ro.tflags, 1 | 2 | 4 | 128 | 256);
}

#[test]
fn info_then_go_on_the_same_connection_and_default_export() {
    let t = two();
    let mut h = Handshake::start(&t.sock).unwrap();
    let r = h
        .option(OPT_INFO, &Handshake::info_data("disk0", &[1, 2]))
        .unwrap();
    let texts: Vec<_> = r
        .iter()
        .filter(|r| r.kind == REP_INFO)
        .map(|r| r.data[2..].to_vec())
        .collect();
    assert!(texts.contains(&b"disk0".to_vec()) && texts.contains(&b"the first disk".to_vec()));
    let c = h.go("", false).unwrap();
    assert_eq!(c.size, 1 << 20, "the empty name is the first export");
}

#[test]
fn unknown_export_is_an_error_reply_and_the_session_goes_on() {
    let t = two();
    let mut h = Handshake::start(&t.sock).unwrap();
    let r = h
        .option(OPT_GO, &Handshake::info_data("nope", &[]))
        .unwrap();
    assert_eq!(r[0].kind, 0x8000_0006, "NBD_REP_ERR_UNKNOWN");
    assert!(String::from_utf8_lossy(&r[0].data).contains("nope"));
    let c = h.go("disk1", false).unwrap();
    assert_eq!(c.size, 4096);
}

#[test]
fn list_names_every_export() {
    let t = two();
    let mut h = Handshake::start(&t.sock).unwrap();
    let r = h.option(OPT_LIST, &[]).unwrap();
    let names: Vec<String> = r
        .iter()
        .filter(|r| r.kind == REP_SERVER)
        .map(|r| {
            let n = u32::from_be_bytes(r.data[..4].try_into().unwrap()) as usize;
            String::from_utf8(r.data[4..4 + n].to_vec()).unwrap()
        })
        .collect();
    assert_eq!(names, ["disk0", "disk1"]);
    assert_eq!(r.last().unwrap().kind, REP_ACK);
}

#[test]
fn unknown_and_unsupported_options_get_err_unsup() {
    let t = two();
    let mut h = Handshake::start(&t.sock).unwrap();
    for opt in [5, 9, 10, 11, 99] {
        let r = h.option(opt, b"data").unwrap();
        assert_eq!((r[0].option, r[0].kind), (opt, 0x8000_0001), "option {opt}");
    }
    h.go("disk0", true).unwrap();
}

#[test]
fn export_name_with_and_without_zeroes() {
    let t = two();
    for (flags, extra) in [(3u32, 0usize), (1, 124)] {
        let mut h = Handshake::connect(&t.sock).unwrap();
        h.s.write_all(&flags.to_be_bytes()).unwrap();
        h.send_option(OPT_EXPORT_NAME, b"disk1").unwrap();
        let b = read_n(&mut h.s, 10 + extra).unwrap();
        assert_eq!(u64::from_be_bytes(b[..8].try_into().unwrap()), 4096);
        assert_eq!(u16::from_be_bytes([b[8], b[9]]) & 2, 2, "read-only");
        assert!(b[10..].iter().all(|&x| x == 0));
    }
    // An unknown name cannot be answered: the server hangs up.
    let mut h = Handshake::start(&t.sock).unwrap();
    h.send_option(OPT_EXPORT_NAME, b"nope").unwrap();
    assert_eq!(h.s.read(&mut [0u8; 8]).unwrap(), 0);
}

#[test]
fn abort_is_acknowledged_then_closed() {
    let t = two();
    let mut h = Handshake::start(&t.sock).unwrap();
    let r = h.option(OPT_ABORT, &[]).unwrap();
    assert_eq!(r[0].kind, REP_ACK);
    assert_eq!(h.s.read(&mut [0u8; 8]).unwrap(), 0);
}
