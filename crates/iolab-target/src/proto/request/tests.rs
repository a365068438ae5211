use super::*;
use crate::proto::tflags as tf;

const ALL: u16 =
    tf::HAS_FLAGS | tf::SEND_FLUSH | tf::SEND_FUA | tf::SEND_TRIM | tf::SEND_WRITE_ZEROES;

fn geo(tflags: u16) -> Geometry {
    Geometry {
        size_bytes: 1 << 20,
        min_block_bytes: 512,
        max_payload_bytes: 1 << 16,
        tflags,
        structured_replies: false,
    }
}

fn req(kind: u16, flags: u16, offset: u64, len_bytes: u32) -> RequestHeader {
    RequestHeader {
        flags,
        kind,
        cookie: 1,
        offset,
        len_bytes,
    }
}

fn errno(h: RequestHeader, g: &Geometry) -> Errno {
    check_request(&h, g).unwrap_err().errno
}

#[test]
fn encode_parse_round_trip_and_bad_magic() {
    let h = req(cmd::WRITE, cmd_flag::FUA, 1 << 40, 4096);
    assert_eq!(parse_request(&encode_request(&h)).unwrap(), h);
    let mut b = encode_request(&h);
    b[0] ^= 1;
    assert!(matches!(
        parse_request(&b),
        Err(ProtoError::BadMagic { .. })
    ));
}

#[test]
fn valid_requests_become_commands() {
    let g = geo(ALL);
    assert_eq!(
        check_request(&req(cmd::READ, 0, 512, 1024), &g),
        Ok(Command::Read {
            offset: 512,
            len_bytes: 1024
        })
    );
    assert_eq!(
        check_request(&req(cmd::WRITE, cmd_flag::FUA, 0, 512), &g),
        Ok(Command::Write {
            offset: 0,
            len_bytes: 512,
            fua: true
        })
    );
    assert_eq!(
        check_request(&req(cmd::FLUSH, 0, 0, 0), &g),
        Ok(Command::Flush)
    );
    assert_eq!(
        check_request(&req(cmd::WRITE_ZEROES, cmd_flag::NO_HOLE, 0, 1 << 20), &g),
        Ok(Command::WriteZeroes {
            offset: 0,
            len_bytes: 1 << 20,
            fua: false,
            may_trim: false
        })
    );
    assert_eq!(
        check_request(&req(cmd::DISC, 0, 0, 0), &g),
        Ok(Command::Disconnect)
    );
    // Zero length is valid (the spec leaves the result to the server).
    assert!(check_request(&req(cmd::READ, 0, 1 << 20, 0), &g).is_ok());
}

#[test]
fn unknown_commands_and_flags_are_einval() {
    let g = geo(ALL);
    for kind in [cmd::CACHE, cmd::BLOCK_STATUS, 9, 0xffff] {
        assert_eq!(errno(req(kind, 0, 0, 512), &g), Errno::Inval, "kind {kind}");
    }
    assert_eq!(
        errno(req(cmd::READ, cmd_flag::NO_HOLE, 0, 512), &g),
        Errno::Inval
    );
    assert_eq!(
        errno(req(cmd::READ, cmd_flag::DF, 0, 512), &g),
        Errno::Inval,
        "DF needs structured replies"
    );
    assert_eq!(
        errno(req(cmd::WRITE, cmd_flag::FUA, 0, 512), &geo(tf::HAS_FLAGS)),
        Errno::Inval
    );
    assert_eq!(errno(req(cmd::READ, 1 << 9, 0, 512), &g), Errno::Inval);
    let df = geo(ALL | tf::SEND_DF);
    assert!(check_request(&req(cmd::READ, cmd_flag::DF | cmd_flag::FUA, 0, 512), &df).is_ok());
}

#[test]
fn read_only_export_refuses_writes_with_eperm_first() {
    let g = geo(tf::HAS_FLAGS | tf::READ_ONLY | tf::SEND_FLUSH);
    for kind in [cmd::WRITE, cmd::TRIM, cmd::WRITE_ZEROES] {
        assert_eq!(
            errno(req(kind, 0, 1 << 30, 512), &g),
            Errno::Perm,
            "kind {kind}"
        );
    }
    assert!(check_request(&req(cmd::READ, 0, 0, 512), &g).is_ok());
    assert!(check_request(&req(cmd::FLUSH, 0, 0, 0), &g).is_ok());
}

#[test]
fn unadvertised_commands_are_einval() {
    let g = geo(tf::HAS_FLAGS);
    for kind in [cmd::FLUSH, cmd::TRIM, cmd::WRITE_ZEROES] {
        assert_eq!(errno(req(kind, 0, 0, 0), &g), Errno::Inval, "kind {kind}");
    }
}

#[test]
fn range_errors_follow_the_spec() {
    let g = geo(ALL);
    let end = 1u64 << 20;
    assert_eq!(errno(req(cmd::READ, 0, end, 512), &g), Errno::Inval);
    assert_eq!(errno(req(cmd::TRIM, 0, end - 512, 1024), &g), Errno::Inval);
    assert_eq!(errno(req(cmd::WRITE, 0, end, 512), &g), Errno::NoSpc);
    assert_eq!(
        errno(req(cmd::WRITE_ZEROES, 0, end - 512, 1024), &g),
        Errno::NoSpc
    );
    assert_eq!(
        errno(req(cmd::READ, 0, u64::MAX - 100, 512), &g),
        Errno::Inval,
        "overflow"
    );
    assert_eq!(errno(req(cmd::FLUSH, 0, 1, 0), &g), Errno::Inval);
    assert_eq!(
        errno(req(cmd::READ, 0, 100, 512), &g),
        Errno::Inval,
        "unaligned offset"
    );
    assert_eq!(
        errno(req(cmd::READ, 0, 0, 100), &g),
        Errno::Inval,
        "unaligned length"
    );
    assert_eq!(
        errno(req(cmd::READ, 0, 0, (1 << 16) + 512), &g),
        Errno::Inval,
        "over max payload"
    );
    // TRIM and WRITE_ZEROES carry no payload and may exceed the maximum payload.
    assert!(check_request(&req(cmd::TRIM, 0, 0, 1 << 20), &g).is_ok());
}

#[test]
fn payload_policy_reads_discards_or_disconnects() {
    let w = |len| req(cmd::WRITE, 0, 0, len);
    assert_eq!(write_payload_action(&w(0), 4096), PayloadAction::None);
    assert_eq!(
        write_payload_action(&req(cmd::READ, 0, 0, 1 << 30), 4096),
        PayloadAction::None
    );
    assert_eq!(write_payload_action(&w(4096), 4096), PayloadAction::Read);
    assert_eq!(write_payload_action(&w(8192), 4096), PayloadAction::Discard);
    assert_eq!(
        write_payload_action(&w(DISCARD_LIMIT_BYTES), 4096),
        PayloadAction::Discard
    );
    assert_eq!(
        write_payload_action(&w(DISCARD_LIMIT_BYTES + 1), 4096),
        PayloadAction::Disconnect
    );
    assert_eq!(
        write_payload_action(&w(u32::MAX), 1 << 26),
        PayloadAction::Disconnect
    );
}
